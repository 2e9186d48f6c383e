"""Graceful drain: on SIGTERM, refuse new calls cleanly and let calls in flight finish.

grpc's own ``server.stop(grace)`` cancels calls that arrive during the grace period with
CANCELLED, which clients do not retry. So the server first drains: new calls get
UNAVAILABLE with a reason (clients retry, elsewhere), health says NOT_SERVING, calls in
flight run to their end; only then, or when the grace runs out, the server stops.
Health and reflection keep answering while draining.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from services.kit import status

EXEMPT = ("/grpc.health.v1.Health/", "/grpc.reflection.")


class Drain(grpc.aio.ServerInterceptor):
    def __init__(self) -> None:
        self.draining = False
        self.in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()

    def _enter(self) -> None:
        self.in_flight += 1
        self._idle.clear()

    def _leave(self) -> None:
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

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None or details.method.startswith(EXEMPT):
            return handler
        drain = self

        async def refuse(context: grpc.aio.ServicerContext) -> None:
            await status.abort(
                context,
                status.status_for(
                    grpc.StatusCode.UNAVAILABLE,
                    "this server is shutting down; retry",
                    "UNAVAILABLE",
                    {"draining": "true"},
                ),
            )

        if handler.unary_unary is not None:
            inner = handler.unary_unary

            async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                if drain.draining:
                    await refuse(context)
                drain._enter()
                try:
                    return await inner(request, context)
                finally:
                    drain._leave()

            return handler._replace(unary_unary=unary_unary)
        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            async def unary_stream(
                request: Any, context: grpc.aio.ServicerContext
            ) -> AsyncIterator[Any]:
                if drain.draining:
                    await refuse(context)
                drain._enter()
                try:
                    async for item in inner_stream(request, context):
                        yield item
                finally:
                    drain._leave()

            return handler._replace(unary_stream=unary_stream)
        return handler
