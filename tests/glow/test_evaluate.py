"""The evaluation hook the computer players search with (services/glow/engine/evaluate.py):
one chance per seat, in range, summing to 1; a finished game's outcome exactly; the
state never changed; the inlined dice count equal to the rules' own (noon.triggered);
resolving a card leaves a seat's bursts as they were; more bursts never lower a seat's
chance; and, over a hundred random games on seeds the constants were not fitted on, the
favourite late in the game wins far more often than chance (with a control: the same
measure on the evaluation turned upside down fails). Glow has no teams.
"""

from __future__ import annotations

import copy
import dataclasses
import doctest
import functools
import importlib
import statistics
import timeit
from collections.abc import Callable

from services.glow import engine
from services.glow.engine import evaluate
from services.glow.engine.content import (
    BLACK_LOSS,
    BURST,
    COMPANIONS,
    CURSE,
    DAYS,
    FOOTPRINT,
    PURPLE_FOOTPRINTS,
    SPELLS,
    YELLOW_BURST,
)
from services.glow.engine.dice import symbol
from services.glow.engine.evaluate import (
    REROLL_TOKEN,
    SPELL_LIKELIHOOD,
    _dice_today,
    expected_bursts,
)
from services.glow.engine.moves import ADVENTURER_REF, SPELL_REF, Resolve
from services.glow.engine.rules.morning import has_kaar
from services.glow.engine.rules.noon import card_of, triggered
from services.glow.engine.state import LATE_MORNING, NOON, State
from services.kit.testing import random_game

CONFIGS = [(board, players) for board in ("province", "archipelago") for players in (2, 3, 4)]
GAMES = 12  # random games whose every decision is checked
FAVOURITE_GAMES = range(2000, 2100)  # 2-player games; the constants were fitted on 0-599
LATE = 0.8  # where in a game the favourite is read

Positions = tuple[tuple[tuple[float, ...], int], ...]  # (chances, the winner) per game


@functools.cache
def _games() -> tuple[tuple[State, ...], ...]:
    """Every state of a few random games, each configuration, the end included."""
    games = []
    for game in range(GAMES):
        board, players = CONFIGS[game % len(CONFIGS)]
        options = engine.Options(board=board)
        moves = random_game(engine, 1000 + game, players, options).moves
        state = engine.new_game(1000 + game, players, options)
        states = [copy.deepcopy(state)]
        for seat, move in moves:
            engine.apply(state, seat, move)
            states.append(copy.deepcopy(state))
        games.append(tuple(states))
    return tuple(games)


def _states() -> list[State]:
    return [state for game in _games() for state in game]


def _split(winners: tuple[int, ...], players: int) -> tuple[float, ...]:
    return tuple((1.0 / len(winners) if seat in winners else 0.0) for seat in range(players))


def test_one_chance_per_seat_in_range_summing_to_one() -> None:
    checked = 0
    for state in _states():
        chances = evaluate(state)
        assert len(chances) == state.n
        assert all(0.0 <= c <= 1.0 for c in chances), chances
        done = engine.outcome(state)
        if done is None or done.winners:
            assert abs(sum(chances) - 1.0) < 1e-9, chances
        checked += 1
    assert checked > GAMES * 100


def test_a_finished_game_gives_the_outcome_split_exactly() -> None:
    for game in _games():
        state = game[-1]
        done = engine.outcome(state)
        assert done is not None
        assert evaluate(state) == _split(done.winners, state.n)
        # A shared victory and (for the contract's sake) a game nobody wins.
        for winners in ((0, 1), ()):
            shared = copy.copy(state)
            shared.result = dataclasses.replace(done, winners=winners)
            assert evaluate(shared) == _split(winners, state.n)


def test_evaluate_never_changes_the_state() -> None:
    for game in _games():
        for state in game[::7]:
            before = copy.deepcopy(state)
            evaluate(state)
            expected_bursts(state)
            assert state == before


def _reference_dice_today(state: State, seat: int) -> float:
    """_dice_today counted the rules' way: noon.triggered says which cards fire, how often."""
    player = state.players[seat]
    value = 0.0
    if state.step == LATE_MORNING:
        # The special faces (The Dice in Detail), acting at the start of Noon.
        for die in player.rolled:
            shown = symbol(state, die)
            value += {BURST: YELLOW_BURST, FOOTPRINT: PURPLE_FOOTPRINTS}.get(shown, 0)
            if shown == CURSE and not has_kaar(player):
                value -= BLACK_LOSS
    under = COMPANIONS[player.companions[-1]].bursts if player.companions else 0
    fired = dict(triggered(state, player))
    for ref, times in fired.items():
        _, effect, _ = card_of(player, ref)
        gain = effect.bursts + effect.footprints + REROLL_TOKEN * effect.rerolls
        if ref > SPELL_REF:
            gain -= under
        elif effect.skull and ref != ADVENTURER_REF:
            gain -= COMPANIONS[ref].bursts
        value += gain * times
    if state.day < DAYS:
        # Spells that do not trigger today may on a later day.
        held = [s for s in player.spells if SPELL_REF + s not in fired] + player.hidden_spells
        for spell in held:
            effect = SPELLS[spell].effect
            cost = effect.bursts + effect.footprints + REROLL_TOKEN * effect.rerolls - under
            value += SPELL_LIKELIHOOD * cost
    return value


def test_the_inlined_dice_count_is_the_rules_count() -> None:
    checked = fired = spells = 0
    for state in _states():
        if state.step not in (LATE_MORNING, NOON):
            continue
        for seat in range(state.n):
            mine = _dice_today(state, state.players[seat], DAYS - state.day)
            assert abs(mine - _reference_dice_today(state, seat)) < 1e-9, (seat, state.step)
            checked += 1
            fired += bool(triggered(state, state.players[seat]))
            spells += bool(state.players[seat].spells or state.players[seat].hidden_spells)
    assert checked > 1000 and fired > 500 and spells > 0


def test_resolving_a_card_leaves_the_seats_bursts_as_they_were() -> None:
    """The gain moves from today's dice to the score track: the greedy player sees no
    reason to prefer one order of resolving to another for cards that only give."""
    checked = 0
    for state in _states():
        if state.step != NOON:
            continue
        for seat in engine.to_act(state):
            player = state.players[seat]
            for move in engine.legal_moves(state, seat):
                if not isinstance(move, Resolve) or move.card > SPELL_REF:
                    continue
                _, effect, _ = card_of(player, move.card)
                if effect.skull or effect.spell or effect.resurrect or effect.fireflies:
                    continue
                if effect.bursts < 0 or effect.footprints < 0:
                    continue  # a loss stops at 0
                after = copy.deepcopy(state)
                engine.apply(after, seat, move)
                if after.step != NOON:
                    continue  # the step ended: the day moved on
                before = expected_bursts(state)[seat]
                assert abs(expected_bursts(after)[seat] - before) < 1e-9, str(move)
                checked += 1
    assert checked > 100


def test_more_bursts_never_lower_a_seats_chance() -> None:
    checked = 0
    for game in _games():
        for state in game[5:-1:11]:
            base = evaluate(state)
            for seat in range(state.n):
                richer = copy.deepcopy(state)
                richer.players[seat].score += 5
                chances = evaluate(richer)
                assert chances[seat] > base[seat]
                assert all(chances[o] <= base[o] for o in range(state.n) if o != seat)
                checked += 1
    assert checked > 100


@functools.cache
def _late_positions() -> Positions:
    """(chances at 80% of the game's decisions, the single winner) for each decisive
    2-player game of FAVOURITE_GAMES."""
    out = []
    for seed in FAVOURITE_GAMES:
        options = engine.Options(board=("province", "archipelago")[seed % 2])
        played = random_game(engine, seed, 2, options)
        assert played.outcome is not None
        if len(played.outcome.winners) != 1:
            continue
        state = engine.new_game(seed, 2, options)
        for seat, move in played.moves[: round(LATE * len(played.moves))]:
            engine.apply(state, seat, move)
        out.append((evaluate(state), played.outcome.winners[0]))
    return tuple(out)


def _favourite_wins(positions: Positions, pick: Callable[[tuple[float, ...]], int]) -> float:
    decided = [(chances, winner) for chances, winner in positions if chances[0] != chances[1]]
    return sum(pick(chances) == winner for chances, winner in decided) / len(decided)


def _favourite(chances: tuple[float, ...]) -> int:
    return max(range(len(chances)), key=chances.__getitem__)


def _underdog(chances: tuple[float, ...]) -> int:
    return min(range(len(chances)), key=chances.__getitem__)


def test_the_favourite_late_in_the_game_wins_far_more_often_than_chance() -> None:
    """Measured on seeds 2000-2099: the favourite at 80% of the decisions won 69 of the
    100 decisive games (seeds 3000-3099: 80 of 99; 4000-4099: 68 of 100). The bar, 0.6,
    is 0.08 under the lowest of the three: close to two standard errors (0.047)."""
    positions = _late_positions()
    assert len(positions) >= 90
    rate = _favourite_wins(positions, _favourite)
    print(f"\nthe favourite at {LATE:.0%} of the game won {rate:.2f} of {len(positions)} games")
    assert rate >= 0.6


def test_the_favourite_check_fails_for_an_evaluation_upside_down() -> None:
    assert _favourite_wins(_late_positions(), _underdog) < 0.5


def test_the_docstring_examples_hold() -> None:
    module = importlib.import_module("services.glow.engine.evaluate")
    result = doctest.testmod(module)
    assert result.attempted >= 4 and result.failed == 0


def test_timing_is_printed() -> None:
    """Not asserted (the machine is shared): the figure goes to the report."""
    mid = [s for game in _games() for s in game[len(game) // 4 : 3 * len(game) // 4 : 9]]
    times = [
        min(timeit.repeat(functools.partial(evaluate, s), number=20, repeat=3)) / 20 for s in mid
    ]
    median = statistics.median(times) * 1e6
    print(f"\nevaluate: median {median:.1f} us, max {max(times) * 1e6:.1f} us over {len(mid)}")
    assert times
