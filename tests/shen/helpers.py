"""Scenario building for Shén tests (the boardgame.io habit: a hand-built position)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from services.kit.engine import Rng
from services.shen import engine
from services.shen.engine import board as geometry
from services.shen.engine.state import Step


def proto_text(message: Any) -> str:
    """A message in protobuf's text format, for the leak checks to search.

    ``str()`` of a message is the C runtime's (upb) printer: the lines
    ``text_format.MessageToString`` writes (a map's entries may come in another order),
    many times faster than the pure-Python printer, which the codec test's views spent
    most of their time in. test_codec.py checks they agree."""
    return str(message)


def card(card_id: str) -> int:
    return engine.POOL.by_id[card_id]


def loc(name: str) -> int:
    found = geometry.parse(name)
    assert found is not None, name
    return found


def mv(text: str) -> engine.Move:
    return engine.parse_move(text)


def texts(state: engine.State, seat: int | None = None) -> list[str]:
    seat = engine.to_act(state)[0] if seat is None else seat
    return [str(m) for m in engine.legal_moves(state, seat)]


def do(state: engine.State, *moves: str) -> list:
    """Apply moves, each by the seat to act; return all events."""
    events = []
    for text in moves:
        seat = engine.to_act(state)[0]
        events.extend(engine.apply(state, seat, mv(text)))
    return events


class Dice(Rng):
    """A generator whose die rolls are scripted (shuffles stay seeded)."""

    def __init__(self, rolls: list[int]) -> None:
        super().__init__(0)
        self.rolls = list(rolls)

    def randint(self, a: int, b: int) -> int:  # type: ignore[override]
        assert (a, b) == (1, 6), "only dice are scripted"
        assert self.rolls, "the scenario rolled more dice than it scripted"
        return self.rolls.pop(0)


def started(
    players: int = 2, seed: int = 3, stones: tuple[str, ...] = (), **options
) -> engine.State:
    """A game past Pre-Game: Realm Stones set where asked (by seat), hands dealt."""
    state = engine.new_game(seed, players, engine.Options(**options))
    default = ("E3", "E7", "B5", "H5", "C8", "G2")
    stones = stones or default[:players]
    while state.step == Step.PLACE_STONE:
        seat = state.active
        engine.apply(state, seat, mv(f"stone {stones[seat]}"))
    return state


def clear_field(state: engine.State, keep_stones: bool = True) -> None:
    """Empty the field of counters (and Avatars), keeping the Realm Stones."""
    state.counters.clear()
    state.avatars.clear()
    state.at.clear()
    if not keep_stones:
        state.stones.clear()


def put_counters(state: engine.State, seat: int, *names: str) -> None:
    for name in names:
        state.counters[loc(name)] = seat


def put_avatar(
    state: engine.State, seat: int, card_id: str, at: str, ready: bool = True, items=()
) -> engine.Avatar:
    """An Avatar on the field that stood there since its owner's turn began."""
    avatar = engine.Avatar(
        state.next_uid, card(card_id), seat, loc(at), ready, [card(i) for i in items]
    )
    state.next_uid += 1
    avatar.start = avatar.loc
    state.avatars[avatar.uid] = avatar
    state.at[avatar.loc] = avatar.uid
    return avatar


def set_hand(state: engine.State, seat: int, *card_ids: str) -> None:
    state.players[seat].hand = sorted(card(c) for c in card_ids)


def to_phase(state: engine.State, step: Step, seat: int | None = None) -> None:
    """Jump the active player to a step of the turn, no task pending."""
    if seat is not None:
        state.active = seat
    state.tasks.clear()
    state.step = step
    state.acted = []
    state.mover = -1


@contextlib.contextmanager
def hidden_changed(state: engine.State, seat: int | None) -> Iterator[None]:
    """Inside: everything hidden from ``seat`` is different (other hands, every deck's
    contents and order, the generator); put back after. In place: much cheaper than a
    deep copy, so the leak checks can run after every decision."""
    saved = [(p.hand, p.deck) for p in state.players]
    rng = state.rng.getstate()
    size = len(engine.CARDS)
    try:
        for p in state.players:
            p.deck = [(c * 7 + 3) % size for c in reversed(p.deck)]
            if p.seat != seat:
                p.hand = sorted((c * 7 + 3) % size for c in p.hand)
        state.rng.seed(987_654_321)
        yield
    finally:
        for p, (hand, deck) in zip(state.players, saved, strict=True):
            p.hand, p.deck = hand, deck
        state.rng.setstate(rng)
