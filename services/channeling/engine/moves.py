"""The decisions of a turn, each a small value with a text form.

    glyph river        1 - Play a Glyph Card (by its symbol)
    druid b2-b4        2 - Move a Druid Token (from its card to a card in the glyph's line)
    path b4-c4-c3      3 - Choose a Leyline Path (from the moved Druid to the other)
    fill c3            6 - the acquirer chooses which gap the deck's next card fills

Forced choices are not asked: a single Leyline Path, or a single gap left to fill, is
taken at once.
"""

from __future__ import annotations

from dataclasses import astuple, dataclass
from functools import total_ordering

from services.kit.engine import MalformedMove

from . import board
from .content import GLYPH_INDEX, GLYPHS


@total_ordering
class _Move:
    _order = 0

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, _Move):
            return NotImplemented
        # Moves of different kinds sort by the step they belong to, then by their fields.
        return (self._order, astuple(self)) < (other._order, astuple(other))


@dataclass(frozen=True, eq=True)
class PlayGlyph(_Move):
    glyph: int  # index into GLYPHS
    _order = 1

    def __str__(self) -> str:
        return f"glyph {GLYPHS[self.glyph]}"


@dataclass(frozen=True, eq=True)
class MoveDruid(_Move):
    origin: int
    target: int
    _order = 2

    def __str__(self) -> str:
        return f"druid {board.name(self.origin)}-{board.name(self.target)}"


@dataclass(frozen=True, eq=True)
class ChoosePath(_Move):
    cells: tuple[int, ...]
    _order = 3

    def __str__(self) -> str:
        return "path " + "-".join(board.name(c) for c in self.cells)


@dataclass(frozen=True, eq=True)
class FillGap(_Move):
    cell: int
    _order = 4

    def __str__(self) -> str:
        return f"fill {board.name(self.cell)}"


Move = PlayGlyph | MoveDruid | ChoosePath | FillGap


def _cells(text: str) -> tuple[int, ...]:
    cells = tuple(board.parse_cell(part) for part in text.split("-"))
    if not cells or any(c is None for c in cells):
        raise MalformedMove(f"not a list of cells a1-d4: {text!r}")
    return cells  # type: ignore[return-value]


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
