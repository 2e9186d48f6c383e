"""Passing: the First Player token (taken as the pass begins, actions.py), then the swap
of your Magic Item for a different one from the middle, then drawing 1 Artifact."""

from __future__ import annotations

from dataclasses import dataclass

from services.resarcana.engine import rulebook
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.moves import Move, TakeItem
from services.resarcana.engine.state import State
from services.resarcana.engine.table import SEAT_NAMES, Log, draw, name
from services.resarcana.engine.task import Task, by_kind


@dataclass(frozen=True, slots=True)
class SwapItem(Task):
    """Swap your Magic Item for a different one from the middle (straightened)."""

    TEXT = "swap your Magic Item"
    RULE = rulebook.PASSING

    def items(self, state: State, seat: int) -> list[Move]:
        return [TakeItem(i) for i in sorted(state.items)]

    LISTS = by_kind({TakeItem: items})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, TakeItem)
        me = state.seats[seat]
        old, new = me.item, move.item
        state.items.remove(new)
        state.items.append(old)
        state.items.sort()
        state.turned[old] = False
        me.item = new
        state.turned[new] = False
        log.say(
            "swap",
            f"{SEAT_NAMES[seat]} swaps {name(old)} for {name(new)}",
            seat,
            returned=CONTENT[old].slug,
            item=CONTENT[new].slug,
        )
        state.tasks.pop(0)

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        if isinstance(move, TakeItem):
            return rulebook.PASSING, "swap for a different Magic Item from the middle"
        return rulebook.PASSING, "a passing player swaps the Magic Item now"


@dataclass(frozen=True, slots=True)
class PassDraw(Task):
    """Then draw 1 Artifact (if possible)."""

    AUTO = True

    def run(self, state: State, seat: int, log: Log) -> None:
        draw(state, seat, 1, log, "passing")
