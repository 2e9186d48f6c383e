"""Powers' effects: what a power does once its cost is paid, one task per clause.

The content's clauses (content.py) become these tasks (``powers.compile_clauses``):
essences gained or placed on a component, the rival's gain, drawing, retrieving,
discarding, looking at a pile and returning cards (the Brass Bust), gaining a Monument
(the Crown of Command), straightening, placing the paid essence (the Squared Circle),
placing an Artifact cheaper (the Crucible), taking essences from a component (the Golden
Key) and checking victory (the Circle of Stones, the Magnum Opus).
"""

from __future__ import annotations

from dataclasses import dataclass

from services.resarcana.engine import rulebook, scoring
from services.resarcana.engine.content import CONTENT, KIND_BIT
from services.resarcana.engine.cost import (
    Arrive,
    Enter,
    artifact_discount,
    can_place,
    discard,
    hand_discards,
    pay,
)
from services.resarcana.engine.essences import TITLES, Bag, bag_text
from services.resarcana.engine.moves import (
    DECK,
    DONE,
    Done,
    Gain,
    GainMonument,
    Move,
    Pile,
    Place,
    Retrieve,
    Return,
    Straighten,
    Target,
)
from services.resarcana.engine.moves import Discard as DiscardMove
from services.resarcana.engine.state import State
from services.resarcana.engine.table import (
    SEAT_NAMES,
    Log,
    draw,
    gain,
    gain_bag,
    name,
    names,
    put_on,
    take_from,
)
from services.resarcana.engine.task import Task, by_kind


def _replace_or_pop(state: State, task: Task | None) -> None:
    if task is None:
        state.tasks.pop(0)
    else:
        state.tasks[0] = task


def gain_choices(excluded: int) -> list[Move]:
    return [Gain(e) for e in range(5) if not excluded >> e & 1]


class Effect(Task):
    """An effect's decision: a move that is not an option breaks the Powers rules."""

    __slots__ = ()
    RULE = rulebook.POWERS

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        return rulebook.POWERS, f"not possible now: {self.TEXT}"


@dataclass(frozen=True, slots=True)
class GainShown(Task):
    """Take the shown essences into your pool."""

    bag: Bag
    AUTO = True

    def run(self, state: State, seat: int, log: Log) -> None:
        gain_bag(state, seat, self.bag)
        log.say(
            "gain", f"{SEAT_NAMES[seat]} takes {bag_text(self.bag)}", seat, essences=list(self.bag)
        )


@dataclass(frozen=True, slots=True)
class PlaceShown(Task):
    """Place the shown essences on the component (``place ... here``)."""

    component: int
    bag: Bag
    AUTO = True

    def run(self, state: State, seat: int, log: Log) -> None:
        src, bag = self.component, self.bag
        for e in range(5):
            if bag[e]:
                put_on(state, src, e, bag[e])
        log.say(
            "place",
            f"{SEAT_NAMES[seat]} places {bag_text(bag)} on {name(src)}",
            seat,
            component=CONTENT[src].slug,
            essences=list(bag),
        )


@dataclass(frozen=True, slots=True)
class RivalGains(Task):
    """Your rival gains the shown essences (even after passing)."""

    bag: Bag
    AUTO = True

    def run(self, state: State, seat: int, log: Log) -> None:
        rival = 1 - seat
        gain_bag(state, rival, self.bag)
        log.say(
            "gain",
            f"{SEAT_NAMES[rival]} (the rival) takes {bag_text(self.bag)}",
            rival,
            essences=list(self.bag),
        )


@dataclass(frozen=True, slots=True)
class DrawCards(Task):
    count: int
    AUTO = True

    def run(self, state: State, seat: int, log: Log) -> None:
        draw(state, seat, self.count, log)


@dataclass(frozen=True, slots=True)
class CheckVictory(Task):
    """The Circle of Stones, the Magnum Opus: the victory check, in the middle of a round."""

    source: int
    AUTO = True

    def run(self, state: State, seat: int, log: Log) -> None:
        scoring.check_victory(state, log, f"{name(self.source)}, {SEAT_NAMES[seat]}")


@dataclass(frozen=True, slots=True)
class ChooseEssences(Effect):
    """Take ``count`` essences of your choice (none of ``excluded``), one at a time, into
    your pool (``dest`` -1) or onto the component ``dest``."""

    source: int
    dest: int
    count: int
    excluded: int

    TEXT = "choose an essence"

    def describe(self) -> str:
        where = "your pool" if self.dest < 0 else CONTENT[self.dest].slug
        return f"{self.TEXT} ({self.count} to {where})"

    def gains(self, state: State, seat: int) -> list[Move]:
        return gain_choices(self.excluded)

    LISTS = by_kind({Gain: gains})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Gain)
        e, dest, n = move.essence, self.dest, self.count
        if dest < 0:
            gain(state, seat, e)
            log.say(
                "gain", f"{SEAT_NAMES[seat]} takes 1 {TITLES[e]}", seat, essence=TITLES[e].lower()
            )
        else:
            put_on(state, dest, e)
            log.say(
                "place",
                f"{SEAT_NAMES[seat]} places 1 {TITLES[e]} on {name(dest)}",
                seat,
                component=CONTENT[dest].slug,
                essence=TITLES[e].lower(),
            )
        more = ChooseEssences(self.source, dest, n - 1, self.excluded) if n > 1 else None
        _replace_or_pop(state, more)


@dataclass(frozen=True, slots=True)
class PlacePaid(Effect):
    """The Squared Circle: put the essences paid for this action on one of your
    components (the Magic Item excepted; it may be turned)."""

    source: int

    TEXT = "choose a component for the paid essence"

    def targets(self, state: State, seat: int) -> list[Move]:
        if not any(state.paid):
            return []
        me = state.seats[seat]
        own = ([me.mage] if me.mage >= 0 else []) + me.tableau
        return [Target(c) for c in sorted(own)]

    LISTS = by_kind({Target: targets})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Target)
        cid = move.component
        paid = state.paid
        moved = list(paid)
        for e in range(5):
            if paid[e]:
                state.on[cid][e] += paid[e]
                state.out[e] += paid[e]
        log.say(
            "place",
            f"{SEAT_NAMES[seat]} places the paid {bag_text(moved)} on {name(cid)}",
            seat,
            component=CONTENT[cid].slug,
            essences=moved,
        )
        state.tasks.pop(0)


@dataclass(frozen=True, slots=True)
class RetrieveCard(Effect):
    """Take a card from your own discard pile into your hand (nothing if it is empty)."""

    TEXT = "retrieve a card"

    def retrievals(self, state: State, seat: int) -> list[Move]:
        return [Retrieve(c) for c in sorted(set(state.seats[seat].discard))]

    LISTS = by_kind({Retrieve: retrievals})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Retrieve)
        me = state.seats[seat]
        me.discard.remove(move.card)
        me.hand.append(move.card)
        log.say(
            "retrieve",
            f"{SEAT_NAMES[seat]} retrieves {name(move.card)} from the discard pile",
            seat,
            card=CONTENT[move.card].slug,
        )
        state.tasks.pop(0)

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        if isinstance(move, Retrieve):
            return rulebook.SPECIAL_CASES, "retrieve a card from your own discard pile"
        return rulebook.POWERS, f"not possible now: {self.TEXT}"


@dataclass(frozen=True, slots=True)
class DiscardCard(Effect):
    """An effect's discard: any card of your hand, for no essences."""

    TEXT = "discard an Artifact"

    def discards(self, state: State, seat: int) -> list[Move]:
        return hand_discards(state, seat)

    LISTS = by_kind({DiscardMove: discards})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, DiscardMove)
        discard(state, seat, move.card, log, "an effect, no essences for it")
        state.tasks.pop(0)


@dataclass(frozen=True, slots=True)
class LookAtPile(Effect):
    """The Brass Bust: draw ``count`` from your draw pile (into your hand) or the
    Monument deck (held aside, seen only by you), then return as many."""

    count: int

    TEXT = "choose a pile to look at"

    def piles(self, state: State, seat: int) -> list[Move]:
        me = state.seats[seat]
        moves: list[Move] = []
        if me.deck or me.discard:
            moves.append(Pile(0))
        if state.monument_deck:
            moves.append(Pile(1))
        return moves

    LISTS = by_kind({Pile: piles})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Pile)
        n = self.count
        me = state.seats[seat]
        if move.pile == 0:
            if not me.deck:
                drawn = draw(state, seat, n, log, "looking")
            else:
                drawn = draw(state, seat, min(n, len(me.deck)), log, "looking")
            k = len(drawn)
        else:
            k = min(n, len(state.monument_deck))
            for _ in range(k):
                state.looking.append(state.monument_deck.pop())
            log.tell(
                "look",
                seat,
                f"{SEAT_NAMES[seat]} looks at the Monument deck's top {k}: {names(state.looking)}",
                f"{SEAT_NAMES[seat]} looks at the Monument deck's top {k}",
                {"cards": [CONTENT[c].slug for c in state.looking]},
                count=k,
            )
        state.tasks[0] = ReturnCards(move.pile, k, 0)


@dataclass(frozen=True, slots=True)
class ReturnCards(Effect):
    """Put ``left`` more cards back on top of ``pile`` (0: your draw pile, from your hand;
    1: the Monument deck, of those held aside); ``done`` are back already, and the first
    returned ends on top."""

    pile: int
    left: int
    done: int

    TEXT = "return a card on top of the pile"

    def describe(self) -> str:
        return f"{self.TEXT} ({self.left} left)"

    def returns(self, state: State, seat: int) -> list[Move]:
        cards = state.seats[seat].hand if self.pile == 0 else state.looking
        return [Return(c) for c in sorted(set(cards))]

    LISTS = by_kind({Return: returns})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Return)
        pile, left, done = self.pile, self.left, self.done
        me = state.seats[seat]
        card = move.card
        if pile == 0:
            me.hand.remove(card)
            me.deck.insert(len(me.deck) - done, card)
            where = "their draw pile"
        else:
            state.looking.remove(card)
            state.monument_deck.insert(len(state.monument_deck) - done, card)
            where = "the Monument deck"
        position = done + 1
        log.tell(
            "return",
            seat,
            f"{SEAT_NAMES[seat]} returns {name(card)} to {where} (card {position} from the top)",
            f"{SEAT_NAMES[seat]} returns a card to {where} (card {position} from the top)",
            {"card": CONTENT[card].slug},
            position=position,
        )
        _replace_or_pop(state, ReturnCards(pile, left - 1, done + 1) if left > 1 else None)


@dataclass(frozen=True, slots=True)
class ChooseMonument(Effect):
    """The Crown of Command: gain a face-up Monument or the deck's top."""

    TEXT = "choose a Monument"

    def monuments(self, state: State, seat: int) -> list[Move]:
        found = sorted(state.monument_display)
        if state.monument_deck:
            found.insert(0, DECK)  # DECK (-1) sorts first
        return [GainMonument(c) for c in found]

    LISTS = by_kind({GainMonument: monuments})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, GainMonument)
        state.tasks[0] = Arrive(move.monument)


@dataclass(frozen=True, slots=True)
class StraightenComponent(Effect):
    """Straighten one of your turned components of the ``kinds`` mask, never the one
    whose power is used (else a free loop)."""

    source: int
    kinds: int

    TEXT = "choose a component to straighten"

    def straightenings(self, state: State, seat: int) -> list[Move]:
        src, kinds, turned = self.source, self.kinds, state.turned
        return [
            Straighten(c)
            for c in sorted(state.seats[seat].components())
            if c != src and turned[c] and KIND_BIT[CONTENT[c].kind] & kinds
        ]

    LISTS = by_kind({Straighten: straightenings})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Straighten)
        state.turned[move.component] = False
        log.say(
            "straighten",
            f"{SEAT_NAMES[seat]} straightens {name(move.component)}",
            seat,
            component=CONTENT[move.component].slug,
        )
        state.tasks.pop(0)

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        if isinstance(move, Straighten) and move.component == self.source:
            return rulebook.POWERS, "straighten another component"
        return rulebook.POWERS, f"not possible now: {self.TEXT}"


@dataclass(frozen=True, slots=True)
class PlaceCheaper(Effect):
    """The Crucible: place an Artifact from your hand ``extra`` cheaper, or decline."""

    extra: int

    TEXT = "choose an Artifact to place"

    def placements(self, state: State, seat: int) -> list[Move]:
        hand = sorted(set(state.seats[seat].hand))
        return [Place(c) for c in hand if can_place(state, seat, c, self.extra)]

    def declines(self, state: State, seat: int) -> list[Move]:
        return [DONE] if self.placements(state, seat) else []

    LISTS = by_kind({Done: declines, Place: placements})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        state.tasks.pop(0)
        if isinstance(move, Done):
            log.say("no_effect", f"{SEAT_NAMES[seat]} places no Artifact", seat)
            return
        assert isinstance(move, Place)
        card = move.card
        comp = CONTENT[card]
        disc = artifact_discount(state, seat, card) + self.extra
        log.say(
            "place",
            f"{SEAT_NAMES[seat]} places {comp.name} ({self.extra} cheaper)",
            seat,
            card=comp.slug,
        )
        cost = comp.cost
        state.tasks[0:0] = [pay(card, cost.fixed, cost.any_n, cost.excl, disc), Enter(card)]


@dataclass(frozen=True, slots=True)
class TakeFromComponent(Effect):
    """The Golden Key: choose a component of either player with essences on it."""

    count: int

    TEXT = "choose a component to take essences from"

    def targets(self, state: State, seat: int) -> list[Move]:
        on = state.on
        held = [c for s in (0, 1) for c in state.seats[s].components() if any(on[c])]
        return [Target(c) for c in sorted(held)]

    LISTS = by_kind({Target: targets})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Target)
        cid = move.component
        owner = 0 if cid in state.seats[0].components() else 1
        log.say(
            "target",
            f"{SEAT_NAMES[seat]} takes essences from {SEAT_NAMES[owner]}'s {name(cid)}",
            seat,
            component=CONTENT[cid].slug,
            owner=owner,
        )
        state.tasks[0] = TakeEssence(cid, self.count)


@dataclass(frozen=True, slots=True)
class TakeEssence(Effect):
    """The Golden Key: take ``count`` more essences off ``component``, one at a time."""

    component: int
    count: int

    TEXT = "choose an essence to take"

    def gains(self, state: State, seat: int) -> list[Move]:
        held = state.on[self.component]
        return [Gain(e) for e in range(5) if held[e]]

    LISTS = by_kind({Gain: gains})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Gain)
        cid, n, e = self.component, self.count, move.essence
        take_from(state, seat, cid, e)
        log.say(
            "gain",
            f"{SEAT_NAMES[seat]} takes 1 {TITLES[e]} from {name(cid)}",
            seat,
            essence=TITLES[e].lower(),
        )
        more = n > 1 and any(state.on[cid])
        _replace_or_pop(state, TakeEssence(cid, n - 1) if more else None)
