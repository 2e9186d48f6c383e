"""Determinize: a state a seat cannot tell from the true one (the contract is in
services/kit/determinize.py).

The Channeling hides one thing, from both players and spectators alike: the order of the
Magic Circle Card deck ("Shuffle the deck of Magic Circle Cards"). Everything else is on
the table: the grid, the cubes, the green glyphs labelling rows and columns, each
player's Glyph Cards (played ones lie in front of them, so the hand is the rest of the
eight) and the acquired cards. Which cards are in the deck is therefore public too (all
the cards less the grid and the acquired ones); only their order is not.

Nothing ever reveals a card below the top one without drawing it onto the grid, and
every drawn card leaves the deck, so no order of the remaining cards is more likely than
another to anyone: a uniform shuffle of the deck is the perfect determinization here,
with nothing further to account for.
"""

from __future__ import annotations

import copy
import random

from services.kit.engine import Rng

from .state import DARK, LIGHT, State


def determinize(state: State, seat: int | None, rng: random.Random) -> State:
    """A copy of ``state`` with the deck re-shuffled and the generator re-seeded from ``rng``.

    ``seat`` (None for a spectator) changes nothing: every seat sees the same, and the deck
    order is hidden from all. The same ``rng`` state gives an equal result; ``state`` is
    never changed.

    >>> from services.channeling import engine
    >>> state = engine.new_game(seed=3)
    >>> det = determinize(state, 0, random.Random(1))
    >>> sorted(det.deck) == sorted(state.deck) and engine.view(det, 0) == engine.view(state, 0)
    True
    """
    if seat not in (None, LIGHT, DARK):
        raise ValueError(
            f"The Channeling has seats 0 and 1 (or None for a spectator), not {seat!r}"
        )
    det = copy.deepcopy(state)
    # The deck's cards stay in the deck (its size is shown); only their order is re-dealt.
    rng.shuffle(det.deck)
    # The engine draws nothing from its generator after setup today; re-seeding keeps a
    # searched future free of the true game's draws should a rule ever use it.
    det.rng = Rng(rng.getrandbits(64))
    return det
