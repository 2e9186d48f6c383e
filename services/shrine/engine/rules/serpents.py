""" "Feathered Serpents": at any decision of step 3, remove one to unlock a blocked
Treasure Power (Radiant Shapes gives them a second use: completing_shapes.py)."""

from __future__ import annotations

from services.kit.engine import Event
from services.kit.kernel import Decision
from services.shrine.engine import rulebook
from services.shrine.engine.content import PLAYER, POWER_KEYS
from services.shrine.engine.moves import Serpent
from services.shrine.engine.rules.board import say, serpents_left, unlock
from services.shrine.engine.state import State

_SERPENT = tuple(Serpent(p) for p in range(len(POWER_KEYS)))


def serpent_moves(state: State, seat: int) -> list[Serpent]:
    if serpents_left(state, seat) <= 0:
        return []
    powers = state.players[seat].powers
    return [move for p, move in enumerate(_SERPENT) if powers[p]]


def explain_serpent(state: State, seat: int, move: Serpent) -> tuple[str, str]:
    if serpents_left(state, seat) <= 0:
        return rulebook.FEATHERED_SERPENTS, "both Feathered Serpents are gone"
    return rulebook.FEATHERED_SERPENTS, f"{PLAYER.powers[move.power].name} is not blocked"


def remove_serpent(state: State, seat: int) -> None:
    state.players[seat].serpents_removed += 1


def do_serpent(state: State, seat: int, move: Serpent) -> list[Event]:
    remove_serpent(state, seat)
    amount = unlock(state, seat, move.power)
    return [
        say(
            state,
            "serpent",
            f"removed a Feathered Serpent and unlocked {PLAYER.powers[move.power].name} "
            f"({amount} Treasure to the Treasury)",
            seat,
            power=POWER_KEYS[move.power],
        )
    ]


SERPENT = Decision(rulebook.FEATHERED_SERPENTS, serpent_moves, do_serpent, explain=explain_serpent)
