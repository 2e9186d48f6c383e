"""A Shén state as one seat might believe it to be: the determinize hook the bots sample.

What is hidden (see view.py): every deck's order, the hands of the other seats (a
teammate's too), and the generator. Everything else is on the table: the field, every
discard pile, removed pile and Remains in Play row, the card being played, the combat,
and the number of cards in each hand and deck. The deck lists are public as well (the
game's options name them, or the Realm's ready-made deck), so a seat knows which of
another player's cards are unseen: exactly those in that player's hand and deck.

So the re-deal is per player, never across players (a card stays its owner's, as the
conservation invariant demands):

- another seat (every seat, for a spectator): the cards of its hand and deck are pooled,
  shuffled, and dealt back as a hand of the same size and a deck of the same size;
- the seat itself: its hand is its own to see and stays; its deck, known as a multiset
  (its cards minus all it sees) but face down, is shuffled.

A perfect determinization would also keep what the seat learned from events and the
state does not record: a card seen going into a hand (taken back from the discard pile
by a recover effect, a Spirit Avatar returned to hand) stays in that hand until it is
seen leaving it; and a deck rebuilt from a discard pile (public when it was shuffled)
holds only cards of that pile, so an opponent's hand keeps the cards it held before.
Without a record of those, unseen cards are re-dealt among all of a player's unseen
places; the bots' samples are then slightly wider than the seat's true belief.

The re-deal is canonical: it reads only what the seat sees (each pool of unseen cards
is sorted before it is shuffled, and the generator is replaced, never read) plus the rng
it is given; the rest is copied as it is, all of it on the table or (the initial deck
lists) following from the game's options. Two states the seat cannot tell apart give the
same result under the same seed, so a bot's decisions cannot depend on what it may not
see.
"""

from __future__ import annotations

import copy
import random

from services.kit.engine import Rng

from .state import Player, State


def determinize(state: State, seat: int | None, rng: random.Random) -> State:
    """A new state that ``seat`` (None: a spectator) cannot tell from ``state``, with all
    it cannot see re-dealt from ``rng``; ``state`` is left as it is.

    >>> from services.shen import engine
    >>> state = engine.new_game(seed=7, players=2, options=engine.Options())
    >>> det = determinize(state, 0, random.Random(1))
    >>> engine.view(det, 0) == engine.view(state, 0), det is not state
    (True, True)
    """
    det = copy.deepcopy(state)
    for player in det.players:
        if player.seat == seat:
            # Sorted first: the shuffle must not start from the true (hidden) order.
            player.deck.sort()
            rng.shuffle(player.deck)
        else:
            _redeal(player, rng)
    # Future draws, reshuffles and dice come from a generator the seat cannot know.
    det.rng = Rng(rng.getrandbits(64))
    return det


def _redeal(player: Player, rng: random.Random) -> None:
    """Deal the player's unseen cards back into a hand and a deck of the same sizes."""
    # Sorted first: which of these cards are in the hand and in what order the deck lies
    # is hidden, so neither may shape the deal.
    unseen = sorted(player.hand + player.deck)
    rng.shuffle(unseen)
    held = len(player.hand)
    player.hand = sorted(unseen[:held])  # hands are kept sorted
    player.deck = unseen[held:]
