"""The six colours of Shrine ("Colors"): three basic Lens colours and the three complex
colours two different Lenses make when stacked.

Colours are small ints so that moves, states and views stay cheap and sort naturally.
"""

from __future__ import annotations

RED, YELLOW, BLUE, ORANGE, GREEN, PURPLE = range(6)
NAMES: tuple[str, ...] = ("red", "yellow", "blue", "orange", "green", "purple")
BASIC: tuple[int, ...] = (RED, YELLOW, BLUE)
BY_NAME: dict[str, int] = {name: index for index, name in enumerate(NAMES)}

# "Blue and yellow will be seen as green. Red and blue will be seen as purple. Yellow and
# red will be seen as orange."
_MIX = {
    (BLUE, YELLOW): GREEN,
    (YELLOW, BLUE): GREEN,
    (RED, BLUE): PURPLE,
    (BLUE, RED): PURPLE,
    (YELLOW, RED): ORANGE,
    (RED, YELLOW): ORANGE,
}


def mix(first: int, second: int) -> int:
    """The colour seen through two stacked Lenses (the same colour stays basic)."""
    return first if first == second else _MIX[(first, second)]


def seen(lenses: tuple[int, ...] | list[int]) -> int | None:
    """The colour a field shows: none when empty, else its Lens or the mix of its two."""
    if not lenses:
        return None
    if len(lenses) == 1:
        return lenses[0]
    return mix(lenses[0], lenses[1])


def name(colour: int | None) -> str:
    return "none" if colour is None else NAMES[colour]
