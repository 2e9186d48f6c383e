"""Graceful drain: on SIGTERM, refuse new calls cleanly and let calls in flight finish.

Where gRPC itself produces CANCELLED, which clients do not retry (seen with clients
calling one replica straight while it drained):

- ``server.stop(grace)`` starts the core's shutdown, and from that moment every call that
  reaches the server is cancelled before any interceptor sees it: calls the core had
  queued but the application not yet picked up, and calls already on the wire before the
  client read the GOAWAY. Under load that is every caller with a call outstanding.
- Calls still running when the grace ends are cancelled too, streams included.

So the server drains before anything stops: from the first moment new calls get
UNAVAILABLE with ErrorInfo ``draining=true`` (clients retry, elsewhere), health says
NOT_SERVING, open WatchGame streams end with UNAVAILABLE and the version to resume from,
and calls in flight run to their end. Then the process leaves without ``server.stop``
(:func:`leave`): its connections close, and a call that reaches it in that last moment
fails as at any server that is gone, UNAVAILABLE, never CANCELLED.
Health and reflection keep answering while draining (the interceptor does not guard them).
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from typing import Any, NoReturn

import grpc

from services.kit import status, tracing


class Drain:
    """A guard of the server's interceptor (see services.kit.interceptor.Guard)."""

    def __init__(self) -> None:
        self.draining = False
        self.in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._started = 0.0

    async def admit(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any], streaming: bool
    ) -> None:
        if self.draining:
            await status.abort(
                context,
                status.status_for(
                    grpc.StatusCode.UNAVAILABLE,
                    "this server is shutting down; retry",
                    "UNAVAILABLE",
                    {"draining": "true"},
                ),
            )
        self.in_flight += 1
        self._idle.clear()

    def release(self, ticket: None, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        self.in_flight -= 1
        if self.in_flight == 0:
            self._idle.set()

    def start(self) -> None:
        """Refuse every new call from now on; calls already admitted go on."""
        if not self.draining:
            self.draining = True
            self._started = time.monotonic()

    async def wait(self, grace: float, linger: float = 1.0) -> bool:
        """Drain (if not started yet); True when every call in flight ended within
        ``grace`` seconds of the start.

        New calls are refused for at least ``linger`` seconds before this returns, so that
        clients already connected hear UNAVAILABLE (and go elsewhere) rather than meet a
        closing connection.
        """
        self.start()
        left = max(0.0, self._started + grace - time.monotonic())
        try:
            await asyncio.wait_for(self._idle.wait(), left)
        except TimeoutError:
            return False
        await asyncio.sleep(max(0.0, min(linger, grace) - (time.monotonic() - self._started)))
        return True


def leave(code: int = 0) -> NoReturn:
    """End the process once drained, without gRPC's ``server.stop`` (which would cancel
    whatever reaches the server meanwhile): the kernel closes its connections, and clients
    see UNAVAILABLE, as from any server that is gone, and reconnect elsewhere."""
    tracing.shutdown()  # the spans still queued go to the collector first
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
