"""A task: one step of the game, a decision for a seat or something that needs none.

An action is carried out as a list of tasks (``state.tasks``, first task first: its cost
to pay, then its effect), the Collect phase as a short queue per player
(``Seat.collect``), and the setup's choices and the action choice are tasks too. Each
kind of task is a small frozen dataclass holding what it still needs (so states pickle
small and compare by value), with its options and its effect side by side:

- a task that needs no decision (``AUTO``) is carried out by ``run``;
- any other lists, per kind of move it takes, the moves possible now (``LISTS``: the
  methods, each returning its moves sorted), carries one out with ``play`` and says why a
  move is refused with ``refusal`` (the rulebook's rule and a reason);
- ``describe`` is what a view says is being decided.

A decision with a single possible move is carried out without asking (it is no
decision); one with no possible move has no effect ("a power may be used even if it has
no effect"). services/resarcana/engine/turn.py turns the tasks into the kit's rule table.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from services.resarcana.engine.moves import Move
    from services.resarcana.engine.state import State
    from services.resarcana.engine.table import Log

Lister = Callable[[Any, "State", int], "list[Move]"]


class Task:
    """The base of every task (see the module text)."""

    __slots__ = ()
    TEXT: ClassVar[str] = ""  # what is decided now, for views and refusals
    RULE: ClassVar[str] = ""  # the rulebook's rule a refused move breaks
    AUTO: ClassVar[bool] = False  # carried out without a decision
    LISTS: ClassVar[Mapping[type[Move], Lister]] = MappingProxyType({})

    def describe(self) -> str:
        return self.TEXT

    def options(self, state: State, seat: int) -> list[Move]:
        """Every move possible now, sorted (the lists in the order of their kinds)."""
        found: list[Move] = []
        for lister in self.LISTS.values():
            found.extend(lister(self, state, seat))
        return found

    def settle(self, state: State, seat: int, log: Log) -> bool:
        """Carry out what needs no decision; True when the task changed (or is done)."""
        return False

    def run(self, state: State, seat: int, log: Log) -> None:
        """An ``AUTO`` task: carry it out (it is already off the list). Only AUTO tasks
        define it; the others define play and refusal (each task class its own)."""
        raise NotImplementedError(type(self).__name__)

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        """Carry out ``move``, already checked to be one of this task's options."""
        raise NotImplementedError(type(self).__name__)

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        """The rule a move that is not among the options breaks, and why."""
        raise NotImplementedError(type(self).__name__)


def by_kind(lists: dict[type[Move], Lister]) -> Mapping[type[Move], Lister]:
    """A task's listers (``LISTS``), read-only, in the order of their kinds (so their
    moves concatenated are sorted as legal moves are)."""
    return MappingProxyType(dict(sorted(lists.items(), key=lambda item: item[0].ORDER)))
