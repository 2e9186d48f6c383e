"""OpenTelemetry traces, off unless the standard ``OTEL_*`` variables configure them.

Every process (a game service, the gateway's Python side) calls :func:`setup` once at
start and :func:`shutdown` before it leaves (the drain's ``leave``), which sends what is
still queued. Tracing is on when ``OTEL_EXPORTER_OTLP_ENDPOINT`` or
``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set, or ``OTEL_TRACES_EXPORTER`` names an
exporter (``otlp``, ``console``); ``OTEL_SDK_DISABLED=true`` or
``OTEL_TRACES_EXPORTER=none`` keep it off whatever else is set.

Off, nothing of OpenTelemetry is imported: :func:`span` hands back one shared no-op
context manager, and the interceptor wraps calls without a span (docs/tracing.md has the
cost either way). On, the SDK reads the rest of the standard variables itself: sampling
(``OTEL_TRACES_SAMPLER``/``_ARG``), the resource (``OTEL_SERVICE_NAME``,
``OTEL_RESOURCE_ATTRIBUTES``), the exporter's endpoint, headers and TLS, the batch
processor's queue.

What a span may carry: game type, game id, version, seat index, bot level, gRPC method
and status. Never a token, a move's text or a view (docs/security.md: nothing hidden in
logs or traces).
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
import threading
import urllib.parse
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.trace import Span, Tracer

# gRPC statuses that are the server's fault (OpenTelemetry's gRPC conventions): the span's
# status is an error for these only; a refused move is the game working as it should.
SERVER_ERRORS = frozenset(
    {"UNKNOWN", "DEADLINE_EXCEEDED", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS"}
)
EXPORTERS = ("otlp", "console")
PROTOCOLS = ("grpc",)
# Copied from what the handler bound for the access log (services.kit.logs) onto the
# call's span when it ends.
CALL_FIELDS = ("game_id", "seat", "reason")
SHUTDOWN_SECONDS = 5.0

_NULL: contextlib.AbstractContextManager[None] = contextlib.nullcontext()
_tracer: Tracer | None = None
_provider: TracerProvider | None = None
_current_span: Callable[[], Span] | None = None


class TracingConfigError(ValueError):
    """An OTEL_* variable this process cannot honour (the message names it)."""


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() == "true"


def exporters(env: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """The exporters the environment asks for; () when tracing is off."""
    if _true(env.get("OTEL_SDK_DISABLED")):
        return ()
    named = [n.strip() for n in env.get("OTEL_TRACES_EXPORTER", "").split(",") if n.strip()]
    if "none" in named:
        return ()
    if not named:
        endpoint = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get(
            "OTEL_EXPORTER_OTLP_ENDPOINT"
        )
        return ("otlp",) if endpoint else ()
    unknown = [n for n in named if n not in EXPORTERS]
    if unknown:
        raise TracingConfigError(
            f"OTEL_TRACES_EXPORTER={','.join(named)}: each of {', '.join(EXPORTERS)} or none"
        )
    return tuple(dict.fromkeys(named))


def _protocol(env: Mapping[str, str]) -> str:
    for name in ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"):
        value = env.get(name)
        if value:
            if value not in PROTOCOLS:
                raise TracingConfigError(
                    f"{name}={value}: this build speaks OTLP over gRPC only (grpc; port 4317)"
                )
            return value
    return "grpc"


def endpoint(env: Mapping[str, str]) -> urllib.parse.SplitResult:
    """The collector's address (``..._TRACES_ENDPOINT`` first), as ``http(s)://host:port``."""
    raw = env.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or env.get("OTEL_EXPORTER_OTLP_ENDPOINT")
    if not raw:
        raise TracingConfigError("OTEL_EXPORTER_OTLP_ENDPOINT: not set")
    parsed = urllib.parse.urlsplit(raw if "://" in raw else f"http://{raw}")
    try:
        parsed.port  # noqa: B018  (raises on a port that is not a number)
    except ValueError:
        parsed = urllib.parse.urlsplit("")
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise TracingConfigError(f"OTEL_EXPORTER_OTLP_ENDPOINT={raw}: http(s)://host:port")
    return parsed


def service_name(prog: str) -> str:
    """The default ``service.name`` of a process: 'python -m services.go' -> 'tabletop-go'."""
    module = prog.split()[-1]
    return "tabletop-" + module.rsplit(".", 1)[-1]


def setup(default_name: str) -> bool:
    """Start tracing if the environment asks for it; whether it is on.

    ``default_name`` is the ``service.name`` unless ``OTEL_SERVICE_NAME`` or
    ``OTEL_RESOURCE_ATTRIBUTES`` give one. The SDK reads the process's environment.
    """
    global _tracer, _provider, _current_span
    env = os.environ
    chosen = exporters(env)
    if not chosen:
        return False
    if "otlp" in chosen:
        _protocol(env)
        endpoint(env)  # a bad one stops the process at start, naming the variable
    # Imported here, once tracing is asked for: off, none of this is loaded.
    from opentelemetry import trace
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter

    attributes: dict[str, str] = {}
    named = env.get("OTEL_SERVICE_NAME") or "service.name=" in env.get(
        "OTEL_RESOURCE_ATTRIBUTES", ""
    )
    if not named:
        attributes["service.name"] = default_name
    # The sampler (OTEL_TRACES_SAMPLER, _ARG) and the resource's variables are read by
    # the SDK itself.
    provider = TracerProvider(resource=Resource.create(attributes))
    for name in chosen:
        exporter: SpanExporter
        if name == "otlp":
            from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter

            exporter = OTLPSpanExporter()
        else:
            from opentelemetry.sdk.trace.export import ConsoleSpanExporter

            exporter = ConsoleSpanExporter(out=sys.stderr)
        provider.add_span_processor(BatchSpanProcessor(exporter))
    # Not made the global provider: only this module's spans exist, and tests set up
    # and shut down more than one in a process.
    _provider = provider
    _tracer = provider.get_tracer("tabletop")
    _current_span = trace.get_current_span
    return True


def shutdown(timeout: float = SHUTDOWN_SECONDS) -> None:
    """Send the spans still queued and stop the exporters (a process about to leave),
    waiting ``timeout`` seconds at most: a collector that is down delays no exit longer
    (the SDK would wait 30 s per exporter)."""
    global _tracer, _provider, _current_span
    provider, _provider, _tracer, _current_span = _provider, None, None, None
    if provider is not None:
        closing = threading.Thread(target=provider.shutdown, name="tracing-shutdown", daemon=True)
        closing.start()
        closing.join(timeout)


def enabled() -> bool:
    return _tracer is not None


def _clean(attributes: Mapping[str, Any]) -> dict[str, Any]:
    return {f"tabletop.{k}": v for k, v in attributes.items() if v is not None}


@contextlib.contextmanager
def _current(
    tracer: Tracer, name: str, attributes: Mapping[str, Any], parent: Any
) -> Iterator[Span]:
    """A span current for a block. A failure marks it an error by the exception's type
    alone: a message may quote a move, which the trace must not carry."""
    from opentelemetry.trace import StatusCode

    with tracer.start_as_current_span(
        name,
        context=parent,
        attributes=_clean(attributes),
        record_exception=False,
        set_status_on_exception=False,
    ) as current:
        try:
            yield current
        except Exception as exc:
            current.set_status(StatusCode.ERROR, type(exc).__name__)
            raise


def span(name: str, **attributes: Any) -> contextlib.AbstractContextManager[Any]:
    """A child span of whatever span is current (a call's, a bot turn's), for a
    ``with`` block; nothing at all when tracing is off."""
    tracer = _tracer
    if tracer is None or _current_span is None:
        return _NULL
    if not _current_span().is_recording():
        return _NULL  # a call the sampler left out: its children are left out too
    return _current(tracer, name, attributes, None)


def root(name: str, **attributes: Any) -> contextlib.AbstractContextManager[Any]:
    """A span that starts a trace of its own (work no call waits for: a bot's turn, the
    clock's firing), whatever the task it runs in inherited."""
    tracer = _tracer
    if tracer is None:
        return _NULL
    from opentelemetry.context import Context

    return _current(tracer, name, attributes, Context())


P = ParamSpec("P")
R = TypeVar("R")


def traced_root(
    name: str, key: str = "game_id"
) -> Callable[[Callable[P, Coroutine[Any, Any, R]]], Callable[P, Coroutine[Any, Any, R]]]:
    """Run a coroutine function in a :func:`root` span, with its ``key`` argument (the
    first positional after ``self`` when not given by name) as the span's attribute."""

    def wrap(function: Callable[P, Coroutine[Any, Any, R]]) -> Callable[P, Coroutine[Any, Any, R]]:
        @functools.wraps(function)
        async def traced(*args: P.args, **kwargs: P.kwargs) -> R:
            if _tracer is None:
                return await function(*args, **kwargs)
            value = kwargs.get(key, args[1] if len(args) > 1 else None)
            with root(name, **{key: value}):
                return await function(*args, **kwargs)

        return traced

    return wrap


def ids() -> tuple[str, str] | None:
    """The current span's (trace id, span id) in hex, or None (off, or no span)."""
    if _tracer is None:
        return None
    from opentelemetry import trace

    context = trace.get_current_span().get_span_context()
    if not context.is_valid:
        return None
    return format(context.trace_id, "032x"), format(context.span_id, "016x")


def propagate(metadata: list[tuple[str, str | bytes]]) -> list[tuple[str, str | bytes]]:
    """``metadata`` for an upstream call, its ``traceparent`` (and ``tracestate``) made
    the current span's, so the upstream's span is this one's child."""
    if _tracer is None:
        return metadata
    from opentelemetry import propagate as propagation

    carrier: dict[str, str] = {}
    propagation.inject(carrier)
    if not carrier:
        return metadata
    out = [(k, v) for k, v in metadata if k not in carrier]
    out.extend(carrier.items())
    return out


class _MetadataGetter:
    """W3C trace context read from a call's invocation metadata."""

    def get(self, carrier: Sequence[tuple[str, Any]], key: str) -> list[str] | None:
        found = [v for k, v in carrier if k == key and isinstance(v, str)]
        return found or None

    def keys(self, carrier: Sequence[tuple[str, Any]]) -> list[str]:
        return [k for k, _ in carrier]


_GETTER = _MetadataGetter()


class ServerCall:
    """A call's server span, current while its handler runs."""

    __slots__ = ("_span", "_token")

    def __init__(self, span: Span, token: object) -> None:
        self._span = span
        self._token = token

    def close(self, code: str, bound: Mapping[str, Any]) -> None:
        from opentelemetry import context as otel_context
        from opentelemetry.trace import StatusCode

        span = self._span
        span.set_attribute("rpc.grpc.status_code", code)
        span.set_attributes(_clean({k: bound.get(k) for k in CALL_FIELDS}))
        if code in SERVER_ERRORS:
            span.set_status(StatusCode.ERROR, code)
        span.end()
        # The same task that attached it, except a stream's generator closed elsewhere.
        with contextlib.suppress(Exception):
            otel_context.detach(self._token)  # type: ignore[arg-type]


def server_call(service: str, method: str, metadata: Iterable[Any] | None) -> ServerCall | None:
    """Start the server span of one call, the child of the caller's ``traceparent``, and
    make it current; None when tracing is off."""
    tracer = _tracer
    if tracer is None:
        return None
    from opentelemetry import context as otel_context
    from opentelemetry import propagate as propagation
    from opentelemetry import trace

    parent = propagation.extract(tuple(metadata or ()), getter=_GETTER)  # type: ignore[arg-type]
    span = tracer.start_span(
        f"{service}/{method}",
        context=parent,
        kind=trace.SpanKind.SERVER,
        attributes={"rpc.system": "grpc", "rpc.service": service, "rpc.method": method},
    )
    token = otel_context.attach(trace.set_span_in_context(span, parent))
    return ServerCall(span, token)


@contextlib.contextmanager
def configured(default_name: str) -> Iterator[bool]:
    """:func:`setup` then :func:`shutdown` around a block (tests, tools)."""
    try:
        yield setup(default_name)
    finally:
        shutdown()
