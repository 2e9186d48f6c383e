"""A game played to its end by bots, one per seat: for tests, the bench and load tools."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any

from services.kit.engine import Engine
from services.kit.testing import Playthrough

Decider = Callable[[Engine, Any, int, random.Random], Any]
"""(engine, state, seat, rng) -> the seat's move; it may read only what a bot may."""


def play(
    engine: Engine,
    seed: int,
    players: int,
    deciders: Sequence[Decider],
    options: Any = None,
    *,
    max_decisions: int = 100_000,
) -> Playthrough:
    """Play the game seeded ``seed`` with ``deciders[seat]`` choosing each seat's moves.

    When several seats have a decision at once the lowest seat decides first (the
    engine takes simultaneous decisions in any order). Each seat's bot has its own
    generator, seeded from ``seed`` and the seat, so a game is reproducible.
    """
    if len(deciders) != players:
        raise ValueError(f"{players} players need {players} deciders, not {len(deciders)}")
    options = options if options is not None else engine.GAME.options_type()
    state = engine.new_game(seed, players, options)
    rngs = [random.Random(seed * 1_000_003 + seat) for seat in range(players)]
    moves: list[tuple[int, Any]] = []
    while engine.outcome(state) is None:
        if len(moves) >= max_decisions:
            raise RuntimeError(f"seed {seed}: no outcome after {max_decisions} decisions")
        seat = engine.to_act(state)[0]
        move = deciders[seat](engine, state, seat, rngs[seat])
        engine.apply(state, seat, move)
        moves.append((seat, move))
    return Playthrough(state, engine.outcome(state), moves)
