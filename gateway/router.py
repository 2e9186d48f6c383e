"""Forwarding by service name, as raw bytes: no decode, no re-encode.

The router answers any method of a routed service. It learns whether a method streams
from the descriptors the gateway loaded (the same protos it serves by reflection),
passes the caller's metadata, deadline and cancellation to the backend, and passes back
the backend's metadata and status, error details included, unchanged. Each upstream call
is counted in the grpc_client_* families. A game whose every backend failed its last
health check is answered UNAVAILABLE at once, rather than left to wait for a deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterable
from typing import Any

import grpc
import structlog
from google.protobuf import descriptor_pool

from gateway.backends import Backend, Backends
from services.kit import status, tracing
from services.kit.limits import client_address
from services.kit.metrics import BIDI_STREAM, SERVER_STREAM, UNARY, CallMetrics, RpcMetrics

_log = structlog.get_logger("router")

# Connection-level and reserved headers; gRPC sets its own on the upstream call.
_HOP_HEADERS = frozenset(
    {"content-type", "te", "host", "user-agent", "grpc-timeout", "grpc-encoding",
     "grpc-accept-encoding", "connection", "keep-alive", "x-forwarded-for"}
)  # fmt: skip


def forward_metadata(
    metadata: Iterable[tuple[str, str | bytes]] | None, client: str | None
) -> list[tuple[str, str | bytes]]:
    """The caller's metadata for the backend, ``x-forwarded-for`` naming ``client``."""
    out = [(k, v) for k, v in metadata or () if not k.startswith(":") and k not in _HOP_HEADERS]
    if client:
        out.append(("x-forwarded-for", client))
    return tracing.propagate(out)  # the backend's span a child of this call's


class Router(grpc.GenericRpcHandler):
    def __init__(
        self,
        backends: Backends,
        client_metrics: RpcMetrics,
        *,
        unary_timeout: float,
        stream_timeout: float,
        trust_forwarded_for: bool = False,
    ) -> None:
        self.backends = backends
        # Behind Envoy the caller is Envoy: the client is the x-forwarded-for it set.
        self.trust_forwarded_for = trust_forwarded_for
        self.client_metrics = client_metrics
        self.unary_timeout = unary_timeout
        self.stream_timeout = stream_timeout
        self._handlers: dict[str, grpc.RpcMethodHandler[bytes, bytes] | None] = {}

    def service(
        self, details: grpc.HandlerCallDetails
    ) -> grpc.RpcMethodHandler[bytes, bytes] | None:
        path = details.method
        if path in self._handlers:
            return self._handlers[path]
        handler = self._build(path)
        self._handlers[path] = handler
        return handler

    def _build(self, path: str) -> grpc.RpcMethodHandler[bytes, bytes] | None:
        _, _, rest = path.partition("/")
        service, _, method = rest.partition("/")
        backend = self.backends.get(service)
        if backend is None:
            return None
        try:
            descriptor = descriptor_pool.Default().FindServiceByName(service)
        except KeyError:
            return None
        found = descriptor.methods_by_name.get(method)
        if found is None:
            return None
        if found.client_streaming and found.server_streaming:  # Play: relayed both ways
            metrics = self.client_metrics.call(BIDI_STREAM, service, method)
            return grpc.stream_stream_rpc_method_handler(self._bidi(backend, path, metrics))
        if found.client_streaming:
            return None  # no game has client-streaming calls; refuse rather than guess
        if found.server_streaming:
            metrics = self.client_metrics.call(SERVER_STREAM, service, method)
            return grpc.unary_stream_rpc_method_handler(self._stream(backend, path, metrics))
        metrics = self.client_metrics.call(UNARY, service, method)
        return grpc.unary_unary_rpc_method_handler(self._unary(backend, path, metrics))

    def _timeout(self, context: grpc.aio.ServicerContext[bytes, bytes], default: float) -> float:
        remaining = context.time_remaining()
        if remaining is None:
            return default
        return max(0.0, remaining)

    def _unary(self, backend: Backend, path: str, metrics: CallMetrics) -> Any:
        clock = time.perf_counter

        async def forward(request: bytes, context: grpc.aio.ServicerContext[bytes, bytes]) -> bytes:
            await _refuse_if_down(context, backend)
            call = backend.method("unary_unary", path)(
                request,
                metadata=forward_metadata(
                    context.invocation_metadata(),
                    client_address(context, self.trust_forwarded_for),
                ),
                timeout=self._timeout(context, self.unary_timeout),
            )
            metrics.started.inc()
            metrics.sent.inc()
            t0 = clock()
            code = "UNKNOWN"
            try:
                response: bytes = await call
                metrics.received.inc()
                code = "OK"
            except grpc.aio.AioRpcError as error:
                code = error.code().name
                await _relay_error(context, error)
            except asyncio.CancelledError:
                call.cancel()
                code = "CANCELLED"
                raise
            finally:
                metrics.handled(code, clock() - t0)
            trailing = await call.trailing_metadata()
            if trailing:
                context.set_trailing_metadata(trailing)
            return response

        return forward

    def _stream(
        self, backend: Backend, path: str, metrics: CallMetrics, kind: str = "unary_stream"
    ) -> Any:
        clock = time.perf_counter

        async def forward(
            request: Any, context: grpc.aio.ServicerContext[bytes, bytes]
        ) -> AsyncIterator[bytes]:
            await _refuse_if_down(context, backend)
            call = backend.method(kind, path)(
                request,
                metadata=forward_metadata(
                    context.invocation_metadata(),
                    client_address(context, self.trust_forwarded_for),
                ),
                timeout=self._timeout(context, self.stream_timeout),
            )
            metrics.started.inc()
            if kind == "unary_stream":
                metrics.sent.inc()  # a streamed request counts its messages as they go
            t0 = clock()
            code = "CANCELLED"  # unless the stream ends with a status of its own
            try:
                try:
                    async for message in call:
                        metrics.received.inc()
                        yield message
                    code = "OK"
                except grpc.aio.AioRpcError as error:
                    code = error.code().name
                    await _relay_error(context, error)
                trailing = await call.trailing_metadata()
                if trailing:
                    context.set_trailing_metadata(trailing)
            finally:
                if not call.done():
                    call.cancel()
                metrics.handled(code, clock() - t0)

        return forward

    def _bidi(self, backend: Backend, path: str, metrics: CallMetrics) -> Any:
        """Play relayed both ways (with Envoy on the data path, Envoy routes it)."""
        stream = self._stream(backend, path, metrics, kind="stream_stream")

        def forward(
            requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext[bytes, bytes]
        ) -> AsyncIterator[bytes]:
            async def sent() -> AsyncIterator[bytes]:
                async for message in requests:
                    metrics.sent.inc()
                    yield message

            relayed: AsyncIterator[bytes] = stream(sent(), context)
            return relayed

        return forward


async def _relay_error(
    context: grpc.aio.ServicerContext[bytes, bytes], error: grpc.aio.AioRpcError
) -> None:
    """Pass the backend's status on as it is: code, message and details.

    A status the backend did not send (it was unreachable, or the deadline passed on the
    way) gets an ErrorInfo here, so every refusal carries a reason.
    """
    trailing = tuple(error.trailing_metadata() or ())
    if any(key == "grpc-status-details-bin" for key, _ in trailing):
        await context.abort(error.code(), error.details() or "", trailing)
    code = error.code()
    reason = {
        grpc.StatusCode.UNAVAILABLE: "BACKEND_UNAVAILABLE",
        grpc.StatusCode.DEADLINE_EXCEEDED: "DEADLINE_EXCEEDED",
        grpc.StatusCode.CANCELLED: "CANCELLED",
        grpc.StatusCode.RESOURCE_EXHAUSTED: "LIMIT_REACHED",
    }.get(code, "UPSTREAM_ERROR")
    message = error.details() or code.name.lower()
    if reason in ("BACKEND_UNAVAILABLE", "UPSTREAM_ERROR"):
        # gRPC's own text for these names the backend's address (and its resolver's or
        # socket's errors): for the operator's log only, as the catalog keeps addresses.
        _log.info("upstream_failed", code=code.name, detail=message)
        message = (
            "the game service is unavailable; retry later"
            if reason == "BACKEND_UNAVAILABLE"
            else f"the game service failed ({code.name})"
        )
    await status.abort(context, status.status_for(code, message, reason))


async def _refuse_if_down(
    context: grpc.aio.ServicerContext[bytes, bytes], backend: Backend
) -> None:
    """UNAVAILABLE at once when the game has no backend, or every one failed its health
    check: a call sent there would only wait for its deadline."""
    if not backend.channels:
        message, state = f"no backend is configured for {backend.service}", "none"
    elif backend.known_down:
        message = (
            f"the game service {backend.service} is down (no backend answers its health "
            "check); retry later"
        )
        state = "down"
    else:
        return
    await status.abort(
        context,
        status.status_for(
            grpc.StatusCode.UNAVAILABLE, message, "BACKEND_UNAVAILABLE", {"backends": state}
        ),
    )
