"""Res Arcana Duo for the kit's kernel: the rule table (turn.py) and the game's hooks.

The kernel owns ``apply`` and ``legal_moves``: the seat check, malformed moves (each move
kind's ``problem``), a move the task now does not take (``turn.refusal``, naming the
rulebook's rule), the task's effect and then ``turn.advance``.
"""

from __future__ import annotations

from services.kit import kernel
from services.resarcana.engine import turn
from services.resarcana.engine.determinize import determinize
from services.resarcana.engine.moves import Move, parse_move
from services.resarcana.engine.setup import new_game
from services.resarcana.engine.view import view

RULES = kernel.Rules(
    game=turn.GAME,
    move_types=(Move,),
    new_game=new_game,
    view=view,
    outcome=turn.outcome,
    to_act=turn.to_act,
    parse_move=parse_move,
    determinize=determinize,
    decisions=turn.decisions,
    out_of_step=turn.refusal,
    advance=turn.advance,
    public_move=turn.public_move,
)
ENGINE = kernel.Kernel(RULES)
