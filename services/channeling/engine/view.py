"""What a seat (or a spectator) sees: everything but the deck's order and the generator.

The Channeling hides only the deck: the grid, cubes, glyphs (played and in hand, which
each player can count from the table) and acquired cards are all on the table.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from services.kit.engine import Outcome

from . import board
from .content import CARD_BY_ID, GLYPHS
from .state import State
from .steps.endgame import splendor


class CellView(NamedTuple):
    cell: str  # "b3"
    card: int | None  # card id, None for a gap
    vigor: int
    splendor: int
    light_cubes: int
    dark_cubes: int
    druid: int | None  # the seat whose Druid Token stands here


class SeatView(NamedTuple):
    hand: tuple[str, ...]
    played: tuple[str, ...]
    supply: int
    acquired: tuple[int, ...]  # card ids in order of acquisition
    overchanneling: int
    splendor: int


@dataclass(frozen=True)
class View:
    viewer: int | None
    current: int
    step: str
    turn: int
    glyph: str | None  # the glyph played this turn
    moved: str | None
    stationary: str | None
    row_glyphs: tuple[str, ...]
    col_glyphs: tuple[str, ...]
    cells: tuple[CellView, ...]
    seats: tuple[SeatView, ...]
    deck_count: int
    gaps: tuple[str, ...]
    end_triggered_by: int | None
    outcome: Outcome | None


def _cells(state: State) -> tuple[CellView, ...]:
    druids = {cell: seat for seat in (0, 1) for cell in state.druids[seat]}
    cells = []
    for cell, card_id in enumerate(state.grid):
        card = CARD_BY_ID[card_id] if card_id is not None else None
        light, dark = state.cubes[cell]
        cells.append(
            CellView(
                board.NAMES[cell],
                card_id,
                card.vigor if card else 0,
                card.splendor if card else 0,
                light,
                dark,
                druids.get(cell),
            )
        )
    return tuple(cells)


def view(state: State, seat: int | None) -> View:
    def name(cell: int | None) -> str | None:
        return None if cell is None else board.name(cell)

    return View(
        viewer=seat,
        current=state.current,
        step=state.step,
        turn=state.turn,
        glyph=None if state.glyph is None else GLYPHS[state.glyph],
        moved=name(state.moved),
        stationary=name(state.stationary),
        row_glyphs=tuple(GLYPHS[g] for g in state.row_glyphs),
        col_glyphs=tuple(GLYPHS[g] for g in state.col_glyphs),
        cells=_cells(state),
        seats=tuple(
            SeatView(
                hand=tuple(GLYPHS[g] for g in state.hands[s]),
                played=tuple(GLYPHS[g] for g in state.played[s]),
                supply=state.supply[s],
                acquired=tuple(state.acquired[s]),
                overchanneling=state.overchanneling[s],
                splendor=splendor(state, s),
            )
            for s in (0, 1)
        ),
        deck_count=len(state.deck),
        gaps=tuple(board.name(c) for c in sorted(state.gaps)),
        end_triggered_by=state.end_triggered_by,
        outcome=state.result,
    )


def reseat_view(shown: View, seat: int | None) -> View:
    """The view ``seat`` gets of the state ``shown`` was built from: the Channeling hides
    only the deck, from every seat alike, so the views of one state differ in their
    viewer alone (tests/channeling/test_view_bytes.py checks it at every decision). The
    game manager builds one view a version and the others from it."""
    return replace(shown, viewer=seat)
