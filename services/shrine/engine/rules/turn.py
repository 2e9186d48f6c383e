"""The turn ("Player Turn"): the order of its five steps, the end-of-turn checks, the end
of the game, and the immediate loss of a player who can neither place nor pass."""

from __future__ import annotations

from services.kit.engine import Event
from services.kit.kernel import Decision
from services.shrine.engine import colours, rulebook
from services.shrine.engine.content import BOARD
from services.shrine.engine.moves import Done
from services.shrine.engine.rules import acquiring_shapes, completing_shapes, placement, unlock
from services.shrine.engine.rules.board import (
    dial_has_valid_field,
    draw_lens,
    gain,
    on_board,
    passes_left,
    say,
)
from services.shrine.engine.scoring import final_outcome, loss_outcome
from services.shrine.engine.state import SEAT_NAMES, Phase, State


def start_turn(state: State, seat: int) -> list[Event]:
    state.current = seat
    state.turn += 1
    state.powers_used = 0
    state.placed = False
    state.dial_used = -1
    state.shape = -1
    state.shape_mask = 0
    state.shape_ignore = -1
    events = [say(state, "turn", f"begins turn {state.turn}", seat, turn=state.turn)]
    # 1. Refill the Offering: only an empty spot is filled (after a pass or a relocation
    # the Lens is still there).
    if state.offering < 0:
        state.offering = draw_lens(state)
        events.append(
            say(
                state,
                "refill",
                f"refilled the Offering with a {colours.NAMES[state.offering]} Lens",
                seat,
                lens=colours.NAMES[state.offering],
            )
        )
    # 2. Unlock a Treasure Power (or, with the module, draw Shape cards instead).
    if unlock.unlock_moves(state, seat) or acquiring_shapes.draw_moves(state, seat):
        state.phase = Phase.UNLOCK
        return events
    return events + enter_action(state)


def enter_action(state: State) -> list[Event]:
    """Step 3 begins (or resumes after a power): place, relocate or pass."""
    state.phase = Phase.ACTION
    seat = state.current
    if passes_left(state, seat) > 0 and state.powers_used == 0:
        return []
    if placement.can_still_place(state, seat):
        return []
    state.loser = seat
    state.phase = Phase.OVER
    state.result = loss_outcome(state, seat)
    return [
        say(
            state,
            "lost",
            "cannot make a valid placement, even by taking on Debt, and cannot pass: "
            f"{SEAT_NAMES[1 - seat]} wins",
            seat,
        )
    ]


def done_moves(state: State, seat: int) -> list[Done]:
    return [Done()]


def done(state: State, seat: int, move: Done) -> list[Event]:
    return []


def end_step_three(state: State) -> list[Event]:
    """Steps 4 and 5 after a placement or a relocation."""
    seat = state.current
    events: list[Event] = []
    dial = state.dial_used
    # 4. Deactivate Dial ("If the dial is already inactive, do nothing.")
    if dial >= 0 and state.active[dial]:
        state.active[dial] = False
        events.append(
            say(state, "deactivate", f"deactivated the {BOARD.dials[dial].corner} dial", seat)
        )
    # 5. End of Turn Checks
    standing = [d for d in range(len(BOARD.dials)) if on_board(state, d)]
    if not any(state.active[d] for d in standing):
        for d in standing:
            if d != dial:
                state.active[d] = True
        events.append(
            say(state, "reactivate", "all dials were inactive: the others are active again")
        )
    if dial >= 0 and not dial_has_valid_field(state, dial):
        state.track.append(dial)
        space = len(state.track) - 1
        amount = BOARD.track[space]
        gain(state, seat, amount)
        events.append(
            say(
                state,
                "dial_removed",
                f"moved the {BOARD.dials[dial].corner} dial to the game progress track "
                f"(space {space + 1}): +{amount} Treasure",
                seat,
                dial=BOARD.dials[dial].corner,
                treasure=amount,
            )
        )
        if len(state.track) == len(BOARD.track):
            return events + end_game(state)
    return events + end_of_turn(state)


def end_game(state: State) -> list[Event]:
    """Rulebook: "The game ends immediately once the third dial has been relocated to the game
    progress track." """
    state.phase = Phase.OVER
    state.result = final_outcome(state)
    winners = " and ".join(SEAT_NAMES[w] for w in state.result.winners) or "nobody"
    return [
        say(state, "game_end", f"the third dial has left the board: the game ends; {winners} wins")
    ] + [say(state, "score", line) for line in state.result.details]


def end_of_turn(state: State) -> list[Event]:
    """At the end of the turn a Shape card may be completed (Radiant Shapes), then the
    other player's turn begins."""
    seat = state.current
    if state.options.radiant_shapes and completing_shapes.shape_moves(state, seat):
        state.phase = Phase.SHAPE
        return []
    return start_turn(state, 1 - seat)


def after_shape_reward(state: State) -> list[Event]:
    if completing_shapes.bonus_moves(state, state.current):
        state.phase = Phase.BONUS
        return []
    return start_turn(state, 1 - state.current)


# After placing, ``done`` is always open: nothing to explain.
DONE = Decision(rulebook.PLACE_OR_PASS, done_moves, done, then=end_step_three)
