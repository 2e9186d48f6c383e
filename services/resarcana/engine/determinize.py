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
  (with the box), and its secret choice is either of them. After it, the Mage the rival
  turned down is any of those in the box but the seat's own (a spectator knows neither).
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
``rng``: two states the seat cannot tell apart give equal determinizations (a bot
searching on them cannot cheat). Orders nobody is shown and play never reads (a hand,
a draft offer, the cards a rival set aside) come out sorted, for the same reason; and
when no re-deal keeps a rival's decision possible, the fallback mends the last re-deal,
never goes back to the true one.

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
from services.resarcana.engine.cost import Enter, can_place
from services.resarcana.engine.effects import PlaceCheaper, ReturnCards
from services.resarcana.engine.state import ACTIONS, COLLECT, DRAFT, MAGE, Seat, State
from services.resarcana.engine.turn import step, to_act

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
    if det.phase not in (DRAFT, MAGE) and det.options.setup == "draft":
        _redeal_unchosen_mages(det, seat, rng)
    _redeal_monuments(det, seat, rng)
    _forget_orders(det, seat)
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
    return frozenset(task.card for task in state.tasks if isinstance(task, Enter))


def _returned(state: State, s: int, pile: int) -> int:
    """How many cards ``s`` has put back on top of ``pile`` in the look under way."""
    task = state.tasks[0] if state.tasks else None
    if isinstance(task, ReturnCards) and state.active == s and task.pile == pile:
        return task.done
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
    for tries in range(1, _TRIES + 1):
        _deal(zones, group, rng)
        stuck = [s for s in hidden if not _still_decides(state, s)]
        if not stuck:
            break
        if tries == _TRIES:  # practically never (120 random games: at most 9 tries)
            for s in stuck:
                _hand_a_card_to_place(state, s, zones, group, rng)
    for s in hidden:
        state.seats[s].hand.sort()  # a hand has no order; sorted, it shows nothing either


_TRIES = 200  # at least 1: every call re-deals


def _hand_a_card_to_place(
    state: State,
    s: int,
    zones: list[list[Slot]],
    group: Callable[[int, int], int],
    rng: random.Random,
) -> None:
    """After the last try, make the smallest change to the deal that lets hidden seat ``s``
    still decide: the one step whose options depend on its hidden hand is "place an
    Artifact ... cheaper", which needs a card in hand it can afford. One such card that
    may be in ``s``'s cards is swapped in for one of the same group, then into its hand.

    Built from the re-dealt cards only (never the true deal), so the result still
    depends on nothing but what the seat knows and ``rng``. The true deal shows such a
    card exists: it is pinned to ``s``'s cards, or of a group ``s``'s cards hold some of.
    """
    task = state.tasks[0]
    assert isinstance(task, PlaceCheaper), f"no fallback for a hidden {task!r} step"
    hand = state.seats[s].hand
    mine = zones[s]  # the hidden seat's hand slots (but a card being placed), then its pile's
    in_hand = [slot for slot in mine if slot[0] is hand]
    assert in_hand, f"seat {s} has no hidden card in hand"
    groups_here = {group(lst[i], s) for lst, i in mine}
    found: list[tuple[int, int, int]] = []  # (card, zone, index of its slot in the zone)
    for z, zone in enumerate(zones):
        for k, (lst, i) in enumerate(zone):
            card = lst[i]
            if (z == s or group(card, z) in groups_here) and can_place(state, s, card, task.extra):
                found.append((card, z, k))
    assert found, f"seat {s} can hold no Artifact it could place"
    card, z, k = sorted(found)[rng.randrange(len(found))]
    if z != s:  # swap it with a card of ``s`` of the same group
        g = group(card, z)
        same = sorted((lst[i], j) for j, (lst, i) in enumerate(mine) if group(lst[i], s) == g)
        _, j = same[rng.randrange(len(same))]
        _swap(zones[z][k], mine[j])
        k = j
    if mine[k][0] is not hand:  # then into the hand
        _swap(mine[k], in_hand[rng.randrange(len(in_hand))])
    assert _still_decides(state, s), "the fallback left the hidden seat without a decision"


def _swap(a: Slot, b: Slot) -> None:
    (la, ia), (lb, ib) = a, b
    la[ia], lb[ib] = lb[ib], la[ia]


def _still_decides(state: State, s: int) -> bool:
    if s not in to_act(state):
        return True
    forced_steps = state.phase == COLLECT or (state.phase == ACTIONS and bool(state.tasks))
    return len(step(state, s).options(state, s)) >= (2 if forced_steps else 1)


def _redeal_gifts(state: State, rng: random.Random) -> None:
    """For a spectator, which of a seat's cards came from its rival in the draft is
    unknown: any of its Artifacts, as many as it received, may be those."""
    for s in (0, 1):
        rival_cards = sorted(c for c in _owned(state.seats[1 - s]) if CONTENT[c].kind == "artifact")
        gave = state.seats[s].gave
        gave[:] = rng.sample(rival_cards, len(gave))


def _redeal_unchosen_mages(state: State, seat: int | None, rng: random.Random) -> None:
    """After the reveal, the box holds the Mages nobody was dealt, then each seat's
    unchosen ones (seat 0's first: setup.play_mage). A seat knows its own; which of the
    rest a rival turned down it does not (with more Mages than the draft deals), nor does
    a spectator know whose is whose."""
    slots = _box_slots(state, "mage")
    per_seat = CONTENT.mages_dealt - 1
    if seat is not None:
        own = len(slots) - (2 - seat) * per_seat
        del slots[own : own + per_seat]
    _deal([slots], _everything_unknown, rng)


def _forget_orders(state: State, seat: int | None) -> None:
    """Orders the seat never sees and play never reads: its own hand and draft offer
    (held, not laid out) and the order in which the rival set aside the cards it received
    (face down, shown only as the 4 received). Sorted, they carry nothing hidden."""
    if seat is None:
        return
    me = state.seats[seat]
    me.hand.sort()
    me.draft_offer.sort()
    state.seats[1 - seat].gave.sort()


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
