"""Combat's decisions (the dice and their results are engine/combat.py's).

"Each player, starting with the attacker, may play one card from their hand and use one
ability that directly affects" the attack (a ``support`` task per side); "The player of
the defeated Avatar may chose to remove them from the game instead of losing cards"
(``yield``); a defeated Avatar with several places beside its Realm Stone chooses one
(``retreat``); "one of the winning Avatar's abilities may now be used" (``winner``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from services.kit.engine import Event

from .. import combat, pieces
from .. import rulebook as rule
from ..cards import need, shen_at
from ..content import CARDS, Effect
from ..moves import (
    LOSE_CARDS,
    PASS,
    REMOVE_AVATAR,
    LoseCards,
    Pass,
    PlayCard,
    RemoveAvatar,
    Retreat,
    UseAbility,
)
from ..state import Combat, State
from .base import Row, decision, event
from .following_a_move import action_abilities, use_ability

SUPPORT_PROMPT = "play a combat card, use an ability, or pass"
WINNER_PROMPT = "use the winning Avatar's ability, or pass"
YIELD_PROMPT = "remove the Avatar or lose the cards"
RETREAT_PROMPT = "choose where the Avatar retreats"


def _fight(state: State) -> Combat:
    assert state.combat is not None
    return state.combat


# --- each side's card and ability -----------------------------------------------------


def _support_plays(state: State, seat: int) -> list[PlayCard]:
    fight = _fight(state)
    side = state.tasks[-1][2]
    if fight.card_played[side]:
        return []
    loc = combat.side_loc(fight, side)
    moves = []
    seen = -1
    for card in state.players[seat].hand:
        if card == seen:
            continue
        seen = card
        data = CARDS[card]
        if (
            data.type == "instant"
            and data.timing == "combat"
            and shen_at(state, seat, loc) >= need(state, seat, data)
        ):
            moves.append(PlayCard(card))
    return moves


def _combat_abilities(state: State, seat: int, side: int) -> list[int]:
    fight = _fight(state)
    if fight.ability_used[side]:
        return []
    avatar = combat.side_avatar(state, fight, side)
    if avatar is None:
        return []
    have = pieces.count(state, seat, combat.side_loc(fight, side))
    return [
        i
        for i, ability in enumerate(pieces.abilities(avatar))
        if ability.timing == "combat" and have >= ability.cost
    ]


def _support_abilities(state: State, seat: int) -> list[UseAbility]:
    return [UseAbility(i) for i in _combat_abilities(state, seat, state.tasks[-1][2])]


def needs_asking(state: State, seat: int, side: int) -> bool:
    """A side is asked unless it plainly has nothing: no card in hand (a public count)
    and no combat ability it may use. Asking whenever the hand holds cards keeps the
    question from telling the table what is in it."""
    if state.players[seat].out:
        return False
    if state.players[seat].hand:
        return True
    return bool(_combat_abilities(state, seat, side))


def _bonus(
    state: State, seat: int, side: int, source: str, what: str, effect: Effect
) -> list[Event]:
    """A card's or an ability's bonus to one side: Power to the attack, Ward against it."""
    fight = _fight(state)
    kind, amount = effect.kind, effect.amount
    if kind == "power":
        fight.power[side] += amount
    else:
        fight.ward[side] += amount
    if fight.card_played[side] and fight.ability_used[side]:
        state.tasks.pop()  # this side's support step is over
    return [
        event(
            "combat_bonus",
            f"{pieces.seat_name(state, seat)} uses {what}: {kind} +{amount}",
            seat,
            source=source,
            effect=kind,
        )
    ]


def _support_card(state: State, seat: int, move: PlayCard) -> list[Event]:
    side = state.tasks[-1][2]
    data = CARDS[move.card]
    state.players[seat].hand.remove(move.card)
    state.players[seat].discard.append(move.card)
    _fight(state).card_played[side] = True
    assert data.effect is not None
    return _bonus(state, seat, side, data.id, data.name, data.effect)


def _support_ability(state: State, seat: int, move: UseAbility) -> list[Event]:
    side = state.tasks[-1][2]
    fight = _fight(state)
    avatar = combat.side_avatar(state, fight, side)
    assert avatar is not None
    ability = pieces.abilities(avatar)[move.index]
    fight.ability_used[side] = True
    return _bonus(state, seat, side, ability.name, ability.name, ability.effect)


def _support_pass(state: State, seat: int, move: Pass) -> list[Event]:
    state.tasks.pop()
    return []


def _no_combat_card(state: State, seat: int, move: PlayCard) -> str:
    data = CARDS[move.card]
    if data.type in ("avatar", "item"):
        return "Avatar or Item cards can't be played during combat"
    return f"{data.name} cannot be played in this combat now"


def _not_a_choice(prompt: str) -> Callable[[State, int, Any], str]:
    def explain(state: State, seat: int, move: Any) -> str:
        return f"not a legal choice: {prompt}"

    return explain


def _passes(state: State, seat: int) -> list[Pass]:
    return [PASS]


SUPPORT: Row = {
    PlayCard: decision(rule.COMBAT, _support_plays, _support_card, _no_combat_card),
    UseAbility: decision(
        rule.COMBAT, _support_abilities, _support_ability, _not_a_choice(SUPPORT_PROMPT)
    ),
    Pass: decision(rule.COMBAT, _passes, _support_pass, _not_a_choice(SUPPORT_PROMPT)),
}


# --- the winner's ability -------------------------------------------------------------


def winner_may_act(state: State, uid: int) -> bool:
    avatar = state.avatars.get(uid)
    return avatar is not None and bool(action_abilities(state, avatar))


def _winner_abilities(state: State, seat: int) -> list[UseAbility]:
    avatar = state.avatars[state.tasks[-1][2]]
    return [UseAbility(i) for i in action_abilities(state, avatar)]


def _winner_passes(state: State, seat: int) -> list[Pass]:
    return [PASS] if winner_may_act(state, state.tasks[-1][2]) else []


def _winner_ability(state: State, seat: int, move: UseAbility) -> list[Event]:
    task = state.tasks.pop()
    events: list[Event] = []
    use_ability(state, state.avatars[task[2]], move.index, events)
    return events


def _winner_pass(state: State, seat: int, move: Pass) -> list[Event]:
    state.tasks.pop()
    return []


WINNER: Row = {
    UseAbility: decision(
        rule.ABILITY, _winner_abilities, _winner_ability, _not_a_choice(WINNER_PROMPT)
    ),
    Pass: decision(rule.ABILITY, _winner_passes, _winner_pass, _not_a_choice(WINNER_PROMPT)),
}


# --- the loser's choice: the Avatar or the cards --------------------------------------


def _removes(state: State, seat: int) -> list[RemoveAvatar]:
    return [REMOVE_AVATAR]


def _loses(state: State, seat: int) -> list[LoseCards]:
    return [LOSE_CARDS]


def _remove_avatar(state: State, seat: int, move: RemoveAvatar) -> list[Event]:
    task = state.tasks.pop()
    events: list[Event] = []
    pieces.remove_from_game(state, state.avatars[task[2]], events, why="given up instead of cards")
    return events


def _lose_cards(state: State, seat: int, move: LoseCards) -> list[Event]:
    task = state.tasks.pop()
    state.tasks.append(("lose", seat, task[3]))
    return []


YIELD: Row = {
    RemoveAvatar: decision(rule.LOSE, _removes, _remove_avatar, _not_a_choice(YIELD_PROMPT)),
    LoseCards: decision(rule.LOSE, _loses, _lose_cards, _not_a_choice(YIELD_PROMPT)),
}


# --- a retreat beside the Realm Stone -------------------------------------------------


def _retreats(state: State, seat: int) -> list[Retreat]:
    return [Retreat(loc) for loc in state.tasks[-1][3]]


def _retreat(state: State, seat: int, move: Retreat) -> list[Event]:
    task = state.tasks.pop()
    events: list[Event] = []
    combat.place_retreat(state, state.avatars[task[2]], move.location, events)
    return events


RETREAT: Row = {
    Retreat: decision(rule.RETREAT, _retreats, _retreat, _not_a_choice(RETREAT_PROMPT)),
}
