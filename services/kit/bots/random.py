"""The random bot: a uniformly random legal move of the seat."""

from __future__ import annotations

import random
from typing import Any

from services.kit.engine import Engine, GameOver, NotYourDecision


def legal_or_raise(engine: Engine, state: Any, seat: int) -> list[Any]:
    """The seat's legal moves (what the seat sees), or the engine's error if it has none."""
    if engine.outcome(state) is not None:
        raise GameOver("the game is over")
    moves = engine.legal_moves(state, seat)
    if not moves:
        raise NotYourDecision("it is not this seat's decision now")
    return moves


def decide(engine: Engine, state: Any, seat: int, rng: random.Random) -> Any:
    """A uniformly random legal move of ``seat``.

    >>> from services.channeling import engine
    >>> state = engine.new_game(seed=3)
    >>> decide(engine, state, 0, random.Random(1)) in engine.legal_moves(state, 0)
    True
    """
    return rng.choice(legal_or_raise(engine, state, seat))
