"""Determinization: the game as one seat may imagine it (contract: services/kit/determinize.py).

``determinize(state, seat, rng)`` returns a new state that shows ``seat`` exactly what it
sees now, with everything hidden from it re-dealt among the places it could be, and the
state's generator re-seeded from ``rng`` (future draws and reshuffles differ).

What is hidden (see ``view.py``) and where each hidden card may be instead:

- Setup, the draft ("Draw 2 Artifacts, look at them, keep 1 ... set the other face down
  for your rival"): the seat's own face-down stack, everything of the rival's draft
  (offer, stack, kept and set-aside cards) and the Artifacts left in the box are all
  unseen: any of those cards may be in any of those places.
- Mages before the reveal: the rival's two Mages are any of those not dealt to the seat
  (with the box), and its secret choice is either of them.
- After the draft ("look at the 4 cards you kept and the 4 cards you received"): a seat
  knows every card of its own, so its draw pile keeps its cards and only their order is
  re-dealt; the cards it set aside for the rival are the rival's. The rival's other
  cards may be any not known elsewhere (with the box).
- First Game ("deal each of you 3 Artifacts as your starting hand ... deal 5 face-down
  Artifacts to each of you as your draw pile"): a seat knows its Start-symbol cards, so
  the other three are the rival's; which of the other Artifacts are in its own draw pile,
  the rival's hand and draw pile, or the box is unknown.
- The Monument deck's order; and the Monuments drawn by a rival's look, until returned.
- The rival's hand and draw pile: the hidden cards are shared out again, each pile
  keeping its size.

Each kind of card above keeps how many of it each place holds (that much the seat
knows: the sizes are public and the kinds are its own knowledge), and the cards are
drawn from a sorted pool, so the result depends only on what the seat knows and on
``rng``: two states the seat cannot tell apart give equal determinizations.

What a perfect determinization would also account for, which the state does not record:
cards put back on a pile by a finished look (their position is then known to the looker;
it is kept only while the return is under way), the cards of a discard pile that was
shuffled into a new draw pile (everyone saw them: they are in that seat's hand or draw
pile), the First Game cards a seat has drawn (then known to be its own), and anything
inferred from how the rival plays.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable

from services.kit.engine import Rng
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.game import legal_moves, to_act
from services.resarcana.engine.state import ACTIONS, COLLECT, DRAFT, MAGE, Seat, State

# The place of one hidden card: a list of the state and an index in it.
Slot = tuple[list[int], int]

UNKNOWN, START = 0, 1  # card groups; a card known to stay in zone z is group PINNED + z
PINNED = 2


def determinize(state: State, seat: int | None, rng: random.Random) -> State:
    """A state ``seat`` (None: a spectator) cannot tell from ``state``, hidden cards re-dealt.

    Never changes ``state``; the same ``rng`` seed gives an equal state.
    """
    det = copy.deepcopy(state)
    det.rng = Rng(rng.getrandbits(64))
    hidden = [s for s in (0, 1) if s != seat]  # seats whose hands this seat does not see
    if det.phase in (DRAFT, MAGE) and det.options.setup == "draft":
        _redeal_mages(det, hidden, rng)
    if det.phase == DRAFT:
        _redeal_draft(det, seat, hidden, rng)
    else:
        _redeal_artifacts(det, seat, hidden, rng)
        if seat is None and det.options.setup == "draft":
            _redeal_gifts(det, rng)
    _redeal_monuments(det, seat, rng)
    return det


# ---------------------------------------------------------------- places and the deal


def _slots(
    cards: list[int], skip: frozenset[int] = frozenset(), stop: int | None = None
) -> list[Slot]:
    end = len(cards) if stop is None else stop
    return [(cards, i) for i in range(end) if cards[i] not in skip]


def _box_slots(state: State, kind: str) -> list[Slot]:
    return [(state.box, i) for i, c in enumerate(state.box) if CONTENT[c].kind == kind]


def _deal(zones: list[list[Slot]], group: Callable[[int, int], int], rng: random.Random) -> None:
    """Re-deal the cards in ``zones`` (lists of slots): each group of cards keeps how many
    of it each zone holds, its cards shared out uniformly among those places, then each
    zone's cards laid out uniformly over its slots. ``group(card, zone)`` says what the
    seat knows of a card."""
    held = [[lst[i] for lst, i in zone] for zone in zones]
    pools: dict[int, list[int]] = {}
    counts: list[dict[int, int]] = []
    for z, cards in enumerate(held):
        count: dict[int, int] = {}
        for card in cards:
            g = group(card, z)
            pools.setdefault(g, []).append(card)
            count[g] = count.get(g, 0) + 1
        counts.append(count)
    dealt: list[list[int]] = [[] for _ in zones]
    for g in sorted(pools):
        pool = sorted(pools[g])
        rng.shuffle(pool)
        for z, count in enumerate(counts):
            n = count.get(g, 0)
            dealt[z].extend(pool[:n])
            del pool[:n]
    for zone, cards in zip(zones, dealt, strict=True):
        cards.sort()
        rng.shuffle(cards)
        for (lst, i), card in zip(zone, cards, strict=True):
            lst[i] = card


def _everything_unknown(card: int, zone: int) -> int:
    return UNKNOWN


# ---------------------------------------------------------------- setup


def _redeal_mages(state: State, hidden: list[int], rng: random.Random) -> None:
    """Mages dealt to hidden seats, and those left in the box, before the reveal."""
    zones = [_slots(state.seats[s].mage_options) for s in hidden] + [_box_slots(state, "mage")]
    _deal(zones, _everything_unknown, rng)
    for s in hidden:
        me = state.seats[s]
        me.mage_options.sort()  # dealt sorted (setup.py)
        if me.mage_choice >= 0 and me.mage < 0:
            me.mage_choice = me.mage_options[rng.randrange(len(me.mage_options))]


def _redeal_draft(state: State, seat: int | None, hidden: list[int], rng: random.Random) -> None:
    """During the draft nothing of a hidden seat's cards, nor any face-down stack, is seen."""
    zones: list[list[Slot]] = []
    for s in (0, 1):
        me = state.seats[s]
        zones.append(_slots(me.draft_stack))
        if s in hidden:
            for cards in (me.draft_offer, me.draft_kept, me.draft_given):
                zones.append(_slots(cards))
    zones.append(_box_slots(state, "artifact"))
    _deal(zones, _everything_unknown, rng)


# ---------------------------------------------------------------- after setup


def _placing(state: State) -> frozenset[int]:
    """Cards announced as being placed: still in the hand until they enter play."""
    return frozenset(task[1] for task in state.tasks if task[0] == "enter")


def _returned(state: State, s: int, pile: int) -> int:
    """How many cards ``s`` has put back on top of ``pile`` in the look under way."""
    if state.tasks and state.tasks[0][0] == "return" and state.active == s:
        _, on_pile, _, done = state.tasks[0]
        if on_pile == pile:
            return done
    return 0


def _owned(me: Seat) -> set[int]:
    return set(me.hand) | set(me.deck) | set(me.discard) | set(me.tableau)


def _redeal_artifacts(
    state: State, seat: int | None, hidden: list[int], rng: random.Random
) -> None:
    """Hidden hands and every draw pile, with the box; what each seat knows stays put."""
    placing = _placing(state)
    zones: list[list[Slot]] = []
    owners: list[int | None] = []  # whose cards each zone holds (None: the box)
    for s in (0, 1):
        me = state.seats[s]
        if s in hidden:
            zones.append(_slots(me.hand, skip=placing) + _slots(me.deck))
        else:  # the seat's own draw pile, below the cards it just put back
            zones.append(_slots(me.deck, stop=len(me.deck) - _returned(state, s, 0)))
        owners.append(s)
    zones.append(_box_slots(state, "artifact"))
    owners.append(None)

    first_game = state.options.setup == "first_game"
    known_rival: set[int] = set()
    if seat is not None and not first_game:
        known_rival = set(state.seats[seat].gave)  # "set the other face down for your rival"

    def group(card: int, zone: int) -> int:
        owner = owners[zone]
        if first_game and CONTENT[card].start:
            # The Start-symbol cards were dealt 3 to each: a seat knows its own, so also
            # the rival's; a spectator knows only that each seat holds 3 of them.
            return START if seat is None else PINNED + zone
        if seat is not None and not first_game and owner == seat:
            return PINNED + zone  # "look at the 4 cards you kept and the 4 you received"
        if card in known_rival:
            return PINNED + zone
        return UNKNOWN

    # A hidden seat deciding an effect's step has at least two choices (one would have
    # been carried out without asking): the seat sees that, so a re-deal must keep it
    # true ("place an Artifact ... cheaper" needs a card in hand it can afford). Trying
    # again keeps the re-deal uniform among those that do; the true deal is one of them.
    true_deal = [[lst[i] for lst, i in zone] for zone in zones]
    for _ in range(_TRIES):
        _deal(zones, group, rng)
        if all(_still_decides(state, s) for s in hidden):
            break
    else:  # practically never (120 random games: at most 9 tries): keep the true deal
        for zone, cards in zip(zones, true_deal, strict=True):
            for (lst, i), card in zip(zone, cards, strict=True):
                lst[i] = card
    for s in hidden:
        state.seats[s].hand.sort()  # a hand has no order; sorted, it shows nothing either


_TRIES = 200


def _still_decides(state: State, s: int) -> bool:
    if s not in to_act(state):
        return True
    forced_steps = state.phase == COLLECT or (state.phase == ACTIONS and bool(state.tasks))
    return len(legal_moves(state, s)) >= (2 if forced_steps else 1)


def _redeal_gifts(state: State, rng: random.Random) -> None:
    """For a spectator, which of a seat's cards came from its rival in the draft is
    unknown: any of its Artifacts, as many as it received, may be those."""
    for s in (0, 1):
        rival_cards = sorted(c for c in _owned(state.seats[1 - s]) if CONTENT[c].kind == "artifact")
        gave = state.seats[s].gave
        gave[:] = rng.sample(rival_cards, len(gave))


def _redeal_monuments(state: State, seat: int | None, rng: random.Random) -> None:
    """The Monument deck's order, with the Monuments a rival is looking at."""
    looker = state.active if state.looking else None
    zone = _slots(
        state.monument_deck,
        stop=len(state.monument_deck) - (_returned(state, seat, 1) if seat is not None else 0),
    )
    if state.looking and seat != looker:
        zone += _slots(state.looking)
    _deal([zone], _everything_unknown, rng)
