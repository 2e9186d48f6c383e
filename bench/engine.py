"""Engine figures: decisions a second, random games a second, decisions per game, and the
median cost of one decision (listing the seat's legal moves, choosing, applying).

Pure Python in this process: what one core of a game service spends on the rules.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import asdict, dataclass
from typing import Any

from services.kit.testing import choose


@dataclass
class EngineFigures:
    game: str
    configuration: str
    games: int
    decisions: int
    seconds: float
    decisions_per_second: float
    games_per_second: float
    mean_decisions_per_game: float
    median_decision_us: float
    p99_decision_us: float
    cost_by_move_number: list[tuple[int, float]]  # (move number bucket start, median us)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def measure(
    engine: Any, players: int, options: Any, configuration: str, seconds: float, seed: int = 1
) -> EngineFigures:
    """Play seeded random games for about ``seconds``; time every decision."""
    costs: list[int] = []
    by_move: dict[int, list[int]] = {}
    games = decisions = 0
    started = time.perf_counter()
    clock = time.perf_counter_ns
    while time.perf_counter() - started < seconds or games == 0:
        state = engine.new_game(seed + games, players, options)
        rng = random.Random(seed + games)
        number = 0
        while engine.outcome(state) is None:
            t0 = clock()
            seat, move = choose(engine, state, rng)
            engine.apply(state, seat, move)
            cost = clock() - t0
            costs.append(cost)
            by_move.setdefault(number // 10 * 10, []).append(cost)
            number += 1
        decisions += number
        games += 1
    elapsed = time.perf_counter() - started
    costs.sort()
    curve = [(k, statistics.median(v) / 1000) for k, v in sorted(by_move.items()) if len(v) >= 5]
    return EngineFigures(
        game=engine.GAME.name,
        configuration=configuration,
        games=games,
        decisions=decisions,
        seconds=round(elapsed, 3),
        decisions_per_second=round(decisions / elapsed, 1),
        games_per_second=round(games / elapsed, 2),
        mean_decisions_per_game=round(decisions / games, 1),
        median_decision_us=round(costs[len(costs) // 2] / 1000, 2),
        p99_decision_us=round(costs[int(len(costs) * 0.99)] / 1000, 2),
        cost_by_move_number=curve,
    )
