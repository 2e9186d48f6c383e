"""2. Actions: the action a player chooses on their turn, and how each one begins.

Place an Artifact, claim a Monument or a Place of Power, discard an Artifact for 1 Gold
or 2 other essences, use a power on a straightened component, or pass. The rest of the
action (its cost, then its effect) is queued as tasks (``tasks.py``).
"""

from __future__ import annotations

from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.essences import bag_text, can_pay
from services.resarcana.engine.moves import DECK, Kind, Move
from services.resarcana.engine.state import State
from services.resarcana.engine.table import SEAT_NAMES, Log, name
from services.resarcana.engine.tasks import (
    artifact_discount,
    can_place,
    pay_task,
    power_usable,
    start_power,
)

PASS = Move(Kind.PASS)


def can_claim(state: State, seat: int, cid: int) -> bool:
    cost = (
        CONTENT.monument_cost if cid == DECK or cid in state.monument_display else CONTENT[cid].cost
    )
    return can_pay(state.seats[seat].pool, cost.fixed, cost.any_n, cost.excl, 0)


def claimable(state: State) -> list[int]:
    """Monuments on display, the deck's top, and unclaimed Places of Power."""
    found = list(state.monument_display) + list(state.places)
    if state.monument_deck:
        found.append(DECK)
    return found


def options(state: State, seat: int) -> list[Move]:
    me = state.seats[seat]
    moves: list[Move] = [PASS]
    for card in set(me.hand):
        moves.append(Move(Kind.DISCARD, card))
        if can_place(state, seat, card):
            moves.append(Move(Kind.PLACE, card))
    for cid in claimable(state):
        if can_claim(state, seat, cid):
            moves.append(Move(Kind.CLAIM, cid))
    turned = state.turned
    for cid in me.components():
        if turned[cid]:
            continue
        for i in range(len(CONTENT[cid].powers)):
            if power_usable(state, seat, cid, i):
                moves.append(Move(Kind.POWER, cid, i + 1))
    moves.sort()
    return moves


def begin(state: State, seat: int, move: Move, log: Log) -> None:
    """Start the chosen action: what needs no decision now, the rest as tasks."""
    me = state.seats[seat]
    state.in_action = True
    state.paid = [0, 0, 0, 0, 0]
    kind = move.kind
    who = SEAT_NAMES[seat]
    if kind == Kind.PLACE:
        card = move.a
        cost = CONTENT[card].cost
        disc = artifact_discount(state, seat, card)
        log.say(
            "place",
            f"{who} places {name(card)} (cost {bag_text(cost.fixed, cost.any_n, cost.excl)}"
            + (f", discount {disc}" if disc else "")
            + ")",
            seat,
            card=CONTENT[card].slug,
        )
        state.tasks = [pay_task(card, cost.fixed, cost.any_n, cost.excl, disc), ("enter", card)]
    elif kind == Kind.CLAIM:
        cid = move.a
        is_monument = cid == DECK or cid in state.monument_display
        cost = CONTENT.monument_cost if is_monument else CONTENT[cid].cost
        what = "the Monument deck's top card" if cid == DECK else name(cid)
        log.say(
            "claim",
            f"{who} claims {what} (cost {bag_text(cost.fixed, cost.any_n, cost.excl)})",
            seat,
            component="deck" if cid == DECK else CONTENT[cid].slug,
        )
        state.tasks = [pay_task(cid, cost.fixed, cost.any_n, cost.excl, 0), ("claim", cid)]
    elif kind == Kind.DISCARD:
        card = move.a
        me.hand.remove(card)
        me.discard.append(card)
        log.say(
            "discard",
            f"{who} discards {name(card)} to gain 1 Gold or 2 other essences",
            seat,
            card=CONTENT[card].slug,
        )
        state.tasks = [("discard_gain",)]
    elif kind == Kind.POWER:
        state.tasks = []
        start_power(state, seat, move.a, move.b - 1, log)
    else:
        first = not state.seats[1 - seat].passed
        me.passed = True
        if first:
            state.first_player = seat
            state.token_passed = True
            log.say(
                "pass", f"{who} passes first and takes the First Player token", seat, first=True
            )
        else:
            log.say("pass", f"{who} passes", seat, first=False)
        state.tasks = [("swap_item",), ("pass_draw",)]
