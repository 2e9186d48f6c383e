"""Following a move: "you can also Use an ability of a Ready Avatar ... or Make a Ranged
Attack from one of your Ready Avatars", or pass.

The Avatar that moved (or held still: ``hold``) is ``State.mover``. Its abilities are
also what the winner of a combat may use (phases/combat.py).
"""

from __future__ import annotations

from services.kit.engine import Event

from .. import board as geometry
from .. import cards, combat, pieces
from .. import rulebook as rule
from ..content import CARDS
from ..moves import PASS, Pass, RangedAttack, UseAbility
from ..state import RANGED_REACH, State, Step
from .base import Row, decision, event

PROMPT = "following a move: an ability, a ranged attack or pass"


def action_abilities(state: State, avatar: pieces.Avatar) -> list[int]:
    """Abilities usable now: "if that Avatar is in a space or vertex which is surrounded
    by as many or more Shén counters than its ability's power cost", with a target."""
    have = pieces.count(state, avatar.owner, avatar.loc)
    return [
        i
        for i, ability in enumerate(pieces.abilities(avatar))
        if ability.timing == "action"
        and have >= ability.cost
        and cards.ability_targets(state, avatar.owner, avatar.loc, ability.effect)
    ]


def ranged_targets(state: State, avatar: pieces.Avatar) -> list[int]:
    """ "targeting any other Avatar 0-4 spaces away"; not to or from the Spirit Path."""
    if avatar.loc >= geometry.VERTEX or pieces.trait(state, avatar, "ranged") <= 0:
        return []
    b = state.board
    return sorted(
        a.loc
        for a in state.avatars.values()
        if a.loc < geometry.VERTEX
        and not state.teammates(avatar.owner, a.owner)
        and b.distance(avatar.loc, a.loc) <= RANGED_REACH
    )


def may_act(state: State, avatar: pieces.Avatar) -> bool:
    """Has the Avatar anything to do following a move (an ability or a Ranged Attack)?"""
    return avatar.ready and bool(action_abilities(state, avatar) or ranged_targets(state, avatar))


def use_ability(state: State, avatar: pieces.Avatar, index: int, events: list[Event]) -> None:
    """ "Turn that Avatar's card 90 degrees to show it is now Exhausted", then the effect
    (its target asked for when there is a choice)."""
    ability = pieces.abilities(avatar)[index]
    avatar.ready = False
    events.append(
        event(
            "ability",
            f"{CARDS[avatar.card].name} of {pieces.seat_name(state, avatar.owner)}"
            f" uses {ability.name}",
            avatar.owner,
            ability=ability.name,
            at=geometry.name(avatar.loc),
        )
    )
    targets = cards.ability_targets(state, avatar.owner, avatar.loc, ability.effect)
    if targets == [-1]:
        cards.resolve(state, avatar.owner, ability.effect, -1, events)
    elif ability.effect.target == "foe" and len(targets) == 1:
        cards.resolve(state, avatar.owner, ability.effect, targets[0], events)
    else:
        state.tasks.append(("target", avatar.owner, avatar.uid, index))


def _back_to_command(state: State) -> None:
    state.mover = -1
    state.step = Step.COMMAND


# --- Use an ability -------------------------------------------------------------------


def _abilities(state: State, seat: int) -> list[UseAbility]:
    mover = state.avatars[state.mover]
    if not mover.ready:
        return []
    return [UseAbility(i) for i in action_abilities(state, mover)]


def _ability(state: State, seat: int, move: UseAbility) -> list[Event]:
    avatar = state.avatars[state.mover]
    _back_to_command(state)
    events: list[Event] = []
    use_ability(state, avatar, move.index, events)
    return events


def _no_ability(state: State, seat: int, move: UseAbility) -> str:
    return f"{move} is not possible now"


# --- Make a Ranged Attack -------------------------------------------------------------


def _ranged_attacks(state: State, seat: int) -> list[RangedAttack]:
    mover = state.avatars[state.mover]
    if not mover.ready:
        return []
    return [RangedAttack(t) for t in ranged_targets(state, mover)]


def _ranged(state: State, seat: int, move: RangedAttack) -> list[Event]:
    avatar = state.avatars[state.mover]
    avatar.ready = False
    _back_to_command(state)
    target = state.avatars[state.at[move.target]]
    events: list[Event] = []
    combat.start(
        state, "ranged", avatar.uid, avatar.loc, move.target, target.owner, target.uid, events
    )
    return events


def _no_ranged(state: State, seat: int, move: RangedAttack) -> str:
    return (
        "the target must be an opponent's Avatar in a space 0-4 spaces away, and the"
        " attacker Ready, in a space, with Ranged Attack Power"
    )


# --- or pass --------------------------------------------------------------------------


def _passes(state: State, seat: int) -> list[Pass]:
    return [PASS]


def _pass(state: State, seat: int, move: Pass) -> list[Event]:
    _back_to_command(state)
    return []


def _no_pass(state: State, seat: int, move: Pass) -> str:  # pragma: no cover - always open
    return f"{move} is not possible now"


ROW: Row = {
    UseAbility: decision(rule.ABILITY, _abilities, _ability, _no_ability),
    RangedAttack: decision(rule.RANGED, _ranged_attacks, _ranged, _no_ranged),
    Pass: decision(rule.PHASES, _passes, _pass, _no_pass),
}
