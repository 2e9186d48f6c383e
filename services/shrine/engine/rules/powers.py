"""Treasure Powers used outside a placement (Refreshing the Offering; Treasure
Acquisition and Field Blocking), the Feathered Serpents, Debt and Passing.

Blocking is the player's *claim* that the field matches their Code card (and, with
``target``, that it is a target there): the Treasure is paid now on the claim alone and
checked at the end (scoring.py). A Block may also claim nothing (``noclaim``): the field
is closed to play, no Treasure is gained and nothing is checked at the end. Nothing here
reads a Code card, so the moves a seat is offered never hint at either Code card.
"""

from __future__ import annotations

from services.kit.engine import Event
from services.shrine.engine import colours, rulebook
from services.shrine.engine.content import BLOCKING, BOARD, PLAYER, POWER_KEYS, REFRESHING
from services.shrine.engine.moves import Kind, Move
from services.shrine.engine.rules.board import (
    debts_left,
    draw_lens,
    fname,
    gain,
    passes_left,
    pay_power,
    say,
    serpents_left,
    unlock,
)
from services.shrine.engine.scoring import field_value
from services.shrine.engine.state import State

_SERPENT = tuple(Move(Kind.SERPENT, power=p) for p in range(len(POWER_KEYS)))
_UNLOCK = tuple(Move(Kind.UNLOCK, power=p) for p in range(len(POWER_KEYS)))

# -- 3B) Pass ---------------------------------------------------------------------------


def pass_moves(state: State, seat: int) -> list[Move]:
    if passes_left(state, seat) > 0 and state.powers_used == 0:
        return [Move(Kind.PASS)]
    return []


def explain_pass(state: State, seat: int, move: Move) -> tuple[str, str]:
    if passes_left(state, seat) <= 0:
        return rulebook.PASS, "you can pass a total of two times in the game"
    return rulebook.PASS, "a turn with a Treasure Power used cannot be a pass"


def do_pass(state: State, seat: int, move: Move) -> list[Event]:
    state.players[seat].passes += 1
    return [say(state, "pass", f"passed ({state.players[seat].passes} of 2)", seat)]


# -- Running Out of Treasure --------------------------------------------------------------


def debt_moves(state: State, seat: int) -> list[Move]:
    return [Move(Kind.DEBT)] if debts_left(state, seat) > 0 else []


def explain_debt(state: State, seat: int, move: Move) -> tuple[str, str]:
    return rulebook.RUNNING_OUT, "all three Debt tokens are taken"


def do_debt(state: State, seat: int, move: Move) -> list[Event]:
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


# -- Feathered Serpents ------------------------------------------------------------------


def serpent_moves(state: State, seat: int) -> list[Move]:
    if serpents_left(state, seat) <= 0:
        return []
    powers = state.players[seat].powers
    return [move for p, move in enumerate(_SERPENT) if powers[p]]


def explain_serpent(state: State, seat: int, move: Move) -> tuple[str, str]:
    if serpents_left(state, seat) <= 0:
        return rulebook.FEATHERED_SERPENTS, "both Feathered Serpents are gone"
    return rulebook.FEATHERED_SERPENTS, f"{PLAYER.powers[move.power].name} is not blocked"


def remove_serpent(state: State, seat: int) -> None:
    state.players[seat].serpents_removed += 1


def do_serpent(state: State, seat: int, move: Move) -> list[Event]:
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


# -- 2. Unlock a Treasure Power -----------------------------------------------------------


def unlock_moves(state: State, seat: int) -> list[Move]:
    powers = state.players[seat].powers
    return [move for p, move in enumerate(_UNLOCK) if powers[p]]


def explain_unlock(state: State, seat: int, move: Move) -> tuple[str, str]:
    return rulebook.UNLOCK, f"{PLAYER.powers[move.power].name} is not blocked"


def do_unlock(state: State, seat: int, move: Move) -> list[Event]:
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


# -- Refreshing the Offering ----------------------------------------------------------------


def _price(level: int) -> int:
    return PLAYER.powers[REFRESHING].prices[level]


def refresh_moves(state: State, seat: int) -> list[Move]:
    player = state.players[seat]
    if (
        state.offering < 0
        or player.blocked(REFRESHING)
        or player.treasure < _price(0)
        or sum(state.pouch) == state.pouch[state.offering]
    ):
        return []
    return [Move(Kind.REFRESH)]


def explain_refresh(state: State, seat: int, move: Move) -> tuple[str, str]:
    player = state.players[seat]
    if player.blocked(REFRESHING):
        return rulebook.TREASURE_POWERS, "Refreshing the Offering is blocked"
    if player.treasure < _price(0):
        return rulebook.TREASURE_POWERS, "Refreshing the Offering costs 1 Treasure"
    return rulebook.REFRESHING, "the pouch holds no Lens of another colour"


def _third(state: State) -> int:
    return next(c for c in colours.BASIC if c not in (state.refreshed_from, state.offering))


def do_refresh(state: State, seat: int, move: Move) -> list[Event]:
    """Draw until a Lens of another colour comes; the old Lens and the draws of its colour
    are set aside until the power is resolved."""
    pay_power(state, seat, REFRESHING, _price(0))
    old = state.offering
    state.refreshed_from = old
    state.set_aside[old] += 1
    drawn = []
    while True:
        lens = draw_lens(state)
        drawn.append(colours.NAMES[lens])
        if lens != old:
            break
        state.set_aside[lens] += 1
    state.offering = lens
    text = (
        f"refreshed the Offering (paid 1): drew {', '.join(drawn)}; the Offering now holds "
        f"a {colours.NAMES[lens]} Lens"
    )
    events = [say(state, "refresh", text, seat, drawn=drawn, offering=colours.NAMES[lens])]
    if not search_moves(state, seat):
        events += finish_refresh(state)
    return events


def search_moves(state: State, seat: int) -> list[Move]:
    player = state.players[seat]
    if player.treasure >= _price(1) and state.pouch[_third(state)] > 0:
        return [Move(Kind.SEARCH)]
    return []


def explain_search(state: State, seat: int, move: Move) -> tuple[str, str]:
    if state.players[seat].treasure < _price(1):
        return rulebook.TREASURE_POWERS, "the additional search costs 1 Treasure"
    return rulebook.REFRESHING, f"the pouch holds no {colours.NAMES[_third(state)]} Lens"


def do_search(state: State, seat: int, move: Move) -> list[Event]:
    """Rulebook: "Look specifically for the desired color": the one colour not yet revealed."""
    pay_power(state, seat, REFRESHING, _price(1), activation=False)
    wanted = _third(state)
    state.set_aside[state.offering] += 1
    state.pouch[wanted] -= 1
    state.offering = wanted
    events = [
        say(
            state,
            "search",
            f"paid 1 more and took a {colours.NAMES[wanted]} Lens into the Offering",
            seat,
            offering=colours.NAMES[wanted],
        )
    ]
    return events + finish_refresh(state)


def finish_refresh(state: State) -> list[Event]:
    """Rulebook: "Finally, return all set aside, unused Arcane Lenses to the draw pouch." """
    returned = sum(state.set_aside)
    for colour in colours.BASIC:
        state.pouch[colour] += state.set_aside[colour]
        state.set_aside[colour] = 0
    state.refreshed_from = -1
    return [say(state, "refresh_done", f"{returned} set-aside Lens(es) went back to the pouch")]


def accept_moves(state: State, seat: int) -> list[Move]:
    return [Move(Kind.ACCEPT)]


def do_accept(state: State, seat: int, move: Move) -> list[Event]:
    return finish_refresh(state)


# -- Treasure Acquisition and Field Blocking -------------------------------------------------


def block_price(field: int) -> int:
    return PLAYER.powers[BLOCKING].prices[1 if BOARD.central[field] else 0]


def _can_block(state: State, seat: int, field: int) -> bool:
    player = state.players[seat]
    return (
        not player.blocked(BLOCKING)
        and player.blocks_used < PLAYER.block_tokens
        and state.blocked_by[field] < 0
        and len(state.lenses[field]) > 0
        and player.treasure >= block_price(field)
    )


# Per field, in sorted order: claim a match, claim nothing, claim a match on a target.
_BLOCK = tuple(
    (Move(Kind.BLOCK, field=f), Move(Kind.BLOCK, field=f, no_claim=True))
    + (() if BOARD.printed_targets[f] else (Move(Kind.BLOCK, field=f, target=True),))
    for f in range(len(BOARD.field_names))
)


def block_moves(state: State, seat: int) -> list[Move]:
    player = state.players[seat]
    if player.blocked(BLOCKING) or player.blocks_used >= PLAYER.block_tokens:
        return []
    out: list[Move] = []
    for field in range(len(BOARD.field_names)):
        if _can_block(state, seat, field):
            out.extend(_BLOCK[field])
    return out


def allows_block(state: State, seat: int, move: Move) -> bool:
    return _can_block(state, seat, move.field) and not (
        move.target and BOARD.printed_targets[move.field]
    )


def explain_block(state: State, seat: int, move: Move) -> tuple[str, str]:
    player = state.players[seat]
    name = fname(move.field)
    if player.blocked(BLOCKING):
        return rulebook.TREASURE_POWERS, "Treasure Acquisition and Field Blocking is blocked"
    if player.blocks_used >= PLAYER.block_tokens:
        return rulebook.BLOCKING, "all three Block tokens are placed"
    if state.blocked_by[move.field] >= 0:
        return rulebook.BLOCKING, f"{name} already has a Block token"
    if not state.lenses[move.field]:
        return rulebook.BLOCKING, f"{name} holds no Arcane Lens"
    if move.target and BOARD.printed_targets[move.field]:
        return rulebook.BLOCKING, f"{name} is a printed target: claim it without 'target'"
    where = "a central" if BOARD.central[move.field] else "an outer"
    return (
        rulebook.TREASURE_POWERS,
        f"blocking {where} field costs {block_price(move.field)} Treasure",
    )


def claimed_value(state: State, field: int, target: bool, no_claim: bool = False) -> int:
    """The Treasure a Block claim pays: the field's value, +2 on a (claimed) target;
    nothing for a Block that claims nothing."""
    if no_claim:
        return 0
    on_target = target or BOARD.printed_targets[field]
    return field_value(state.lenses[field]) + (PLAYER.target_bonus if on_target else 0)


def do_block(state: State, seat: int, move: Move) -> list[Event]:
    field = move.field
    pay_power(state, seat, BLOCKING, block_price(field))
    player = state.players[seat]
    player.blocks_used += 1
    state.blocked_by[field] = seat
    state.block_target[field] = move.target
    state.block_no_claim[field] = move.no_claim
    amount = claimed_value(state, field, move.target, move.no_claim)
    gain(state, seat, amount)
    shown = colours.name(colours.seen(state.lenses[field]))
    if move.no_claim:
        text = (
            f"blocked {fname(field)} ({shown}), claiming nothing: no Treasure "
            f"(paid {block_price(field)})"
        )
        data = {"field": fname(field), "target": False, "gained": 0, "no_claim": True}
        return [say(state, "block", text, seat, **data)]
    # A claiming Block's event keeps the shape stored games were played with.
    claim = "a matching target field" if move.target else "a matching field"
    text = (
        f"blocked {fname(field)} ({shown}), "
        f"claiming {claim}: +{amount} Treasure (paid {block_price(field)})"
    )
    return [say(state, "block", text, seat, field=fname(field), target=move.target, gained=amount)]
