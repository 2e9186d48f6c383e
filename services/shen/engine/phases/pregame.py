"""Pre-Game: each player sets their Realm Stone, then everyone draws and play begins.

"Starting with the first player and continuing anticlockwise, each player sets their
realm stone in any empty vertex on the board, then places 4 Shén counters, one on each
vertex around your realm stone ... Realm Stones cannot be placed next to another Realm
Stone or a vertex of a space with an Anchor Point."
"""

from __future__ import annotations

from services.kit.engine import Event

from .. import board as geometry
from .. import pieces
from .. import rulebook as rule
from ..moves import PlaceRealmStone
from ..state import HAND_SIZE, State
from .base import Row, decision, event
from .recovery import begin_turn

PROMPT = "set your Realm Stone (stone C4)"


def _anchor_corners(state: State) -> set[int]:
    return {v for a in state.anchors for v in state.board.corners[a]}


def stone_ok(state: State, v: int) -> bool:
    """ "Realm Stones cannot be placed next to another Realm Stone or a vertex of a space
    with an Anchor Point", on an empty vertex."""
    if v in state.counters or v in state.stones:
        return False
    if any(w in state.stones for w in state.board.links[v]):
        return False
    return v not in _anchor_corners(state)


def _stones(state: State, seat: int) -> list[PlaceRealmStone]:
    return [PlaceRealmStone(v) for v in state.board.vertices if stone_ok(state, v)]


def _may_set(state: State, seat: int, move: PlaceRealmStone) -> bool:
    v = move.vertex
    return v >= geometry.VERTEX and v in state.board.on_board and stone_ok(state, v)


def _set_stone(state: State, seat: int, move: PlaceRealmStone) -> list[Event]:
    v = move.vertex
    events: list[Event] = []
    state.stones[v] = seat
    state.players[seat].stone = v
    placed = [w for w in state.board.links[v] if w not in state.counters and w not in state.stones]
    for w in placed:
        state.counters[w] = seat
    events.append(
        event(
            "stone_placed",
            f"{pieces.seat_name(state, seat)} sets their Realm Stone ({state.players[seat].realm})"
            f" on {geometry.name(v)} with {len(placed)} Shén counters around it",
            seat,
            at=geometry.name(v),
            counters=[geometry.name(w) for w in placed],
        )
    )
    state.placed += 1
    if state.placed < state.n:
        state.active = state.place_order[state.placed]
        return events
    # "Each player shuffles their deck, places it face down and draws 6 cards".
    for player in state.players:
        state.rng.shuffle(player.deck)
        for _ in range(HAND_SIZE):
            pieces.draw(state, player.seat, events)
    # "Starting with the last player to place their realm stone and continuing clockwise".
    begin_turn(state, state.place_order[-1], events)
    return events


def _no_stone(state: State, seat: int, move: PlaceRealmStone) -> str:
    v = move.vertex
    if v in state.stones or v in state.counters:
        return "the vertex is not empty"
    if any(w in state.stones for w in state.board.links[v]):
        return "Realm Stones cannot be placed next to another Realm Stone"
    return "Realm Stones cannot be placed on a vertex of a space with an Anchor Point"


ROW: Row = {
    PlaceRealmStone: decision(rule.REALM_STONE, _stones, _set_stone, _no_stone, allows=_may_set),
}
