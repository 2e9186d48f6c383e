"""Dice: rolling from the state's one Rng, the seats' reroll streams, and what counts.

Why reroll streams: rerolls happen at the same time for every seat, so the order in
which two seats' moves reach the server must not change what they roll. At the start of
each Late Morning the state's Rng draws one 64-bit key per seat, in seat order; that
seat's rerolls that day are read from its own key (splitmix64). Two interleavings of
the same moves therefore give the same game, and all chance still comes from the seed.
"""

from __future__ import annotations

from .content import BLACK_DIE, CURSE, DICE, ELEMENTS, SYMBOLS
from .state import Player, State

_MASK = (1 << 64) - 1


def roll(state: State, die: int) -> int:
    """Roll one die with the state's Rng; returns the face index."""
    face = state.rng.randrange(6)
    state.faces[die] = face
    return face


def stream_roll(player: Player, state: State, die: int) -> int:
    """Reroll one die from the seat's own stream (see the module docstring)."""
    x = (player.stream + 0x9E3779B97F4A7C15) & _MASK
    player.stream = x
    z = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    z ^= z >> 31
    face = z % 6
    state.faces[die] = face
    return face


def symbol(state: State, die: int) -> int:
    """The symbol a die shows now."""
    return DICE[die].faces[state.faces[die]]


def counted(player: Player) -> list[int]:
    """The dice that count today: rolled, still owned, not cancelled by the curse."""
    if not player.cancelled:
        return player.rolled
    return [d for d in player.rolled if d not in player.cancelled]


def counts(state: State, player: Player) -> list[int]:
    """How many counted dice show each symbol."""
    out = [0] * len(SYMBOLS)
    faces = state.faces
    for die in counted(player):
        out[DICE[die].faces[faces[die]]] += 1
    return out


def different_elements(state: State, player: Player) -> int:
    """The number of different element symbols among the counted dice."""
    c = counts(state, player)
    return sum(1 for e in ELEMENTS if c[e])


def describe(state: State, dice: list[int]) -> str:
    return ", ".join(f"{d}:{SYMBOLS[symbol(state, d)]}" for d in dice) or "no dice"


def curse_cancels(state: State, player: Player) -> list[int]:
    """The dice the black die's curse removes from the result (Example 6).

    The black die itself still counts; every other die showing its symbol does not.
    """
    if BLACK_DIE not in player.rolled:
        return []
    shown = symbol(state, BLACK_DIE)
    if shown == CURSE:
        return []
    return [d for d in player.rolled if d != BLACK_DIE and symbol(state, d) == shown]
