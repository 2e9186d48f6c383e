"""The decisions of a turn, each a small value with a text form.

    glyph river        1 - Play a Glyph Card (by its symbol)
    druid b2-b4        2 - Move a Druid Token (from its card to a card in the glyph's line)
    path b4-c4-c3      3 - Choose a Leyline Path (from the moved Druid to the other)
    fill c3            6 - the acquirer chooses which gap the deck's next card fills

Forced choices are not asked: a single Leyline Path, or a single gap left to fill, is
taken at once.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import total_ordering

from services.kit.engine import MalformedMove

from . import board
from .content import GLYPH_INDEX, GLYPHS


@total_ordering
class _Move:
    def _key(self) -> tuple:
        """The step the move belongs to, then its fields: moves sort by this."""
        return ()

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, _Move):
            return NotImplemented
        return self._key() < other._key()


@dataclass(frozen=True, eq=True)
class PlayGlyph(_Move):
    glyph: int  # index into GLYPHS

    def _key(self) -> tuple:
        return (1, self.glyph)

    def __str__(self) -> str:
        return f"glyph {GLYPHS[self.glyph]}"


@dataclass(frozen=True, eq=True)
class MoveDruid(_Move):
    origin: int
    target: int

    def _key(self) -> tuple:
        return (2, self.origin, self.target)

    def __str__(self) -> str:
        return f"druid {board.name(self.origin)}-{board.name(self.target)}"


@dataclass(frozen=True, eq=True)
class ChoosePath(_Move):
    cells: tuple[int, ...]

    def _key(self) -> tuple:
        return (3, self.cells)

    def __str__(self) -> str:
        return "path " + "-".join(board.name(c) for c in self.cells)


@dataclass(frozen=True, eq=True)
class FillGap(_Move):
    cell: int

    def _key(self) -> tuple:
        return (4, self.cell)

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
