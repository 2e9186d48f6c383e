"""structlog, configured once per process: JSON lines on stdout (or console for people).

Handlers bind ``game_id``, ``seat`` and ``request_id`` with
``structlog.contextvars.bind_contextvars``; the RPC interceptor adds method, code and
latency and writes one line per call. Nothing secret is ever bound: no token, no seed,
no move text (a move can be secret from the other seats).
"""

from __future__ import annotations

import logging
import sys

import structlog


def configure(level: str = "info", fmt: str = "json") -> None:
    numeric = logging.getLevelName(level.upper())
    if not isinstance(numeric, int):
        raise ValueError(f"unknown log level {level!r}")
    renderer: structlog.typing.Processor = (
        structlog.dev.ConsoleRenderer(colors=sys.stdout.isatty())
        if fmt == "console"
        else structlog.processors.JSONRenderer()
    )
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(numeric),
        logger_factory=structlog.WriteLoggerFactory(sys.stdout),
        cache_logger_on_first_use=True,
    )


def get(name: str) -> structlog.typing.FilteringBoundLogger:
    # configure() makes every logger a filtering bound logger (its wrapper_class).
    logger: structlog.typing.FilteringBoundLogger = structlog.get_logger(name)
    return logger
