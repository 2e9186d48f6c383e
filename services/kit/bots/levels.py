"""Bot levels: each a bot and a budget, and the one entry point the service calls.

=========  ==========================================================================
level      bot and budget (``ms`` is the service's time per decision, default 500)
=========  ==========================================================================
random     a uniformly random legal move (no search; the load tester's player)
easy       greedy: one ply over 4 determinizations, within ``ms / 5``
medium     ISMCTS within ``ms / 5``, at most 400 iterations, rollouts of 20 decisions
hard       ISMCTS within ``ms``, at most 5000 iterations, rollouts of 20 decisions
=========  ==========================================================================

The iteration caps keep a fast game from searching far past the point of use and make
``ms=None`` (iterations only) a reproducible budget. Rollouts are cut at 20 decisions and
scored by the game's evaluation: a random rollout of a long game (Shén, Res Arcana,
Glow: hundreds of decisions) says little and costs much.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from services import registry
from services.kit.bots import greedy, ismcts
from services.kit.bots import random as random_bot
from services.kit.bots.clock import Deadline, Flag
from services.kit.engine import Engine


@dataclass(frozen=True)
class Level:
    """A bot and its budget: a share of the time per decision and an iteration cap."""

    bot: str  # "random", "greedy" or "ismcts"
    share: float = 1.0  # of the time per decision
    iterations: int | None = None  # ISMCTS: the cap
    samples: int = 4  # greedy: determinizations per move
    rollout_depth: int = 20  # ISMCTS: decisions per rollout before the evaluation


# A search asked to give way still searches this long: every move gets some thought.
YIELD_FLOOR_MS = 10.0

LEVELS: dict[str, Level] = {
    "random": Level("random"),
    "easy": Level("greedy", share=0.2),
    "medium": Level("ismcts", share=0.2, iterations=400),
    "hard": Level("ismcts", share=1.0, iterations=5000),
}


def level_of(name: str) -> Level:
    try:
        return LEVELS[name]
    except KeyError:
        raise ValueError(f"unknown bot level {name!r}; known: {', '.join(LEVELS)}") from None


def decide(
    engine: Engine,
    state: Any,
    seat: int,
    level: str,
    rng: random.Random,
    ms_per_decision: float | None = 500.0,
    *,
    players: int | None = None,
    cap_ms: float | None = None,
    yield_to: Flag | None = None,
) -> Any:
    """``seat``'s move at ``level``; ``ms_per_decision`` None searches by iterations only.
    ``cap_ms`` bounds the search below the level's share (a move the clock forces must
    land at once, whatever the level); once ``yield_to`` is raised the search stops
    (after YIELD_FLOOR_MS), its best move so far taken: someone waits for the worker.

    >>> from services.channeling import engine
    >>> state = engine.new_game(seed=3)
    >>> move = decide(engine, state, 0, "medium", random.Random(1), ms_per_decision=50)
    >>> move in engine.legal_moves(state, 0)
    True
    """
    chosen = level_of(level)
    budget = None if ms_per_decision is None else ms_per_decision * chosen.share
    if cap_ms is not None:
        budget = cap_ms if budget is None else min(budget, cap_ms)
    deadline = Deadline.after(budget, yield_to, YIELD_FLOOR_MS)
    if chosen.bot == "random":
        return random_bot.decide(engine, state, seat, rng)
    if chosen.bot == "greedy":
        return greedy.decide(
            engine, state, seat, rng, samples=chosen.samples, deadline=deadline, players=players
        )
    return ismcts.search(
        engine,
        state,
        seat,
        rng,
        iterations=chosen.iterations,
        deadline=deadline,
        rollout_depth=chosen.rollout_depth,
        players=players,
    ).move


def decide_text(
    game_name: str,
    state: Any,
    seat: int,
    level: str,
    seed: int,
    ms: float | None,
    players: int | None = None,
    cap_ms: float | None = None,
    yield_to: Flag | None = None,
) -> str:
    """The pool's entry point: ``decide`` for the game named ``game_name``, seeded with
    ``seed``, returned in the move's text form (what the store logs and a worker process
    can send back without pickling engine types)."""
    engine = registry.by_name(game_name).engine()
    move = decide(
        engine,
        state,
        seat,
        level,
        random.Random(seed),
        ms,
        players=players,
        cap_ms=cap_ms,
        yield_to=yield_to,
    )
    return str(move)
