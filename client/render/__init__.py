"""Text renderers, one module per game: ``board(view, header) -> str`` and
``move(pb_move) -> str``. A game without a renderer falls back to protobuf text.

The game services run them too, for GetGame's ``board_text`` (:func:`plain_board`): a
renderer reads only the view and header it is given, which are already the caller's, so
the text can show nothing the caller's view does not.
"""

from __future__ import annotations

import importlib
import inspect
from types import ModuleType

from google.protobuf import text_format

from client.render import colour


def for_game(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(f"client.render.{name}")
    except ModuleNotFoundError:
        return None


def one_line(message) -> str:
    return text_format.MessageToString(message, as_one_line=True)


def draws_from_seat(name: str) -> bool:
    """Whether the game's renderer can draw its board from a chosen seat's side."""
    module = for_game(name)
    return module is not None and "as_seat" in inspect.signature(module.board).parameters


def board(name: str, view, header, as_seat: int | None = None) -> str:
    module = for_game(name)
    if module is None:
        return text_format.MessageToString(view)
    if as_seat is None:
        return module.board(view, header)
    return module.board(view, header, as_seat=as_seat)


def plain_board(name: str, view, header) -> str:
    """The board as :func:`board` draws it from the view's own side, with no colour codes."""
    with colour.plain():
        return board(name, view, header)


def move(name: str, message) -> str:
    module = for_game(name)
    return module.move(message) if module else one_line(message)
