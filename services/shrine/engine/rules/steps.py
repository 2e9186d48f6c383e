"""Which decisions each step of the turn offers, and where the turn goes after each.

For every step (:class:`~services.shrine.engine.state.Phase`) one row of the kit's
:class:`~services.kit.kernel.Decision` entries, keyed by move type, in the order their
moves are listed. Each entry's listing, check, refusal and effect live in the module of
its rule (placement.py, blocking.py, ...); this table adds only what comes next, which
depends on the step (a Debt before placing resumes step 3, after placing it stays). The
kit's kernel runs ``apply`` and ``legal_moves`` over it.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from dataclasses import replace

from services.kit.engine import Event
from services.kit.kernel import Decision
from services.shrine.engine import rulebook
from services.shrine.engine.moves import (
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
)
from services.shrine.engine.rules import (
    acquiring_shapes,
    blocking,
    completing_shapes,
    debt,
    passing,
    placement,
    refreshing,
    serpents,
    turn,
    unlock,
)
from services.shrine.engine.state import Phase, State

Next = Callable[[State], list[Event]]


def _then(decision: Decision, then: Next) -> Decision:
    return replace(decision, then=then)


def _to(phase: Phase) -> Next:
    def go(state: State) -> list[Event]:
        state.phase = phase
        return []

    return go


def _after_draw(state: State) -> list[Event]:
    if state.drawn:
        state.phase = Phase.KEEP
        return []
    return turn.enter_action(state)


def _after_refresh(state: State) -> list[Event]:
    if state.refreshed_from >= 0:
        state.phase = Phase.SEARCH
        return []
    return turn.enter_action(state)


def _after_at(state: State) -> list[Event]:
    pending = state.shape in state.players[state.current].hand  # the claim comes next
    state.phase = Phase.SHAPE_CLAIM if pending else Phase.REWARD
    return []


def _next_turn(state: State) -> list[Event]:
    return turn.start_turn(state, 1 - state.current)


TABLE: dict[Phase, dict[Hashable, Decision]] = {  # keyed by move type
    Phase.UNLOCK: {
        Unlock: _then(unlock.UNLOCK, turn.enter_action),
        Draw: _then(acquiring_shapes.DRAW, _after_draw),
        Skip: _then(unlock.SKIP, turn.enter_action),
    },
    Phase.KEEP: {
        Keep: _then(acquiring_shapes.KEEP, turn.enter_action),
    },
    Phase.ACTION: {
        Pass: _then(passing.PASS, turn.end_of_turn),
        Debt: _then(debt.DEBT, turn.enter_action),
        Serpent: _then(serpents.SERPENT, turn.enter_action),
        Refresh: _then(refreshing.REFRESH, _after_refresh),
        Place: _then(placement.PLACE, _to(Phase.AFTER)),
        Overwrite: _then(placement.OVERWRITE, _to(Phase.AFTER)),
        Relocate: _then(placement.RELOCATE, _to(Phase.AFTER)),
        Block: _then(blocking.BLOCK, turn.enter_action),
    },
    Phase.SEARCH: {
        Search: _then(refreshing.SEARCH, turn.enter_action),
        Accept: _then(refreshing.ACCEPT, turn.enter_action),
    },
    Phase.AFTER: {  # step 3 goes on in the same step until ``done``
        Debt: debt.DEBT,
        Serpent: serpents.SERPENT,
        Block: blocking.BLOCK,
        Done: turn.DONE,
    },
    Phase.SHAPE: {
        CompleteShape: _then(completing_shapes.SHAPE, _to(Phase.SHAPE_AT)),
        Skip: _then(completing_shapes.SKIP_SHAPE, _next_turn),
    },
    Phase.SHAPE_AT: {
        ShapeFields: _then(completing_shapes.AT, _after_at),
    },
    Phase.SHAPE_CLAIM: {
        Claim: _then(completing_shapes.CLAIM, _to(Phase.REWARD)),
    },
    Phase.REWARD: {
        Reward: _then(completing_shapes.REWARD, turn.after_shape_reward),
    },
    Phase.BONUS: {
        Bonus: _then(completing_shapes.BONUS, _next_turn),
        Skip: _then(completing_shapes.SKIP_BONUS, _next_turn),
    },
    Phase.OVER: {},
}

STEP_TEXT = {
    Phase.UNLOCK: "2. Unlock a Treasure Power",
    Phase.KEEP: "2. Keep one of the two Shape cards drawn",
    Phase.ACTION: "3. Place an Arcane Lens or Pass",
    Phase.SEARCH: "3. Refreshing the Offering: look further for 1 more Treasure?",
    Phase.AFTER: "3. More Treasure Powers, or done",
    Phase.SHAPE: "End of turn: complete a Shape card?",
    Phase.SHAPE_AT: "Completing a Shape card: on which fields",
    Phase.SHAPE_CLAIM: "Completing a Shape card: the Code colour of the ignored field",
    Phase.REWARD: "Completing a Shape card: choose the reward",
    Phase.BONUS: "Completing a Shape card: the bonus draw",
    Phase.OVER: "The game is over",
}


def decisions(state: State, seat: int) -> Mapping[Hashable, Decision]:
    """The decisions open now: the current step's row (only its seat is asked)."""
    return TABLE[state.phase]


_PLACING = (Place, Overwrite, Relocate, Refresh)


def out_of_step(state: State, seat: int, move: Move) -> tuple[str, str]:
    """The rule a move breaks when its kind is no decision of the current step."""
    kind, phase = type(move), state.phase
    if phase is Phase.ACTION and kind is Done:
        return rulebook.MANDATORY_PLACEMENT, "place an Arcane Lens (or relocate one), or pass"
    if phase is Phase.AFTER and kind in _PLACING:
        return rulebook.PLACE_OR_PASS, "this turn's Arcane Lens is already placed"
    if phase is Phase.AFTER and kind is Pass:
        return rulebook.PASS, "a Lens was placed this turn: it cannot be a pass"
    return rulebook.PLAYER_TURN, f"'{move.WORD}' is not a decision of step \"{STEP_TEXT[phase]}\""
