"""The evaluation hook: one chance to win per seat, in range and summing to 1, the
outcome's split once the game is over, the state untouched, and in random games a
favourite who goes on to win far more often than chance."""

from __future__ import annotations

import copy
import math
import random
import time
from collections.abc import Callable
from functools import cache

import pytest

from services.kit.testing import choose
from services.shen import engine

Evaluator = Callable[[engine.State], "tuple[float, ...]"]

# name: (players, options, games); round limits keep random games short.
CONFIGS = {
    "2p": (2, engine.Options(round_limit=40), 3),
    "3p": (3, engine.Options(round_limit=40), 2),
    "2x2 teams": (4, engine.Options(teams=2, round_limit=30), 2),
    "6p three teams": (6, engine.Options(teams=3, round_limit=20), 1),
    "2p small field, 60 cards": (
        2,
        engine.Options(size=5, deck_size=60, anchor_points=("c3",), round_limit=60),
        2,
    ),
    "2p default, no round limit": (2, engine.Options(), 2),
}
EVERY = 37  # decisions between two checked states

# The prediction check: 2-player games, half with the round limit, half without.
PREDICTED = {
    "2p round limit": (2, engine.Options(round_limit=40), 60),
    "2p default": (2, engine.Options(), 40),
}
MARK = 0.8  # the share of a game's decisions after which the favourite is read
# The favourite at 80% won 84% of these 97 decisive 2-player games, and 87% (default)
# and 80% (round limit) of seeds 1000-1059 (chance: 50%); the floor leaves about three
# standard deviations of room.
FLOOR = 0.7


@cache
def states_of(players: int, options: engine.Options, seed: int) -> tuple[engine.State, ...]:
    """Every EVERY-th state of one random game, and its end (shared by the tests, which
    leave them as they are)."""
    state = engine.new_game(seed, players, options)
    rng = random.Random(seed)
    found = []
    decisions = 0
    while engine.outcome(state) is None:
        if decisions % EVERY == 0:
            found.append(copy.deepcopy(state))
        engine.apply(state, *choose(engine, state, rng))
        decisions += 1
    found.append(state)
    return tuple(found)


def side_of(state: engine.State, seat: int) -> tuple[int, ...]:
    return tuple(p.seat for p in state.players if p.team == state.players[seat].team)


def check_values(evaluate: Evaluator, state: engine.State) -> tuple[float, ...]:
    """``evaluate`` leaves ``state`` as it was and gives one float in [0, 1] per seat,
    teammates equal, summing to 1 (unless a finished game has no winner), and the same
    values twice."""
    before = copy.deepcopy(state)
    values = evaluate(state)
    assert state == before, "evaluate changed the state"
    assert len(values) == state.n, f"{len(values)} values for {state.n} seats"
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in values), values
    final = engine.outcome(state)
    if final is None or final.winners:
        assert math.isclose(sum(values), 1.0, abs_tol=1e-9), f"sum {sum(values)}"
    for seat in range(state.n):
        for mate in side_of(state, seat):
            assert values[mate] == values[seat], f"teammates {seat}, {mate}: {values}"
    assert evaluate(state) == values, "the same state valued twice differs"
    return values


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_one_chance_per_seat_in_range_summing_to_one_teammates_equal(config):
    players, options, games = CONFIGS[config]
    checked = 0
    for seed in range(games):
        for state in states_of(players, options, seed):
            check_values(engine.evaluate, state)
            checked += 1
    assert checked > games * 5


def _mutates(state):
    """Wrong: draws from the generator it reads."""
    state.rng.random()
    return engine.evaluate(state)


def _unsplit(state):
    """Wrong: each teammate gets the whole team's share."""
    values = engine.evaluate(state)
    return tuple(v * len(side_of(state, seat)) for seat, v in enumerate(values))


def _unequal_mates(state):
    """Wrong: the team's share all to its first seat."""
    values = list(engine.evaluate(state))
    for seat in range(state.n):
        side = side_of(state, seat)
        if seat == side[0]:
            values[seat] *= len(side)
        else:
            values[seat] = 0.0
    return tuple(values)


@pytest.mark.parametrize("evaluate", [_mutates, _unsplit, _unequal_mates])
def test_control_the_value_check_catches_a_broken_evaluation(evaluate):
    players, options, _ = CONFIGS["2x2 teams"]
    state = copy.deepcopy(states_of(players, options, 0)[3])
    check_values(engine.evaluate, copy.deepcopy(state))  # the real hook passes here
    with pytest.raises(AssertionError):
        check_values(evaluate, state)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_a_finished_game_gives_exactly_the_outcomes_split(config):
    players, options, games = CONFIGS[config]
    for seed in range(games):
        end = states_of(players, options, seed)[-1]
        winners = engine.outcome(end).winners
        expected = tuple(1 / len(winners) if s in winners else 0.0 for s in range(players))
        assert engine.evaluate(end) == expected


def test_a_finished_game_without_winners_gives_nobody_anything():
    """A game nobody wins (NO_CARDS_LEFT: the last players lose their last cards at
    once), made by hand from a finished one."""
    players, options, _ = CONFIGS["2p"]
    state = copy.deepcopy(states_of(players, options, 0)[-1])
    state.winners, state.end_reason = (), "NO_CARDS_LEFT"
    assert engine.outcome(state).winners == ()
    assert engine.evaluate(state) == (0.0, 0.0)


def test_a_side_with_no_cards_left_has_no_chance():
    """A player out of cards (the rulebook: defeated) gets 0 while the game goes on."""
    state = engine.new_game(5, 3, engine.Options(round_limit=40))
    rng = random.Random(5)
    for _ in range(120):
        engine.apply(state, *choose(engine, state, rng))
    assert engine.outcome(state) is None
    before = engine.evaluate(state)
    assert before[1] > 0
    state.players[1].out = True
    after = engine.evaluate(state)
    assert after[1] == 0.0
    assert math.isclose(sum(after), 1.0)


def test_more_cards_and_more_anchor_points_are_better():
    """Cards lost lower the seat's value, an Anchor Point claimed raises it, as the
    rulebook's scoring says."""
    state = engine.new_game(2, 2, engine.Options(round_limit=40))
    rng = random.Random(2)
    for _ in range(150):
        engine.apply(state, *choose(engine, state, rng))
    assert engine.outcome(state) is None
    base = engine.evaluate(state)[0]
    fewer = copy.deepcopy(state)
    for _ in range(5):
        fewer.players[0].removed.append(fewer.players[0].deck.pop())
    assert engine.evaluate(fewer)[0] < base
    claimed = copy.deepcopy(state)
    free = [a for a in claimed.anchors if claimed.claims.get(a) != 0]
    claimed.claims[free[0]] = 0
    assert engine.evaluate(claimed)[0] > base


# --- the favourite wins ------------------------------------------------------------------


SNAPSHOT = 16  # decisions between two kept copies of a game being played


def at_mark(seed: int, players: int, options: engine.Options) -> tuple[engine.State, tuple]:
    """Play one random game to its end; return the state after MARK of its decisions
    (rebuilt from the last copy kept before it) and the winners."""
    state = engine.new_game(seed, players, options)
    rng = random.Random(seed)
    kept, moves = [], []
    while engine.outcome(state) is None:
        if len(moves) % SNAPSHOT == 0:
            kept.append(copy.deepcopy(state))
        moves.append(choose(engine, state, rng))
        engine.apply(state, *moves[-1])
    mark = int(MARK * len(moves))
    marked = kept[mark // SNAPSHOT]
    for seat, move in moves[mark // SNAPSHOT * SNAPSHOT : mark]:
        engine.apply(marked, seat, move)
    return marked, engine.outcome(state).winners


@cache
def marked() -> tuple[tuple[engine.State, tuple[int, ...]], ...]:
    """For each decisive game of PREDICTED: the state after MARK of its decisions, and
    its winners."""
    found = []
    for players, options, games in PREDICTED.values():
        for seed in range(games):
            state, winners = at_mark(seed, players, options)
            if len(winners) == 1:  # a shared win favours nobody
                found.append((state, winners))
    return tuple(found)


def favourite_wins(evaluate: Evaluator) -> float:
    """The share of marked games whose winner is the seat ``evaluate`` values most."""
    won = 0
    for state, winners in marked():
        values = evaluate(state)
        won += max(range(len(values)), key=values.__getitem__) in winners
    return won / len(marked())


def test_the_favourite_at_80_percent_of_the_game_usually_wins():
    rate = favourite_wins(engine.evaluate)
    print(f"favourite at {MARK:.0%} of the game won {rate:.2f} of {len(marked())} games")
    assert len(marked()) >= 90
    assert rate >= FLOOR


@pytest.mark.parametrize(
    "evaluate",
    [
        pytest.param(lambda state: (0.5, 0.5), id="blind"),
        pytest.param(lambda state: tuple(1 - v for v in engine.evaluate(state)), id="reversed"),
    ],
)
def test_control_an_evaluation_that_ignores_the_game_fails_the_prediction_check(evaluate):
    assert favourite_wins(evaluate) < FLOOR


def test_evaluation_time_on_a_mid_game_state():
    """Printed, not asserted: the figure depends on the machine and its load, so it comes
    with a reference (a plain loop timed the same way) to compare machines by."""
    state = engine.new_game(0, 2, engine.Options())
    rng = random.Random(0)
    for _ in range(400):
        engine.apply(state, *choose(engine, state, rng))
    calls = 5000

    def per_call(work: Callable[[], object]) -> float:
        start = time.process_time()
        for _ in range(calls):
            work()
        return (time.process_time() - start) / calls

    each = per_call(lambda: engine.evaluate(state))
    reference = per_call(lambda: sum(range(100)))
    print(
        f"evaluate: {each * 1e6:.1f} us of CPU per call ({len(state.avatars)} Avatars,"
        f" {len(state.counters)} Shén counters), {each / reference:.0f}x sum(range(100))"
        f" ({reference * 1e6:.2f} us here)"
    )
