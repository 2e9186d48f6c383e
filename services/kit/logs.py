"""structlog, configured once per process: JSON lines on stdout (or console for people).

Handlers bind ``game_id``, ``seat`` and ``request_id`` with
``structlog.contextvars.bind_contextvars``; the RPC interceptor adds method, code and
latency and writes one line per call. Nothing secret is ever bound: no token, no seed,
no move text (a move can be secret from the other seats).

With tracing on (services.kit.tracing) every line written while a span is current
carries its ``trace_id`` and ``span_id``, so a log line leads to its trace and back.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import logging
import math
import sys
import time
from typing import Any

import structlog

from services.kit import tracing


def configure(level: str = "info", fmt: str = "json") -> None:
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer(colors=sys.stdout.isatty())
        if fmt == "console"
        else structlog.processors.JSONRenderer()
    )
    global _direct_json, _info_enabled
    # The access line is written by AccessLog itself in JSON mode: the same fields as
    # the processors below would give it, at a fraction of the cost (it is per call).
    _direct_json = fmt != "console"
    _info_enabled = numeric <= logging.INFO
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            add_trace_ids,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.WriteLoggerFactory(sys.stdout),
        cache_logger_on_first_use=True,
    )


def add_trace_ids(
    logger: Any, method: str, event: structlog.typing.EventDict
) -> structlog.typing.EventDict:
    """The current span's trace and span ids on the line (tracing on, a span current)."""
    if tracing.enabled():
        found = tracing.ids()
        if found is not None:
            event["trace_id"], event["span_id"] = found
    return event


def get(name: str) -> structlog.typing.FilteringBoundLogger:
    # configure() makes every logger a filtering bound logger (its wrapper_class).
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(name)
    return logger


# Set by configure(); until then (tests in process) access lines go through structlog.
_direct_json = False
_info_enabled = True
_UTC = datetime.UTC


class AccessLog:
    """The access log: one line per call (``event: rpc``) with method, code, latency and
    what the handler bound (game, seat, request id, reason).

    ``sample`` > 1 writes one in ``sample`` successful calls (the line then says
    ``sample``, so counts can be scaled back); a call that ends in any other status is
    always written. In JSON mode the line is built and written here, without
    structlog's processor chain, which costs several times more on every call.
    """

    __slots__ = ("_count", "_every", "_log")

    def __init__(self, sample: int = 1) -> None:
        if sample < 1:
            raise ValueError("sample is 1 (every call) or more")
        self._every = sample
        self._count = 0
        self._log = structlog.get_logger("rpc")

    def record(self, method: str, code: str, seconds: float) -> None:
        extra: dict[str, Any] = {}
        if self._every > 1 and code == "OK":
            self._count += 1
            if self._count % self._every:
                return
            extra["sample"] = self._every
        latency_ms = round(seconds * 1000, 3)
        if not _direct_json:
            self._log.info("rpc", method=method, code=code, latency_ms=latency_ms, **extra)
            return
        if not _info_enabled:
            return
        out = sys.stdout
        out.write(_line(structlog.contextvars.get_contextvars(), method, code, latency_ms, extra))
        _flush_soon(out)


_OWN = frozenset({"method", "code", "latency_ms", "sample", "event", "level", "timestamp"})
_string = json.encoder.encode_basestring_ascii  # json.dumps' (C) encoder of a str


def _line(
    bound: dict[str, Any], method: str, code: str, latency_ms: float, extra: dict[str, Any]
) -> str:
    """The access line: exactly json.dumps' text of the bound fields, then the call's,
    written without the encoder's calls per line (half the cost, on every call)."""
    if not _OWN.isdisjoint(bound):  # a bound field of the same name: json.dumps' order
        line = {**bound, "method": method, "code": code, "latency_ms": latency_ms, **extra}
        line.update(event="rpc", level="info", timestamp=_now())
        return json.dumps(line) + "\n"
    parts = [f"{_string(k)}: {_value(v)}" for k, v in bound.items()]
    parts.append(
        f'"method": {_string(method)}, "code": {_string(code)}, "latency_ms": {_value(latency_ms)}'
    )
    parts += [f"{_string(k)}: {_value(v)}" for k, v in extra.items()]
    parts.append(f'"event": "rpc", "level": "info", "timestamp": "{_now()}"')
    return "{" + ", ".join(parts) + "}\n"


def _value(value: Any) -> str:
    if value.__class__ is str:
        return _string(value)
    if value.__class__ is int:
        return int.__repr__(value)
    if value.__class__ is float and math.isfinite(value):
        return float.__repr__(value)
    return json.dumps(value)


_second: list[Any] = [None, ""]  # the second of the last line, and its text


def _now() -> str:
    """The time as datetime's isoformat() in UTC, to the microsecond, with a Z."""
    now = time.time()
    second = int(now)
    if second != _second[0]:
        text = datetime.datetime.fromtimestamp(second, _UTC).strftime("%Y-%m-%dT%H:%M:%S")
        _second[:] = [second, text]
    micro = int((now - second) * 1_000_000)
    return f"{_second[1]}.{micro:06d}Z" if micro else f"{_second[1]}Z"  # as isoformat()


_unflushed: set[Any] = set()  # streams with access lines written since their last flush


def _flush_soon(out: Any) -> None:
    """Flush ``out`` once the event loop has run what is ready: the lines of every call
    that ended meanwhile go out in one write, where a flush per line was a system call
    per call. Outside a loop, at once."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        out.flush()
        return
    if out not in _unflushed:
        _unflushed.add(out)
        loop.call_soon(_flush, out)


def _flush(out: Any) -> None:
    _unflushed.discard(out)
    with contextlib.suppress(OSError, ValueError):  # closed, or its reader gone
        out.flush()
