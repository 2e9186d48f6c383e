"""Shrine: Duel of Light, with the Radiant Shapes module, as a pure rules engine.

The contract every game follows (services/kit/engine.py)::

    >>> from services.shrine import engine
    >>> state = engine.new_game(seed=1, players=2, options=engine.Options())
    >>> seat = engine.to_act(state)[0]
    >>> move = engine.legal_moves(state, seat)[0]
    >>> events = engine.apply(state, seat, move)
    >>> engine.parse_move(str(move)) == move
    True

Seats: 0 is Sun, 1 is Moon. See README.md for the move texts and the order of decisions.
"""

from __future__ import annotations

import types

from services.kit.engine import (
    Event,
    GameInfo,
    IllegalMove,
    MalformedMove,
    Outcome,
    check_seat,
)
from services.shrine.engine.determinize import determinize
from services.shrine.engine.evaluate import evaluate
from services.shrine.engine.moves import Kind, Move, parse_move
from services.shrine.engine.rules.setup import new_game
from services.shrine.engine.rules.steps import TABLE, out_of_step
from services.shrine.engine.state import SEAT_NAMES, Options, Phase, State
from services.shrine.engine.view import View, view

__all__ = [
    "GAME",
    "Kind",
    "Move",
    "Options",
    "Phase",
    "State",
    "View",
    "apply",
    "determinize",
    "evaluate",
    "legal_moves",
    "new_game",
    "outcome",
    "parse_move",
    "to_act",
    "view",
]


def _seat_names(players: int) -> tuple[str, ...]:
    return SEAT_NAMES[:players]


GAME = GameInfo(
    name="shrine",
    title="Shrine: Duel of Light",
    min_players=2,
    max_players=2,
    options_type=Options,
    seat_names=_seat_names,
)


def to_act(state: State) -> tuple[int, ...]:
    """The seat with a decision pending: the player whose turn it is, until the end."""
    return () if state.result is not None else (state.current,)


def outcome(state: State) -> Outcome | None:
    return state.result


def legal_moves(state: State, seat: int | None) -> list[Move]:
    """Every move ``seat`` may make now, sorted; empty when it has nothing to decide."""
    if state.result is not None or seat != state.current:
        return []
    out: list[Move] = []
    for entry in TABLE[state.phase].values():
        out.extend(entry.moves(state, seat))
    return out


def apply(state: State, seat: int, move: Move) -> list[Event]:
    """Check ``move`` for ``seat`` and, only if it is legal, make it; returns the events.

    Raises GameOver, NotYourDecision, MalformedMove or IllegalMove (naming the rule) and
    then leaves the state exactly as it was.
    """
    check_seat(_SEATS, state, seat)
    if not isinstance(move, Move):
        raise MalformedMove("not a Shrine move")
    problem = move.problem()
    if problem is not None:
        raise MalformedMove(problem)
    entry = TABLE[state.phase].get(move.kind)
    if entry is None:
        rule, why = out_of_step(state, move)
        raise IllegalMove(why, rule=rule)
    if not entry.legal(state, seat, move):
        rule, why = entry.explain(state, seat, move)
        raise IllegalMove(why, rule=rule)
    events = entry.do(state, seat, move)
    events.extend(entry.then(state))
    return events


_SEATS = types.SimpleNamespace(outcome=outcome, to_act=to_act)
