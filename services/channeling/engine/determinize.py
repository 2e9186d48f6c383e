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

The re-deal is canonical: it starts from the deck's cards in id order, never from the
true order, and takes nothing else from the hidden parts (the generator is replaced, not
advanced). Two states a seat cannot tell apart therefore give the same result under the
same ``rng``, so a bot searching on these states cannot be steered by what it may not see.
"""

from __future__ import annotations

import copy
import random

from services.kit.engine import Rng

from .state import DARK, LIGHT, State


def determinize(state: State, seat: int | None, rng: random.Random) -> State:
    """A copy of ``state`` with the deck re-shuffled and the generator re-seeded from ``rng``.

    ``seat`` (None for a spectator) changes nothing: every seat sees the same, and the deck
    order is hidden from all. The same ``rng`` state gives an equal result, for ``state``
    and for any state differing from it only in the deck's order or the generator;
    ``state`` is never changed.

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
    # The deck's cards stay in the deck (its size is shown); only their order is re-dealt,
    # shuffled from id order so that the true order cannot show through.
    det.deck.sort()
    rng.shuffle(det.deck)
    # The engine draws nothing from its generator after setup today; re-seeding keeps a
    # searched future free of the true game's draws should a rule ever use it.
    det.rng = Rng(rng.getrandbits(64))
    return det
