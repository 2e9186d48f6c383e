"""4 - Place Energy Cubes on Magic Circle Cards along the chosen Leyline Path."""

from __future__ import annotations

from .. import board
from ..state import State

CUBES_MOVED, CUBES_STATIONARY, CUBES_ALONG = 3, 2, 1


def place_cubes(state: State, seat: int, path: tuple[int, ...]) -> dict[str, int]:
    """3 cubes on the moved Druid's card, 2 on the stationary one's, 1 on each other;
    the cubes placed, by cell name.

    Reading taken (README, readings 7 and 8): a gap (no card) receives nothing; a supply
    that runs out places what it has, in the rulebook's order (moved card, stationary
    card, then from the moved end).
    """
    wanted = [(path[0], CUBES_MOVED), (path[-1], CUBES_STATIONARY)]
    wanted += [(cell, CUBES_ALONG) for cell in path[1:-1]]
    placed: dict[str, int] = {}
    for cell, count in wanted:
        if state.grid[cell] is None:
            continue
        count = min(count, state.supply[seat])
        state.supply[seat] -= count
        state.cubes[cell][seat] += count
        placed[board.name(cell)] = count
    return placed
