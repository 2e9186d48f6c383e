"""1. Collect: every Collect ability, and taking essences from your components.

Fixed Collect abilities ("1 Calm", "1 Elan + 1 Death") need no decision and happen at
once. What is left is a short queue of tasks per player (``Seat.collect``): each "/" to
choose a side of (``CollectChoice``), each "any essence" to choose one essence at a time
(``CollectAny``), then taking all essences from any of your components (or none) until
``done`` (``TakeFromComponents``). Both players collect simultaneously (or in turn order,
as the rulebook allows on request: ``Options.collect_in_turn_order``).
"""

from __future__ import annotations

from dataclasses import dataclass

from services.resarcana.engine import rulebook
from services.resarcana.engine.content import CONTENT, Amount
from services.resarcana.engine.essences import TITLES, bag_text
from services.resarcana.engine.moves import DONE, ChooseOption, Done, Gain, Move, Take
from services.resarcana.engine.state import COLLECT, State
from services.resarcana.engine.table import SEAT_NAMES, Log, gain, gain_bag, name, take_all
from services.resarcana.engine.task import Task, by_kind


def begin(state: State, log: Log) -> None:
    state.phase = COLLECT
    for seat, me in enumerate(state.seats):
        queue: list[Task] = []
        for cid in me.components():
            alternatives = CONTENT[cid].collect
            if not alternatives:
                continue
            if len(alternatives) > 1:
                queue.append(CollectChoice(cid))
                continue
            only = alternatives[0]
            if any(only.fixed):
                gain_bag(state, seat, only.fixed)
                log.say(
                    "collect",
                    f"{SEAT_NAMES[seat]} collects {bag_text(only.fixed)} ({name(cid)})",
                    seat,
                    component=CONTENT[cid].slug,
                    essences=list(only.fixed),
                )
            if only.any_n:
                queue.append(CollectAny(cid, only.any_n, only.excl))
        queue.append(TakeFromComponents())
        me.collect = queue


class CollectTask(Task):
    """A Collect decision: a move that is not an option breaks the Collect rules."""

    __slots__ = ()
    RULE = rulebook.COLLECT

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        return rulebook.COLLECT, f"not possible now: {self.TEXT}"


def _single_sides(alternatives: tuple[Amount, ...]) -> list[int] | None:
    """The essence of each side when every side is one distinct essence ("calm / elan")."""
    sides = []
    for alt in alternatives:
        kinds = [e for e in range(5) if alt.fixed[e]]
        if alt.any_n or len(kinds) != 1 or alt.fixed[kinds[0]] != 1:
            return None
        sides.append(kinds[0])
    return sides if len(set(sides)) == len(sides) else None


@dataclass(frozen=True, slots=True)
class CollectChoice(CollectTask):
    """A "/" Collect ability: choose one side (``gain`` it when each side is one
    essence, otherwise ``option n``)."""

    component: int

    TEXT = "collect: choose a side"

    def describe(self) -> str:
        return f"{self.TEXT} ({CONTENT[self.component].slug})"

    def gains(self, state: State, seat: int) -> list[Move]:
        sides = _single_sides(CONTENT[self.component].collect)
        return [] if sides is None else [Gain(e) for e in sorted(sides)]

    def options_by_number(self, state: State, seat: int) -> list[Move]:
        alternatives = CONTENT[self.component].collect
        if _single_sides(alternatives) is not None:
            return []
        return [ChooseOption(i + 1) for i in range(len(alternatives))]

    LISTS = by_kind({Gain: gains, ChooseOption: options_by_number})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        me = state.seats[seat]
        cid = self.component
        alternatives = CONTENT[cid].collect
        if isinstance(move, Gain):
            sides = _single_sides(alternatives) or []
            alt = alternatives[sides.index(move.essence)]
        else:
            assert isinstance(move, ChooseOption)
            alt = alternatives[move.number - 1]
        me.collect.pop(0)
        if any(alt.fixed):
            gain_bag(state, seat, alt.fixed)
            log.say(
                "collect",
                f"{SEAT_NAMES[seat]} chooses and collects {bag_text(alt.fixed)} ({name(cid)})",
                seat,
                component=CONTENT[cid].slug,
                essences=list(alt.fixed),
            )
        if alt.any_n:
            me.collect.insert(0, CollectAny(cid, alt.any_n, alt.excl))


@dataclass(frozen=True, slots=True)
class CollectAny(CollectTask):
    """An "any essence" Collect: ``count`` more essences of choice (none of
    ``excluded``), one at a time."""

    component: int
    count: int
    excluded: int

    TEXT = "collect: choose an essence"

    def describe(self) -> str:
        return f"{self.TEXT} ({CONTENT[self.component].slug})"

    def gains(self, state: State, seat: int) -> list[Move]:
        excl = self.excluded
        return [Gain(e) for e in range(5) if not excl >> e & 1]

    LISTS = by_kind({Gain: gains})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Gain)
        me = state.seats[seat]
        cid, e = self.component, move.essence
        gain(state, seat, e)
        log.say(
            "collect",
            f"{SEAT_NAMES[seat]} collects 1 {TITLES[e]} ({name(cid)})",
            seat,
            component=CONTENT[cid].slug,
            essence=TITLES[e].lower(),
        )
        if self.count > 1:
            me.collect[0] = CollectAny(cid, self.count - 1, self.excluded)
        else:
            me.collect.pop(0)


@dataclass(frozen=True, slots=True)
class TakeFromComponents(CollectTask):
    """Take all the essences from any of your components, one component at a time,
    until ``done`` (over by itself once nothing is left to take)."""

    TEXT = "collect: take essences from your components, or done"

    def takes(self, state: State, seat: int) -> list[Move]:
        on = state.on
        return [Take(c) for c in sorted(state.seats[seat].components()) if any(on[c])]

    def stops(self, state: State, seat: int) -> list[Move]:
        return [DONE] if self.takes(state, seat) else []

    LISTS = by_kind({Take: takes, Done: stops})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        me = state.seats[seat]
        if isinstance(move, Done):
            me.collect.pop(0)
            log.say("collect_done", f"{SEAT_NAMES[seat]} is done collecting", seat)
            return
        assert isinstance(move, Take)
        taken = take_all(state, seat, move.component)
        log.say(
            "take",
            f"{SEAT_NAMES[seat]} takes {bag_text(taken)} from {name(move.component)}",
            seat,
            component=CONTENT[move.component].slug,
            essences=taken,
        )
