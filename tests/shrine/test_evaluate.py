"""The evaluation hook: one chance per seat, in range, summing to 1 while play goes on;
a finished game's outcome exactly; the state untouched; the Treasure term equal to the
end-game checklist; positions ranked the way the rulebook says; and, over 100 random
games, the favoured seat wins more often than chance.
"""

from __future__ import annotations

import copy
import math
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Iterator

import pytest

from services.kit.testing import choose, random_game
from services.shrine import engine
from services.shrine.engine import colours
from services.shrine.engine.content import CONTENT, PLAYER
from services.shrine.engine.evaluate import running_dry, standing
from services.shrine.engine.scoring import tallies
from services.shrine.engine.state import State

OPTIONS = (engine.Options(), engine.Options(radiant_shapes=True))
GAMES = 10  # per option set, for the checks at every decision


def every_state(seed: int, options: engine.Options) -> Iterator[State]:
    """Every state of one seeded random game, its end included (the live state: copy it
    to keep it)."""
    state = engine.new_game(seed, 2, options)
    chooser = random.Random(seed)
    while True:
        yield state
        if engine.outcome(state) is not None:
            return
        engine.apply(state, *choose(engine, state, chooser))


def all_states() -> Iterator[State]:
    for options in OPTIONS:
        for seed in range(GAMES):
            yield from every_state(seed, options)


def test_one_value_per_seat_in_range_summing_to_one_and_the_state_untouched() -> None:
    seen = 0
    for state in all_states():
        before = copy.deepcopy(state)
        values = engine.evaluate(state)
        assert state == before, "evaluate changed the state"
        assert isinstance(values, tuple) and len(values) == 2
        assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in values), values
        if state.result is None:
            assert math.isclose(sum(values), 1.0), values
        seen += 1
    assert seen > 500


def test_a_finished_game_gives_its_outcome_exactly() -> None:
    reasons: Counter[str] = Counter()
    for options in OPTIONS:
        for seed in range(60):
            game = random_game(engine, seed, 2, options)
            outcome = game.outcome
            assert outcome is not None
            values = engine.evaluate(game.state)
            split = tuple(
                1.0 / len(outcome.winners) if s in outcome.winners else 0.0 for s in (0, 1)
            )
            assert values == split, (outcome, values)
            reasons[outcome.reason] += 1
    # a winner by Treasure, a winner by the immediate loss, and nobody winning were all seen
    assert reasons["NO_VALID_PLACEMENT"] and reasons["BOTH_OUT_OF_TREASURE"]
    assert reasons["MOST_TREASURE"] + reasons["OUT_OF_TREASURE"] + reasons["TIE_SECOND_PLAYER"]


def test_the_treasure_term_is_the_end_game_checklist() -> None:
    """``standing`` is written for speed; scoring.tallies is the rulebook's checklist."""
    ended_by_scoring = 0
    for state in all_states():
        sun, moon = tallies(state)
        assert standing(state) == (sun.total, moon.total)
        if state.result is not None and state.result.reason != "NO_VALID_PLACEMENT":
            assert standing(state) == state.result.scores
            ended_by_scoring += 1
    assert ended_by_scoring


# -- ranking: what the rulebook says is better is valued higher ---------------------------


def _midgame() -> State:
    state = engine.new_game(11, 2, engine.Options())
    chooser = random.Random(11)
    for _ in range(20):
        engine.apply(state, *choose(engine, state, chooser))
    assert state.result is None
    return state


def _match_for(state: State, seat: int) -> State:
    """``state`` with one Lens on an empty unblocked field, the colour ``seat``'s Code
    card shows there when it is a basic one."""
    out = copy.deepcopy(state)
    code = CONTENT.codes[out.players[seat].code].colours
    field = next(f for f in range(len(code)) if not out.lenses[f] and code[f] in colours.BASIC)
    out.lenses[field] = [code[field]]
    return out


Tweak = Callable[[State], None]


def _more_treasure(state: State) -> None:
    state.players[0].treasure += 3


def _a_false_claim(state: State) -> None:
    code = CONTENT.codes[state.players[0].code].colours
    field = next(f for f in range(len(code)) if state.blocked_by[f] < 0)
    state.lenses[field] = [next(c for c in colours.BASIC if c != code[field])]
    state.blocked_by[field] = 0


def _out_of_passes_and_debt(state: State) -> None:
    player = state.players[0]
    player.passes, player.debts, player.treasure = 2, 3, 0


@pytest.mark.parametrize(
    ("tweak", "better"),
    [(_more_treasure, True), (_a_false_claim, False), (_out_of_passes_and_debt, False)],
    ids=["more treasure", "a false Block claim", "no passes, no Debt, no Treasure"],
)
def test_a_better_position_for_sun_is_valued_higher(tweak: Tweak, better: bool) -> None:
    state = _midgame()
    changed = copy.deepcopy(state)
    tweak(changed)
    before, after = engine.evaluate(state)[0], engine.evaluate(changed)[0]
    assert (after > before) == better, (before, after)


def test_a_match_on_a_seats_own_code_card_raises_its_value() -> None:
    state = _midgame()
    for seat in (0, 1):
        assert engine.evaluate(_match_for(state, seat))[seat] > engine.evaluate(state)[seat]


def test_running_dry_grows_as_the_reserve_shrinks() -> None:
    state = _midgame()
    state.players[1].passes = len(PLAYER.pass_costs)
    state.players[1].debts = len(PLAYER.debt_costs)
    chances = []
    for treasure in (12, 6, 2, 0):
        state.players[1].treasure = treasure
        chances.append(running_dry(state, 1))
    assert chances == sorted(chances) and chances[0] < 0.5 < chances[-1]
    without_passes = running_dry(state, 1)
    state.players[1].passes = 0
    assert running_dry(state, 1) < without_passes


# -- prediction over random games ------------------------------------------------------------

PREDICTION_SEEDS = range(1000, 1100)  # not the games the constants were fitted to
AT = 0.8  # the fraction of a game's decisions at which the evaluation is asked


def _positions() -> list[tuple[State, int]]:
    """(the state at AT of the game's decisions, the winner) for each decisive game."""
    out = []
    for seed in PREDICTION_SEEDS:
        options = OPTIONS[seed % 2]
        game = random_game(engine, seed, 2, options)
        assert game.outcome is not None
        if len(game.outcome.winners) != 1:
            continue
        state = engine.new_game(seed, 2, options)
        for seat, move in game.moves[: int(AT * len(game.moves))]:
            engine.apply(state, seat, move)
        out.append((state, game.outcome.winners[0]))
    return out


def _favoured_wins(
    positions: list[tuple[State, int]], evaluate: Callable[[State], tuple[float, ...]]
) -> tuple[int, int]:
    """(games the favoured seat won, games where one seat was favoured)."""
    won = decisive = 0
    for state, winner in positions:
        sun, moon = evaluate(state)
        if sun != moon:
            decisive += 1
            won += (0 if sun > moon else 1) == winner
    return won, decisive


def _binomial_tail(k: int, n: int) -> float:
    """P(at least k heads in n fair tosses)."""
    return sum(math.comb(n, i) for i in range(k, n + 1)) / 2**n


def test_the_favoured_seat_wins_more_often_than_chance() -> None:
    """At 80% of each game's decisions (random play, both option sets). Measured on these
    seeds: 50 of 72 decisive games (0.69); on two other sets of 100 seeds 0.63 and 0.69."""
    positions = _positions()
    won, decisive = _favoured_wins(positions, engine.evaluate)
    print(f"\nthe favoured seat won {won} of {decisive} decisive games ({won / decisive:.2f})")
    assert decisive >= 50
    assert won / decisive >= 0.6
    assert _binomial_tail(won, decisive) < 0.01
    # control: the evaluation turned around fails the same check
    flipped, _ = _favoured_wins(positions, lambda s: tuple(reversed(engine.evaluate(s))))
    assert flipped == decisive - won and flipped / decisive < 0.6


def test_timing_is_printed() -> None:
    """Not asserted (a shared machine): the median CPU time of one call, mid-game."""
    states = []
    for options in OPTIONS:
        for seed in range(10):
            game = random_game(engine, seed, 2, options)
            state = engine.new_game(seed, 2, options)
            for seat, move in game.moves[: len(game.moves) // 2]:
                engine.apply(state, seat, move)
            states.append(state)
    per_call = []
    for state in states:
        calls = 2000
        start = time.process_time()  # CPU time: other work on the machine does not count
        for _ in range(calls):
            engine.evaluate(state)
        per_call.append((time.process_time() - start) / calls * 1e6)
    print(f"\nevaluate: median {statistics.median(per_call):.1f} us CPU per call, mid-game")
    assert len(per_call) == len(states)
