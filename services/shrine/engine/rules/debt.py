""" "Running Out of Treasure": a Debt token, 2 Treasure now and a cost at the end, at any
decision of step 3."""

from __future__ import annotations

from services.kit.engine import Event
from services.kit.kernel import Decision
from services.shrine.engine import rulebook
from services.shrine.engine.content import PLAYER
from services.shrine.engine.moves import Debt
from services.shrine.engine.rules.board import debts_left, gain, say
from services.shrine.engine.state import State


def debt_moves(state: State, seat: int) -> list[Debt]:
    return [Debt()] if debts_left(state, seat) > 0 else []


def explain_debt(state: State, seat: int, move: Debt) -> tuple[str, str]:
    return rulebook.RUNNING_OUT, "all three Debt tokens are taken"


def do_debt(state: State, seat: int, move: Debt) -> list[Event]:
    state.players[seat].debts += 1
    gain(state, seat, PLAYER.debt_gain)
    return [
        say(
            state,
            "debt",
            f"took a Debt token: +{PLAYER.debt_gain} Treasure now, "
            f"{PLAYER.debt_costs[state.players[seat].debts - 1]} at the end",
            seat,
        )
    ]


DEBT = Decision(rulebook.RUNNING_OUT, debt_moves, do_debt, explain=explain_debt)
