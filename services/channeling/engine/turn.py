"""A turn as the kit's kernel plays it: which decision each step asks, and the hooks.

Only steps 1-3 and the replacement order in step 6 are decisions; each is the one entry
of its step in :data:`TABLE` (its module under engine/steps/ holds its listing, check,
refusal, effect and what follows). Placing cubes (4), removing them (5), acquiring (6)
and the endgame check (7) follow from those without a decision.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping

from services.kit import kernel
from services.kit.engine import GameInfo

from .determinize import determinize
from .moves import MOVE_TYPES, ChoosePath, FillGap, Move, MoveDruid, PlayGlyph, parse_move, problem
from .state import DRUID, FILL, GLYPH, PATH, SEAT_NAMES, ChannelingOptions, State, new_game
from .steps import acquire, leyline_path, move_druid, play_glyph
from .steps.endgame import outcome
from .view import view

GAME = GameInfo(
    name="channeling",
    title="The Channeling",
    min_players=2,
    max_players=2,
    options_type=ChannelingOptions,
    seat_names=lambda players: SEAT_NAMES,
)

# Per step, the one decision it asks, by the kind of move that makes it.
TABLE: dict[str, dict[Hashable, kernel.Decision]] = {
    GLYPH: {PlayGlyph: play_glyph.PLAY_A_GLYPH},
    DRUID: {MoveDruid: move_druid.MOVE_A_DRUID},
    PATH: {ChoosePath: leyline_path.CHOOSE_A_PATH},
    FILL: {FillGap: acquire.FILL_A_GAP},
}


def to_act(state: State) -> tuple[int, ...]:
    return () if state.result is not None else (state.current,)


def decisions(state: State, seat: int) -> Mapping[Hashable, kernel.Decision]:
    return TABLE[state.step]


def out_of_step(state: State, seat: int, move: Move) -> tuple[str, str]:
    """A move of another step than the one open now breaks the open step's rule."""
    step = state.step
    (decision,) = TABLE[step].values()
    return decision.rule, f"this step is {step.replace('_', ' ')}, not {type(move).__name__}"


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
    problem=problem,
)
ENGINE = kernel.Kernel(RULES)
