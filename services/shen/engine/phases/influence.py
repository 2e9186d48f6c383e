"""2) Celestial Influence Phase: play a card from your hand, or pass; the card's target.

"Play a card from your hand. Cards can be played on any space or vertex where you have
as many or more Shén counters than that card's power cost". A card that goes somewhere
(an Avatar, an Item) or aims at something asks for its target next (a ``target`` task),
as does an Avatar's ability with a choice of targets.
"""

from __future__ import annotations

from services.kit.engine import Event

from .. import board as geometry
from .. import cards, pieces
from .. import rulebook as rule
from ..content import CARDS
from ..moves import PASS, ChooseFoe, ChooseTarget, Pass, PlayCard
from ..state import State, Step
from .base import Row, decision, event, to_step

PROMPT = "Celestial Influence Phase: play a card or pass"
TARGET_PROMPT = "choose the target"


# --- Play a card ----------------------------------------------------------------------


def _plays(state: State, seat: int) -> list[PlayCard]:
    moves = []
    seen = -1
    for card in state.players[seat].hand:
        if card != seen:
            seen = card
            if cards.playable(state, seat, CARDS[card]):
                moves.append(PlayCard(card))
    return moves


def _may_play(state: State, seat: int, move: PlayCard) -> bool:
    return move.card in state.players[seat].hand and cards.playable(state, seat, CARDS[move.card])


def finish_card(state: State, seat: int, target: int, events: list[Event]) -> None:
    """The card being played lands: manifest, equip, resolve, or stay in play."""
    card = state.playing
    data = CARDS[card]
    state.playing = -1
    player = state.players[seat]
    name = pieces.seat_name(state, seat)
    if data.is_avatar:
        pieces.manifest(state, seat, card, target)
        events.append(
            event(
                "manifested",
                f"{name} manifests {data.name} on {geometry.name(target)}",
                seat,
                card=data.id,
                at=geometry.name(target),
            )
        )
    elif data.type == "item":
        avatar = state.avatars[state.at[target]]
        avatar.items.append(card)
        events.append(
            event(
                "equipped",
                f"{name} equips {data.name} on {CARDS[avatar.card].name}"
                f" at {geometry.name(target)}",
                seat,
                card=data.id,
                at=geometry.name(target),
            )
        )
    elif data.type == "remains":
        player.remains.append(card)
        events.append(
            event("remains", f"{data.name} Remains in Play for {name}", seat, card=data.id)
        )
    else:
        assert data.effect is not None
        # "resolved immediately and then placed face up in your discard pile".
        cards.resolve(state, seat, data.effect, target, events)
        player.discard.append(card)


def _play(state: State, seat: int, move: PlayCard) -> list[Event]:
    card = move.card
    data = CARDS[card]
    state.players[seat].hand.remove(card)
    state.playing = card
    events = [
        event("played", f"{pieces.seat_name(state, seat)} plays {data.name}", seat, card=data.id)
    ]
    state.step = Step.COMMAND
    target_kind = data.effect.target if data.effect is not None else ""
    if data.is_avatar or data.type == "item" or target_kind in ("vertex", "avatar"):
        state.tasks.append(("target", seat, -1, -1))
    elif target_kind == "foe":
        foes = state.opponents(seat)
        if len(foes) == 1:
            finish_card(state, seat, foes[0], events)
        else:
            state.tasks.append(("target", seat, -1, -1))
    else:
        finish_card(state, seat, -1, events)
    return events


def _no_play(state: State, seat: int, move: PlayCard) -> str:
    data = CARDS[move.card]
    if move.card not in state.players[state.active].hand:
        return f"{data.name} is not in your hand"
    if data.type == "instant" and data.timing == "combat":
        return f"{data.name} is played during combat"
    return (
        f"no space or vertex where you have the {cards.need(state, state.active, data)} Shén"
        f" {data.name} needs"
    )


# --- or pass --------------------------------------------------------------------------


def _passes(state: State, seat: int) -> list[Pass]:
    return [PASS]


def _pass(state: State, seat: int, move: Pass) -> list[Event]:
    return []


def _no_pass(state: State, seat: int, move: Pass) -> str:  # pragma: no cover - always open
    return f"{move} is not possible now"


ROW: Row = {
    PlayCard: decision(rule.PLAY, _plays, _play, _no_play, allows=_may_play),
    Pass: decision(rule.PHASES, _passes, _pass, _no_pass, then=to_step(Step.COMMAND)),
}


# --- the target of a card, or of an ability ---------------------------------------------


def targets(state: State, task: tuple) -> list[ChooseTarget | ChooseFoe]:
    """The choices of a ``("target", seat, uid, index)`` task: a card's (uid -1) or an
    Avatar's ability's (its index): where it goes, or which opponent it aims at."""
    _, seat, uid, index = task
    if uid < 0:
        card = CARDS[state.playing]
        if card.effect is not None and card.effect.target == "foe":
            return [ChooseFoe(s) for s in sorted(state.opponents(seat))]
        return [ChooseTarget(loc) for loc in cards.card_sites(state, seat, card)]
    avatar = state.avatars[uid]
    effect = pieces.abilities(avatar)[index].effect
    found = cards.ability_targets(state, seat, avatar.loc, effect)
    if effect.target == "foe":
        return [ChooseFoe(s) for s in sorted(found)]
    return [ChooseTarget(loc) for loc in sorted(found)]


def _locations(state: State, seat: int) -> list[ChooseTarget]:
    return [m for m in targets(state, state.tasks[-1]) if type(m) is ChooseTarget]


def _foes(state: State, seat: int) -> list[ChooseFoe]:
    return [m for m in targets(state, state.tasks[-1]) if type(m) is ChooseFoe]


def _aim(state: State, seat: int, move: ChooseTarget | ChooseFoe) -> list[Event]:
    task = state.tasks.pop()
    target = move.location if isinstance(move, ChooseTarget) else move.seat
    events: list[Event] = []
    if task[2] < 0:
        finish_card(state, seat, target, events)
    else:
        avatar = state.avatars[task[2]]
        effect = pieces.abilities(avatar)[task[3]].effect
        cards.resolve(state, seat, effect, target, events)
    return events


def _no_target(state: State, seat: int, move: ChooseTarget | ChooseFoe) -> str:
    return f"not a legal choice: {TARGET_PROMPT}"


TARGET: Row = {
    ChooseTarget: decision(rule.PLAY, _locations, _aim, _no_target),
    ChooseFoe: decision(rule.PLAY, _foes, _aim, _no_target),
}
