"""The Channeling: a pure rules engine (see the engine contract in services/kit/engine.py).

The turn itself (``apply``, ``legal_moves``, the checks before a move) is the kit's
kernel (services/kit/kernel.py) over this game's rule table, engine/turn.py.

>>> from services.channeling import engine
>>> state = engine.new_game(seed=7, players=2, options=engine.Options())
>>> engine.to_act(state)
(0,)
>>> first = engine.legal_moves(state, 0)[0]
>>> str(first).startswith("glyph ")
True
>>> events = engine.apply(state, 0, first)
>>> events[0].kind
'glyph_played'
"""

from .determinize import determinize
from .evaluate import evaluate
from .moves import ChoosePath, FillGap, Move, MoveDruid, PlayGlyph, parse_move
from .state import ChannelingOptions as Options
from .state import State, new_game
from .steps.endgame import outcome
from .turn import ENGINE, GAME, RULES, to_act
from .view import CellView, SeatView, View, reseat_view, view

apply = ENGINE.apply
legal_moves = ENGINE.legal_moves
public_move = ENGINE.public_move

__all__ = [
    "ENGINE",
    "GAME",
    "RULES",
    "CellView",
    "ChoosePath",
    "FillGap",
    "Move",
    "MoveDruid",
    "Options",
    "PlayGlyph",
    "SeatView",
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
    "reseat_view",
    "to_act",
    "view",
]
