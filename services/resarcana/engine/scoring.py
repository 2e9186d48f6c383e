"""3. Victory: victory points, the victory check, and how the game ends.

Victory points come from placed Artifacts, Monuments, Places of Power (their own points
plus those of the essences on them, turned or not) and the First Player token.
"""

from __future__ import annotations

from services.kit.engine import Outcome
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.essences import essence_value
from services.resarcana.engine.state import OVER, State
from services.resarcana.engine.table import SEAT_NAMES, Log


def victory_points(state: State, seat: int) -> int:
    me = state.seats[seat]
    total = 1 if state.first_player == seat else 0
    for cid in me.components():
        comp = CONTENT[cid]
        total += comp.vp
        if comp.vp_per_essence:
            total += comp.vp_per_essence * sum(state.on[cid])
    return total


def finish(state: State, log: Log, reason_prefix: str, why: str) -> None:
    """End the game: most VP wins; tied, more essences in the pool (Gold counts 2);
    still tied, a shared win."""
    vps = tuple(victory_points(state, s) for s in (0, 1))
    values = tuple(essence_value(state.seats[s].pool) for s in (0, 1))
    if vps[0] != vps[1]:
        winners: tuple[int, ...] = (0 if vps[0] > vps[1] else 1,)
        reason = "MOST_VICTORY_POINTS"
    elif values[0] != values[1]:
        winners = (0 if values[0] > values[1] else 1,)
        reason = "TIE_MORE_ESSENCES"
    else:
        winners = (0, 1)
        reason = "SHARED_WIN"
    if reason_prefix:
        reason = f"{reason_prefix}_{reason}"
    details = (
        why,
        *(f"{SEAT_NAMES[s]}: {vps[s]} VP, {values[s]} essences (Gold counts 2)" for s in (0, 1)),
    )
    state.result = Outcome(vps, winners, reason, details)
    state.phase = OVER
    state.tasks.clear()
    state.in_action = False
    for seat in state.seats:
        seat.collect.clear()
    won = " and ".join(SEAT_NAMES[w] for w in winners)
    log.say(
        "game_over",
        f"Game over: {won} win{'s' if len(winners) == 1 else ''} ({reason})",
        None,
        scores=list(vps),
        winners=list(winners),
        reason=reason,
    )


def check_victory(state: State, log: Log, why: str) -> bool:
    """The victory check: whether someone has the victory points; if so the game ends."""
    vps = [victory_points(state, s) for s in (0, 1)]
    log.say(
        "victory_check",
        f"Victory check ({why}): {SEAT_NAMES[0]} {vps[0]} VP, {SEAT_NAMES[1]} {vps[1]} VP"
        f" (needed {state.target_vp})",
        None,
        vp=vps,
    )
    if max(vps) >= state.target_vp:
        finish(state, log, "", f"{why}: {max(vps)} VP reached (needed {state.target_vp})")
        return True
    return False
