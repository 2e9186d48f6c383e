"""1. Collect: every Collect ability, and taking essences from your components.

Fixed Collect abilities ("1 Calm", "1 Elan + 1 Death") need no decision and happen at
once. What is left is a short queue per player: each "/" to choose a side of, each
"any essence" to choose one essence at a time, then taking all essences from any of
your components (or none) until ``done``. Both players collect simultaneously (or in
turn order, as the rulebook allows on request: ``Options.collect_in_turn_order``).
"""

from __future__ import annotations

from services.resarcana.engine.content import CONTENT, Amount
from services.resarcana.engine.essences import TITLES, bag_text
from services.resarcana.engine.moves import Kind, Move
from services.resarcana.engine.state import COLLECT, State
from services.resarcana.engine.table import SEAT_NAMES, Log, gain, gain_bag, name, take_all

DONE = Move(Kind.DONE)


def begin(state: State, log: Log) -> None:
    state.phase = COLLECT
    for seat, me in enumerate(state.seats):
        queue: list[tuple] = []
        for cid in me.components():
            alternatives = CONTENT[cid].collect
            if not alternatives:
                continue
            if len(alternatives) > 1:
                queue.append(("c_choice", cid))
                continue
            only = alternatives[0]
            if any(only.fixed):
                gain_bag(state, seat, only.fixed)
                log.say(
                    "collect",
                    f"{SEAT_NAMES[seat]} collects {bag_text(only.fixed)} ({name(cid)})",
                    seat,
                    component=CONTENT[cid].slug,
                    essences=list(only.fixed),
                )
            if only.any_n:
                queue.append(("c_any", cid, only.any_n, only.excl))
        queue.append(("c_take",))
        me.collect = queue


def _single_sides(alternatives: tuple[Amount, ...]) -> list[int] | None:
    """The essence of each side when every side is one distinct essence ("calm / elan")."""
    sides = []
    for alt in alternatives:
        kinds = [e for e in range(5) if alt.fixed[e]]
        if alt.any_n or len(kinds) != 1 or alt.fixed[kinds[0]] != 1:
            return None
        sides.append(kinds[0])
    return sides if len(set(sides)) == len(sides) else None


def options(state: State, seat: int, task: tuple) -> list[Move]:
    code = task[0]
    if code == "c_choice":
        alternatives = CONTENT[task[1]].collect
        sides = _single_sides(alternatives)
        if sides is not None:
            return sorted(Move(Kind.GAIN, e) for e in sides)
        return [Move(Kind.OPTION, i + 1) for i in range(len(alternatives))]
    if code == "c_any":
        excl = task[3]
        return [Move(Kind.GAIN, e) for e in range(5) if not excl >> e & 1]
    held = [c for c in state.seats[seat].components() if any(state.on[c])]
    if not held:
        return []
    return [*sorted(Move(Kind.TAKE, c) for c in held), DONE]


def play(state: State, seat: int, task: tuple, move: Move, log: Log) -> None:
    me = state.seats[seat]
    code = task[0]
    if code == "c_choice":
        cid = task[1]
        alternatives = CONTENT[cid].collect
        if move.kind == Kind.GAIN:
            sides = _single_sides(alternatives) or []
            alt = alternatives[sides.index(move.a)]
        else:
            alt = alternatives[move.a - 1]
        me.collect.pop(0)
        if any(alt.fixed):
            gain_bag(state, seat, alt.fixed)
            log.say(
                "collect",
                f"{SEAT_NAMES[seat]} chooses and collects {bag_text(alt.fixed)} ({name(cid)})",
                seat,
                component=CONTENT[cid].slug,
                essences=list(alt.fixed),
            )
        if alt.any_n:
            me.collect.insert(0, ("c_any", cid, alt.any_n, alt.excl))
    elif code == "c_any":
        _, cid, n, excl = task
        gain(state, seat, move.a)
        log.say(
            "collect",
            f"{SEAT_NAMES[seat]} collects 1 {TITLES[move.a]} ({name(cid)})",
            seat,
            component=CONTENT[cid].slug,
            essence=TITLES[move.a].lower(),
        )
        if n > 1:
            me.collect[0] = ("c_any", cid, n - 1, excl)
        else:
            me.collect.pop(0)
    elif move.kind == Kind.DONE:
        me.collect.pop(0)
        log.say("collect_done", f"{SEAT_NAMES[seat]} is done collecting", seat)
    else:
        taken = take_all(state, seat, move.a)
        log.say(
            "take",
            f"{SEAT_NAMES[seat]} takes {bag_text(taken)} from {name(move.a)}",
            seat,
            component=CONTENT[move.a].slug,
            essences=taken,
        )


STEP_TEXT = {
    "c_choice": "collect: choose a side",
    "c_any": "collect: choose an essence",
    "c_take": "collect: take essences from your components, or done",
}
