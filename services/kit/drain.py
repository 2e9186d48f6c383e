"""Graceful drain: on SIGTERM, refuse new calls cleanly and let calls in flight finish.

grpc's own ``server.stop(grace)`` cancels calls that arrive during the grace period with
CANCELLED, which clients do not retry. So the server first drains: new calls get
UNAVAILABLE with a reason (clients retry, elsewhere), health says NOT_SERVING, calls in
flight run to their end; only then, or when the grace runs out, the server stops.
Health and reflection keep answering while draining (the interceptor does not guard them).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc

from services.kit import status


class Drain:
    """A guard of the server's interceptor (see services.kit.interceptor.Guard)."""

    def __init__(self) -> None:
        self.draining = False
        self.in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    async def admit(self, request: Any, context: grpc.aio.ServicerContext, streaming: bool) -> None:
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

    def release(self, ticket: None, context: grpc.aio.ServicerContext) -> None:
        self.in_flight -= 1
        if self.in_flight == 0:
            self._idle.set()

    async def wait(self, grace: float, linger: float = 1.0) -> bool:
        """Start draining; True when every call in flight ended within ``grace`` seconds.

        New calls are refused for at least ``linger`` seconds before this returns, so that
        clients already connected hear UNAVAILABLE (and go elsewhere) rather than meet a
        closing connection.
        """
        self.draining = True
        started = time.monotonic()
        try:
            await asyncio.wait_for(self._idle.wait(), grace)
        except TimeoutError:
            return False
        await asyncio.sleep(max(0.0, min(linger, grace) - (time.monotonic() - started)))
        return True
