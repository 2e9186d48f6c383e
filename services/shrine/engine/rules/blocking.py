"""Treasure Acquisition and Field Blocking (a Treasure Power, before or after placing).

Blocking is the player's *claim* that the field matches their Code card (and, with
``target``, that it is a target there): the Treasure is paid now on the claim alone and
checked at the end (scoring.py). A Block may also claim nothing (``noclaim``): the field
is closed to play, no Treasure is gained and nothing is checked at the end. Nothing here
reads a Code card, so the moves a seat is offered never hint at either Code card.
"""

from __future__ import annotations

from services.kit.engine import Event
from services.kit.kernel import Decision
from services.shrine.engine import colours, rulebook
from services.shrine.engine.content import BLOCKING, BOARD, PLAYER
from services.shrine.engine.moves import Block
from services.shrine.engine.rules.board import fname, gain, pay_power, say
from services.shrine.engine.scoring import field_value
from services.shrine.engine.state import State


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
    (Block(f), Block(f, no_claim=True))
    + (() if BOARD.printed_targets[f] else (Block(f, target=True),))
    for f in range(len(BOARD.field_names))
)


def block_moves(state: State, seat: int) -> list[Block]:
    player = state.players[seat]
    if player.blocked(BLOCKING) or player.blocks_used >= PLAYER.block_tokens:
        return []
    out: list[Block] = []
    for field in range(len(BOARD.field_names)):
        if _can_block(state, seat, field):
            out.extend(_BLOCK[field])
    return out


def allows_block(state: State, seat: int, move: Block) -> bool:
    return _can_block(state, seat, move.field) and not (
        move.target and BOARD.printed_targets[move.field]
    )


def explain_block(state: State, seat: int, move: Block) -> tuple[str, str]:
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


def do_block(state: State, seat: int, move: Block) -> list[Event]:
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


BLOCK = Decision(
    rulebook.BLOCKING, block_moves, do_block, allows=allows_block, explain=explain_block
)
