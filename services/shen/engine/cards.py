"""Playing cards and resolving effects (2) Celestial Influence Phase, abilities, combat cards).

"Cards can be played on any space or vertex where you have as many or more Shén counters
than that card's power cost ... Cards not associated with your Home Realm ... require one
more Shén to play." Every effect is one of content.EFFECTS; this module is the only place
that gives them meaning.
"""

from __future__ import annotations

from bisect import insort

from services.kit.engine import Event

from . import board as geometry
from . import pieces, shen
from .content import CARDS, Card, Effect
from .state import MAX_ITEMS, State


def need(state: State, seat: int, card: Card) -> int:
    """Shén needed to play the card: its power cost, one more outside the home Realm."""
    return card.cost + (card.realm != state.players[seat].realm)


def shen_at(state: State, seat: int, loc: int) -> int:
    """Shén the seat may use to play a card at ``loc`` (counters plus Remains bonuses)."""
    return pieces.count(state, seat, loc) + pieces.shen_bonus(state, seat)


def any_space(state: State, seat: int, needed: int) -> bool:
    """ "can be played using your Shén around any one space (not a vertex)"."""
    needed -= pieces.shen_bonus(state, seat)
    return needed <= 0 or max(pieces.space_counts(state, seat).values(), default=0) >= needed


def _opponent_avatars(state: State, seat: int) -> list[int]:
    return sorted(
        a.loc
        for a in state.avatars.values()
        if a.owner != seat and not state.teammates(seat, a.owner)
    )


def _opponent_counters(state: State, seat: int, where: tuple[int, ...] | list[int]) -> list[int]:
    out = []
    for v in where:
        owner = state.counters.get(v)
        if owner is not None and owner != seat and not state.teammates(seat, owner):
            out.append(v)
    return out


def card_sites(state: State, seat: int, card: Card) -> list[int]:
    """Where a card that goes somewhere may be played: Avatar spaces or vertices, the
    spaces of Avatars that may take an Item, or an effect's targets. Sorted."""
    # Shén still needed beyond the Remains in Play bonus; counts come in one pass.
    needed = need(state, seat, card) - pieces.shen_bonus(state, seat)
    b = state.board
    if card.is_avatar:
        if card.is_spirit:
            # A Spirit Avatar manifests onto a vertex of the Spirit Path holding its
            # owner's Shén counter (see README: readings).
            vc = pieces.vertex_counts(state, seat)
            return [
                v
                for v, owner in sorted(state.counters.items())
                if owner == seat and v not in state.at and vc.get(v, 0) >= needed
            ]
        sc = pieces.space_counts(state, seat)
        return [s for s in b.spaces if s not in state.at and sc.get(s, 0) >= needed]
    if card.type == "item":
        sc = pieces.space_counts(state, seat)
        return sorted(
            a.loc
            for a in state.avatars.values()
            if a.owner == seat
            and not pieces.is_spirit(a)
            and len(a.items) < MAX_ITEMS
            and sc.get(a.loc, 0) >= needed
        )
    effect = card.effect
    assert effect is not None
    if effect.target == "vertex":
        vc = pieces.vertex_counts(state, seat)
        if effect.kind == "place_shen":
            where = [
                v for v in b.vertices if vc.get(v, 0) >= needed and shen.can_place(state, seat, v)
            ]
        else:
            where = _opponent_counters(state, seat, sorted(state.counters))
        return [v for v in where if vc.get(v, 0) >= needed]
    if effect.target == "avatar":
        return [
            loc
            for loc in _opponent_avatars(state, seat)
            if shen_at(state, seat, loc) >= needed + pieces.shen_bonus(state, seat)
        ]
    return []


def playable(state: State, seat: int, card: Card) -> bool:
    """May the card be played in the Celestial Influence Phase now?"""
    if card.type == "instant" and card.timing != "main":
        return False
    if card.is_avatar or card.type == "item":
        return bool(card_sites(state, seat, card))
    if card.type == "remains":
        return any_space(state, seat, need(state, seat, card))
    effect = card.effect
    assert effect is not None
    if effect.target in ("vertex", "avatar"):
        return bool(card_sites(state, seat, card))
    if effect.target == "foe" and not state.opponents(seat):
        return False
    return any_space(state, seat, need(state, seat, card))


def ability_targets(state: State, seat: int, loc: int, effect: Effect) -> list[int]:
    """Targets of an Avatar's ability used at ``loc``: vertices around it, opponents'
    Avatars within its range, or opponents (for drain); [-1] when none is needed."""
    b = state.board
    if effect.target == "vertex":
        # Around a space: its corners; around a vertex: the vertices next to it.
        where = b.links[loc] if loc >= geometry.VERTEX else b.corners[loc]
        if effect.kind == "place_shen":
            return [v for v in where if shen.can_place(state, seat, v)]
        return _opponent_counters(state, seat, where)
    if effect.target == "avatar":
        reach = max(1, effect.range)
        return [t for t in _opponent_avatars(state, seat) if b.distance(loc, t) <= reach]
    if effect.target == "foe":
        return state.opponents(seat)
    return [-1]


def resolve(state: State, seat: int, effect: Effect, target: int, events: list[Event]) -> None:
    """Carry out an effect (combat effects are applied by combat.py)."""
    name = pieces.seat_name(state, seat)
    kind = effect.kind
    if kind == "draw":
        for _ in range(effect.amount):
            pieces.draw(state, seat, events)
    elif kind == "recover":
        player = state.players[seat]
        taken = []
        for _ in range(min(effect.amount, len(player.discard))):
            card = player.discard.pop()
            insort(player.hand, card)
            taken.append(CARDS[card].id)
        events.append(
            Event(
                "recovered",
                f"{name} takes {len(taken)} card(s) from the discard pile into hand",
                seat,
                {"cards": taken},
            )
        )
    elif kind == "drain":
        events.append(
            Event(
                "drain",
                f"{pieces.seat_name(state, target)} must lose {effect.amount} card(s)",
                seat,
                {"foe": target, "amount": effect.amount},
            )
        )
        state.tasks.append(("lose", target, effect.amount))
    elif kind == "place_shen":
        shen.place(state, seat, target, events)
    elif kind == "remove_shen":
        owner = state.counters[target]
        shen.remove(state, target, events, why=f"removed by {name}")
        state.tasks.append(("lose", owner, 1))
    elif kind == "convert_shen":
        shen.convert(state, seat, target, events)
    elif kind == "strike":
        avatar = state.avatars[state.at[target]]
        events.append(
            Event(
                "strike",
                f"{name} strikes {CARDS[avatar.card].name} at {geometry.name(target)}:"
                f" {effect.amount} card(s) or the Avatar",
                seat,
                {"at": geometry.name(target), "amount": effect.amount},
            )
        )
        state.tasks.append(("yield", avatar.owner, avatar.uid, effect.amount))
    elif kind == "banish":
        avatar = state.avatars[state.at[target]]
        pieces.remove_from_game(state, avatar, events, why=f"banished by {name}")
    else:  # pragma: no cover - content.py admits no other effect
        raise AssertionError(kind)
