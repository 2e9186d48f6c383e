"""What every phase module shares: building a decision, and the events it reports."""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Any

from services.kit.engine import Event, MalformedMove
from services.kit.kernel import Decision, Doer, Lister, Next

from ..moves import off_field
from ..state import State, Step

Explain = Callable[[Any, int, Any], "tuple[str, str] | str"]
Allows = Callable[[Any, int, Any], bool]
# The decisions open together, by move type, in the order their moves are listed.
Row = Mapping[Hashable, Decision]


def check_field(state: State, move: Any) -> None:
    """Raise MalformedMove for a location off this game's field (or a space where the
    kind wants a vertex, or the reverse): what a move cannot know without the field."""
    problem = off_field(move, state.board)
    if problem is not None:
        raise MalformedMove(problem)


def decision(
    rule: str,
    moves: Lister,
    do: Doer,
    explain: Explain,
    allows: Allows | None = None,
    then: Next | None = None,
) -> Decision:
    """A kit Decision whose refusal first refuses, as malformed, a move off the field.

    A move the decision allows is on the field (its moves are listed from it, and the
    cheap checks look at the field first), so only a refused move needs the check.
    """

    def refuse(state: State, seat: int, move: Any) -> tuple[str, str] | str:
        check_field(state, move)
        return explain(state, seat, move)

    return Decision(rule, moves, do, allows=allows, explain=refuse, then=then)


def event(kind: str, text: str, seat: int | None, **data: object) -> Event:
    return Event(kind, text, seat, data)


def to_step(step: Step) -> Next:
    """A decision's ``then``: the turn goes on to ``step``."""

    def go(state: State) -> list[Event]:
        state.step = step
        return []

    return go
