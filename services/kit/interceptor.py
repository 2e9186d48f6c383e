"""One server interceptor per process: the grpc_server_* metrics, the access log, and
the guards that may refuse a call (the drain, the per-client limits).

Used by every game service and by the gateway, each with its own metric families. The
guards run inside the one wrapper (rather than as interceptors of their own), and the
wrapped handler is built once per method and reused: both matter on the hot path.

Every handler shape grpc.aio accepts is wrapped in its own shape: unary or streaming
requests, and for streamed responses an async generator, a coroutine that writes with
``context.write`` (the standard health service's Watch), or a plain generator. grpc.aio
looks at the handler's kind to decide how to drive it, so a wrapper of the wrong kind
breaks the call.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Protocol

import grpc
import structlog

from services.kit import tracing
from services.kit.logs import AccessLog
from services.kit.metrics import (
    BIDI_STREAM,
    CLIENT_STREAM,
    SERVER_STREAM,
    UNARY,
    CallMetrics,
    RpcMetrics,
)

# Health checks and reflection are never refused by a guard: probes and tools keep working
# while a server drains or a client is limited.
UNGUARDED = ("/grpc.health.v1.Health/", "/grpc.reflection.")

_CODES = {c.value[0]: c for c in grpc.StatusCode}


class Guard(Protocol):
    """Something that may refuse a call before it runs, and hears when it ends."""

    async def admit(
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any], streaming: bool
    ) -> Any:
        """Abort the call (``context.abort``) or return a ticket for ``release``."""

    def release(self, ticket: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        """The call ended (whatever its status)."""


def split_method(full: str) -> tuple[str, str]:
    """'/tabletop.channeling.v1.ChannelingService/SubmitMove' -> (service, method)."""
    _, _, rest = full.partition("/")
    service, _, method = rest.partition("/")
    return service or "unknown", method or "unknown"


def code_of(
    context: grpc.aio.ServicerContext[Any, Any], failed: BaseException | None
) -> grpc.StatusCode:
    """The status a finished call ended with.

    A call the client cancelled (or whose deadline passed) ends with the handler's task
    cancelled, or with its response generator closed: that is CANCELLED, not UNKNOWN.
    """
    code = context.code()
    if isinstance(code, grpc.StatusCode):
        return code
    if isinstance(code, int):
        return _CODES.get(code, grpc.StatusCode.UNKNOWN)
    if context.cancelled():
        return grpc.StatusCode.CANCELLED
    if failed is None:
        return grpc.StatusCode.OK
    if isinstance(failed, BaseException) and failed.__class__.__name__ in (
        "CancelledError",
        "GeneratorExit",
    ):
        return grpc.StatusCode.CANCELLED
    return grpc.StatusCode.UNKNOWN


class _CountingContext:
    """The servicer context as a reader/writer handler sees it, counting messages.

    Handed only to handlers that may call ``context.write`` or ``context.read``
    themselves (reader/writer streams, streamed requests); everything else is the real
    context's.
    """

    __slots__ = ("_call", "_context")

    def __init__(self, context: grpc.aio.ServicerContext[Any, Any], call: CallMetrics) -> None:
        self._context = context
        self._call = call

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    async def write(self, message: Any) -> None:
        await self._context.write(message)
        self._call.sent.inc()

    async def read(self) -> Any:
        message = await self._context.read()
        if message is not grpc.aio.EOF:
            self._call.received.inc()
        return message


async def _counted(messages: Any, counter: Any) -> AsyncIterator[Any]:
    """A message stream (async or plain iterable) that counts what it hands on."""
    if hasattr(messages, "__aiter__"):
        async for message in messages:
            counter.inc()
            yield message
    else:
        for message in messages:
            counter.inc()
            yield message


def replace_behaviour(
    handler: grpc.RpcMethodHandler[Any, Any], **behaviour: Any
) -> grpc.RpcMethodHandler[Any, Any]:
    """``handler`` with the given behaviours swapped (``unary_unary=...`` and so on)."""
    # grpc builds its method handlers as namedtuples; the stubs declare only the ABC.
    replaced: grpc.RpcMethodHandler[Any, Any]
    replaced = handler._replace(**behaviour)  # type: ignore[attr-defined]  # a namedtuple's
    return replaced


def grpc_type_of(handler: grpc.RpcMethodHandler[Any, Any]) -> str:
    if handler.request_streaming and handler.response_streaming:
        return BIDI_STREAM
    if handler.request_streaming:
        return CLIENT_STREAM
    if handler.response_streaming:
        return SERVER_STREAM
    return UNARY


class ObservingInterceptor(grpc.aio.ServerInterceptor):
    def __init__(
        self,
        metrics: RpcMetrics,
        *,
        guards: Sequence[Guard] = (),
        access_log: bool = True,
        access_log_sample: int = 1,
        quiet_services: frozenset[str] = frozenset({"grpc.health.v1.Health"}),
    ) -> None:
        self._metrics = metrics
        self._guards = tuple(guards)
        self._access_log = AccessLog(access_log_sample) if access_log else None
        self._quiet = quiet_services
        self._wrapped: dict[
            str, tuple[grpc.RpcMethodHandler[Any, Any], grpc.RpcMethodHandler[Any, Any]]
        ] = {}

    async def intercept_service(
        self,
        continuation: Callable[
            [grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler[Any, Any] | None]
        ],
        details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        handler = await continuation(details)
        if handler is None:
            return handler
        cached = self._wrapped.get(details.method)
        if cached is not None and cached[0] is handler:
            return cached[1]
        wrapped = self._wrap(details.method, handler)
        self._wrapped[details.method] = (handler, wrapped)
        return wrapped

    def _wrap(
        self, path: str, handler: grpc.RpcMethodHandler[Any, Any]
    ) -> grpc.RpcMethodHandler[Any, Any]:
        service, method = split_method(path)
        guards = () if path.startswith(UNGUARDED) else self._guards
        call = self._metrics.call(grpc_type_of(handler), service, method)
        log = self._access_log if service not in self._quiet else None
        full = f"{service}/{method}"
        # A server span per call when tracing is on (not for probes and tools).
        traced = tracing.enabled() and not path.startswith(UNGUARDED)
        clock = time.perf_counter
        response_streaming = bool(handler.response_streaming)
        request_streaming = bool(handler.request_streaming)

        def opened(context: grpc.aio.ServicerContext[Any, Any]) -> tracing.ServerCall | None:
            """A clean slate for the call's log fields, and its span when traced (the
            trace and span ids then among those fields, on its access line)."""
            structlog.contextvars.clear_contextvars()
            if not traced:
                return None
            scope = tracing.server_call(service, method, context.invocation_metadata())
            found = tracing.ids()
            if found is not None:
                structlog.contextvars.bind_contextvars(trace_id=found[0], span_id=found[1])
            return scope

        async def begin(
            request: Any,
            context: grpc.aio.ServicerContext[Any, Any],
            tickets: list[tuple[Guard, Any]],
        ) -> None:
            """Count the call as started and run the guards (which may abort it)."""
            call.started.inc()
            if not request_streaming:
                call.received.inc()
            # Each admitted guard's ticket is kept at once, so a later guard's refusal
            # still releases the earlier ones.
            for guard in guards:
                tickets.append((guard, await guard.admit(request, context, response_streaming)))

        def end(
            context: grpc.aio.ServicerContext[Any, Any],
            tickets: list[tuple[Guard, Any]],
            failed: BaseException | None,
            t0: float,
            scope: tracing.ServerCall | None,
        ) -> None:
            for guard, ticket in reversed(tickets):
                guard.release(ticket, context)
            seconds = clock() - t0
            code = code_of(context, failed)
            call.handled(code.name, seconds)
            if log is not None:
                log.record(full, code.name, seconds)
            if scope is not None:
                scope.close(code.name, structlog.contextvars.get_contextvars())

        def request_of(request: Any) -> Any:
            return _counted(request, call.received) if request_streaming else request

        kind = (
            "stream_stream"
            if request_streaming and response_streaming
            else "stream_unary"
            if request_streaming
            else "unary_stream"
            if response_streaming
            else "unary_unary"
        )
        inner = getattr(handler, kind)
        if inner is None:
            return handler

        if not response_streaming:

            async def single(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                t0 = clock()
                failed: BaseException | None = None
                tickets: list[tuple[Guard, Any]] = []
                scope = opened(context)
                try:
                    await begin(request, context, tickets)
                    # A streamed request may be read with context.read: count those too.
                    handed = _CountingContext(context, call) if request_streaming else context
                    response = inner(request_of(request), handed)
                    if inspect.isawaitable(response):
                        response = await response
                    if response is not None:
                        call.sent.inc()
                    return response
                except BaseException as exc:
                    failed = exc
                    raise
                finally:
                    end(context, tickets, failed, t0, scope)

            return replace_behaviour(handler, **{kind: single})

        if inspect.iscoroutinefunction(inner):
            # Reader/writer API: the handler writes its responses with context.write.
            async def writer(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
                t0 = clock()
                failed: BaseException | None = None
                tickets: list[tuple[Guard, Any]] = []
                scope = opened(context)
                try:
                    await begin(request, context, tickets)
                    await inner(request_of(request), _CountingContext(context, call))
                except BaseException as exc:
                    failed = exc
                    raise
                finally:
                    end(context, tickets, failed, t0, scope)

            return replace_behaviour(handler, **{kind: writer})

        async def generator(
            request: Any, context: grpc.aio.ServicerContext[Any, Any]
        ) -> AsyncIterator[Any]:
            t0 = clock()
            failed: BaseException | None = None
            tickets: list[tuple[Guard, Any]] = []
            scope = opened(context)
            try:
                await begin(request, context, tickets)
                responses = inner(request_of(request), context)
                async for response in _counted(responses, call.sent):
                    yield response
            except BaseException as exc:
                failed = exc
                raise
            finally:
                end(context, tickets, failed, t0, scope)

        return replace_behaviour(handler, **{kind: generator})
