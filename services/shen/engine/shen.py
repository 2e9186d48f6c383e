"""Shén counters on the Spirit Path: placement, association, capture.

"Place one Shén counter on any empty (contains no Shén counter or Realm Stone) vertex
where that counter, and any of your counters that are now associated with it (are next to
or can trace an unbroken chain of your Shén counters along the Spirit Path to it),
has/have at least one empty vertex next to them. Then remove any opponent's Shén counters
that are now surrounded and captured unless they are associated with their own realm
stone. A Realm Stone counts as a Shén counter but cannot be removed."
"""

from __future__ import annotations

from services.kit.engine import Event

from . import board as geometry
from . import pieces
from .state import State


def is_empty(state: State, v: int) -> bool:
    return v not in state.counters and v not in state.stones


def _owner(state: State, v: int) -> int:
    seat = state.counters.get(v)
    return state.stones.get(v, -1) if seat is None else seat


def association(state: State, seat: int, start: int, extra: int = -1) -> tuple[list[int], bool]:
    """The seat's counters (and Realm Stone) associated with ``start``, and whether they
    have an empty vertex next to them. ``extra`` is a vertex counted as the seat's (a
    counter being placed)."""
    links = state.board.links
    group = [start]
    seen = {start}
    free = False
    i = 0
    while i < len(group):
        for w in links[group[i]]:
            if w in seen:
                continue
            if w == extra or _owner(state, w) == seat:
                seen.add(w)
                group.append(w)
            elif w not in state.counters and w not in state.stones:
                free = True
        i += 1
    return group, free


def can_place(state: State, seat: int, v: int) -> bool:
    """The placement rule: an empty vertex whose new association keeps an empty
    neighbour. (Checked before captures, as the rule's order reads.)"""
    if v in state.counters or v in state.stones:
        return False
    links = state.board.links[v]
    for w in links:
        if w not in state.counters and w not in state.stones:
            return True
    return any(_owner(state, w) == seat and association(state, seat, w, extra=v)[1] for w in links)


def legal_placements(state: State, seat: int) -> list[int]:
    return [v for v in state.board.vertices if can_place(state, seat, v)]


def place(state: State, seat: int, v: int, events: list[Event]) -> None:
    """Place the counter, then capture the opponents' counters it leaves surrounded. Each
    owner loses one card per captured counter (a pending task per owner)."""
    state.counters[v] = seat
    events.append(
        Event(
            "shen_placed",
            f"{pieces.seat_name(state, seat)} places a Shén counter on {geometry.name(v)}",
            seat,
            {"at": geometry.name(v)},
        )
    )
    captured: dict[int, int] = {}
    surrounded: list[tuple[int, list[int]]] = []
    done: set[int] = set()
    for w in state.board.links[v]:
        owner = state.counters.get(w)
        if owner is None or owner == seat or state.teammates(seat, owner) or w in done:
            continue
        group, free = association(state, owner, w)
        done.update(group)
        if free or any(g in state.stones for g in group):
            continue  # it breathes, or it is associated with its own Realm Stone
        surrounded.append((owner, group))
        if not state.options.captures_at_once:
            # The rule games were stored under before the fix (ShenOptions.STORED_BEFORE):
            # each association went before the next was checked on the changed board.
            _capture(state, *surrounded.pop(), captured, events)
    # Every surrounded association is found on the board as the new counter left it, then
    # all go: one counter can take the last liberty of two that touch each other.
    for owner, group in surrounded:
        _capture(state, owner, group, captured, events)
    # "Players lose one card ... for every Shén counter removed": owed in turn order.
    for owner in [(seat + i) % state.n for i in range(1, state.n)][::-1]:
        if captured.get(owner):
            state.tasks.append(("lose", owner, captured[owner]))


def _capture(
    state: State, owner: int, group: list[int], captured: dict[int, int], events: list[Event]
) -> None:
    for g in sorted(group):
        remove(state, g, events, why="captured")
    captured[owner] = captured.get(owner, 0) + len(group)


def remove(state: State, v: int, events: list[Event], why: str) -> None:
    """Take a counter off; a Spirit Avatar standing on it returns to its owner's hand."""
    owner = state.counters.pop(v)
    events.append(
        Event(
            "shen_removed",
            f"{pieces.seat_name(state, owner)}'s Shén counter on {geometry.name(v)} is {why}",
            owner,
            {"at": geometry.name(v), "why": why},
        )
    )
    uid = state.at.get(v)
    if uid is not None:
        pieces.return_to_hand(state, state.avatars[uid], events)


def convert(state: State, seat: int, v: int, events: list[Event]) -> None:
    """The counter on ``v`` becomes the seat's; a Spirit Avatar on it returns to hand."""
    owner = state.counters[v]
    state.counters[v] = seat
    events.append(
        Event(
            "shen_converted",
            f"{pieces.seat_name(state, owner)}'s Shén counter on {geometry.name(v)} becomes "
            f"{pieces.seat_name(state, seat)}'s",
            seat,
            {"at": geometry.name(v), "from": owner},
        )
    )
    uid = state.at.get(v)
    if uid is not None and state.avatars[uid].owner != seat:
        pieces.return_to_hand(state, state.avatars[uid], events)
