"""The greedy bot: one ply, scored by the game's evaluation over a few determinizations."""

from __future__ import annotations

import copy
import random
from typing import Any

from services.kit.bots.clock import NEVER, Deadline
from services.kit.bots.evaluation import players_of, values
from services.kit.bots.random import legal_or_raise
from services.kit.engine import Engine


def decide(
    engine: Engine,
    state: Any,
    seat: int,
    rng: random.Random,
    *,
    samples: int = 4,
    deadline: Deadline = NEVER,
    players: int | None = None,
) -> Any:
    """The legal move whose result, averaged over ``samples`` determinizations for
    ``seat``, the evaluation rates best for ``seat``; ties broken by ``rng``.

    Moves are scored in an order shuffled by ``rng``; once ``deadline`` passes the best
    scored so far is taken (at least one move is always scored).

    >>> from services.channeling import engine
    >>> state = engine.new_game(seed=3)
    >>> decide(engine, state, 0, random.Random(1)) in engine.legal_moves(state, 0)
    True
    """
    moves = legal_or_raise(engine, state, seat)
    if len(moves) == 1:
        return moves[0]
    players = players if players is not None else players_of(engine, state)
    # The only reads of the true state: the seat's legal moves, and these samples.
    worlds = [engine.determinize(state, seat, rng) for _ in range(max(1, samples))]
    order = list(moves)
    rng.shuffle(order)
    best: list[Any] = []
    best_score = -1.0
    for move in order:
        if best and deadline.passed():
            break
        score = 0.0
        for world in worlds:
            after = copy.deepcopy(world)
            engine.apply(after, seat, move)
            score += values(engine, after, players)[seat]
        if score > best_score:
            best, best_score = [move], score
        elif score == best_score:
            best.append(move)
    return best[0] if len(best) == 1 else rng.choice(sorted(best))
