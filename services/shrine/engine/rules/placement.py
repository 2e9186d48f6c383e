"""Step 3A, "Place an Arcane Lens": the Placement Rules and the Treasure Powers that
bend them (Dial Rotation, Using an Inactive Dial, Overwriting), and Relocating: the
decisions ``place``, ``overwrite`` and ``relocate``, each with its listing, check,
refusal and effect.

A placement is one decision: the field (and, when Overwriting, the colour of the Lens to
remove). The dial is the one dial whose arrow can reach that field; the rotation and the
powers the placement needs follow from the board and are paid with it. Every option is
listed with its price, so a player sees in the legal moves what each placement costs.
"""

from __future__ import annotations

from collections.abc import Iterator

from services.kit.engine import Event
from services.kit.kernel import Decision
from services.shrine.engine import colours, rulebook
from services.shrine.engine.content import (
    BOARD,
    FIELDS,
    INACTIVE,
    OVERWRITING,
    PLAYER,
    RELOCATING,
    ROTATION,
)
from services.shrine.engine.moves import Overwrite, Place, Relocate
from services.shrine.engine.rules.board import (
    debts_left,
    fname,
    on_board,
    pay_power,
    say,
    seen,
    serpents_left,
    valid_field,
)
from services.shrine.engine.state import State

Needs = tuple[tuple[int, int], ...]  # (power, price) pairs a placement activates


def _price(power: int, level: int) -> int:
    return PLAYER.powers[power].prices[level]


_ROTATION = (ROTATION, _price(ROTATION, 0))
_INACTIVE = ((INACTIVE, _price(INACTIVE, 0)), (INACTIVE, _price(INACTIVE, 1)))
_OVERWRITING = ((OVERWRITING, _price(OVERWRITING, 0)), (OVERWRITING, _price(OVERWRITING, 1)))
_PLACE = tuple(Place(f) for f in range(FIELDS))
_OVERWRITE = tuple(tuple(Overwrite(f, c) for c in colours.BASIC) for f in range(FIELDS))


def needs_for(state: State, overwrite: bool, field: int) -> Needs | None:
    """The powers a placement on ``field`` needs, or None when no power makes it legal.

    Free Rotation reaches the designated field and its neighbour in the sweep; Dial
    Rotation one step more. An inactive dial needs Using an Inactive Dial, priced by
    whether the Lens lands on an empty field or stacks. Overwriting removes one Lens
    first: a single Lens (level 1) or one of a stack (level 2). Listed in power order.
    """
    if state.blocked_by[field] >= 0:
        return None
    dial = BOARD.dial_of[field]
    if dial in state.track:
        return None
    count = len(state.lenses[field])
    if not overwrite:
        if count >= 2:
            return None
        lands_on = count
    elif count == 0:
        return None
    else:
        lands_on = count - 1
    needs = []
    if abs(BOARD.sweep_index[field] - state.facing[dial]) == 2:
        needs.append(_ROTATION)
    if not state.active[dial]:
        needs.append(_INACTIVE[0 if lands_on == 0 else 1])
    if overwrite:
        needs.append(_OVERWRITING[count - 1])
    return tuple(needs)


def _affordable(state: State, seat: int, needs: Needs) -> bool:
    powers = state.players[seat].powers
    cost = 0
    for power, price in needs:
        if powers[power]:
            return False
        cost += price
    return cost <= state.players[seat].treasure


def _options(
    state: State, place: bool = True, overwrite: bool = True
) -> Iterator[tuple[Place | Overwrite, Needs]]:
    """Every placement the board allows with some powers, whatever they cost."""
    for field in range(FIELDS):
        if place:
            needs = needs_for(state, False, field)
            if needs is not None:
                yield _PLACE[field], needs
        if overwrite and state.lenses[field]:
            needs = needs_for(state, True, field)
            if needs is not None:
                for colour in sorted(set(state.lenses[field])):
                    yield _OVERWRITE[field][colour], needs


def place_moves(state: State, seat: int) -> list[Place | Overwrite]:
    return [m for m, needs in _options(state, overwrite=False) if _affordable(state, seat, needs)]


def overwrite_moves(state: State, seat: int) -> list[Place | Overwrite]:
    return [m for m, needs in _options(state, place=False) if _affordable(state, seat, needs)]


def allows_place(state: State, seat: int, move: Place) -> bool:
    needs = needs_for(state, False, move.field)
    return needs is not None and _affordable(state, seat, needs)


def allows_overwrite(state: State, seat: int, move: Overwrite) -> bool:
    if move.colour not in state.lenses[move.field]:
        return False
    needs = needs_for(state, True, move.field)
    return needs is not None and _affordable(state, seat, needs)


def _sources(state: State) -> list[tuple[int, int]]:
    return [
        (field, colour)
        for field in range(FIELDS)
        if state.blocked_by[field] < 0
        for colour in sorted(set(state.lenses[field]))
    ]


def _relocation_possible(state: State) -> bool:
    valid = [f for f in range(FIELDS) if valid_field(state, f)]
    return any(any(to != f for to in valid) for f, _ in _sources(state))


def relocate_moves(state: State, seat: int) -> list[Relocate]:
    player = state.players[seat]
    price = _price(RELOCATING, 0)
    if player.blocked(RELOCATING) or player.treasure < price:
        return []
    valid = [f for f in range(FIELDS) if valid_field(state, f)]
    return [
        Relocate(field, colour, to)
        for field, colour in _sources(state)
        for to in valid
        if to != field
    ]


def allows_relocate(state: State, seat: int, move: Relocate) -> bool:
    player = state.players[seat]
    return (
        not player.blocked(RELOCATING)
        and player.treasure >= _price(RELOCATING, 0)
        and state.blocked_by[move.origin] < 0
        and move.colour in state.lenses[move.origin]
        and move.destination != move.origin
        and valid_field(state, move.destination)
    )


def can_still_place(state: State, seat: int) -> bool:
    """Whether some placement or relocation can still be made this turn, counting every
    Debt token left and every Feathered Serpent left to unlock the powers it needs
    ("Losing the Game": unable to make a valid placement even by taking on Debt)."""
    player = state.players[seat]
    budget = player.treasure + PLAYER.debt_gain * debts_left(state, seat)
    serpents = serpents_left(state, seat)

    def reachable(needs: Needs) -> bool:
        locked = sum(1 for power, _ in needs if player.blocked(power))
        return locked <= serpents and sum(price for _, price in needs) <= budget

    if any(reachable(needs) for _, needs in _options(state)):
        return True
    return reachable(((RELOCATING, _price(RELOCATING, 0)),)) and _relocation_possible(state)


def explain_place(state: State, seat: int, move: Place | Overwrite) -> tuple[str, str]:
    """The rule a refused placement breaks (only called once it is known to be refused)."""
    field = move.field
    name = fname(field)
    if state.offering < 0:
        return rulebook.PLACE_OR_PASS, "the Offering is empty"
    if state.blocked_by[field] >= 0:
        return rulebook.VALID_FIELD, f"{name} has a Block token"
    dial = BOARD.dial_of[field]
    if not on_board(state, dial):
        return rulebook.DESIGNATED_FIELD, f"the dial that reaches {name} has left the board"
    count = len(state.lenses[field])
    overwrite = isinstance(move, Overwrite)
    if not overwrite and count >= 2:
        return rulebook.VALID_FIELD, f"{name} already holds two Lenses"
    if isinstance(move, Overwrite) and move.colour not in state.lenses[field]:
        return rulebook.OVERWRITING, f"{name} holds no {colours.NAMES[move.colour]} Lens"
    needs = needs_for(state, overwrite, field) or ()
    player = state.players[seat]
    rules = {
        ROTATION: (rulebook.FREE_ROTATION, f"{name} is two steps from the dial's arrow"),
        INACTIVE: (rulebook.ACTIVE_DIAL, f"the dial that reaches {name} is inactive"),
        OVERWRITING: (rulebook.OVERWRITING, "Overwriting is blocked"),
    }
    for power, _ in sorted(needs, key=lambda need: (need[0] != INACTIVE, need[0])):
        if player.blocked(power):
            rule, why = rules[power]
            return rule, f"{why} and {PLAYER.powers[power].name} is blocked"
    cost = sum(price for _, price in needs)
    return (
        rulebook.TREASURE_POWERS,
        f"that placement costs {cost} Treasure; you have {player.treasure}",
    )


def explain_relocate(state: State, seat: int, move: Relocate) -> tuple[str, str]:
    player = state.players[seat]
    if player.blocked(RELOCATING):
        return rulebook.TREASURE_POWERS, "Relocating is blocked"
    if player.treasure < _price(RELOCATING, 0):
        return rulebook.TREASURE_POWERS, "Relocating costs 2 Treasure"
    if state.blocked_by[move.origin] >= 0:
        return rulebook.RELOCATING, f"{fname(move.origin)} has a Block token"
    if move.colour not in state.lenses[move.origin]:
        return (
            rulebook.RELOCATING,
            f"{fname(move.origin)} holds no {colours.NAMES[move.colour]} Lens",
        )
    if move.destination == move.origin:
        return rulebook.RELOCATING, "relocate to another field"
    return rulebook.VALID_FIELD, f"{fname(move.destination)} is not a valid field"


def do_place(state: State, seat: int, move: Place | Overwrite) -> list[Event]:
    field = move.field
    overwrite = isinstance(move, Overwrite)
    needs = needs_for(state, overwrite, field) or ()
    for power, price in needs:
        pay_power(state, seat, power, price)
    paid = ", ".join(f"{PLAYER.powers[p].name} ({price})" for p, price in needs)
    stack = state.lenses[field]
    removed = taken = ""
    if isinstance(move, Overwrite):
        stack.remove(move.colour)
        state.pouch[move.colour] += 1
        taken = colours.NAMES[move.colour]
        removed = f", removing a {taken} Lens to the pouch"
    lens = state.offering
    stack.append(lens)
    state.offering = -1
    dial = BOARD.dial_of[field]
    state.facing[dial] = BOARD.sweep_index[field]
    state.dial_used = dial
    state.placed = True
    corner = BOARD.dials[dial].corner
    text = (
        f"placed a {colours.NAMES[lens]} Lens on {fname(field)} with the {corner} dial{removed}: "
        f"it shows {colours.name(seen(state, field))}" + (f" (paid {paid})" if paid else "")
    )
    return [
        say(
            state,
            "place",
            text,
            seat,
            field=fname(field),
            lens=colours.NAMES[lens],
            dial=corner,
            removed=taken,
            powers=[PLAYER.powers[p].key for p, _ in needs],
        )
    ]


def do_relocate(state: State, seat: int, move: Relocate) -> list[Event]:
    pay_power(state, seat, RELOCATING, _price(RELOCATING, 0))
    state.lenses[move.origin].remove(move.colour)
    state.lenses[move.destination].append(move.colour)
    state.placed = True
    text = (
        f"relocated a {colours.NAMES[move.colour]} Lens from {fname(move.origin)} to "
        f"{fname(move.destination)} (paid Relocating): {fname(move.destination)} shows "
        f"{colours.name(seen(state, move.destination))}"
    )
    return [
        say(
            state,
            "relocate",
            text,
            seat,
            source=fname(move.origin),
            lens=colours.NAMES[move.colour],
            field=fname(move.destination),
        )
    ]


# Where the turn goes after each of these is the table's (steps.py).
PLACE = Decision(
    rulebook.PLACE_LENS, place_moves, do_place, allows=allows_place, explain=explain_place
)
OVERWRITE = Decision(
    rulebook.OVERWRITING,
    overwrite_moves,
    do_place,
    allows=allows_overwrite,
    explain=explain_place,
)
RELOCATE = Decision(
    rulebook.RELOCATING,
    relocate_moves,
    do_relocate,
    allows=allows_relocate,
    explain=explain_relocate,
)
