"""Moving things about the table: essences to and from the supply, cards between piles,
and the events that tell players about it.

The general supply is not a hard limit ("simply put a token on a 5x chip"), so it is
unlimited here; ``state.out`` counts what has left it, which the invariants check against
every pool and component.
"""

from __future__ import annotations

from typing import Any

from services.kit.engine import Event
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.state import State

SEAT_NAMES = ("Player 1", "Player 2")


def name(cid: int) -> str:
    return CONTENT[cid].name


def names(cids: list[int] | tuple[int, ...]) -> str:
    return ", ".join(CONTENT[c].name for c in cids) if cids else "nothing"


class Log(list):
    """The events of one ``apply``. ``say`` adds a public event; ``tell`` adds the full
    event for one seat (``to={seat}``) and a public one that says only what everybody
    may know (the rival and spectators: "draws 1 card")."""

    def say(self, kind: str, text: str, seat: int | None = None, **data: Any) -> None:
        self.append(Event(kind, text, seat, data))

    def tell(
        self,
        kind: str,
        seat: int,
        private: str,
        public: str,
        private_data: dict[str, Any] | None = None,
        **data: Any,
    ) -> None:
        self.append(Event(kind, private, seat, {**data, **(private_data or {})}, frozenset({seat})))
        self.append(Event(kind, public, seat, data))


def gain(state: State, seat: int, e: int, n: int = 1) -> None:
    state.seats[seat].pool[e] += n
    state.out[e] += n


def gain_bag(state: State, seat: int, bag: tuple[int, ...]) -> None:
    pool = state.seats[seat].pool
    for e, n in enumerate(bag):
        if n:
            pool[e] += n
            state.out[e] += n


def spend(state: State, seat: int, e: int, n: int = 1) -> None:
    pool = state.seats[seat].pool
    assert pool[e] >= n, "paying more than the pool holds"
    pool[e] -= n
    state.out[e] -= n
    state.paid[e] += n


def put_on(state: State, cid: int, e: int, n: int = 1) -> None:
    """Essences from the supply onto a component."""
    state.on[cid][e] += n
    state.out[e] += n


def take_from(state: State, seat: int, cid: int, e: int, n: int = 1) -> None:
    held = state.on[cid]
    assert held[e] >= n
    held[e] -= n
    state.seats[seat].pool[e] += n


def take_all(state: State, seat: int, cid: int) -> list[int]:
    held = state.on[cid]
    taken = list(held)
    pool = state.seats[seat].pool
    for e in range(5):
        pool[e] += held[e]
        held[e] = 0
    return taken


def draw(state: State, seat: int, n: int, log: Log, why: str = "") -> list[int]:
    """Draw ``n`` Artifacts; an empty draw pile is first refilled by shuffling the discard
    pile. Fewer are drawn when both are empty."""
    me = state.seats[seat]
    drawn: list[int] = []
    for _ in range(n):
        if not me.deck:
            if not me.discard:
                break
            me.deck = me.discard
            me.discard = []
            state.rng.shuffle(me.deck)
            log.say(
                "reshuffle",
                f"{SEAT_NAMES[seat]} shuffles the discard pile into a new draw pile",
                seat,
                cards=len(me.deck),
            )
        card = me.deck.pop()
        me.hand.append(card)
        drawn.append(card)
    suffix = f" ({why})" if why else ""
    if drawn:
        log.tell(
            "draw",
            seat,
            f"{SEAT_NAMES[seat]} draws {names(drawn)}{suffix}",
            f"{SEAT_NAMES[seat]} draws {len(drawn)} card{'s' if len(drawn) != 1 else ''}{suffix}",
            {"cards": [CONTENT[c].slug for c in drawn]},
            count=len(drawn),
        )
    else:
        log.say("draw", f"{SEAT_NAMES[seat]} has no card to draw{suffix}", seat, count=0)
    return drawn


def refill_display(state: State, log: Log) -> None:
    while len(state.monument_display) < 2 and state.monument_deck:
        card = state.monument_deck.pop()
        state.monument_display.append(card)
        log.say(
            "reveal",
            f"{name(card)} is revealed from the Monument deck",
            None,
            card=CONTENT[card].slug,
        )
