"""Which decisions each step of the turn offers, and what follows each one.

For every (phase, kind) there is one entry: how to list the moves, how to check one
cheaply (by default: membership in that list), which rule a refused one breaks, what it
does, and where the turn goes next. ``legal_moves`` and ``apply`` in the package are thin
loops over this table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from services.kit.engine import Event
from services.shrine.engine import rulebook
from services.shrine.engine.moves import WORDS, Kind, Move
from services.shrine.engine.rules import placement, powers, shapes, turn
from services.shrine.engine.state import Phase, State

Lister = Callable[[State, int], list[Move]]
Checker = Callable[[State, int, Move], bool]
Explainer = Callable[[State, int, Move], tuple[str, str]]
Doer = Callable[[State, int, Move], list[Event]]
Next = Callable[[State], list[Event]]


@dataclass(frozen=True)
class Entry:
    moves: Lister
    explain: Explainer
    do: Doer
    then: Next
    allows: Checker | None = None

    def legal(self, state: State, seat: int, move: Move) -> bool:
        if self.allows is not None:
            return self.allows(state, seat, move)
        return move in self.moves(state, seat)


def _stay(state: State) -> list[Event]:
    return []


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


def _never(state: State, seat: int, move: Move) -> tuple[str, str]:  # pragma: no cover
    return rulebook.PLAYER_TURN, "not possible now"


def _done_moves(state: State, seat: int) -> list[Move]:
    return [Move(Kind.DONE)]


def _skip_moves(state: State, seat: int) -> list[Move]:
    return [Move(Kind.SKIP)]


def _unlock_skip_explain(state: State, seat: int, move: Move) -> tuple[str, str]:
    return rulebook.UNLOCK, "a blocked Treasure Power must be unlocked (or Shape cards drawn)"


_PLACE = Entry(
    placement.place_moves,
    placement.explain_place,
    placement.do_place,
    _to(Phase.AFTER),
    placement.allows_place,
)
_OVERWRITE = Entry(
    placement.overwrite_moves,
    placement.explain_place,
    placement.do_place,
    _to(Phase.AFTER),
    placement.allows_place,
)
_RELOCATE = Entry(
    placement.relocate_moves,
    placement.explain_relocate,
    placement.do_relocate,
    _to(Phase.AFTER),
    placement.allows_relocate,
)


def _block(then: Next) -> Entry:
    return Entry(
        powers.block_moves, powers.explain_block, powers.do_block, then, powers.allows_block
    )


def _debt(then: Next) -> Entry:
    return Entry(powers.debt_moves, powers.explain_debt, powers.do_debt, then)


def _serpent(then: Next) -> Entry:
    return Entry(powers.serpent_moves, powers.explain_serpent, powers.do_serpent, then)


TABLE: dict[Phase, dict[Kind, Entry]] = {
    Phase.UNLOCK: {
        Kind.UNLOCK: Entry(
            powers.unlock_moves, powers.explain_unlock, powers.do_unlock, turn.enter_action
        ),
        Kind.DRAW: Entry(shapes.draw_moves, shapes.explain_draw, shapes.do_draw, _after_draw),
        Kind.SKIP: Entry(
            turn.unlock_skip_moves, _unlock_skip_explain, lambda s, p, m: [], turn.enter_action
        ),
    },
    Phase.KEEP: {
        Kind.KEEP: Entry(shapes.keep_moves, _never, shapes.do_keep, turn.enter_action),
    },
    Phase.ACTION: {
        Kind.PASS: Entry(powers.pass_moves, powers.explain_pass, powers.do_pass, turn.end_of_turn),
        Kind.DEBT: _debt(turn.enter_action),
        Kind.SERPENT: _serpent(turn.enter_action),
        Kind.REFRESH: Entry(
            powers.refresh_moves, powers.explain_refresh, powers.do_refresh, _after_refresh
        ),
        Kind.PLACE: _PLACE,
        Kind.OVERWRITE: _OVERWRITE,
        Kind.RELOCATE: _RELOCATE,
        Kind.BLOCK: _block(turn.enter_action),
    },
    Phase.SEARCH: {
        Kind.SEARCH: Entry(
            powers.search_moves, powers.explain_search, powers.do_search, turn.enter_action
        ),
        Kind.ACCEPT: Entry(powers.accept_moves, _never, powers.do_accept, turn.enter_action),
    },
    Phase.AFTER: {
        Kind.DEBT: _debt(_stay),
        Kind.SERPENT: _serpent(_stay),
        Kind.BLOCK: _block(_stay),
        Kind.DONE: Entry(_done_moves, _never, lambda s, p, m: [], turn.end_step_three),
    },
    Phase.SHAPE: {
        Kind.SHAPE: Entry(
            shapes.shape_moves, shapes.explain_shape, shapes.do_shape, _to(Phase.SHAPE_AT)
        ),
        Kind.SKIP: Entry(_skip_moves, _never, lambda s, p, m: [], _next_turn),
    },
    Phase.SHAPE_AT: {
        Kind.AT: Entry(shapes.at_moves, shapes.explain_at, shapes.do_at, _after_at),
    },
    Phase.SHAPE_CLAIM: {
        Kind.CLAIM: Entry(
            shapes.claim_moves, shapes.explain_claim, shapes.do_claim, _to(Phase.REWARD)
        ),
    },
    Phase.REWARD: {
        Kind.REWARD: Entry(
            shapes.reward_moves, shapes.explain_reward, shapes.do_reward, turn.after_shape_reward
        ),
    },
    Phase.BONUS: {
        Kind.BONUS: Entry(shapes.bonus_moves, shapes.explain_bonus, shapes.do_bonus, _next_turn),
        Kind.SKIP: Entry(_skip_moves, _never, lambda s, p, m: [], _next_turn),
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


def out_of_step(state: State, move: Move) -> tuple[str, str]:
    """The rule a move breaks when its kind is no decision of the current step."""
    kind, phase = move.kind, state.phase
    if phase is Phase.ACTION and kind is Kind.DONE:
        return rulebook.MANDATORY_PLACEMENT, "place an Arcane Lens (or relocate one), or pass"
    if phase is Phase.AFTER and kind in (Kind.PLACE, Kind.OVERWRITE, Kind.RELOCATE, Kind.REFRESH):
        return rulebook.PLACE_OR_PASS, "this turn's Arcane Lens is already placed"
    if phase is Phase.AFTER and kind is Kind.PASS:
        return rulebook.PASS, "a Lens was placed this turn: it cannot be a pass"
    return rulebook.PLAYER_TURN, f"'{WORDS[kind]}' is not a decision of step \"{STEP_TEXT[phase]}\""
