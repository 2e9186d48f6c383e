"""The evaluation hook: each seat's chance of winning, for the computer players.

The Channeling has two seats and no teams, so "teammates get the same value" has nothing
to check here: each seat is its own side.
"""

from __future__ import annotations

import copy
import dataclasses
import doctest
import importlib
import math
import random
import statistics
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

from services.channeling import engine
from services.channeling.engine import board
from services.channeling.engine.state import DARK, DRUID, FILL, GLYPH, LIGHT, PATH
from services.channeling.engine.steps.endgame import splendor
from services.kit.engine import Outcome
from services.kit.testing import choose, random_game

module = importlib.import_module("services.channeling.engine.evaluate")

Evaluate = Callable[[engine.State], tuple[float, ...]]
OPTIONS = [engine.Options(overchanneling=o) for o in ("splendor", "vigor")]
RANKING_GAMES = 100  # seeds 0-99; the constants were fitted on seeds 1000-1399
DECIDING_POINT = 0.8  # the share of a game's decisions after which the favourite is read


def every_state(seed: int) -> Iterator[engine.State]:
    """Each state of one random game, from setup to the outcome."""
    options = OPTIONS[seed % 2]
    moves = random_game(engine, seed, 2, options).moves
    state = engine.new_game(seed, 2, options)
    yield copy.deepcopy(state)
    for seat, move in moves:
        engine.apply(state, seat, move)
        yield copy.deepcopy(state)


def sampled_states(games: int = 12) -> list[engine.State]:
    return [state for seed in range(games) for state in every_state(seed)]


# --- the contract ---------------------------------------------------------------------


def test_one_chance_per_seat_in_range_summing_to_one() -> None:
    steps: Counter[str] = Counter()
    for state in sampled_states():
        chances = engine.evaluate(state)
        assert isinstance(chances, tuple) and len(chances) == 2
        assert all(isinstance(c, float) and 0.0 <= c <= 1.0 for c in chances), chances
        assert math.isclose(sum(chances), 1.0, abs_tol=1e-9), chances
        steps[state.step] += state.result is None
    assert all(steps[step] > 0 for step in (GLYPH, DRUID, PATH, FILL)), steps


def test_a_finished_game_gives_the_outcome_split() -> None:
    for seed in range(40):
        played = random_game(engine, seed, 2, OPTIONS[seed % 2])
        winners = played.outcome.winners  # type: ignore[union-attr]
        expected = tuple(1.0 / len(winners) if s in winners else 0.0 for s in (LIGHT, DARK))
        assert engine.evaluate(played.state) == expected
        assert sorted(expected) == [0.0, 1.0]


@pytest.mark.parametrize(("winners", "expected"), [((), (0.0, 0.0)), ((0, 1), (0.5, 0.5))])
def test_other_outcomes_split_evenly_among_their_winners(
    winners: tuple[int, ...], expected: tuple[float, float]
) -> None:
    # The Channeling always has one winner; the hook still follows the contract's rule.
    state = random_game(engine, 1, 2).state
    ended = dataclasses.replace(state, result=Outcome((0, 0), winners, "TEST"))
    assert engine.evaluate(ended) == expected


def assert_leaves_states_unchanged(evaluate: Evaluate, states: list[engine.State]) -> int:
    for state in states:
        before = copy.deepcopy(state)
        evaluate(state)
        assert state == before, f"evaluate changed a state at step {state.step}"
    return len(states)


def test_evaluate_never_changes_the_state() -> None:
    states = sampled_states()
    assert assert_leaves_states_unchanged(engine.evaluate, states) == len(states)


def _adds_pending_cubes_in_place(state: engine.State) -> tuple[float, ...]:
    """A plausible slip: step 4's certain cubes added to the state's own cube lists."""
    if state.step == PATH and state.moved is not None:
        state.cubes[state.moved][state.current] += 3
    return engine.evaluate(state)


def test_unchanged_check_catches_a_mutating_evaluation() -> None:
    with pytest.raises(AssertionError, match="changed a state at step choose_path"):
        assert_leaves_states_unchanged(_adds_pending_cubes_in_place, sampled_states(4))


def test_doctest() -> None:
    result = doctest.testmod(module)
    assert result.attempted and not result.failed


# --- it ranks positions sensibly ---------------------------------------------------------


def favourite_wins(evaluate: Evaluate) -> tuple[int, int, int]:
    """Over the ranking games: how often the seat ``evaluate`` favours at the deciding
    point wins, how often Light wins, how often the leader in banked Splendor wins.
    """
    favourite = light = banked = 0
    for seed in range(RANKING_GAMES):
        played = random_game(engine, seed, 2)
        winners = played.outcome.winners  # type: ignore[union-attr]
        state = engine.new_game(seed, 2)
        for seat, move in played.moves[: int(DECIDING_POINT * len(played.moves))]:
            engine.apply(state, seat, move)
        chances = evaluate(state)
        favourite += (LIGHT if chances[LIGHT] > chances[DARK] else DARK) in winners
        light += LIGHT in winners
        lead = splendor(state, LIGHT) - splendor(state, DARK)
        banked += (LIGHT if lead > 0 else DARK) in winners
    return favourite, light, banked


def wilson_low(wins: int, games: int, z: float = 1.96) -> float:
    """The lower end of the 95% Wilson interval of a win rate."""
    p = wins / games
    centre = p + z * z / (2 * games)
    margin = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games))
    return (centre - margin) / (1 + z * z / games)


def assert_favourite_wins_often(evaluate: Evaluate) -> float:
    wins, _, _ = favourite_wins(evaluate)
    rate = wins / RANKING_GAMES
    # Every Channeling game has a winner, so all the games are decisive.
    assert rate >= 0.6, f"the favourite won {rate:.2f} of the games"
    assert wilson_low(wins, RANKING_GAMES) > 0.5, f"{wins} wins are no better than chance"
    return rate


def test_the_favourite_wins_more_often_than_chance(capsys: pytest.CaptureFixture[str]) -> None:
    wins, light, banked = favourite_wins(engine.evaluate)
    with capsys.disabled():
        print(
            f"\nChanneling evaluate, {RANKING_GAMES} random games at {DECIDING_POINT:.0%}: "
            f"favourite won {wins}, low end of 95% CI {wilson_low(wins, RANKING_GAMES):.2f} "
            f"(Light won {light}, the banked-Splendor leader {banked})"
        )
    assert_favourite_wins_often(engine.evaluate)


def _reversed(state: engine.State) -> tuple[float, ...]:
    return tuple(reversed(engine.evaluate(state)))


def test_ranking_check_catches_a_reversed_evaluation() -> None:
    with pytest.raises(AssertionError, match="the favourite won"):
        assert_favourite_wins_often(_reversed)


def greedy_wins(evaluate: Evaluate, games: int) -> int:
    """Games won by a player taking the move whose result ``evaluate`` likes best for
    it, against uniformly random moves, seats alternated.
    """
    wins = 0
    for seed in range(games):
        greedy = seed % 2
        state = engine.new_game(seed, 2)
        rng = random.Random(seed)
        while state.result is None:
            seat, move = choose(engine, state, rng)
            if seat == greedy:
                after = []
                for option in engine.legal_moves(state, seat):
                    trial = copy.deepcopy(state)
                    engine.apply(trial, seat, option)
                    after.append((evaluate(trial)[seat], option))
                move = max(after, key=lambda pair: pair[0])[1]
            engine.apply(state, seat, move)
        wins += greedy in state.result.winners
    return wins


def test_one_ply_greedy_on_it_beats_random_play() -> None:
    games = 12
    assert greedy_wins(engine.evaluate, games) >= 10
    # Control: the same player on the reversed evaluation loses most games.
    assert greedy_wins(_reversed, games) <= games // 2


def path_step_gap(evaluate: Evaluate, games: int = 10) -> float:
    """At each Choose a Leyline Path step: how far the mover's chance lies from the mean
    of its chances after each path, on average. A small gap lets a one-ply player compare
    a Druid move that asks for a path with one whose single path is channelled at once.
    """
    gaps = []
    for seed in range(games):
        for state in every_state(seed):
            if state.step != PATH:
                continue
            seat = state.current
            after = []
            for path in engine.legal_moves(state, seat):
                trial = copy.deepcopy(state)
                engine.apply(trial, seat, path)
                after.append(evaluate(trial)[seat])
            gaps.append(abs(evaluate(state)[seat] - statistics.mean(after)))
    assert len(gaps) > 5 * games
    return statistics.mean(gaps)


def test_certain_cubes_count_once_the_druid_has_moved(monkeypatch: pytest.MonkeyPatch) -> None:
    gap = path_step_gap(engine.evaluate)
    # Controls: without step 4's certain cubes (and then with the tempo left to the mover
    # as well) the Path step's chance lies further from what follows it.
    monkeypatch.setattr(module, "_pending", lambda state: None)
    uncounted = path_step_gap(engine.evaluate)
    monkeypatch.setattr(module, "_next_to_channel", lambda state: state.current)
    neither = path_step_gap(engine.evaluate)
    assert gap < uncounted and gap < neither, (gap, uncounted, neither)


# --- each term moves the chances the way the rulebook says ------------------------------


def mid_game(seed: int) -> engine.State:
    """The first Play a Glyph Card step from halfway through a random game on."""
    played = random_game(engine, seed, 2)
    state = engine.new_game(seed, 2)
    for index, (seat, move) in enumerate(played.moves):
        if index >= len(played.moves) // 2 and state.step == GLYPH:
            break
        engine.apply(state, seat, move)
    assert state.result is None and state.step == GLYPH
    return state


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("seat", [LIGHT, DARK])
def test_splendor_cubes_and_overchanneling_move_the_chances(seed: int, seat: int) -> None:
    state = mid_game(seed)
    base = engine.evaluate(state)[seat]

    richer = copy.deepcopy(state)  # an acquired card from the deck: more Splendor
    richer.acquired[seat].append(richer.deck.pop())
    assert engine.evaluate(richer)[seat] > base

    penalised = copy.deepcopy(state)  # an Overchanneling Cube: one Splendor less
    penalised.overchanneling[seat] += 1
    assert engine.evaluate(penalised)[seat] < base

    # One more of the seat's cubes on a card still short of its Vigor: closer to a card.
    for cell, card in enumerate(state.grid):
        cubes = state.cubes[cell]
        if card is None or cubes[1 - seat] or cubes[seat] + 1 >= module._VIGOR[card]:
            continue
        closer = copy.deepcopy(state)
        closer.cubes[cell][seat] += 1
        assert engine.evaluate(closer)[seat] > base, board.name(cell)


def test_the_tie_breaks_favour_the_fewest_cards_then_the_second_player() -> None:
    state = mid_game(2)
    state.cubes = [[0, 0] for _ in state.cubes]
    x, y, z, w = (state.deck.pop() for _ in range(4))
    petals = module._SPLENDOR

    def level(light: list[int], dark: list[int]) -> engine.State:
        """Light and Dark with these cards and equal Splendor, Overchanneling making up
        the difference.
        """
        level = copy.deepcopy(state)
        level.acquired = [light, dark]
        spread = sum(petals[c] for c in light) - sum(petals[c] for c in dark)
        level.overchanneling = [max(spread, 0), max(-spread, 0)]
        assert splendor(level, LIGHT) == splendor(level, DARK)
        return level

    # The leader holds two cards in each, so as many turns are left in each.
    light_fewer = engine.evaluate(level([x], [y, z]))[LIGHT]
    dark_fewer = engine.evaluate(level([x, y], [z]))[LIGHT]
    as_many = engine.evaluate(level([x, y], [z, w]))[LIGHT]
    assert light_fewer > dark_fewer  # the fewest cards win a tie
    assert as_many == pytest.approx(dark_fewer)  # then the second player, Dark
