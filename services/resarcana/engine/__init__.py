"""Res Arcana Duo: the rules engine (pure Python; see services/resarcana/README.md).

The kit's kernel (services/kit/kernel.py) is the engine: ``apply`` and ``legal_moves``
over this game's rule table (turn.py) and hooks (rules.py).

>>> state = new_game(7, 2, Options(setup="first_game"))
>>> seat = to_act(state)[0]
>>> moves = legal_moves(state, seat)
>>> events = apply(state, seat, moves[0])
>>> outcome(state) is None
True
"""

from services.resarcana.engine.determinize import determinize
from services.resarcana.engine.evaluate import evaluate
from services.resarcana.engine.moves import (
    MOVE_TYPES,
    ChooseMage,
    ChooseOption,
    Claim,
    Discard,
    Done,
    Gain,
    GainMonument,
    Keep,
    Move,
    Pass,
    PayEssence,
    Pile,
    Place,
    Retrieve,
    Return,
    Straighten,
    Take,
    TakeItem,
    Target,
    Turn,
    UsePower,
    Waive,
    parse_move,
)
from services.resarcana.engine.rules import ENGINE, RULES
from services.resarcana.engine.setup import new_game
from services.resarcana.engine.state import Options, State
from services.resarcana.engine.turn import GAME, outcome, to_act
from services.resarcana.engine.view import View, view

apply = ENGINE.apply
legal_moves = ENGINE.legal_moves
public_move = ENGINE.public_move

__all__ = [
    "ENGINE",
    "GAME",
    "MOVE_TYPES",
    "RULES",
    "ChooseMage",
    "ChooseOption",
    "Claim",
    "Discard",
    "Done",
    "Gain",
    "GainMonument",
    "Keep",
    "Move",
    "Options",
    "Pass",
    "PayEssence",
    "Pile",
    "Place",
    "Retrieve",
    "Return",
    "State",
    "Straighten",
    "Take",
    "TakeItem",
    "Target",
    "Turn",
    "UsePower",
    "View",
    "Waive",
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
