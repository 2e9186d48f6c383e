"""Determinize: a Shrine state a seat cannot tell from the true one (the contract is in
services/kit/determinize.py; what each seat sees is exactly view.py).

What is hidden, and where it may be instead:

- **The opponent's Code card** (setup 9: "ensuring your opponent cannot see it"). The
  Code set is public (the backs show it) and the seat holds one of its six cards, so the
  opponent's is any other card of the set: within a set any two cards differ on every
  field (content/code_cards.toml), so each is a valid opponent. A spectator sees neither:
  both are an ordered pair of distinct cards of the set. Block claims and Proof tokens are
  claims, not facts (a false one costs 6 Treasure at the end), so they narrow nothing.
  Once the game is over the claims have been checked against the Code cards (and the
  outcome's tally shows the result), so the Code cards stay as they are.
- **Shape cards** (Radiant Shapes: "These cards are hidden from the opponent"): the
  opponent's hand (both hands for a spectator), the two cards drawn and waiting for
  "keep" (seen only by the drawer), the order of every deck, and the 2-field cards left
  in the box after setup (kept as the setup deck). They move only among those places
  and only within their deck: a card's back shows its deck, every draw names its deck,
  and the view counts each deck, so how many cards of each deck a hand holds is known.
  The card being completed was revealed ("Reveal the Shape card") and stays in hand;
  completed cards are public.
- **The generator**: the Offering's next Lenses and any shuffle to come. The pouch has no
  order (every Lens is drawn when it is needed), so re-seeding the generator re-deals it.

A perfect determinization would also keep what the seat was told and the state does not
record: a Shape card the seat put under a deck ("went under its deck") is in that deck,
at a depth it can count, until it is drawn again. Without that record such a card is
re-dealt among all the unseen places of its deck size, so a search's samples are a
little wider than the seat's true knowledge.
"""

from __future__ import annotations

import copy
import random

from services.kit.engine import Rng
from services.shrine.engine.content import CONTENT
from services.shrine.engine.state import MOON, SUN, State

Slot = tuple[list[int], int]  # a list in the state and an index into it


def determinize(state: State, seat: int | None, rng: random.Random) -> State:
    """A copy of ``state`` with everything hidden from ``seat`` (None: a spectator)
    re-dealt from ``rng``; ``state`` is never changed, and the same ``rng`` state gives
    an equal result.

    The result is canonical: it depends only on what ``seat`` sees and on ``rng``, so two
    states the seat cannot tell apart give the same result under the same ``rng`` state
    (a bot's decision cannot depend on what it may not see).

    >>> from services.shrine import engine
    >>> state = engine.new_game(7, 2, engine.Options(radiant_shapes=True))
    >>> det = determinize(state, 0, random.Random(1))
    >>> engine.view(det, 0) == engine.view(state, 0) and det.players[0] == state.players[0]
    True
    """
    if seat is not None and (type(seat) is not int or seat not in (SUN, MOON)):
        raise ValueError(f"seat must be 0 (Sun), 1 (Moon) or None, not {seat!r}")
    det = copy.deepcopy(state)
    if det.result is None:
        _redeal_codes(det, seat, rng)
    if det.options.radiant_shapes:
        _redeal_shapes(det, seat, rng)
    det.rng = Rng(rng.getrandbits(64))
    return det


def _redeal_codes(state: State, seat: int | None, rng: random.Random) -> None:
    """The Code cards the seat cannot see, drawn again from its set less its own card."""
    unseen = [s for s in (SUN, MOON) if s != seat]
    own = {state.players[seat].code} if seat is not None else set()
    pool = [code for code in CONTENT.code_sets[state.code_set] if code not in own]
    for s, code in zip(unseen, rng.sample(pool, len(unseen)), strict=True):
        state.players[s].code = code


def _hidden_slots(state: State, seat: int | None) -> list[Slot]:
    """Every place a Shape card lies that ``seat`` cannot see, in a fixed order: the decks
    (the box's 2-field cards among them), the drawn pair unless the seat drew it, then the
    other hands less the card being completed."""
    slots: list[Slot] = [(deck, i) for deck in state.decks for i in range(len(deck))]
    if state.drawn and seat != state.current:
        slots += [(state.drawn, i) for i in range(len(state.drawn))]
    for s, player in enumerate(state.players):
        if s == seat:
            continue
        slots += [(player.hand, i) for i, card in enumerate(player.hand) if card != state.shape]
    return slots


def _redeal_shapes(state: State, seat: int | None, rng: random.Random) -> None:
    """Shuffle the unseen Shape cards of each deck size among that size's unseen places.

    Each pool is sorted before it is shuffled, so the deal never starts from the true
    order: which card lies where is read from nothing but ``rng``.
    """
    slots = _hidden_slots(state, seat)
    for size in CONTENT.decks:
        here = [(cards, i) for cards, i in slots if CONTENT.shapes[cards[i]].deck == size]
        dealt = sorted(cards[i] for cards, i in here)
        rng.shuffle(dealt)
        for (cards, i), card in zip(here, dealt, strict=True):
            cards[i] = card
    for player in state.players:
        player.hand.sort()  # a hand is a set of cards; the engine keeps it sorted
