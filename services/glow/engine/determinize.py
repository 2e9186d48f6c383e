"""Determinize: a state a seat cannot tell from the true one (the contract is in
services/kit/determinize.py).

What Glow hides (see view.py), and where each hidden thing may be:

- The companions in the deck and the three per pack returned to the box (Game Setup 6).
  No one ever sees them until a card is drawn face up onto the meeting track, so every
  unseen companion may be anywhere among the deck and the box, with one limit everyone
  knows: the cards are "marked A and B on their back" and pack A lies on pack B. So the
  unseen A cards are re-dealt among the deck's A positions and the box's A cards, the
  B cards likewise: each deck position keeps its back, the box keeps three of each.
- The spell tokens face down: the spell pile, the other players' face-down spells (the
  seat sees its own; a spectator sees none), and the tokens replaced in the box (the view
  shows their count only, since a skull may cancel a spell face down). They are re-dealt
  among those places, each keeping its size. Revealed spells stay where they are.
- The state's Rng (future Late Morning rolls, Kaar's black die, the Evening's small
  dice) and each seat's reroll key for today (dice.py): both drawn anew from ``rng``,
  the seat's own key too, since no one sees it.

Everything else (the track, the cemetery, the dice and the faces they show, tokens,
scores, boards, what each seat is asked) is on the table and stays.

A perfect determinization would also keep the boxed spell tokens the seat saw face up
(revealed at a Morning, then triggered or cancelled: the events named them) and its own
tokens a skull cancelled face down out of the re-deal; the state does not record which
boxed tokens went there face down, so all of them are treated as unseen, as the view
treats them. A bot therefore knows a little less than it could, never more.
"""

from __future__ import annotations

import copy
import random

from services.kit.engine import Rng

from .content import COMPANIONS, PACKS
from .state import ADVENTURERS, State


def determinize(state: State, seat: int | None, rng: random.Random) -> State:
    """A copy of ``state`` with everything hidden from ``seat`` re-dealt from ``rng``.

    ``seat`` None is a spectator. The same ``rng`` state gives an equal result;
    ``state`` is never changed. The hidden things are sorted before they are shuffled, so
    the result depends on what the seat sees and on ``rng`` alone: two states the seat
    cannot tell apart give the same state, and a search cannot learn the true one.

    >>> from services.glow import engine
    >>> state = engine.new_game(3, 2, engine.Options())
    >>> for seat in (0, 1):
    ...     _ = engine.apply(state, seat, engine.legal_moves(state, seat)[0])
    >>> det = determinize(state, 0, random.Random(1))
    >>> engine.view(det, 0) == engine.view(state, 0), det.deck == state.deck
    (True, False)
    """
    if seat is not None and not 0 <= seat < state.n:
        raise ValueError(f"this game has seats 0 to {state.n - 1} (or None), not {seat!r}")
    det = copy.deepcopy(state)
    # Before the deal (Game Setup 5-9 follow the adventurer choice) the companions and the
    # spell tokens lie in the box unshuffled: the re-seeded Rng below deals them anew.
    if state.step != ADVENTURERS:
        _redeal_companions(det, rng)
        _redeal_spells(det, seat, rng)
    for player in det.players:
        player.stream = rng.getrandbits(64)
    det.rng = Rng(rng.getrandbits(64))
    return det


def _redeal_companions(det: State, rng: random.Random) -> None:
    """The unseen companions of each pack, shuffled into that pack's deck places and box."""
    box: list[int] = []
    for pack in PACKS:
        places = [i for i, c in enumerate(det.deck) if COMPANIONS[c].pack == pack]
        unseen = sorted(
            [det.deck[i] for i in places] + [c for c in det.box if COMPANIONS[c].pack == pack]
        )
        rng.shuffle(unseen)
        for i, card in zip(places, unseen, strict=False):
            det.deck[i] = card
        box += unseen[len(places) :]
    det.box = sorted(box)


def _redeal_spells(det: State, seat: int | None, rng: random.Random) -> None:
    """The face-down spell tokens the seat has not seen, shuffled among their places."""
    others = [p for i, p in enumerate(det.players) if i != seat]
    unseen = det.spell_pile + det.spell_box
    for player in others:
        unseen += player.hidden_spells
    unseen.sort()
    rng.shuffle(unseen)
    det.spell_pile, unseen = unseen[: len(det.spell_pile)], unseen[len(det.spell_pile) :]
    det.spell_box, unseen = sorted(unseen[: len(det.spell_box)]), unseen[len(det.spell_box) :]
    for player in others:
        count = len(player.hidden_spells)
        player.hidden_spells, unseen = unseen[:count], unseen[count:]
