"""What one seat (or a spectator) may see.

``View`` is a frozen dataclass; its records (Avatars, players, the combat) are named
tuples: immutable, with a deterministic repr, and quick to build for every request.

Public: the field (Realm Stones, Shén counters, Avatars with their Items, Anchor Points
and who holds them), every discard pile, removed pile and Remains in Play row, the
number of cards in each hand and deck, the combat being fought, whose decision it is and
what it is. Private to a seat: its own hand. Never shown: deck order, other hands, the
generator, the seed (the state does not even keep it), the initial deck lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from . import board as geometry
from .content import CARDS
from .state import State, Step
from .turn import to_act


class AvatarView(NamedTuple):
    uid: int
    card: str
    owner: int
    at: str
    ready: bool
    items: tuple[str, ...]
    melee: int
    defense: int
    ranged: int
    move: int


class PlayerView(NamedTuple):
    seat: int
    realm: str
    team: int
    stone: str
    hand_count: int
    deck_count: int
    discard: tuple[str, ...]  # bottom to top
    removed: tuple[str, ...]
    remains: tuple[str, ...]
    anchor_points: tuple[str, ...]
    out: bool
    turns: int


class CombatView(NamedTuple):
    kind: str
    attacker: int
    defender: int
    origin: str
    target: str
    power: tuple[int, int]
    ward: tuple[int, int]
    rolls: tuple[tuple[int, ...], tuple[int, ...]]


@dataclass(frozen=True)
class View:
    seat: int | None
    size: int
    anchor_points: tuple[tuple[str, int], ...]  # (space, holder seat or -1)
    stones: tuple[tuple[str, int], ...]  # (vertex, seat)
    counters: tuple[tuple[str, int], ...]  # (vertex, seat)
    avatars: tuple[AvatarView, ...]
    players: tuple[PlayerView, ...]
    hand: tuple[str, ...] | None  # the viewer's own hand, sorted; None for others
    active: int
    to_act: tuple[int, ...]
    step: str  # what is being decided now
    pending: str  # the pending decision, "" if none
    pending_count: int  # cards still to lose (lose, yield, foe), else 0
    turn: int
    first_rolls: tuple[tuple[int, ...], ...]
    playing: str  # the card being played (already revealed), or ""
    moving: str  # the moving Avatar's location, or ""
    steps_left: int
    combat: CombatView | None
    last_roll: tuple[tuple[int, ...], tuple[int, ...]] | None
    winners: tuple[int, ...]
    reason: str


_STEP_NAMES = {
    Step.PLACE_STONE: "place realm stone",
    Step.RECOVERY: "recovery and set-up phase",
    Step.INFLUENCE: "celestial influence phase",
    Step.COMMAND: "claim, move, and attack phase",
    Step.MOVING: "moving an avatar",
    Step.AFTER_MOVE: "after a move",
    Step.OVER: "game over",
}
_TASK_NAMES = {
    "lose": "choose a card to lose",
    "yield": "remove the avatar or lose cards",
    "retreat": "choose a retreat next to the realm stone",
    "foe": "choose the opponent who loses cards",
    "target": "choose a target",
    "support": "combat: play a card or use an ability",
    "winner": "the winning avatar may use an ability",
}


_IDS = tuple(card.id for card in CARDS)
_NAMES = tuple(geometry.name(loc) for loc in range(2 * geometry.VERTEX))
_TRAITS = ("melee", "defense", "ranged", "move")


def _ids(cards: list[int]) -> tuple[str, ...]:
    return tuple(map(_IDS.__getitem__, cards))


def _avatar_view(avatar, auras: list[tuple[int, ...]]) -> AvatarView:
    card = CARDS[avatar.card]
    traits = [card.melee, card.defense, card.ranged, card.move]
    for item in avatar.items:
        for name, value in CARDS[item].bonus:
            traits[_TRAITS.index(name)] += value
    aura = auras[avatar.owner]
    return AvatarView(
        avatar.uid,
        card.id,
        avatar.owner,
        geometry.name(avatar.loc),
        avatar.ready,
        _ids(avatar.items),
        traits[0] + aura[0],
        traits[1] + aura[1],
        traits[2] + aura[2],
        traits[3] + aura[3],
    )


def view(state: State, seat: int | None) -> View:
    """What ``seat`` (None: a spectator) may see."""
    auras = [
        tuple(sum(CARDS[c].aura_of(t) for c in p.remains) for t in _TRAITS) for p in state.players
    ]
    avatars = tuple([_avatar_view(state.avatars[uid], auras) for uid in sorted(state.avatars)])
    held: dict[int, list[str]] = {}
    for anchor, owner in sorted(state.claims.items()):
        held.setdefault(owner, []).append(geometry.name(anchor))
    players = tuple(
        PlayerView(
            p.seat,
            p.realm,
            p.team,
            geometry.name(p.stone) if p.stone >= 0 else "",
            len(p.hand),
            len(p.deck),
            _ids(p.discard),
            _ids(p.removed),
            _ids(p.remains),
            tuple(held.get(p.seat, ())),
            p.out,
            p.turns,
        )
        for p in state.players
    )
    fight = state.combat
    task = state.tasks[-1] if state.tasks else None
    return View(
        seat=seat,
        size=state.size,
        anchor_points=tuple((geometry.name(a), state.claims.get(a, -1)) for a in state.anchors),
        stones=tuple([(_NAMES[v], s) for v, s in sorted(state.stones.items())]),
        counters=tuple([(_NAMES[v], s) for v, s in sorted(state.counters.items())]),
        avatars=avatars,
        players=players,
        hand=_ids(state.players[seat].hand) if seat is not None else None,
        active=state.active,
        to_act=to_act(state),
        step=_STEP_NAMES[state.step],
        pending=_TASK_NAMES[task[0]] if task is not None else "",
        pending_count=task[2]
        if task is not None and task[0] in ("lose", "foe")
        else (task[3] if task is not None and task[0] == "yield" else 0),
        turn=state.turn,
        first_rolls=state.first_rolls,
        playing=CARDS[state.playing].id if state.playing >= 0 else "",
        moving=geometry.name(state.avatars[state.mover].loc)
        if state.mover in state.avatars
        else "",
        steps_left=state.steps_left if state.step == Step.MOVING else 0,
        combat=CombatView(
            fight.kind,
            fight.attacker,
            fight.defender,
            geometry.name(fight.origin),
            geometry.name(fight.target),
            (fight.power[0], fight.power[1]),
            (fight.ward[0], fight.ward[1]),
            fight.rolls,
        )
        if fight is not None
        else None,
        last_roll=state.last_roll,
        winners=state.winners,
        reason=state.end_reason,
    )
