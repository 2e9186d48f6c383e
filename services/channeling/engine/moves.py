"""The decisions of a turn, each a small value with a text form.

    glyph river        1 - Play a Glyph Card (by its symbol)
    druid b2-b4        2 - Move a Druid Token (from its card to a card in the glyph's line)
    path b4-c4-c3      3 - Choose a Leyline Path (from the moved Druid to the other)
    fill c3            6 - the acquirer chooses which gap the deck's next card fills

Forced choices are not asked: a single Leyline Path, or a single gap left to fill, is
taken at once.

A move built in code may carry any value; ``check_arguments`` refuses one whose glyph or
cells are not on the table (negative, past the last, not an integer) before any rule
reads it, so an index never wraps around or fails deep inside a rule.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from functools import total_ordering
from typing import TypeGuard

from services.kit.engine import MalformedMove

from . import board
from .content import GLYPH_INDEX, GLYPHS

# The longest shortest path on the grid: corner to opposite corner, both ends included.
MAX_PATH_CELLS = 2 * (board.SIZE - 1) + 1


@total_ordering
class _Move(ABC):
    def _key(self) -> tuple:
        """The step the move belongs to, then its fields: moves sort by this."""
        return ()

    @abstractmethod
    def check_arguments(self) -> None:
        """Raise :class:`MalformedMove` unless every argument names a glyph or a cell."""

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, _Move):
            return NotImplemented
        return self._key() < other._key()


def _index(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_cell(value: object, what: str) -> None:
    if not _index(value) or not 0 <= value < len(board.CELLS):
        last = len(board.CELLS) - 1
        raise MalformedMove(f"{what} must be a cell 0-{last} (a1-d4), not {value!r}")


@dataclass(frozen=True, eq=True)
class PlayGlyph(_Move):
    glyph: int  # index into GLYPHS

    def _key(self) -> tuple:
        return (1, self.glyph)

    def check_arguments(self) -> None:
        if not _index(self.glyph) or not 0 <= self.glyph < len(GLYPHS):
            raise MalformedMove(
                f"glyph must be 0-{len(GLYPHS) - 1} ({', '.join(GLYPHS)}), not {self.glyph!r}"
            )

    def __str__(self) -> str:
        return f"glyph {GLYPHS[self.glyph]}"


@dataclass(frozen=True, eq=True)
class MoveDruid(_Move):
    origin: int
    target: int

    def _key(self) -> tuple:
        return (2, self.origin, self.target)

    def check_arguments(self) -> None:
        _check_cell(self.origin, "origin")
        _check_cell(self.target, "target")

    def __str__(self) -> str:
        return f"druid {board.name(self.origin)}-{board.name(self.target)}"


@dataclass(frozen=True, eq=True)
class ChoosePath(_Move):
    cells: tuple[int, ...]

    def _key(self) -> tuple:
        return (3, self.cells)

    def check_arguments(self) -> None:
        if not isinstance(self.cells, tuple) or not 1 <= len(self.cells) <= MAX_PATH_CELLS:
            raise MalformedMove(f"a Leyline Path is a tuple of 1 to {MAX_PATH_CELLS} cells")
        for cell in self.cells:
            _check_cell(cell, "each cell of a path")

    def __str__(self) -> str:
        return "path " + "-".join(board.name(c) for c in self.cells)


@dataclass(frozen=True, eq=True)
class FillGap(_Move):
    cell: int

    def _key(self) -> tuple:
        return (4, self.cell)

    def check_arguments(self) -> None:
        _check_cell(self.cell, "cell")

    def __str__(self) -> str:
        return f"fill {board.name(self.cell)}"


Move = PlayGlyph | MoveDruid | ChoosePath | FillGap


def _cells(text: str) -> tuple[int, ...]:
    cells = tuple(board.parse_cell(part) for part in text.split("-"))
    if not cells or any(c is None for c in cells):
        raise MalformedMove(f"not a list of cells a1-d4: {text!r}")
    return cells  # type: ignore[return-value]  # no None: checked above


def parse_move(text: str) -> Move:
    """The inverse of ``str(move)``: ``parse_move("druid b2-b4") == MoveDruid(5, 13)``."""
    if not isinstance(text, str):
        raise MalformedMove("a move's text form is a string")
    kind, _, rest = text.strip().partition(" ")
    rest = rest.strip()
    if kind == "glyph":
        if rest not in GLYPH_INDEX:
            raise MalformedMove(f"unknown glyph {rest!r}; glyphs are {', '.join(GLYPHS)}")
        return PlayGlyph(GLYPH_INDEX[rest])
    if kind == "druid":
        cells = _cells(rest)
        if len(cells) != 2:
            raise MalformedMove("a druid move names two cells: druid b2-b4")
        return MoveDruid(*cells)
    if kind == "path":
        return ChoosePath(_cells(rest))
    if kind == "fill":
        (cell,) = _cells(rest) if "-" not in rest else (None,)
        if cell is None:
            raise MalformedMove("fill names one cell: fill c3")
        return FillGap(cell)
    raise MalformedMove(f"unknown move {text!r}; moves are glyph, druid, path and fill")
