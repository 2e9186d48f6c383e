"""The main board: fields, dials, the pouch and the Treasury (the rulebook's "Placement
Rules" vocabulary), as small helpers the steps share."""

from __future__ import annotations

from services.kit.engine import Event
from services.shrine.engine import colours
from services.shrine.engine.content import BOARD, PLAYER
from services.shrine.engine.state import SEAT_NAMES, State


def fname(field: int) -> str:
    return BOARD.field_names[field]


def seen(state: State, field: int) -> int | None:
    """The colour a field shows ("Colors")."""
    return colours.seen(state.lenses[field])


def valid_field(state: State, field: int) -> bool:
    """Rulebook: "A field is considered valid if it has fewer than 2 Arcane Lenses on it and no
    Block token." """
    return len(state.lenses[field]) < 2 and state.blocked_by[field] < 0


def on_board(state: State, dial: int) -> bool:
    return dial not in state.track


def dial_has_valid_field(state: State, dial: int) -> bool:
    return any(valid_field(state, f) for f in BOARD.dials[dial].fields)


def draw_lens(state: State) -> int:
    """Draw one Lens from the pouch: every Lens in it equally likely."""
    pick = state.rng.randrange(sum(state.pouch))
    for colour in colours.BASIC:
        if pick < state.pouch[colour]:
            state.pouch[colour] -= 1
            return colour
        pick -= state.pouch[colour]
    raise AssertionError("the pouch count is wrong")  # pragma: no cover


def gain(state: State, seat: int, amount: int) -> None:
    """Treasure from the Treasury to a player."""
    state.players[seat].treasure += amount
    state.treasury -= amount


def pay_power(state: State, seat: int, power: int, price: int, activation: bool = True) -> None:
    """Activate a power: the Treasure goes onto its spaces and blocks it. ``activation``
    is False for a further payment of the same activation (Refreshing's second Treasure).
    """
    player = state.players[seat]
    player.treasure -= price
    player.powers[power] += price
    if activation:
        state.powers_used += 1


def unlock(state: State, seat: int, power: int) -> int:
    """Return every Treasure on a power to the Treasury; the power is unlocked."""
    player = state.players[seat]
    amount = player.powers[power]
    player.powers[power] = 0
    state.treasury += amount
    return amount


def serpents_left(state: State, seat: int) -> int:
    return len(PLAYER.serpent_costs) - state.players[seat].serpents_removed


def debts_left(state: State, seat: int) -> int:
    return len(PLAYER.debt_costs) - state.players[seat].debts


def passes_left(state: State, seat: int) -> int:
    return len(PLAYER.pass_costs) - state.players[seat].passes


def say(state: State, kind: str, text: str, seat: int | None = None, **data: object) -> Event:
    """A public event; its text starts with the seat's name when a seat did it."""
    who = f"{SEAT_NAMES[seat]} " if seat is not None else ""
    return Event(kind=kind, text=who + text, seat=seat, data=data)


def tell(seat: int, kind: str, text: str, **data: object) -> Event:
    """A private event: only ``seat`` sees it."""
    return Event(kind=kind, text=text, seat=seat, data=data, to=frozenset({seat}))
