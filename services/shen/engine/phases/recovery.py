"""1) Recovery and Set-Up Phase, and where a turn starts and ends.

"Refresh all clan avatars ... And then either: Draw a card into your hand from your deck
... or Place one Shén counter on any empty ... vertex". A turn begins here (Refresh) and,
"If there are at least two players remaining, play proceeds to the next player".
"""

from __future__ import annotations

from services.kit.engine import Event

from .. import pieces, scoring, shen
from .. import rulebook as rule
from ..board import VERTEX
from ..moves import DRAW, Draw, PlaceShenCounter
from ..state import State, Step
from .base import Row, decision, event, to_step

PROMPT = "Recovery and Set-Up Phase: draw or place a Shén counter"


def begin_turn(state: State, seat: int, events: list[Event]) -> None:
    limit = state.options.round_limit
    if limit and state.players[seat].turns >= limit:
        scoring.round_limit(state, events)
        return
    player = state.players[seat]
    player.turns += 1
    state.turn += 1
    state.active = seat
    state.acted = []
    state.mover = -1
    # "Refresh all clan avatars".
    for avatar in state.avatars.values():
        if avatar.owner == seat:
            avatar.ready = True
            avatar.start = avatar.loc
    state.step = Step.RECOVERY
    events.append(
        event("turn", f"turn {state.turn}: {pieces.seat_name(state, seat)}", seat, turn=state.turn)
    )


def next_turn(state: State, events: list[Event]) -> None:
    """ "play proceeds to the next player", clockwise, skipping players who are out."""
    for i in range(1, state.n + 1):
        seat = (state.active + i) % state.n
        if not state.players[seat].out:
            begin_turn(state, seat, events)
            return


def nothing_to_do(state: State) -> bool:
    """No card to draw and no vertex for a counter: the phase passes by itself."""
    player = state.players[state.active]
    return not (player.deck or player.discard) and not shen.legal_placements(state, state.active)


# --- Draw a card ----------------------------------------------------------------------


def _draws(state: State, seat: int) -> list[Draw]:
    player = state.players[seat]
    return [DRAW] if player.deck or player.discard else []


def _draw(state: State, seat: int, move: Draw) -> list[Event]:
    events: list[Event] = []
    pieces.draw(state, seat, events)
    return events


def _no_draw(state: State, seat: int, move: Draw) -> str:
    return "no cards in your deck or discard pile"


# --- Place one Shén counter -----------------------------------------------------------


def _placements(state: State, seat: int) -> list[PlaceShenCounter]:
    return [PlaceShenCounter(v) for v in shen.legal_placements(state, seat)]


def _may_place(state: State, seat: int, move: PlaceShenCounter) -> bool:
    v = move.vertex
    return v in state.board.on_board and v >= VERTEX and shen.can_place(state, seat, v)


def _place(state: State, seat: int, move: PlaceShenCounter) -> list[Event]:
    events: list[Event] = []
    shen.place(state, seat, move.vertex, events)
    return events


def _no_place(state: State, seat: int, move: PlaceShenCounter) -> str:
    if move.vertex in state.stones or move.vertex in state.counters:
        return "the vertex holds a Shén counter or a Realm Stone"
    return "that counter and its associated counters would have no empty vertex next to them"


ROW: Row = {
    Draw: decision(rule.DRAW, _draws, _draw, _no_draw, then=to_step(Step.INFLUENCE)),
    PlaceShenCounter: decision(
        rule.SHEN_COUNTER,
        _placements,
        _place,
        _no_place,
        allows=_may_place,
        then=to_step(Step.INFLUENCE),
    ),
}
