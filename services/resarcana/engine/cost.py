"""Cost: paying a placement cost or a power's cost, and components entering play.

"You must always pay the entire cost": the parts that need no decision are paid at once
(turning the component itself and the Mage, the fixed essences); the rest are tasks:
``TurnForCost`` (turn another component, "turn a Creature"), ``DiscardForCost`` (discard
a card, which gains nothing) and ``Pay`` (each point of discount spent by choice, then
each "any" essence). "All placed or claimed components enter play straightened":
``Enter`` and ``Arrive`` once they are paid for.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.resarcana.engine import rulebook
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.essences import ANY, NONE, TITLES, Bag, bag_text, can_pay
from services.resarcana.engine.moves import DECK, Discard, Move, PayEssence, Turn, Waive
from services.resarcana.engine.state import State
from services.resarcana.engine.table import (
    SEAT_NAMES,
    Log,
    name,
    refill_display,
    spend,
)
from services.resarcana.engine.task import Task, by_kind


def artifact_discount(state: State, seat: int, card: int) -> int:
    """Discount abilities apply whether or not their component is turned."""
    comp = CONTENT[card]
    total = 0
    for cid in state.seats[seat].components():
        owner = CONTENT[cid]
        if owner.discount and (owner.discount_on == "artifact" or comp.is_type(owner.discount_on)):
            total += owner.discount
    return total


def can_place(state: State, seat: int, card: int, extra: int = 0) -> bool:
    cost = CONTENT[card].cost
    disc = artifact_discount(state, seat, card) + extra
    return can_pay(state.seats[seat].pool, cost.fixed, cost.any_n, cost.excl, disc)


def paying_for(src: int) -> str:
    return "the Monument deck's top card" if src == DECK else name(src)


def discard(state: State, seat: int, card: int, log: Log, why: str) -> None:
    me = state.seats[seat]
    me.hand.remove(card)
    me.discard.append(card)
    log.say(
        "discard",
        f"{SEAT_NAMES[seat]} discards {name(card)} ({why})",
        seat,
        card=CONTENT[card].slug,
    )


@dataclass(frozen=True, slots=True)
class Pay(Task):
    """Pay what is left of a cost: ``fixed`` essences plus ``any`` essences of choice
    (none of the ``excluded`` mask), after spending ``discount`` points of discount."""

    source: int  # what is paid for (DECK: the Monument deck's top card)
    fixed: Bag
    any: int
    excluded: int
    discount: int

    TEXT = "pay the cost"
    RULE = rulebook.COST

    def describe(self) -> str:
        what = "monument-deck" if self.source < 0 else CONTENT[self.source].slug
        left = bag_text(self.fixed, self.any, self.excluded)
        return f"{self.TEXT} for {what}: {left} left" + (
            f", discount {self.discount}" if self.discount else ""
        )

    def payments(self, state: State, seat: int) -> list[Move]:
        """One essence of the "any" part, once no discount is left to spend."""
        if self.discount:
            return []
        pool = state.seats[seat].pool
        excl = self.excluded
        return [PayEssence(e) for e in range(5) if pool[e] and not excl >> e & 1]

    def waivers(self, state: State, seat: int) -> list[Move]:
        """Spend a point of discount on an essence of the cost (any the rest can be paid
        after)."""
        disc, fixed, any_n, excl = self.discount, self.fixed, self.any, self.excluded
        if not disc:
            return []
        pool = state.seats[seat].pool
        moves: list[Move] = []
        for e in range(5):
            if fixed[e]:
                less = list(fixed)
                less[e] -= 1
                if can_pay(pool, less, any_n, excl, disc - 1):
                    moves.append(Waive(e))
        if any_n and can_pay(pool, fixed, any_n - 1, excl, disc - 1):
            moves.append(Waive(ANY))
        return moves

    LISTS = by_kind({PayEssence: payments, Waive: waivers})

    def settle(self, state: State, seat: int, log: Log) -> bool:
        """A discount with nothing left to reduce is dropped; the fixed essences are paid
        at once; a cost paid in full is done."""
        fixed, any_n, disc = self.fixed, self.any, self.discount
        if disc and not any(fixed) and not any_n:
            state.tasks[0] = Pay(self.source, fixed, any_n, self.excluded, 0)
            return True
        if disc:
            return False
        if any(fixed):
            for e in range(5):
                if fixed[e]:
                    spend(state, seat, e, fixed[e])
            log.say(
                "pay",
                f"{SEAT_NAMES[seat]} pays {bag_text(fixed)} ({paying_for(self.source)})",
                seat,
                essences=list(fixed),
            )
            state.tasks[0] = Pay(self.source, NONE, any_n, self.excluded, 0)
            return True
        if not any_n:
            state.tasks.pop(0)
            return True
        return False

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        src, fixed, any_n, excl, disc = (
            self.source,
            self.fixed,
            self.any,
            self.excluded,
            self.discount,
        )
        if isinstance(move, Waive):
            e = move.essence
            if e == ANY:
                any_n -= 1
            else:
                less = list(fixed)
                less[e] -= 1
                fixed = tuple(less)  # type: ignore[assignment]  # five counts, one per essence
            what = "1 of the any-essence part" if e == ANY else f"1 {TITLES[e]}"
            log.say(
                "discount",
                f"{SEAT_NAMES[seat]}'s discount waives {what} ({paying_for(src)})",
                seat,
                essence="any" if e == ANY else TITLES[e].lower(),
            )
            state.tasks[0] = Pay(src, fixed, any_n, excl, disc - 1)
            return
        assert isinstance(move, PayEssence)
        e = move.essence
        spend(state, seat, e)
        log.say(
            "pay",
            f"{SEAT_NAMES[seat]} pays 1 {TITLES[e]} ({paying_for(src)})",
            seat,
            essence=TITLES[e].lower(),
        )
        state.tasks[0] = Pay(src, fixed, any_n - 1, excl, disc)

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        if isinstance(move, PayEssence):
            if self.discount:
                return rulebook.DISCOUNT, "apply the discount first"
            if self.excluded >> move.essence & 1:
                return rulebook.COST, "that essence is forbidden in this cost"
            return rulebook.COST, "you have no such essence in your pool"
        if isinstance(move, Waive):
            what = "any" if move.essence == ANY else "that essence"
            return rulebook.DISCOUNT, f"the discount cannot reduce {what} here"
        return rulebook.COST, "you must always pay the entire cost first"


def pay(src: int, fixed: Bag, any_n: int, excl: int, discount: int) -> Pay:
    return Pay(src, tuple(fixed), any_n, excl, discount)  # type: ignore[arg-type]  # a Bag


@dataclass(frozen=True, slots=True)
class TurnForCost(Task):
    """Turn one of your other straightened components of ``wanted`` type."""

    source: int
    wanted: str

    TEXT = "turn a component to pay the cost"
    RULE = rulebook.POWERS

    def turns(self, state: State, seat: int) -> list[Move]:
        src, wanted, turned = self.source, self.wanted, state.turned
        return [
            Turn(c)
            for c in sorted(state.seats[seat].components())
            if c != src and not turned[c] and CONTENT[c].is_type(wanted)
        ]

    LISTS = by_kind({Turn: turns})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Turn)
        state.turned[move.component] = True
        log.say(
            "turn",
            f"{SEAT_NAMES[seat]} turns {name(move.component)} ({paying_for(self.source)})",
            seat,
            component=CONTENT[move.component].slug,
        )
        state.tasks.pop(0)

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        if isinstance(move, Turn) and move.component == self.source:
            return rulebook.POWERS, "turn another component"
        return rulebook.POWERS, f"not possible now: {self.TEXT}"


def hand_discards(state: State, seat: int) -> list[Move]:
    return [Discard(c) for c in sorted(set(state.seats[seat].hand))]


@dataclass(frozen=True, slots=True)
class DiscardForCost(Task):
    """Discard an Artifact as part of a cost: no essences for it."""

    source: int

    TEXT = "discard an Artifact to pay the cost"
    RULE = rulebook.POWERS

    def discards(self, state: State, seat: int) -> list[Move]:
        return hand_discards(state, seat)

    LISTS = by_kind({Discard: discards})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Discard)
        discard(state, seat, move.card, log, f"cost of {name(self.source)}, no essences for it")
        state.tasks.pop(0)

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        return rulebook.POWERS, f"not possible now: {self.TEXT}"


@dataclass(frozen=True, slots=True)
class Enter(Task):
    """A placed Artifact, paid for, enters play straightened."""

    card: int
    AUTO = True

    def run(self, state: State, seat: int, log: Log) -> None:
        card = self.card
        me = state.seats[seat]
        me.hand.remove(card)
        me.tableau.append(card)
        state.turned[card] = False
        log.say(
            "enter",
            f"{name(card)} enters play for {SEAT_NAMES[seat]}",
            seat,
            component=CONTENT[card].slug,
        )


@dataclass(frozen=True, slots=True)
class Arrive(Task):
    """A claimed Monument (DECK: the deck's top, revealed now) or Place of Power, paid
    for or gained, is taken from the middle and enters play straightened; a face-up
    Monument taken is replaced from the deck."""

    component: int
    AUTO = True

    def run(self, state: State, seat: int, log: Log) -> None:
        cid = self.component
        me = state.seats[seat]
        if cid == DECK:
            cid = state.monument_deck.pop()
            log.say(
                "claim",
                f"{SEAT_NAMES[seat]} claims the Monument deck's top card: {name(cid)}",
                seat,
                component=CONTENT[cid].slug,
            )
        elif cid in state.monument_display:
            state.monument_display.remove(cid)
            log.say(
                "claim",
                f"{SEAT_NAMES[seat]} claims {name(cid)}",
                seat,
                component=CONTENT[cid].slug,
            )
            refill_display(state, log)
        else:
            state.places.remove(cid)
            log.say(
                "claim",
                f"{SEAT_NAMES[seat]} claims {name(cid)}",
                seat,
                component=CONTENT[cid].slug,
            )
        me.tableau.append(cid)
        state.turned[cid] = False
