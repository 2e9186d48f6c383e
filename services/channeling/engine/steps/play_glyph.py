"""1 - Play a Glyph Card from hand onto the table; the eighth brings all eight back.

The glyph played names the row or column (labelled by the green glyphs) where a Druid
moves at step 2. Reading taken (README, reading 2): a glyph whose line leaves no Druid
move may not be played while another in hand leaves one; when none does, any glyph may
be played and, no Druid moving, the turn goes straight to 7 - Check for Endgame.
"""

from __future__ import annotations

from functools import lru_cache

from services.kit.engine import Event
from services.kit.kernel import Decision

from .. import board, rulebook
from ..content import GLYPHS
from ..moves import PlayGlyph
from ..state import DRUID, SEAT_NAMES, State
from . import endgame


def glyph_line(state: State, glyph: int) -> tuple[int, ...]:
    """The row or column of cards the green glyph ``glyph`` labels."""
    return _lines(state.row_glyphs, state.col_glyphs)[glyph]


@lru_cache(maxsize=4096)
def _lines(rows: tuple[int, ...], cols: tuple[int, ...]) -> dict[int, tuple[int, ...]]:
    lines = {g: board.row_cells(r) for r, g in enumerate(rows)}
    lines.update({g: board.col_cells(c) for c, g in enumerate(cols)})
    return lines


def free_cards(state: State, line: tuple[int, ...]) -> list[int]:
    """Cards of a line a Druid may move to: a Magic Circle card with no Druid on it."""
    occupied = state.druids[0] + state.druids[1]
    return [c for c in line if state.grid[c] is not None and c not in occupied]


def playable_glyphs(state: State) -> list[int]:
    """Glyphs in hand whose line leaves a Druid move, in hand order (sorted); all of the
    hand when none does."""
    hand = state.hands[state.current]
    playable = [g for g in hand if free_cards(state, glyph_line(state, g))]
    return playable or list(hand)


def _glyphs(state: State, seat: int) -> list[PlayGlyph]:
    return [PlayGlyph(g) for g in playable_glyphs(state)]


def _allows(state: State, seat: int, move: PlayGlyph) -> bool:
    return move.glyph in playable_glyphs(state)


def _why_not(state: State, seat: int, move: PlayGlyph) -> str:
    if move.glyph not in state.hands[seat]:
        return f"glyph {GLYPHS[move.glyph]} is not in hand"
    return f"glyph {GLYPHS[move.glyph]} labels a line with no free card for a Druid"


def _play(state: State, seat: int, move: PlayGlyph) -> list[Event]:
    glyph = move.glyph
    state.hands[seat].remove(glyph)
    state.played[seat].append(glyph)
    text = f"{SEAT_NAMES[seat]} plays glyph {GLYPHS[glyph]}"
    events = [Event("glyph_played", text, seat, {"glyph": GLYPHS[glyph]})]
    if not state.hands[seat]:
        state.hands[seat] = sorted(state.played[seat])
        state.played[seat] = []
        events.append(Event("glyphs_returned", f"{SEAT_NAMES[seat]} takes the glyphs back", seat))
    state.glyph = glyph
    return events


def _next(state: State) -> list[Event]:
    """2 - Move a Druid Token, unless the glyph's line has no free card: then the turn
    passes after the endgame check."""
    assert state.glyph is not None
    if free_cards(state, glyph_line(state, state.glyph)):
        state.step = DRUID
        return []
    seat = state.current
    text = f"no free card in the {GLYPHS[state.glyph]} line: no Druid moves this turn"
    events = [Event("no_druid_move", text, seat)]
    events.extend(endgame.end_turn(state, seat))
    return events


PLAY_A_GLYPH = Decision(
    rule=rulebook.PLAY_A_GLYPH_CARD,
    moves=_glyphs,
    allows=_allows,
    explain=_why_not,
    do=_play,
    then=_next,
)
