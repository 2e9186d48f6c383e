"""Forwarding by service name, as raw bytes: no decode, no re-encode.

The router answers any method of a routed service. It learns whether a method streams
from the descriptors the gateway loaded (the same protos it serves by reflection),
passes the caller's metadata, deadline and cancellation to the backend, and passes back
the backend's metadata and status, error details included, unchanged.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import grpc
from google.protobuf import descriptor_pool

from gateway.backends import Backend, Backends
from services.kit import status
from services.kit.limits import client_of

# Connection-level and reserved headers; gRPC sets its own on the upstream call.
_HOP_HEADERS = frozenset(
    {"content-type", "te", "host", "user-agent", "grpc-timeout", "grpc-encoding",
     "grpc-accept-encoding", "connection", "keep-alive", "x-forwarded-for"}
)  # fmt: skip


def forward_metadata(
    metadata: tuple[tuple[str, str | bytes], ...] | None, peer: str | None
) -> list[tuple[str, str | bytes]]:
    out = [(k, v) for k, v in metadata or () if not k.startswith(":") and k not in _HOP_HEADERS]
    if peer:
        out.append(("x-forwarded-for", client_of(peer)))
    return out


class Router(grpc.GenericRpcHandler):
    def __init__(self, backends: Backends, *, unary_timeout: float, stream_timeout: float) -> None:
        self.backends = backends
        self.unary_timeout = unary_timeout
        self.stream_timeout = stream_timeout
        self._handlers: dict[str, grpc.RpcMethodHandler | None] = {}

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        path = details.method
        if path in self._handlers:
            return self._handlers[path]
        handler = self._build(path)
        self._handlers[path] = handler
        return handler

    def _build(self, path: str) -> grpc.RpcMethodHandler | None:
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
        if found.client_streaming:
            return None  # no game has client-streaming calls; refuse rather than guess
        if found.server_streaming:
            return grpc.unary_stream_rpc_method_handler(self._stream(backend, path))
        return grpc.unary_unary_rpc_method_handler(self._unary(backend, path))

    def _timeout(self, context: grpc.aio.ServicerContext, default: float) -> float:
        remaining = context.time_remaining()
        if remaining is None:
            return default
        return max(0.0, remaining)

    def _unary(self, backend: Backend, path: str) -> Any:
        async def forward(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
            if not backend.channels:
                await _no_backend(context, backend)
            call = backend.method("unary_unary", path)(  # type: ignore[operator]
                request,
                metadata=forward_metadata(context.invocation_metadata(), context.peer()),
                timeout=self._timeout(context, self.unary_timeout),
            )
            try:
                response = await call
            except grpc.aio.AioRpcError as error:
                await _relay_error(context, error)
            except asyncio.CancelledError:
                call.cancel()
                raise
            trailing = await call.trailing_metadata()
            if trailing:
                context.set_trailing_metadata(trailing)
            return response

        return forward

    def _stream(self, backend: Backend, path: str) -> Any:
        async def forward(
            request: bytes, context: grpc.aio.ServicerContext
        ) -> AsyncIterator[bytes]:
            call = None
            try:
                if not backend.channels:
                    await _no_backend(context, backend)
                call = backend.method("unary_stream", path)(  # type: ignore[operator]
                    request,
                    metadata=forward_metadata(context.invocation_metadata(), context.peer()),
                    timeout=self._timeout(context, self.stream_timeout),
                )
                try:
                    async for message in call:
                        yield message
                except grpc.aio.AioRpcError as error:
                    await _relay_error(context, error)
                trailing = await call.trailing_metadata()
                if trailing:
                    context.set_trailing_metadata(trailing)
            finally:
                if call is not None and not call.done():
                    call.cancel()

        return forward


async def _relay_error(context: grpc.aio.ServicerContext, error: grpc.aio.AioRpcError) -> None:
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
    if reason == "BACKEND_UNAVAILABLE":
        message = f"the game service is unavailable: {message}"
    await status.abort(context, status.status_for(code, message, reason))


async def _no_backend(context: grpc.aio.ServicerContext, backend: Backend) -> None:
    await status.abort(
        context,
        status.status_for(
            grpc.StatusCode.UNAVAILABLE,
            f"no backend is configured for {backend.service}",
            "BACKEND_UNAVAILABLE",
        ),
    )
