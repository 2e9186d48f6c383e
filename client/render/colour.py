"""ANSI colour when writing to a terminal (and NO_COLOR is not set)."""

from __future__ import annotations

import os
import sys

ENABLED = sys.stdout.isatty() and "NO_COLOR" not in os.environ

CODES = {
    "bold": "1", "dim": "2", "red": "31", "green": "32", "yellow": "33", "blue": "34",
    "magenta": "35", "cyan": "36", "white": "37", "grey": "90", "orange": "38;5;208",
    "purple": "38;5;135", "azure": "38;5;45", "black": "38;5;240",
}  # fmt: skip


def paint(text: str, *styles: str) -> str:
    if not ENABLED or not styles:
        return text
    return "".join(f"\033[{CODES[s]}m" for s in styles) + text + "\033[0m"
