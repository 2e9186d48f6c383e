"""Shrine: Duel of Light, with the Radiant Shapes module, as a pure rules engine.

The contract every game follows (services/kit/engine.py)::

    >>> from services.shrine import engine
    >>> state = engine.new_game(seed=1, players=2, options=engine.Options())
    >>> seat = engine.to_act(state)[0]
    >>> move = engine.legal_moves(state, seat)[0]
    >>> events = engine.apply(state, seat, move)
    >>> engine.parse_move(str(move)) == move
    True

``apply`` and ``legal_moves`` are the kit's kernel (services/kit/kernel.py) over the rule
table in rules/steps.py. Seats: 0 is Sun, 1 is Moon. See README.md for the move texts and
the order of decisions.
"""

from __future__ import annotations

from services.kit import kernel
from services.kit.engine import GameInfo, Outcome
from services.shrine.engine.determinize import determinize
from services.shrine.engine.evaluate import evaluate
from services.shrine.engine.moves import (
    MOVE_TYPES,
    Accept,
    Block,
    Bonus,
    Claim,
    CompleteShape,
    Debt,
    Done,
    Draw,
    Keep,
    Move,
    Overwrite,
    Pass,
    Place,
    Refresh,
    Relocate,
    Reward,
    Search,
    Serpent,
    ShapeFields,
    Skip,
    Unlock,
    parse_move,
)
from services.shrine.engine.rules.setup import new_game
from services.shrine.engine.rules.steps import decisions, out_of_step
from services.shrine.engine.state import SEAT_NAMES, Options, Phase, State
from services.shrine.engine.view import View, view

__all__ = [
    "ENGINE",
    "GAME",
    "MOVE_TYPES",
    "RULES",
    "Accept",
    "Block",
    "Bonus",
    "Claim",
    "CompleteShape",
    "Debt",
    "Done",
    "Draw",
    "Keep",
    "Move",
    "Options",
    "Overwrite",
    "Pass",
    "Phase",
    "Place",
    "Refresh",
    "Relocate",
    "Reward",
    "Search",
    "Serpent",
    "ShapeFields",
    "Skip",
    "State",
    "Unlock",
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


def _seat_names(players: int) -> tuple[str, ...]:
    return SEAT_NAMES[:players]


GAME = GameInfo(
    name="shrine",
    title="Shrine: Duel of Light",
    min_players=2,
    max_players=2,
    options_type=Options,
    seat_names=_seat_names,
)


def to_act(state: State) -> tuple[int, ...]:
    """The seat with a decision pending: the player whose turn it is, until the end."""
    return () if state.result is not None else (state.current,)


def outcome(state: State) -> Outcome | None:
    return state.result


# Every move is public once made (README, "Hidden information and claims"): the
# kernel's default public_move. The kinds are listed one by one, so that an instance of
# their base class, which is no decision, is refused as malformed.
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
)
ENGINE = kernel.Kernel(RULES)
apply = ENGINE.apply
legal_moves = ENGINE.legal_moves
public_move = ENGINE.public_move
