"""Shén (beta rules of 01/05/2026): a pure rules engine (the engine contract is in
services/kit/engine.py; the rules, readings and move texts are in services/shen/README.md).

The kit's kernel (services/kit/kernel.py) is the engine: ``apply`` and ``legal_moves``
run over Shén's rule table (the modules of ``phases/``, picked by turn.py) and its hooks.

>>> from services.shen import engine
>>> state = engine.new_game(seed=7, players=2, options=engine.Options())
>>> seat = engine.to_act(state)[0]
>>> str(engine.legal_moves(state, seat)[0])
'stone C1'
>>> events = engine.apply(state, seat, engine.parse_move("stone D5"))
>>> events[0].kind
'stone_placed'
"""

from services.kit import kernel
from services.kit.engine import GameInfo

from .content import CARDS, POOL, Card
from .determinize import determinize
from .evaluate import evaluate
from .moves import (
    MOVE_TYPES,
    AttackRealmStone,
    ChooseFoe,
    ChooseTarget,
    ClaimAnchorPoint,
    Draw,
    EndTurn,
    Hold,
    LoseCards,
    LoseFromDeck,
    LoseFromDiscard,
    LoseFromHand,
    Move,
    MoveStep,
    Pass,
    PlaceRealmStone,
    PlaceShenCounter,
    PlayCard,
    RangedAttack,
    RemoveAvatar,
    Retreat,
    StopMoving,
    UseAbility,
    parse_move,
)
from .state import Avatar, Combat, Player, State, Step, new_game, seat_names, sides
from .state import ShenOptions as Options
from .turn import advance, decisions, out_of_step, outcome, to_act
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

# Every move of Shén is public once made (played and lost cards are shown face up, the
# rest names places and choices on the table), so the kit's default public_move holds.
RULES = kernel.Rules(
    game=GAME,
    move_types=MOVE_TYPES,
    new_game=new_game,
    view=view,
    outcome=outcome,
    to_act=to_act,
    parse_move=parse_move,
    determinize=determinize,
    decisions=decisions,
    out_of_step=out_of_step,
    advance=advance,
)
ENGINE = kernel.Kernel(RULES)
apply = ENGINE.apply
legal_moves = ENGINE.legal_moves
public_move = ENGINE.public_move

__all__ = [
    "CARDS",
    "ENGINE",
    "GAME",
    "MOVE_TYPES",
    "POOL",
    "RULES",
    "AttackRealmStone",
    "Avatar",
    "AvatarView",
    "Card",
    "ChooseFoe",
    "ChooseTarget",
    "ClaimAnchorPoint",
    "Combat",
    "CombatView",
    "Draw",
    "EndTurn",
    "Hold",
    "LoseCards",
    "LoseFromDeck",
    "LoseFromDiscard",
    "LoseFromHand",
    "Move",
    "MoveStep",
    "Options",
    "Pass",
    "PlaceRealmStone",
    "PlaceShenCounter",
    "PlayCard",
    "Player",
    "PlayerView",
    "RangedAttack",
    "RemoveAvatar",
    "Retreat",
    "State",
    "Step",
    "StopMoving",
    "UseAbility",
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
