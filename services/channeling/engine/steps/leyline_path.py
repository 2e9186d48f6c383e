"""3 - Choose a Leyline Path, and channel along it (steps 4, 5 and 6 follow).

A Leyline Path is a shortest orthogonal path from the Druid moved this turn to the
player's stationary Druid (reading 3: every shortest path is offered, in sorted order).
Only a real choice is asked: when there is one such path, 2 - Move a Druid Token
channels it at once.
"""

from __future__ import annotations

from functools import cache

from services.kit.engine import Event
from services.kit.kernel import Decision

from .. import board, rulebook
from ..moves import ChoosePath
from ..state import SEAT_NAMES, State
from . import acquire
from .place_cubes import place_cubes
from .remove_cubes import remove_cubes


def channel(state: State, seat: int, path: tuple[int, ...]) -> list[Event]:
    """Steps 4, 5 and 6 (the acquiring) along the chosen Leyline Path ``path``."""
    placed = place_cubes(state, seat, path)
    names = "-".join(board.name(c) for c in path)
    data = {"path": [board.name(c) for c in path], "placed": placed}
    total = sum(placed.values())
    text = f"{SEAT_NAMES[seat]} channels {total} along {names}"
    events = [Event("cubes_placed", text, seat, data)]
    events.extend(remove_cubes(state, path))
    events.extend(acquire.acquire(state, seat))
    return events


# --- the decision ------------------------------------------------------------------------


@cache
def _path_moves(start: int, end: int) -> list[ChoosePath]:
    return [ChoosePath(p) for p in board.leyline_paths(start, end)]


def _paths(state: State, seat: int) -> list[ChoosePath]:
    assert state.moved is not None and state.stationary is not None
    return _path_moves(state.moved, state.stationary)


def _is_shortest(state: State, seat: int, move: ChoosePath) -> bool:
    assert state.moved is not None and state.stationary is not None
    return move.cells in board.leyline_paths(state.moved, state.stationary)


def _why_not(state: State, seat: int, move: ChoosePath) -> str:
    return "not a shortest Leyline Path from the moved Druid to the stationary Druid"


def _channel(state: State, seat: int, move: ChoosePath) -> list[Event]:
    return channel(state, seat, move.cells)


CHOOSE_A_PATH = Decision(
    rule=rulebook.CHOOSE_A_LEYLINE_PATH,
    moves=_paths,
    allows=_is_shortest,
    explain=_why_not,
    do=_channel,
    then=acquire.replace_or_ask,
)
