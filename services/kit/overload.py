"""More calls at once than a process takes: refused by us, with a reason, and counted.

gRPC's core keeps calls the application has not picked up yet in a queue, and beyond
``grpc.server.max_pending_requests`` (1,000 by default) it cancels them: a burst of a
few thousand calls on one connection ended partly CANCELLED, with no ErrorInfo, before
any interceptor saw them. So the core's queue is made deep enough never to be the
limit, and the application bounds its own work instead: beyond ``max_concurrent_calls``
unary calls in flight, a call is answered RESOURCE_EXHAUSTED (reason LIMIT_REACHED,
``limit=max_concurrent_calls``, a ``retry_after_ms`` hint) and counted. Streams are not
counted here: they are long and have their own per-client limit.

(An HTTP/2 ``max_concurrent_streams`` is no answer: gRPC Python clients do not wait for
a free stream, and the excess fails UNAVAILABLE with a reset stream.)
"""

from __future__ import annotations

from typing import Any

import grpc
from prometheus_client import Counter

from services.kit import status

# Calls the core may hold before the application picks them up. Picking one up is cheap
# (a refusal here costs microseconds), so this is reached only if the process is stalled.
PENDING_CALLS = 50_000
RETRY_AFTER_MS = 100


def core_options() -> list[tuple[str, int]]:
    return [
        ("grpc.server.max_pending_requests", PENDING_CALLS),
        ("grpc.server.max_pending_requests_hard_limit", PENDING_CALLS),
    ]


class ConcurrencyLimit:
    """A guard of the server's interceptor (see services.kit.interceptor.Guard)."""

    def __init__(self, limit: int, limited: Counter) -> None:
        self.limit = limit
        self.in_flight = 0
        self._limited = limited

    async def admit(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any], streaming: bool
    ) -> bool:
        if streaming or not self.limit:
            return False
        if self.in_flight >= self.limit:
            self._limited.labels("max_concurrent_calls").inc()
            await status.abort(
                context,
                status.status_for(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    f"this server is handling {self.limit} calls at once; retry shortly",
                    "LIMIT_REACHED",
                    {"limit": "max_concurrent_calls", "retry_after_ms": str(RETRY_AFTER_MS)},
                ),
            )
        self.in_flight += 1
        return True

    def release(self, ticket: bool, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        if ticket:
            self.in_flight -= 1
