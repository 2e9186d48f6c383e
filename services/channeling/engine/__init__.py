"""The Channeling: a pure rules engine (see the engine contract in services/kit/engine.py).

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

from services.kit.engine import GameInfo

from .determinize import determinize
from .evaluate import evaluate
from .moves import ChoosePath, FillGap, Move, MoveDruid, PlayGlyph, parse_move
from .rules import apply, legal_moves, outcome, to_act
from .state import SEAT_NAMES, State, new_game
from .state import ChannelingOptions as Options
from .view import CellView, SeatView, View, view

GAME = GameInfo(
    name="channeling",
    title="The Channeling",
    min_players=2,
    max_players=2,
    options_type=Options,
    seat_names=lambda players: SEAT_NAMES,
)

__all__ = [
    "GAME",
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
    "to_act",
    "view",
]
