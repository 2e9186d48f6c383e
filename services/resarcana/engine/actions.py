"""2. Actions: the action a player chooses on their turn, and how each one begins.

Place an Artifact, claim a Monument or a Place of Power, discard an Artifact for 1 Gold
or 2 other essences, use a power on a straightened component, or pass. Choosing is the
``ChooseAction`` task; the rest of the action (its cost, then its effect) is queued as
tasks (cost.py, effects.py, powers.py, passing.py), and the discard action's gain is
``DiscardGain`` here.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.resarcana.engine import rulebook
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.cost import Arrive, Enter, artifact_discount, can_place, pay
from services.resarcana.engine.effects import gain_choices
from services.resarcana.engine.essences import GOLD, TITLES, bag_text, can_pay
from services.resarcana.engine.moves import (
    DECK,
    PASS,
    Claim,
    Discard,
    Gain,
    Move,
    Pass,
    Place,
    UsePower,
)
from services.resarcana.engine.passing import PassDraw, SwapItem
from services.resarcana.engine.powers import power_usable, start_power
from services.resarcana.engine.state import State
from services.resarcana.engine.table import SEAT_NAMES, Log, gain, name
from services.resarcana.engine.task import Task, by_kind


def can_claim(state: State, seat: int, cid: int) -> bool:
    cost = (
        CONTENT.monument_cost if cid == DECK or cid in state.monument_display else CONTENT[cid].cost
    )
    return can_pay(state.seats[seat].pool, cost.fixed, cost.any_n, cost.excl, 0)


def claimable(state: State) -> list[int]:
    """Monuments on display, the deck's top, and unclaimed Places of Power."""
    found = list(state.monument_display) + list(state.places)
    if state.monument_deck:
        found.append(DECK)
    return found


@dataclass(frozen=True, slots=True)
class ChooseAction(Task):
    """A player's turn in the Actions phase: one action (never chosen automatically)."""

    TEXT = "choose an action"
    RULE = rulebook.ACTIONS

    def placements(self, state: State, seat: int) -> list[Move]:
        hand = sorted(set(state.seats[seat].hand))
        return [Place(c) for c in hand if can_place(state, seat, c)]

    def claims(self, state: State, seat: int) -> list[Move]:
        return [Claim(c) for c in sorted(claimable(state)) if can_claim(state, seat, c)]

    def discards(self, state: State, seat: int) -> list[Move]:
        return [Discard(c) for c in sorted(set(state.seats[seat].hand))]

    def powers(self, state: State, seat: int) -> list[Move]:
        turned = state.turned
        return [
            UsePower(cid, i + 1)
            for cid in sorted(state.seats[seat].components())
            if not turned[cid]
            for i in range(len(CONTENT[cid].powers))
            if power_usable(state, seat, cid, i)
        ]

    def passes(self, state: State, seat: int) -> list[Move]:
        return [PASS]

    LISTS = by_kind(
        {Place: placements, Claim: claims, Discard: discards, UsePower: powers, Pass: passes}
    )

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        """Start the chosen action: what needs no decision now, the rest as tasks."""
        me = state.seats[seat]
        state.in_action = True
        state.paid = [0, 0, 0, 0, 0]
        who = SEAT_NAMES[seat]
        if isinstance(move, Place):
            card = move.card
            cost = CONTENT[card].cost
            disc = artifact_discount(state, seat, card)
            log.say(
                "place",
                f"{who} places {name(card)} (cost {bag_text(cost.fixed, cost.any_n, cost.excl)}"
                + (f", discount {disc}" if disc else "")
                + ")",
                seat,
                card=CONTENT[card].slug,
            )
            state.tasks = [pay(card, cost.fixed, cost.any_n, cost.excl, disc), Enter(card)]
        elif isinstance(move, Claim):
            cid = move.component
            is_monument = cid == DECK or cid in state.monument_display
            cost = CONTENT.monument_cost if is_monument else CONTENT[cid].cost
            what = "the Monument deck's top card" if cid == DECK else name(cid)
            log.say(
                "claim",
                f"{who} claims {what} (cost {bag_text(cost.fixed, cost.any_n, cost.excl)})",
                seat,
                component="deck" if cid == DECK else CONTENT[cid].slug,
            )
            state.tasks = [pay(cid, cost.fixed, cost.any_n, cost.excl, 0), Arrive(cid)]
        elif isinstance(move, Discard):
            card = move.card
            me.hand.remove(card)
            me.discard.append(card)
            log.say(
                "discard",
                f"{who} discards {name(card)} to gain 1 Gold or 2 other essences",
                seat,
                card=CONTENT[card].slug,
            )
            state.tasks = [DiscardGain(second=False)]
        elif isinstance(move, UsePower):
            state.tasks = []
            start_power(state, seat, move.component, move.power - 1, log)
        else:
            first = not state.seats[1 - seat].passed
            me.passed = True
            if first:
                state.first_player = seat
                state.token_passed = True
                log.say(
                    "pass",
                    f"{who} passes first and takes the First Player token",
                    seat,
                    first=True,
                )
            else:
                log.say("pass", f"{who} passes", seat, first=False)
            state.tasks = [SwapItem(), PassDraw()]

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        me = state.seats[seat]
        if isinstance(move, Place):
            if move.card not in me.hand:
                return rulebook.PLACE_AN_ARTIFACT, "that Artifact is not in your hand"
            return rulebook.COST, "you cannot pay its cost"
        if isinstance(move, Claim):
            cid = move.component
            if cid not in claimable(state) or (cid == DECK and not state.monument_deck):
                return (
                    rulebook.CLAIM,
                    "it is not in the middle of the table (claimed, or not in play)",
                )
            return rulebook.COST, "you cannot pay its cost"
        if isinstance(move, Discard):
            return rulebook.DISCARD_AN_ARTIFACT, "that Artifact is not in your hand"
        if isinstance(move, UsePower):
            cid = move.component
            if cid not in me.components():
                return rulebook.USE_A_POWER, "that component is not yours"
            if state.turned[cid]:
                return rulebook.POWERS, "powers on turned components cannot be used"
            if not power_usable(state, seat, cid, move.power - 1):
                return rulebook.COST, "you cannot pay the entire cost"
        return rulebook.ACTIONS, "choose an action first"


@dataclass(frozen=True, slots=True)
class DiscardGain(Task):
    """The discard action's gain: 1 Gold, or 2 essences other than Gold (``second``: the
    first of those is taken)."""

    second: bool

    TEXT = "take 1 Gold or a first other essence"
    RULE = rulebook.DISCARD_AN_ARTIFACT

    def describe(self) -> str:
        return "take a second essence" if self.second else self.TEXT

    def gains(self, state: State, seat: int) -> list[Move]:
        return gain_choices(1 << GOLD if self.second else 0)

    LISTS = by_kind({Gain: gains})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Gain)
        e = move.essence
        gain(state, seat, e)
        log.say("gain", f"{SEAT_NAMES[seat]} takes 1 {TITLES[e]}", seat, essence=TITLES[e].lower())
        if not self.second and e != GOLD:
            state.tasks[0] = DiscardGain(second=True)
        else:
            state.tasks.pop(0)

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        if isinstance(move, Gain):
            return rulebook.DISCARD_AN_ARTIFACT, "1 Gold, or 2 essences other than Gold"
        return rulebook.POWERS, f"not possible now: {self.describe()}"
