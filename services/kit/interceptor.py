"""One server interceptor for counts, latency, in-flight calls and the access log.

Used by every game service and by the gateway, each with its own metric families.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
import structlog
from prometheus_client import Counter, Gauge, Histogram

_log = structlog.get_logger("rpc")


def split_method(full: str) -> tuple[str, str]:
    """'/tabletop.channeling.v1.ChannelingService/SubmitMove' -> (service, method)."""
    _, _, rest = full.partition("/")
    service, _, method = rest.partition("/")
    return service or "unknown", method or "unknown"


class ObservingInterceptor(grpc.aio.ServerInterceptor):
    def __init__(
        self,
        requests: Counter,
        latency: Histogram,
        in_flight: Gauge,
        *,
        access_log: bool = True,
        quiet_services: frozenset[str] = frozenset({"grpc.health.v1.Health"}),
    ) -> None:
        self._requests = requests
        self._latency = latency
        self._in_flight = in_flight
        self._access_log = access_log
        self._quiet = quiet_services
        self._children: dict[tuple[str, str], tuple[Any, Any]] = {}

    def _record(self, service: str, method: str, code: grpc.StatusCode, seconds: float) -> None:
        key = (service, method)
        children = self._children.get(key)
        if children is None:
            children = self._children[key] = (
                self._latency.labels(service, method),
                self._in_flight.labels(service, method),
            )
        children[0].observe(seconds)
        self._requests.labels(service, method, code.name).inc()
        if self._access_log and service not in self._quiet:
            _log.info(
                "rpc",
                method=f"{service}/{method}",
                code=code.name,
                latency_ms=round(seconds * 1000, 3),
            )

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(details)
        if handler is None:
            return handler
        service, method = split_method(details.method)
        gauge = self._in_flight.labels(service, method)
        record = self._record

        def code_of(
            context: grpc.aio.ServicerContext, failed: BaseException | None
        ) -> grpc.StatusCode:
            code = context.code()
            if isinstance(code, grpc.StatusCode):
                return code
            if isinstance(code, int):
                return next(
                    (c for c in grpc.StatusCode if c.value[0] == code), grpc.StatusCode.UNKNOWN
                )
            if failed is None:
                return grpc.StatusCode.OK
            if isinstance(failed, BaseException) and failed.__class__.__name__ == "CancelledError":
                return grpc.StatusCode.CANCELLED
            return grpc.StatusCode.UNKNOWN

        if handler.unary_unary is not None:
            inner = handler.unary_unary

            async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Any:
                structlog.contextvars.clear_contextvars()
                started = time.perf_counter()
                gauge.inc()
                failed: BaseException | None = None
                try:
                    return await inner(request, context)
                except BaseException as exc:
                    failed = exc
                    raise
                finally:
                    gauge.dec()
                    record(service, method, code_of(context, failed), time.perf_counter() - started)

            return handler._replace(unary_unary=unary_unary)

        if handler.unary_stream is not None:
            inner_stream = handler.unary_stream

            async def unary_stream(
                request: Any, context: grpc.aio.ServicerContext
            ) -> AsyncIterator[Any]:
                structlog.contextvars.clear_contextvars()
                started = time.perf_counter()
                gauge.inc()
                failed: BaseException | None = None
                try:
                    async for response in inner_stream(request, context):
                        yield response
                except BaseException as exc:
                    failed = exc
                    raise
                finally:
                    gauge.dec()
                    record(service, method, code_of(context, failed), time.perf_counter() - started)

            return handler._replace(unary_stream=unary_stream)

        return handler
