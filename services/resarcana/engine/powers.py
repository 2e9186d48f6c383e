"""Powers: whether a power can be used, and using one (its cost, then its effect).

"To use a power, you must first pay its cost ... and then resolve its effect." A power
is usable on a straightened component whose whole cost the player can pay; using it
turns what it turns at once and queues the rest of the cost (cost.py) and the effect
(effects.py) as tasks. Here too: the choice between an effect's alternatives (the Mystic
Spring's "or") and Solomon's Key's power on a Magic Item in the display.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.resarcana.engine.content import CONTENT, Clause
from services.resarcana.engine.cost import DiscardForCost, TurnForCost, pay
from services.resarcana.engine.effects import (
    CheckVictory,
    ChooseEssences,
    ChooseMonument,
    DiscardCard,
    DrawCards,
    Effect,
    GainShown,
    LookAtPile,
    PlaceCheaper,
    PlacePaid,
    PlaceShown,
    RetrieveCard,
    RivalGains,
    StraightenComponent,
    TakeFromComponent,
)
from services.resarcana.engine.essences import can_pay
from services.resarcana.engine.moves import DONE, ChooseOption, Done, Move, UsePower
from services.resarcana.engine.state import State
from services.resarcana.engine.table import SEAT_NAMES, Log, name
from services.resarcana.engine.task import Task, by_kind


def power_usable(state: State, seat: int, cid: int, index: int, borrowed: bool = False) -> bool:
    """Whether seat can pay the whole cost of power ``index`` of component ``cid``.

    ``borrowed``: a Magic Item's power used from the display (Solomon's Key), whose
    "turn this" the Key's own turning replaces.
    """
    me = state.seats[seat]
    power = CONTENT[cid].powers[index]
    cost = power.cost
    if not borrowed and state.turned[cid]:
        return False
    if cost.turn_mage and (me.mage < 0 or me.mage == cid or state.turned[me.mage]):
        return False
    if cost.turn_other:
        for wanted in set(cost.turn_other):
            free = sum(
                1
                for other in me.components()
                if other != cid and not state.turned[other] and CONTENT[other].is_type(wanted)
            )
            if free < cost.turn_other.count(wanted):
                return False
    if cost.discard > len(me.hand):
        return False
    amount = cost.amount
    return amount.empty or can_pay(me.pool, amount.fixed, amount.any_n, amount.excl, 0)


def compile_clauses(src: int, clauses: tuple[Clause, ...]) -> list[Task]:
    """The tasks of one alternative of ``src``'s effect, clause by clause."""
    tasks: list[Task] = []
    for clause in clauses:
        op, amount = clause.op, clause.amount
        if op == "gain":
            if any(amount.fixed):
                tasks.append(GainShown(amount.fixed))
            if amount.any_n:
                tasks.append(ChooseEssences(src, -1, amount.any_n, amount.excl))
        elif op == "place_here":
            if any(amount.fixed):
                tasks.append(PlaceShown(src, amount.fixed))
            if amount.any_n:
                tasks.append(ChooseEssences(src, src, amount.any_n, amount.excl))
        elif op == "rival_gains":
            tasks.append(RivalGains(amount.fixed))
        elif op == "draw":
            tasks.append(DrawCards(clause.n))
        elif op == "look":
            tasks.append(LookAtPile(clause.n))
        elif op == "take_from":
            tasks.append(TakeFromComponent(clause.n))
        elif op == "retrieve":
            tasks.extend([RetrieveCard()] * clause.n)
        elif op == "discard":
            tasks.extend([DiscardCard()] * clause.n)
        elif op == "straighten":
            tasks.append(StraightenComponent(src, clause.kinds))
        elif op == "monument":
            tasks.append(ChooseMonument())
        elif op == "check_victory":
            tasks.append(CheckVictory(src))
        elif op == "item_power":
            tasks.append(ItemPower(src))
        elif op == "place_paid":
            tasks.append(PlacePaid(src))
        elif op == "place_artifact":
            tasks.append(PlaceCheaper(clause.n))
        else:  # pragma: no cover - content.py only makes the ops above
            raise AssertionError(op)
    return tasks


def start_power(
    state: State, seat: int, cid: int, index: int, log: Log, borrowed: bool = False
) -> None:
    """Pay the parts of the cost that need no decision, queue the rest and the effect."""
    me = state.seats[seat]
    comp = CONTENT[cid]
    power = comp.powers[index]
    cost = power.cost
    turned = []
    if cost.turn_self and not borrowed:
        state.turned[cid] = True
        turned.append(comp.name)
    if cost.turn_mage:
        state.turned[me.mage] = True
        turned.append(f"the Mage {name(me.mage)}")
    log.say(
        "power",
        f"{SEAT_NAMES[seat]} uses power {index + 1} of {comp.name}: {power.text}"
        + (f" (turns {', '.join(turned)})" if turned else ""),
        seat,
        component=comp.slug,
        power=index + 1,
    )
    tasks: list[Task] = [TurnForCost(cid, t) for t in cost.turn_other]
    tasks += [DiscardForCost(cid)] * cost.discard
    if not cost.amount.empty:
        a = cost.amount
        tasks.append(pay(cid, a.fixed, a.any_n, a.excl, 0))
    if len(power.effect) > 1:
        tasks.append(ChooseEffect(cid, index))
    else:
        tasks += compile_clauses(cid, power.effect[0])
    state.tasks[0:0] = tasks


@dataclass(frozen=True, slots=True)
class ChooseEffect(Effect):
    """An effect's "or": choose one of power ``power`` of ``component``'s alternatives."""

    component: int
    power: int  # 0-based

    TEXT = "choose one option"

    def alternatives(self, state: State, seat: int) -> list[Move]:
        count = len(CONTENT[self.component].powers[self.power].effect)
        return [ChooseOption(i + 1) for i in range(count)]

    LISTS = by_kind({ChooseOption: alternatives})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, ChooseOption)
        cid = self.component
        alternative = CONTENT[cid].powers[self.power].effect[move.number - 1]
        log.say(
            "option",
            f"{SEAT_NAMES[seat]} chooses option {move.number} of {name(cid)}",
            seat,
            option=move.number,
        )
        state.tasks[0:1] = compile_clauses(cid, alternative)


@dataclass(frozen=True, slots=True)
class ItemPower(Effect):
    """Solomon's Key: use a power of a Magic Item in the display (its "turn this"
    replaced by the Key's turning), or decline."""

    source: int

    TEXT = "choose a Magic Item power from the display"

    def powers(self, state: State, seat: int) -> list[Move]:
        return [
            UsePower(item, i + 1)
            for item in sorted(state.items)
            for i in range(len(CONTENT[item].powers))
            if power_usable(state, seat, item, i, borrowed=True)
        ]

    def declines(self, state: State, seat: int) -> list[Move]:
        return [DONE] if self.powers(state, seat) else []

    LISTS = by_kind({Done: declines, UsePower: powers})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        state.tasks.pop(0)
        if isinstance(move, Done):
            log.say("no_effect", f"{SEAT_NAMES[seat]} uses no Magic Item power", seat)
            return
        assert isinstance(move, UsePower)
        start_power(state, seat, move.component, move.power - 1, log, borrowed=True)
