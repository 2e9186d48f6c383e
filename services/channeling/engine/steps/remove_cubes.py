"""5 - Remove Energy Cubes on Magic Circle Cards along the chosen Leyline Path."""

from __future__ import annotations

from services.kit.engine import Event

from .. import board
from ..state import State


def remove_cubes(state: State, path: tuple[int, ...]) -> list[Event]:
    """Pairs of one Light and one Dark cube leave each card of the path until one colour
    is left; reading taken (README, reading 6): they go back to their owners' supplies."""
    events: list[Event] = []
    for cell in path:
        light, dark = state.cubes[cell]
        pairs = min(light, dark)
        if pairs:
            state.cubes[cell] = [light - pairs, dark - pairs]
            state.supply[0] += pairs
            state.supply[1] += pairs
            text = f"{pairs} pair(s) of cubes cancel on {board.name(cell)}"
            events.append(
                Event("cubes_removed", text, None, {"cell": board.name(cell), "pairs": pairs})
            )
    return events
