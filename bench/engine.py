"""Engine figures: decisions a second, random games a second, decisions per game, the
cost of one decision (listing the seat's legal moves, choosing one, applying it), also
by move number within a game, and the cost of one call of the game's evaluation (the
bots' estimate of an unfinished position, services/<game>/engine/evaluate.py).

Pure Python in this process: what one core of a game service spends on the rules. Games
are seeded (seed 1, 2, ...), so two runs play the same games in the same order; the
clock decides only how many.
"""

from __future__ import annotations

import copy
import random
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any

from services.kit.testing import choose

BUCKET = 10  # decisions per point of the cost-by-move-number curve
EVALUATION_STATES = 60  # positions the evaluation is timed on (one every EVALUATION_EVERY)
EVALUATION_EVERY = 7  # decisions between two positions taken from a game
EVALUATION_SECONDS = 0.3

# Options random play sets explicitly, by game (the Options fields; the proto's have the
# same names). Shén's rulebook has no end for a position nobody can change any more,
# which random players reach in about one game in 50 to 200 with 4 or more players: they
# play under its opt-in round limit, a house rule (services/shen/README.md). Res Arcana
# Duo's random games have always reached the victory points, but its rulebook has no end
# for one that never does: they play under its opt-in round limit too
# (services/resarcana/README.md).
RANDOM_PLAY_OPTIONS: dict[str, dict[str, Any]] = {
    "shen": {"round_limit": 40},
    "resarcana": {"round_limit": 20},
}


@dataclass
class EngineFigures:
    game: str
    configuration: str
    players: int
    games: int
    decisions: int
    seconds: float
    decisions_per_second: float
    games_per_second: float
    mean_decisions_per_game: float
    median_decision_us: float
    p90_decision_us: float
    p99_decision_us: float
    # (first move number of a bucket of BUCKET decisions, median us, p90 us)
    cost_by_move_number: list[tuple[int, float, float]]
    # One call of the game's evaluation on an unfinished position (None: it has none).
    evaluate_us: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def configurations(engine: Any) -> list[tuple[str, int, Any]]:
    """(label, players, options) to measure: default options (but RANDOM_PLAY_OPTIONS) at
    the fewest and the most players the game allows."""
    info = engine.GAME
    counts = sorted({info.min_players, info.max_players})
    options = info.options_type(**RANDOM_PLAY_OPTIONS.get(info.name, {}))
    return [(f"{n} players", n, options) for n in counts]


def measure(
    engine: Any,
    players: int,
    options: Any,
    configuration: str,
    seconds: float,
    seed: int = 1,
    min_games: int = 1,
) -> EngineFigures:
    """Play seeded random games for about ``seconds`` (at least ``min_games``); time
    every decision. Rates are per second of wall time (dealing and the end checks
    included); costs are of the decisions alone."""
    costs: list[int] = []
    by_move: dict[int, list[int]] = {}
    games = decisions = 0
    clock = time.perf_counter_ns
    started = time.perf_counter()
    while time.perf_counter() - started < seconds or games < min_games:
        state = engine.new_game(seed + games, players, options)
        rng = random.Random(seed + games)
        number = 0
        while engine.outcome(state) is None:
            t0 = clock()
            seat, move = choose(engine, state, rng)
            engine.apply(state, seat, move)
            cost = clock() - t0
            costs.append(cost)
            by_move.setdefault(number // BUCKET * BUCKET, []).append(cost)
            number += 1
        decisions += number
        games += 1
    elapsed = time.perf_counter() - started
    costs.sort()
    curve = [
        (k, round(statistics.median(v) / 1000, 2), round(_percentile(sorted(v), 0.9) / 1000, 2))
        for k, v in sorted(by_move.items())
        if len(v) >= 5
    ]
    return EngineFigures(
        game=engine.GAME.name,
        configuration=configuration,
        players=players,
        games=games,
        decisions=decisions,
        seconds=round(elapsed, 3),
        decisions_per_second=round(decisions / elapsed, 1),
        games_per_second=round(games / elapsed, 2),
        mean_decisions_per_game=round(decisions / games, 1),
        median_decision_us=round(_percentile(costs, 0.5) / 1000, 2),
        p90_decision_us=round(_percentile(costs, 0.9) / 1000, 2),
        p99_decision_us=round(_percentile(costs, 0.99) / 1000, 2),
        cost_by_move_number=curve,
        evaluate_us=evaluation_cost(
            engine, players, options, seed=seed, seconds=min(EVALUATION_SECONDS, seconds / 10)
        ),
    )


def evaluation_cost(
    engine: Any, players: int, options: Any, seed: int = 1, seconds: float = EVALUATION_SECONDS
) -> float | None:
    """Microseconds a call of ``engine.evaluate`` takes (the estimate a bot's search asks
    of each position it stops at), on positions taken along seeded random games (every
    EVALUATION_EVERY-th decision, unfinished), timed apart from the figures above; None
    for a game without one."""
    evaluate = getattr(engine, "evaluate", None)
    if evaluate is None:
        return None
    positions: list[Any] = []
    game = 0
    while len(positions) < EVALUATION_STATES:
        state = engine.new_game(seed + game, players, options)
        rng = random.Random(seed + game)
        number = 0
        while engine.outcome(state) is None and len(positions) < EVALUATION_STATES:
            if number % EVALUATION_EVERY == EVALUATION_EVERY - 1:
                positions.append(copy.deepcopy(state))
            seat, move = choose(engine, state, rng)
            engine.apply(state, seat, move)
            number += 1
        game += 1
    calls = 0
    started = time.perf_counter()
    while calls == 0 or time.perf_counter() - started < seconds:
        for position in positions:
            evaluate(position)
        calls += len(positions)
    return round((time.perf_counter() - started) / calls * 1e6, 2)


def _percentile(ordered: list[int] | list[float], q: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]
