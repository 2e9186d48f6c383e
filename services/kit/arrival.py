"""Simultaneous decisions must not depend on the order in which they reach the server.

Where several seats decide at once (Glow's dice, cards and journeys, Res Arcana's
collection), each seat's moves arrive in some order the players do not control: the game
must come out the same whatever that order. :func:`check_arrival_orders` plays the same
decisions of every pending seat in every arrival order, until the simultaneous step
closes, and asserts that every order gives the same state.

A seat's decisions are given either as a script (seat -> its moves, in the order that
seat makes them) or as a chooser ``(seat, k, legal_moves) -> move`` for the seat's k-th
decision in the step; :func:`seeded_chooser` makes one from a seed. A chooser must
depend on nothing but its arguments, so that a seat decides the same way in every order
as long as it is offered the same moves: when an order offers it different moves, that
difference is itself a dependence on the arrival order, and shows as different states.

Two kinds of schedule are tried for each permutation of the pending seats: turns (one
decision per seat in the permutation's order, round after round) and runs (each seat
makes all its decisions of the step before the next seat starts).
"""

from __future__ import annotations

import copy
import itertools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.kit.engine import Engine, EngineError

Chooser = Callable[[int, int, Sequence[Any]], Any]
"""(seat, k, the seat's legal moves) -> the move it makes as its k-th decision of the step."""

Decisions = Chooser | Mapping[int, Sequence[Any]]

SCHEDULES = ("turns", "runs")


@dataclass(frozen=True)
class Arrival:
    """One arrival order: the schedule, the seats' permutation, and what it produced."""

    schedule: str
    seats: tuple[int, ...]
    moves: tuple[tuple[int, Any], ...]  # (seat, move) as they arrived
    state: Any
    refused: str | None = None  # a scripted move an order refused, and why

    def describe(self) -> str:
        order = ", ".join(f"{seat}:{move}" for seat, move in self.moves)
        return f"{self.schedule} {self.seats}: {order}" + (
            f" (refused {self.refused})" if self.refused else ""
        )


def seeded_chooser(seed: int) -> Chooser:
    """A chooser that picks at random, the same way for the same (seat, k, moves)."""

    def choose(seat: int, k: int, moves: Sequence[Any]) -> Any:
        rng = random.Random(f"{seed}:{seat}:{k}:{len(moves)}")
        return moves[rng.randrange(len(moves))]

    return choose


def _play(
    engine: Engine,
    state: Any,
    decisions: Decisions,
    schedule: str,
    seats: tuple[int, ...],
    max_moves: int,
) -> Arrival:
    """Play the step from ``state`` (a copy) in one arrival order, until it closes.

    The step closes when the game is over, when a seat that was not in the step is to
    act, or when several seats are to act and one of them had already finished its part
    (it left the seats to act): a new step has begun. Decisions that are one seat's alone
    (the last seat finishing, or turn-by-turn steps in between) are played as they come:
    they are the same in every order, and stopping in the middle of them would compare
    unequal moments.
    """
    state = copy.deepcopy(state)
    made = dict.fromkeys(seats, 0)  # decisions each seat has made since the step began
    finished: set[int] = set()  # seats seen without a decision: their part is over
    moves: list[tuple[int, Any]] = []
    turn = 0  # "turns": the next position in the permutation

    def next_move(seat: int) -> Any:
        legal = engine.legal_moves(state, seat)
        if callable(decisions):
            return decisions(seat, made[seat], legal)
        script = decisions.get(seat, ())
        if made[seat] >= len(script):
            raise _ScriptOver(f"seat {seat} still has a decision after its {len(script)} moves")
        return script[made[seat]]

    while engine.outcome(state) is None:
        acting = set(engine.to_act(state))
        finished |= set(seats) - acting
        if not acting or acting - set(seats) or (len(acting) > 1 and acting & finished):
            break
        if schedule == "turns":
            while seats[turn % len(seats)] not in acting:
                turn += 1
            seat = seats[turn % len(seats)]
            turn += 1
        else:
            seat = next(s for s in seats if s in acting)
        if len(moves) >= max_moves:
            raise AssertionError(f"the simultaneous step did not close in {max_moves} moves")
        try:
            move = next_move(seat)
            engine.apply(state, seat, move)
        except (EngineError, _ScriptOver) as exc:
            refused = f"seat {seat}'s decision {made[seat] + 1}: {exc}"
            return Arrival(schedule, seats, tuple(moves), state, refused)
        moves.append((seat, move))
        made[seat] += 1
    return Arrival(schedule, seats, tuple(moves), state)


class _ScriptOver(Exception):
    pass


def arrival_orders(
    engine: Engine,
    state: Any,
    decisions: Decisions,
    *,
    max_moves: int = 10_000,
) -> list[Arrival]:
    """The step from ``state`` played in every arrival order (``state`` is not changed)."""
    seats = tuple(engine.to_act(state))
    return [
        _play(engine, state, decisions, schedule, order, max_moves)
        for schedule in SCHEDULES
        for order in itertools.permutations(seats)
    ]


def check_arrival_orders(
    engine: Engine,
    state: Any,
    decisions: Decisions,
    *,
    max_moves: int = 10_000,
) -> int:
    """Assert that the seats to act in ``state`` reach the same state in every arrival
    order of the same decisions; returns how many orders were played.

    Raises AssertionError naming two orders that differ (or one that refused a scripted
    move another accepted). ``state`` is not changed.
    """
    seats = tuple(engine.to_act(state))
    assert len(seats) > 1, f"only seats {seats} are to act: nothing is simultaneous"
    played = arrival_orders(engine, state, decisions, max_moves=max_moves)
    first = played[0]
    for other in played[1:]:
        if other.refused != first.refused:
            raise AssertionError(
                "the arrival order decides whether a move is allowed:\n"
                f"  {first.describe()}\n  {other.describe()}"
            )
    for other in played[1:]:
        if other.state != first.state:
            raise AssertionError(
                f"the arrival order changes the game:\n  {first.describe()}\n  {other.describe()}"
            )
    return len(played)


__all__ = [
    "Arrival",
    "Chooser",
    "arrival_orders",
    "check_arrival_orders",
    "seeded_chooser",
]
