"""The kit's kernel: one apply and one legal_moves over a game's rule table.

A toy game declared the way every engine is (a pile of counters; on a turn a player takes
1-3, or passes once per game; whoever takes the last counter wins) shows the kernel's
order of checks, that every refusal leaves the state as it was, and that the decision's
effect, its ``then`` and the game's ``advance`` run in that order. The five real engines
are checked by their own suites and by services/kit/testing.py's random play.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

import pytest

from services.kit import kernel
from services.kit.engine import (
    Event,
    GameInfo,
    GameOver,
    IllegalMove,
    MalformedMove,
    NotYourDecision,
    Options,
    Outcome,
)
from services.kit.moves import TypedMove
from services.kit.testing import check_random_game

TAKING = "Taking Counters"
PASSING = "Passing"


@dataclass(frozen=True)
class Take(TypedMove):
    count: int

    def sort_key(self) -> tuple[Any, ...]:
        return (0, self.count)

    def problem(self) -> str | None:
        if not isinstance(self.count, int) or isinstance(self.count, bool):
            return f"take needs a whole number, not {self.count!r}"
        return None if 1 <= self.count <= 3 else f"take 1, 2 or 3, not {self.count}"
        return None

    def __str__(self) -> str:
        return f"take {self.count}"


@dataclass(frozen=True)
class Pass(TypedMove):
    def sort_key(self) -> tuple[Any, ...]:
        return (1,)

    def __str__(self) -> str:
        return "pass"


@dataclass
class PileOptions(Options):
    pile: int = 7


@dataclass
class Pile:
    counters: int
    current: int = 0
    passed: list[bool] = field(default_factory=lambda: [False, False])
    turns: int = 0  # counted by ``advance``, to show it runs after every decision
    winner: int | None = None
    trail: list[str] = field(default_factory=list)  # the order effect/then/advance ran


def take_moves(state: Pile, seat: int) -> list[Take]:
    return [Take(n) for n in range(1, min(3, state.counters) + 1)]


def take(state: Pile, seat: int, move: Take) -> list[Event]:
    state.counters -= move.count
    state.trail.append("do")
    if state.counters == 0:
        state.winner = seat
    return [Event("took", f"seat {seat} takes {move.count}", seat, {"count": move.count})]


def explain_take(state: Pile, seat: int, move: Take) -> str:
    return f"take 1 to {min(3, state.counters)}, not {move.count}"


def pass_moves(state: Pile, seat: int) -> list[Pass]:
    return [] if state.passed[seat] else [Pass()]


def pass_turn(state: Pile, seat: int, move: Pass) -> list[Event]:
    state.passed[seat] = True
    state.trail.append("do")
    return []


def next_player(state: Pile) -> list[Event]:
    state.trail.append("then")
    state.current = 1 - state.current
    return []


def count_turn(state: Pile) -> list[Event]:
    state.trail.append("advance")
    state.turns += 1
    return [Event("turn", f"turn {state.turns}")] if state.winner is None else []


TURN = {
    Take: kernel.Decision(TAKING, take_moves, take, explain=explain_take, then=next_player),
    Pass: kernel.Decision(PASSING, pass_moves, pass_turn, then=next_player),
}


def parse(text: str) -> TypedMove:
    words = text.split()
    if words == ["pass"]:
        return Pass()
    if len(words) == 2 and words[0] == "take" and words[1].isdigit():
        return Take(int(words[1]))
    raise MalformedMove(f"not a move: {text!r}")


RULES = kernel.Rules(
    game=GameInfo("pile", "Pile", 2, 2, PileOptions, lambda n: ("First", "Second")),
    move_types=(Take, Pass),
    new_game=lambda seed, players, options: Pile(options.pile),
    view=lambda state, seat: (state.counters, state.current, tuple(state.passed)),
    outcome=lambda s: None if s.winner is None else Outcome((0, 0), (s.winner,), "LAST_COUNTER"),
    to_act=lambda state: () if state.winner is not None else (state.current,),
    parse_move=parse,
    determinize=lambda state, seat, rng: copy.deepcopy(state),
    decisions=lambda state, seat: TURN,
    out_of_step=lambda state, seat, move: (TAKING, "not now"),
    advance=count_turn,
    sort_moves=True,
)
ENGINE = kernel.Kernel(RULES)


def test_legal_moves_are_the_open_decisions_moves_sorted_and_none_for_others():
    state = ENGINE.new_game(1, 2, PileOptions())
    assert [str(m) for m in ENGINE.legal_moves(state, 0)] == ["take 1", "take 2", "take 3", "pass"]
    assert ENGINE.legal_moves(state, 1) == []
    assert ENGINE.legal_moves(state, None) == []  # a spectator decides nothing


def test_apply_runs_the_effect_then_the_decisions_then_then_the_games_advance():
    state = ENGINE.new_game(1, 2, PileOptions())
    events = ENGINE.apply(state, 0, Take(2))
    assert state.trail == ["do", "then", "advance"]
    assert [e.kind for e in events] == ["took", "turn"]
    assert (state.counters, state.current, state.turns) == (5, 1, 1)


@pytest.mark.parametrize(
    ("seat", "move", "error"),
    [
        (1, Take(1), NotYourDecision),  # the other seat's turn
        (0, "take 1", MalformedMove),  # text, not a move of this game
        (0, Take(0), MalformedMove),  # the move's own problem()
        (0, Take(True), MalformedMove),
        (0, Take(4), MalformedMove),
        (2, Take(1), NotYourDecision),  # no such seat
    ],
)
def test_each_refusal_names_its_error_and_leaves_the_state_as_it_was(seat, move, error):
    state = ENGINE.new_game(1, 2, PileOptions(pile=2))
    before = copy.deepcopy(state)
    with pytest.raises(error):
        ENGINE.apply(state, seat, move)
    assert state == before


def test_a_move_the_decision_does_not_allow_names_its_rule_with_its_explanation():
    state = ENGINE.new_game(1, 2, PileOptions(pile=2))
    before = copy.deepcopy(state)
    with pytest.raises(IllegalMove) as refused:
        ENGINE.apply(state, 0, Take(3))
    assert state == before
    assert (refused.value.rule, refused.value.message) == (TAKING, "take 1 to 2, not 3")


def test_a_decision_without_explain_names_its_rule_and_the_move():
    state = ENGINE.new_game(1, 2, PileOptions())
    ENGINE.apply(state, 0, Pass())
    ENGINE.apply(state, 1, Take(1))
    with pytest.raises(IllegalMove) as refused:
        ENGINE.apply(state, 0, Pass())  # "once per game"
    assert refused.value.rule == PASSING
    assert "'pass'" in refused.value.message


def test_a_kind_not_open_now_is_refused_by_the_games_out_of_step():
    closed = kernel.Kernel(
        kernel.Rules(**{**RULES.__dict__, "decisions": lambda state, seat: {Take: TURN[Take]}})
    )
    state = closed.new_game(1, 2, PileOptions())
    with pytest.raises(IllegalMove) as refused:
        closed.apply(state, 0, Pass())
    assert (refused.value.rule, refused.value.message) == (TAKING, "not now")


def test_a_finished_game_refuses_every_move():
    state = ENGINE.new_game(1, 2, PileOptions(pile=2))
    ENGINE.apply(state, 0, Take(2))
    assert ENGINE.outcome(state) is not None
    with pytest.raises(GameOver):
        ENGINE.apply(state, 1, Take(1))
    assert ENGINE.legal_moves(state, 1) == []


def test_a_decisions_allows_check_overrides_listing_and_the_random_play_check_catches_a_lie():
    """``allows`` is trusted instead of the list; one that admits an unlisted move is what
    check_random_game's "apply accepts exactly legal_moves" check exists to catch."""
    lenient = dict(TURN)
    lenient[Take] = kernel.Decision(TAKING, take_moves, take, allows=lambda s, p, m: True)
    loose = kernel.Kernel(kernel.Rules(**{**RULES.__dict__, "decisions": lambda s, p: lenient}))
    state = loose.new_game(1, 2, PileOptions(pile=2))
    loose.apply(state, 0, Take(3))  # allowed, though never listed
    assert state.counters == -1
    for seed in range(20):
        check_random_game(ENGINE, seed, players=2, options=PileOptions(pile=20), deep_every=1)
    with pytest.raises(AssertionError):
        for seed in range(20):
            check_random_game(loose, seed, players=2, options=PileOptions(pile=20), deep_every=1)


def test_the_kernel_passes_the_games_hooks_through():
    assert ENGINE.GAME is RULES.game
    assert ENGINE.public_move(Take(1)) is True  # no secret moves by default
    assert ENGINE.parse_move("take 3") == Take(3)
    assert str(Take(3)) == "take 3"
