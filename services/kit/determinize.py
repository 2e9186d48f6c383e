"""The determinize hook's contract, checked the same way for every engine.

``determinize(state, seat, rng) -> State`` returns a new state consistent with everything
``seat`` has seen, with everything hidden from it re-dealt among the places it could be
(deck order, opponents' hands, face-down tokens) and the state's own generator re-seeded
from ``rng`` (future dice and draws differ). It never changes ``state``. The bots search
on these states, so a bot never sees the true one (information-set MCTS, Cowling, Powley
and Whitehouse 2012). ``seat`` None determinizes for a spectator.
"""

from __future__ import annotations

import copy
import random
from typing import Any

from services.kit.engine import Engine
from services.kit.testing import choose


def check_determinize(
    engine: Engine, state: Any, seat: int | None, seeds: range = range(4), play: int = 30
) -> list[Any]:
    """Determinize ``state`` for ``seat`` once per seed and check the contract; return them.

    Each result: leaves ``state`` unchanged, is a new object, shows ``seat`` exactly the
    view it had (and the same decisions: seats to act, the seat's legal moves, the
    outcome), and is a playable state: ``play`` random legal moves apply to it. The same
    seed gives an equal state (a bot's search is reproducible).
    """
    before = copy.deepcopy(state)
    seen = engine.view(state, seat)
    moves = engine.legal_moves(state, seat) if seat is not None else None
    results = []
    # The Engine protocol does not declare the determinize hook, which each engine has.
    for seed in seeds:
        det = engine.determinize(state, seat, random.Random(seed))
        assert state == before, "determinize changed the state it was given"
        assert det is not state, "determinize returned the state itself"
        again = engine.determinize(state, seat, random.Random(seed))
        assert again == det, f"seed {seed}: the same seed gave a different state"
        assert engine.view(det, seat) == seen, f"seed {seed}: the seat's view changed"
        assert engine.to_act(det) == engine.to_act(state), f"seed {seed}: to_act changed"
        assert engine.outcome(det) == engine.outcome(state), f"seed {seed}: outcome changed"
        if seat is not None:
            assert engine.legal_moves(det, seat) == moves, f"seed {seed}: legal moves changed"
        results.append(det)
        playable = copy.deepcopy(det)
        rng = random.Random(seed)
        for _ in range(play):
            if engine.outcome(playable) is not None:
                break
            engine.apply(playable, *choose(engine, playable, rng))
    return results
