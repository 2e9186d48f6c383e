"""ANSI colour when writing to a terminal (and NO_COLOR is not set).

``ENABLED`` is the command line's setting. :func:`plain` turns colour off for what is
drawn inside it, whatever ``ENABLED`` says: the game services draw boards as plain text
for their clients (GetGame's ``board_text``), and a ContextVar keeps that to the one call
drawing, in its own thread or task.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
from collections.abc import Iterator

ENABLED = sys.stdout.isatty() and "NO_COLOR" not in os.environ

_plain: contextvars.ContextVar[bool] = contextvars.ContextVar("plain", default=False)

CODES = {
    "bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34",
    "magenta": "35", "cyan": "36", "white": "37", "grey": "90", "orange": "38;5;208",
    "purple": "38;5;135", "azure": "38;5;45", "black": "38;5;240",
}  # fmt: skip


def enabled() -> bool:
    """Whether text drawn now gets colour codes."""
    return ENABLED and not _plain.get()


@contextlib.contextmanager
def plain() -> Iterator[None]:
    """Draw without colour codes inside this block."""
    token = _plain.set(True)
    try:
        yield
    finally:
        _plain.reset(token)


def paint(text: str, *styles: str) -> str:
    if not styles or not enabled():
        return text
    return "".join(f"\033[{CODES[s]}m" for s in styles) + text + "\033[0m"
