"""Glow, the rules engine: the kit's engine contract for 2 to 4 players, both boards.

``apply`` and ``legal_moves`` are the kit's kernel (services/kit/kernel.py) over the
decisions of turn.py; every rule lives under its name in rules/<part of the day>.py.

>>> from services.glow import engine
>>> state = engine.new_game(1, 2, engine.Options(board="archipelago"))
>>> engine.to_act(state), [str(m) for m in engine.legal_moves(state, 0)][:2]
((0,), ['adventurer braccio', 'adventurer taetyss'])
"""

from __future__ import annotations

from operator import methodcaller

from services.kit import kernel
from services.kit.engine import GameInfo

from .determinize import determinize
from .evaluate import evaluate
from .moves import (
    MOVE_TYPES,
    Bury,
    Camp,
    CancelSpell,
    ChooseAdventurer,
    ChooseFace,
    ChooseSketalDie,
    EndJourney,
    Fix,
    GlowMove,
    Go,
    Lose,
    MoveBlackDie,
    PayReroll,
    PickDie,
    Raise,
    Ready,
    Resolve,
    Roll,
    Sail,
    Take,
    UseReroll,
    parse_move,
)
from .rules.setup import MAX_PLAYERS, MIN_PLAYERS, new_game
from .state import Options, Player, State
from .turn import advance, decisions, out_of_step, outcome, to_act
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

# Every move is public once made (its events say the rest); no sorting: each decision
# lists its moves in order and each stage's row lists the kinds in order.
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
    kind=type,  # one move type per kind (the kernel's default, without a call of ours)
    problem=methodcaller("problem"),
    advance=advance,
)
ENGINE = kernel.Kernel(RULES)
apply = ENGINE.apply
legal_moves = ENGINE.legal_moves
public_move = ENGINE.public_move

__all__ = [
    "ENGINE",
    "GAME",
    "RULES",
    "Bury",
    "Camp",
    "CancelSpell",
    "ChooseAdventurer",
    "ChooseFace",
    "ChooseSketalDie",
    "EndJourney",
    "Fix",
    "GlowMove",
    "Go",
    "Lose",
    "MoveBlackDie",
    "Options",
    "PayReroll",
    "PickDie",
    "Player",
    "Raise",
    "Ready",
    "Resolve",
    "Roll",
    "Sail",
    "State",
    "Take",
    "UseReroll",
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
