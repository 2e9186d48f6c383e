"""One server interceptor per process: counts, latency, in-flight calls, the access log,
and the guards that may refuse a call (the drain, the per-client limits).

Used by every game service and by the gateway, each with its own metric families. The
guards run inside the one wrapper (rather than as interceptors of their own), and the
wrapped handler is built once per method and reused: both matter on the hot path.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Protocol

import grpc
import structlog
from prometheus_client import Counter, Gauge, Histogram

_log = structlog.get_logger("rpc")

# Health checks and reflection are never refused by a guard: probes and tools keep working
# while a server drains or a client is limited.
UNGUARDED = ("/grpc.health.v1.Health/", "/grpc.reflection.")

_CODES = {c.value[0]: c for c in grpc.StatusCode}


class Guard(Protocol):
    """Something that may refuse a call before it runs, and hears when it ends."""

    async def admit(self, request: Any, context: grpc.aio.ServicerContext, streaming: bool) -> Any:
        """Abort the call (``context.abort``) or return a ticket for ``release``."""

    def release(self, ticket: Any, context: grpc.aio.ServicerContext) -> None:
        """The call ended (whatever its status)."""


def split_method(full: str) -> tuple[str, str]:
    """'/tabletop.channeling.v1.ChannelingService/SubmitMove' -> (service, method)."""
    _, _, rest = full.partition("/")
    service, _, method = rest.partition("/")
    return service or "unknown", method or "unknown"


def code_of(context: grpc.aio.ServicerContext, failed: BaseException | None) -> grpc.StatusCode:
    """The status a finished call ended with."""
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code
    if isinstance(code, int):
        return _CODES.get(code, grpc.StatusCode.UNKNOWN)
    if failed is None:
        return grpc.StatusCode.OK
    if failed.__class__.__name__ == "CancelledError":
        return grpc.StatusCode.CANCELLED
    return grpc.StatusCode.UNKNOWN


class ObservingInterceptor(grpc.aio.ServerInterceptor):
    def __init__(
        self,
        requests: Counter,
        latency: Histogram,
        in_flight: Gauge,
        *,
        guards: Sequence[Guard] = (),
        access_log: bool = True,
        quiet_services: frozenset[str] = frozenset({"grpc.health.v1.Health"}),
    ) -> None:
        self._requests = requests
        self._latency = latency
        self._in_flight = in_flight
        self._guards = tuple(guards)
        self._access_log = access_log
        self._quiet = quiet_services
        self._wrapped: dict[str, tuple[grpc.RpcMethodHandler, grpc.RpcMethodHandler]] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return handler
        cached = self._wrapped.get(details.method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = self._wrap(details.method, handler)
        self._wrapped[details.method] = (handler, wrapped)
        return wrapped

    def _wrap(self, path: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        service, method = split_method(path)
        guards = () if path.startswith(UNGUARDED) else self._guards
        gauge = self._in_flight.labels(service, method)
        latency = self._latency.labels(service, method)
        requests = self._requests
        log = self._access_log and service not in self._quiet
        full = f"{service}/{method}"
        clock = time.perf_counter

        def record(
            context: grpc.aio.ServicerContext, failed: BaseException | None, t0: float
        ) -> None:
            seconds = clock() - t0
            code = code_of(context, failed)
            latency.observe(seconds)
            requests.labels(service, method, code.name).inc()
            if log:
                _log.info("rpc", method=full, code=code.name, latency_ms=round(seconds * 1000, 3))

        async def admit(
            request: Any, context: grpc.aio.ServicerContext, streaming: bool, tickets: list
        ) -> None:
            # Each admitted guard's ticket is kept at once, so a later guard's refusal
            # still releases the earlier ones.
            for guard in guards:
                tickets.append((guard, await guard.admit(request, context, streaming)))

        def release(tickets: list, context: grpc.aio.ServicerContext) -> None:
            for guard, ticket in reversed(tickets):
                guard.release(ticket, context)

        if handler.unary_unary is not None:
            inner = handler.unary_unary

            async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                structlog.contextvars.clear_contextvars()
                t0 = clock()
                gauge.inc()
                failed: BaseException | None = None
                tickets: list = []
                try:
                    if guards:
                        await admit(request, context, False, tickets)
                    return await inner(request, context)
                except BaseException as exc:
                    failed = exc
                    raise
                finally:
                    release(tickets, context)
                    gauge.dec()
                    record(context, failed, t0)

            return handler._replace(unary_unary=unary_unary)

        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            async def unary_stream(
                request: Any, context: grpc.aio.ServicerContext
            ) -> AsyncIterator[Any]:
                structlog.contextvars.clear_contextvars()
                t0 = clock()
                gauge.inc()
                failed: BaseException | None = None
                tickets: list = []
                try:
                    if guards:
                        await admit(request, context, True, tickets)
                    async for response in inner_stream(request, context):
                        yield response
                except BaseException as exc:
                    failed = exc
                    raise
                finally:
                    release(tickets, context)
                    gauge.dec()
                    record(context, failed, t0)

            return handler._replace(unary_stream=unary_stream)

        return handler
