"""Shén (beta rules of 01/05/2026): a pure rules engine (the engine contract is in
services/kit/engine.py; the rules, readings and move texts are in services/shen/README.md).

>>> from services.shen import engine
>>> state = engine.new_game(seed=7, players=2, options=engine.Options())
>>> seat = engine.to_act(state)[0]
>>> str(engine.legal_moves(state, seat)[0])
'stone C1'
>>> events = engine.apply(state, seat, engine.parse_move("stone D5"))
>>> events[0].kind
'stone_placed'
"""

from services.kit.engine import GameInfo

from .content import CARDS, POOL, Card
from .determinize import determinize
from .evaluate import evaluate
from .moves import Kind, Move, parse_move
from .rules import apply, legal_moves, outcome, to_act
from .state import Avatar, Combat, Player, State, Step, new_game, seat_names, sides
from .state import ShenOptions as Options
from .view import AvatarView, CombatView, PlayerView, View, view

GAME = GameInfo(
    name="shen",
    title="Shén",
    min_players=2,
    max_players=6,
    options_type=Options,
    seat_names=seat_names,
    sides=sides,
)

__all__ = [
    "CARDS",
    "GAME",
    "POOL",
    "Avatar",
    "AvatarView",
    "Card",
    "Combat",
    "CombatView",
    "Kind",
    "Move",
    "Options",
    "Player",
    "PlayerView",
    "State",
    "Step",
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
