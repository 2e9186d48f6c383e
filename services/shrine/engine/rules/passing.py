"""Step 3B, "Pass": instead of placing, twice a game, never after a Treasure Power."""

from __future__ import annotations

from services.kit.engine import Event
from services.kit.kernel import Decision
from services.shrine.engine import rulebook
from services.shrine.engine.moves import Pass
from services.shrine.engine.rules.board import passes_left, say
from services.shrine.engine.state import State


def pass_moves(state: State, seat: int) -> list[Pass]:
    if passes_left(state, seat) > 0 and state.powers_used == 0:
        return [Pass()]
    return []


def explain_pass(state: State, seat: int, move: Pass) -> tuple[str, str]:
    if passes_left(state, seat) <= 0:
        return rulebook.PASS, "you can pass a total of two times in the game"
    return rulebook.PASS, "a turn with a Treasure Power used cannot be a pass"


def do_pass(state: State, seat: int, move: Pass) -> list[Event]:
    state.players[seat].passes += 1
    return [say(state, "pass", f"passed ({state.players[seat].passes} of 2)", seat)]


PASS = Decision(rulebook.PASS, pass_moves, do_pass, explain=explain_pass)
