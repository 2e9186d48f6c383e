"""Text renderers, one module per game: ``board(view, header) -> str`` and
``move(pb_move) -> str``. A game without a renderer falls back to protobuf text."""

from __future__ import annotations

import importlib
from types import ModuleType

from google.protobuf import text_format


def for_game(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"client.render.{name}")
    except ModuleNotFoundError:
        return None


def one_line(message) -> str:
    return text_format.MessageToString(message, as_one_line=True)


def board(name: str, view, header) -> str:
    module = for_game(name)
    return module.board(view, header) if module else text_format.MessageToString(view)


def move(name: str, message) -> str:
    module = for_game(name)
    return module.move(message) if module else one_line(message)
