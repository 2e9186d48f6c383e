"""2 - Move a Druid Token into the line the glyph just played labels.

Reading taken (README, reading 1): either of the player's Druids may move, from
anywhere, to a card of that row or column with no Druid on it; the glyph names where the
Druid lands. A gap left by an empty deck takes no Druid (reading 7).
"""

from __future__ import annotations

from services.kit.engine import Event
from services.kit.kernel import Decision

from .. import board, rulebook
from ..moves import MoveDruid
from ..state import PATH, SEAT_NAMES, State
from . import acquire, leyline_path
from .play_glyph import free_cards, glyph_line


def _line(state: State) -> tuple[int, ...]:
    assert state.glyph is not None
    return glyph_line(state, state.glyph)


def _druid_moves(state: State, seat: int) -> list[MoveDruid]:
    targets = free_cards(state, _line(state))
    return [MoveDruid(o, t) for o in sorted(state.druids[seat]) for t in targets]


def _allows(state: State, seat: int, move: MoveDruid) -> bool:
    return move.origin in state.druids[seat] and move.target in free_cards(state, _line(state))


def _why_not(state: State, seat: int, move: MoveDruid) -> str:
    if move.origin not in state.druids[seat]:
        return f"no {SEAT_NAMES[seat]} Druid Token on {board.name(move.origin)}"
    line = ", ".join(board.name(c) for c in glyph_line(state, state.glyph or 0))
    return (
        f"{board.name(move.target)} is not a card without a Druid in the line of the "
        f"glyph played ({line})"
    )


def _move(state: State, seat: int, move: MoveDruid) -> list[Event]:
    druids = state.druids[seat]
    other = druids[1] if druids[0] == move.origin else druids[0]
    druids[druids.index(move.origin)] = move.target
    state.moved, state.stationary = move.target, other
    text = f"{SEAT_NAMES[seat]} moves a Druid {board.name(move.origin)}-{board.name(move.target)}"
    data = {"from": board.name(move.origin), "to": board.name(move.target)}
    return [Event("druid_moved", text, seat, data)]


def _next(state: State) -> list[Event]:
    """3 - Choose a Leyline Path, channelled at once when only one path exists."""
    assert state.moved is not None and state.stationary is not None
    paths = board.leyline_paths(state.moved, state.stationary)
    if len(paths) > 1:
        state.step = PATH
        return []
    events = leyline_path.channel(state, state.current, paths[0])
    events.extend(acquire.replace_or_ask(state))
    return events


MOVE_A_DRUID = Decision(
    rule=rulebook.MOVE_A_DRUID_TOKEN,
    moves=_druid_moves,
    allows=_allows,
    explain=_why_not,
    do=_move,
    then=_next,
)
