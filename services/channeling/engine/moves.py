"""The decisions of a turn, each a small value with a text form.

    glyph river        1 - Play a Glyph Card (by its symbol)
    druid b2-b4        2 - Move a Druid Token (from its card to a card in the glyph's line)
    path b4-c4-c3      3 - Choose a Leyline Path (from the moved Druid to the other)
    fill c3            6 - the acquirer chooses which gap the deck's next card fills

Forced choices are not asked: a single Leyline Path, or a single gap left to fill, is
taken at once.

Moves sort by step, then by their fields (``sort_key``): the order ``legal_moves`` lists
them in. A move built in code may carry any value; ``problem`` names one whose glyph or
cells are not on the table (negative, past the last, not an integer), and the kit refuses
it as malformed before any rule reads it, so an index never wraps around or fails deep
inside a rule.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, TypeGuard

from services.kit.engine import MalformedMove
from services.kit.moves import TypedMove

from . import board
from .content import GLYPH_INDEX, GLYPHS

# The longest shortest path on the grid: corner to opposite corner, both ends included.
MAX_PATH_CELLS = 2 * (board.SIZE - 1) + 1


def _index(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _cell_problem(value: object, what: str) -> str | None:
    if _index(value) and 0 <= value < len(board.CELLS):
        return None
    return f"{what} must be a cell 0-{len(board.CELLS) - 1} (a1-d4), not {value!r}"


@dataclass(frozen=True, slots=True)
class PlayGlyph(TypedMove):
    """1 - Play a Glyph Card."""

    glyph: int  # index into GLYPHS

    def sort_key(self) -> tuple[Any, ...]:
        return (1, self.glyph)

    def problem(self) -> str | None:
        if _index(self.glyph) and 0 <= self.glyph < len(GLYPHS):
            return None
        return f"glyph must be 0-{len(GLYPHS) - 1} ({', '.join(GLYPHS)}), not {self.glyph!r}"

    def __str__(self) -> str:
        return f"glyph {GLYPHS[self.glyph]}"


@dataclass(frozen=True, slots=True)
class MoveDruid(TypedMove):
    """2 - Move a Druid Token: from the card ``origin`` to the card ``target``."""

    origin: int
    target: int

    def sort_key(self) -> tuple[Any, ...]:
        return (2, self.origin, self.target)

    def problem(self) -> str | None:
        return _cell_problem(self.origin, "origin") or _cell_problem(self.target, "target")

    def __str__(self) -> str:
        return f"druid {board.name(self.origin)}-{board.name(self.target)}"


@dataclass(frozen=True, slots=True)
class ChoosePath(TypedMove):
    """3 - Choose a Leyline Path: its cells from the moved Druid to the stationary one."""

    cells: tuple[int, ...]

    def sort_key(self) -> tuple[Any, ...]:
        return (3, self.cells)

    def problem(self) -> str | None:
        if not isinstance(self.cells, tuple) or not 1 <= len(self.cells) <= MAX_PATH_CELLS:
            return f"a Leyline Path is a tuple of 1 to {MAX_PATH_CELLS} cells"
        for cell in self.cells:
            problem = _cell_problem(cell, "each cell of a path")
            if problem is not None:
                return problem
        return None

    def __str__(self) -> str:
        return "path " + "-".join(board.name(c) for c in self.cells)


@dataclass(frozen=True, slots=True)
class FillGap(TypedMove):
    """6 - the gap ``cell`` is the next to take a card from the deck."""

    cell: int

    def sort_key(self) -> tuple[Any, ...]:
        return (4, self.cell)

    def problem(self) -> str | None:
        return _cell_problem(self.cell, "cell")

    def __str__(self) -> str:
        return f"fill {board.name(self.cell)}"


Move = PlayGlyph | MoveDruid | ChoosePath | FillGap
MOVE_TYPES = (PlayGlyph, MoveDruid, ChoosePath, FillGap)


def problem(move: Move) -> str | None:
    """Why ``move`` is not well formed (the kit's ``problem`` hook), or None."""
    return move.problem()


def _cells(text: str) -> tuple[int, ...]:
    parsed = [board.parse_cell(part) for part in text.split("-")]
    cells = tuple(c for c in parsed if c is not None)
    if not cells or len(cells) != len(parsed):
        raise MalformedMove(f"not a list of cells a1-d4: {text!r}")
    return cells


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
