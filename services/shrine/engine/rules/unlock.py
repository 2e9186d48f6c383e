"""Step 2, "Unlock a Treasure Power": not optional while a power is blocked; with the
Radiant Shapes module, drawing Shape cards may replace it (acquiring_shapes.py), and
with nothing blocked that draw may be declined (``skip``)."""

from __future__ import annotations

from services.kit.engine import Event
from services.kit.kernel import Decision
from services.shrine.engine import rulebook
from services.shrine.engine.content import PLAYER, POWER_KEYS
from services.shrine.engine.moves import Skip, Unlock
from services.shrine.engine.rules.acquiring_shapes import draw_moves
from services.shrine.engine.rules.board import say, unlock
from services.shrine.engine.state import State

_UNLOCK = tuple(Unlock(p) for p in range(len(POWER_KEYS)))


def unlock_moves(state: State, seat: int) -> list[Unlock]:
    powers = state.players[seat].powers
    return [move for p, move in enumerate(_UNLOCK) if powers[p]]


def explain_unlock(state: State, seat: int, move: Unlock) -> tuple[str, str]:
    return rulebook.UNLOCK, f"{PLAYER.powers[move.power].name} is not blocked"


def do_unlock(state: State, seat: int, move: Unlock) -> list[Event]:
    amount = unlock(state, seat, move.power)
    return [
        say(
            state,
            "unlock",
            f"unlocked {PLAYER.powers[move.power].name} ({amount} Treasure to the Treasury)",
            seat,
            power=POWER_KEYS[move.power],
        )
    ]


def skip_moves(state: State, seat: int) -> list[Skip]:
    """With nothing blocked, drawing Shape cards in step 2 is optional."""
    if not unlock_moves(state, seat) and draw_moves(state, seat):
        return [Skip()]
    return []


def explain_skip(state: State, seat: int, move: Skip) -> tuple[str, str]:
    return rulebook.UNLOCK, "a blocked Treasure Power must be unlocked (or Shape cards drawn)"


def skip(state: State, seat: int, move: Skip) -> list[Event]:
    return []


UNLOCK = Decision(rulebook.UNLOCK, unlock_moves, do_unlock, explain=explain_unlock)
SKIP = Decision(rulebook.UNLOCK, skip_moves, skip, explain=explain_skip)
