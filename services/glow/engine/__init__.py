"""Glow, the rules engine: the kit's engine contract for 2 to 4 players, both boards.

>>> from services.glow import engine
>>> state = engine.new_game(1, 2, engine.Options(board="archipelago"))
>>> engine.to_act(state), [str(m) for m in engine.legal_moves(state, 0)][:2]
((0,), ['adventurer braccio', 'adventurer taetyss'])
"""

from __future__ import annotations

from services.kit.engine import GameInfo

from .determinize import determinize
from .evaluate import evaluate
from .game import apply, legal_moves, outcome, to_act
from .moves import Move, parse_move
from .rules.setup import MAX_PLAYERS, MIN_PLAYERS, new_game
from .state import Options, Player, State
from .view import View, view


def _seat_names(players: int) -> tuple[str, ...]:
    return tuple(f"Player {i + 1}" for i in range(players))


GAME = GameInfo(
    name="glow",
    title="Glow",
    min_players=MIN_PLAYERS,
    max_players=MAX_PLAYERS,
    options_type=Options,
    seat_names=_seat_names,
)

__all__ = [
    "GAME",
    "Move",
    "Options",
    "Player",
    "State",
    "View",
    "apply",
    "determinize",
    "evaluate",
    "legal_moves",
    "new_game",
    "outcome",
    "parse_move",
    "to_act",
    "view",
]
