"""Res Arcana Duo: the rules engine (pure Python; see services/resarcana/README.md).

>>> state = new_game(7, 2, Options(setup="first_game"))
>>> seat = to_act(state)[0]
>>> moves = legal_moves(state, seat)
>>> events = apply(state, seat, moves[0])
>>> outcome(state) is None
True
"""

from services.resarcana.engine.determinize import determinize
from services.resarcana.engine.evaluate import evaluate
from services.resarcana.engine.game import (
    GAME,
    apply,
    legal_moves,
    outcome,
    public_move,
    to_act,
)
from services.resarcana.engine.moves import Kind, Move, parse_move
from services.resarcana.engine.setup import new_game
from services.resarcana.engine.state import Options, State
from services.resarcana.engine.view import View, view

__all__ = [
    "GAME",
    "Kind",
    "Move",
    "Options",
    "State",
    "View",
    "apply",
    "determinize",
    "evaluate",
    "legal_moves",
    "new_game",
    "outcome",
    "parse_move",
    "public_move",
    "to_act",
    "view",
]
