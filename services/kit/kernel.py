"""The turn, written once for every game: ``apply`` and ``legal_moves`` over a rule table.

A game declares its rules as data (boardgame.io's moves, OpenSpiel's one public apply
over each game's hooks): for each kind of decision a :class:`Decision` (which moves it
offers, a cheap check, why a refused one is refused, what it does, what follows), and in
one :class:`Rules` value its hooks (setup, view, outcome, seats to act, the text form,
which moves are secret, determinize) and which decisions are open to a seat now. The
:class:`Kernel` built from it *is* the game's engine (services/kit/engine.py's
contract)::

    RULES = Rules(game=GAME, move_types=(Move,), decisions=decisions, ...)
    ENGINE = Kernel(RULES)
    apply, legal_moves = ENGINE.apply, ENGINE.legal_moves

``apply`` checks in a fixed order and raises before anything changes: the game is over
(GameOver); the seat has nothing to decide (NotYourDecision); not one of the game's move
types, or not well formed (MalformedMove); a kind of decision that is not open now, or a
move the open decision does not allow (IllegalMove, naming the rulebook's rule). Only then
does it run the decision's effect, the decision's ``then`` and the game's ``advance``
(everything that follows without a decision).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from services.kit.engine import (
    Event,
    GameInfo,
    IllegalMove,
    MalformedMove,
    Outcome,
    check_seat,
)

Lister = Callable[[Any, int], Iterable[Any]]
Checker = Callable[[Any, int, Any], bool]
# Why a move is refused: the rule's name and a reason for people, or the reason alone
# (the decision's own rule is then named).
Explainer = Callable[[Any, int, Any], "tuple[str, str] | str"]
Doer = Callable[[Any, int, Any], list[Event]]
Next = Callable[[Any], list[Event]]


@dataclass(frozen=True)
class Decision:
    """One kind of decision: its moves, its check, its refusal, its effect, what follows.

    ``rule`` is the rulebook's name for it, named by a refused move unless ``explain``
    names another. ``allows`` is a check cheaper than listing every move; without one a
    move is allowed when ``moves`` lists it (so a decision's listed moves and its check
    cannot disagree unless a game writes both). ``do`` changes the state (only after the
    checks passed) and returns the events; ``then`` moves the turn on.
    """

    rule: str
    moves: Lister
    do: Doer
    allows: Checker | None = None
    explain: Explainer | None = None
    then: Next | None = None

    def legal(self, state: Any, seat: int, move: Any) -> bool:
        if self.allows is not None:
            return self.allows(state, seat, move)
        return move in self.moves(state, seat)

    def refusal(self, state: Any, seat: int, move: Any) -> IllegalMove:
        if self.explain is None:
            return IllegalMove(f"'{move}' is not a move of {self.rule} now", rule=self.rule)
        why = self.explain(state, seat, move)
        if isinstance(why, str):
            return IllegalMove(why, rule=self.rule)
        rule, message = why
        return IllegalMove(message, rule=rule)


def always_public(move: Any) -> bool:
    """For a game whose every move may be shown to every seat once it is made."""
    return True


def well_formed(move: Any) -> str | None:
    """The default ``problem`` hook: a move type's own ``problem()``, if it has one."""
    problem = getattr(move, "problem", None)
    return problem() if callable(problem) else None


def kind_of(move: Any) -> Any:
    """The default ``kind`` hook: one move type (a frozen dataclass) per kind."""
    return type(move)


def no_more(state: Any) -> list[Event]:
    """The default ``advance`` hook: nothing happens between decisions on its own."""
    return []


@dataclass(frozen=True)
class Rules:
    """Everything a game supplies: its rule table and its hooks (see the module text).

    ``decisions(state, seat)`` is the table's row open to ``seat`` now, by kind (called
    only for a seat in ``to_act``); ``kind(move)`` the key a move is looked up by.
    ``problem(move)`` says why a move of one of ``move_types`` is not well formed (None:
    it is). ``out_of_step(state, seat, move)`` names the rule broken by a move whose kind
    is not open now. ``advance(state)`` runs after every decision, up to the next one.
    Legal moves are the open decisions' moves in the row's order (sorted when
    ``sort_moves``). ``public_move(move)`` says whether seats other than the mover may be
    shown the move itself (its events say what they may know either way).
    """

    game: GameInfo
    move_types: tuple[type, ...]
    new_game: Callable[[int, int, Any], Any]
    view: Callable[[Any, int | None], Any]
    outcome: Callable[[Any], Outcome | None]
    to_act: Callable[[Any], tuple[int, ...]]
    parse_move: Callable[[str], Any]
    determinize: Callable[[Any, int | None, random.Random], Any]
    decisions: Callable[[Any, int], Mapping[Hashable, Decision]]
    out_of_step: Callable[[Any, int, Any], tuple[str, str]]
    kind: Callable[[Any], Hashable] = kind_of
    problem: Callable[[Any], str | None] = well_formed
    advance: Next = no_more
    public_move: Callable[[Any], bool] = always_public
    sort_moves: bool = False


class Kernel:
    """A game's engine: the kit's ``apply`` and ``legal_moves`` over its :class:`Rules`,
    and its hooks as they are (so a Kernel meets services/kit/engine.py's Engine)."""

    def __init__(self, rules: Rules) -> None:
        self.rules = rules
        self.GAME = rules.game
        self.new_game = rules.new_game
        self.view = rules.view
        self.outcome = rules.outcome
        self.to_act = rules.to_act
        self.parse_move = rules.parse_move
        self.determinize = rules.determinize
        self.public_move = rules.public_move

    def legal_moves(self, state: Any, seat: int | None) -> list[Any]:
        """Every move ``seat`` may make now; empty when it has nothing to decide."""
        rules = self.rules
        if seat is None or rules.outcome(state) is not None or seat not in rules.to_act(state):
            return []
        moves: list[Any] = []
        for decision in rules.decisions(state, seat).values():
            moves.extend(decision.moves(state, seat))
        return sorted(moves) if rules.sort_moves else moves

    def apply(self, state: Any, seat: int, move: Any) -> list[Event]:
        """Check ``move`` for ``seat`` and, only if it is legal, make it; the events.

        Raises GameOver, NotYourDecision, MalformedMove or IllegalMove (naming the rule)
        and then leaves the state exactly as it was.
        """
        rules = self.rules
        check_seat(rules, state, seat)
        if not isinstance(move, rules.move_types):
            raise MalformedMove(f"not a move of {rules.game.title}")
        problem = rules.problem(move)
        if problem is not None:
            raise MalformedMove(problem)
        decision = rules.decisions(state, seat).get(rules.kind(move))
        if decision is None:
            rule, why = rules.out_of_step(state, seat, move)
            raise IllegalMove(why, rule=rule)
        if not decision.legal(state, seat, move):
            raise decision.refusal(state, seat, move)
        events = decision.do(state, seat, move)
        if decision.then is not None:
            events.extend(decision.then(state))
        if rules.advance is not no_more:  # most games' turn moves on in ``then`` alone
            events.extend(rules.advance(state))
        return events
