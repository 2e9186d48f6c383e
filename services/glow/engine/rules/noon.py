"""Noon – Resolve the Cards: every seat at once, each in the order it chooses.

At the start of Noon the dice are fixed: the yellow, purple and black faces act at once
and the curse of the black die takes the matching dice out of the result. Then each seat
resolves, one by one, every card (adventurer, companions, revealed spells) whose
condition its dice meet; all triggered effects must be applied, so the step ends for a
seat when nothing is left to resolve.

The seats resolve at the same time, so what one seat does must not change what another
may do depending on whose move reaches the server first (Options.simultaneous "fixed"):
Cromaug takes back a companion from the cemetery as it stood when Noon began, with the
companions its own seat sent there since, not those the other seats sent there this Noon
(they fell at the same moment); a Sketal it raises takes its die from the reserve pool
likewise; the reroll tokens earned are handed out when the step ends, from the first
player clockwise. Everything else a seat resolves concerns its own cards, dice and tokens
(Xar'gok's spells go face down to the others and act from the next round).
"""

from __future__ import annotations

import dataclasses
from bisect import insort

from services.kit.engine import Event
from services.kit.kernel import Decision

from .. import rulebook
from ..content import (
    ADVENTURER,
    BLACK_DIE,
    BLACK_LOSS,
    BURST,
    COMPANIONS,
    CURSE,
    FOOTPRINT,
    PURPLE_FOOTPRINTS,
    SPELLS,
    YELLOW_BURST,
    Card,
    Condition,
    Effect,
)
from ..dice import counts, curse_cancels, symbol
from ..effects import (
    apply_tokens,
    cemetery_for,
    move_score,
    player_name,
    spell_text,
    to_cemetery,
)
from ..moves import ADVENTURER_REF, NONE, SPELL_REF, ChooseSketalDie, Raise, Resolve
from ..state import IDLE, NOON, RESOLVING, RESURRECT, Player, State
from .morning import (
    choose_sketal_die,
    companion_arrives,
    has_kaar,
    no_such_die,
    sketal_die_moves,
)


def start_noon(state: State) -> list[Event]:
    state.step = NOON
    events = []
    for player in state.players:
        player.fallen = []
        player.returned = []
    for seat in range(state.n):
        events += dice_faces(state, seat)
    for player in state.players:
        player.stage = RESOLVING
        player.done = False
        _check_done(state, player)
    return events


def dice_faces(state: State, seat: int) -> list[Event]:
    """The special faces (The Dice in Detail) and the curse of the black die.

    The gains come before the black die's loss, the order a player would choose.
    """
    player = state.players[seat]
    shown = [symbol(state, d) for d in player.rolled]
    bursts = YELLOW_BURST * shown.count(BURST)
    footprints = PURPLE_FOOTPRINTS * shown.count(FOOTPRINT)
    events = apply_tokens(
        state, seat, Effect(bursts=bursts, footprints=footprints), "from the dice faces"
    )
    if BLACK_DIE not in player.rolled:
        return events
    if has_kaar(player):
        events.append(
            Event("curse", f"{player_name(state, seat)} is immune to the curse (Kaar)", seat)
        )
        return events
    if symbol(state, BLACK_DIE) == CURSE:
        moved = move_score(player, -BLACK_LOSS)
        events.append(
            Event(
                "curse",
                f"{player_name(state, seat)}: the black die shows {-BLACK_LOSS} "
                f"({moved:+d} bursts, score {player.score})",
                seat,
                {"bursts": moved},
            )
        )
        return events
    player.cancelled = curse_cancels(state, player)
    events.append(
        Event(
            "curse",
            f"{player_name(state, seat)}: the curse of the black die cancels dice "
            f"{player.cancelled}",
            seat,
            {"cancelled": list(player.cancelled)},
        )
    )
    return events


def card_of(player: Player, ref: int) -> tuple[Condition, Effect, bool]:
    """(condition, effect, once) of a card reference."""
    if ref == ADVENTURER_REF:
        card: Card = ADVENTURER[player.adventurer].card
        return card.condition, card.effect, card.once
    if ref > SPELL_REF:
        spell = SPELLS[ref - SPELL_REF]
        return spell.condition, spell.effect, True
    card = COMPANIONS[ref]
    return card.condition, card.effect, card.once


def _refs(player: Player) -> list[int]:
    return [ADVENTURER_REF, *player.companions, *(SPELL_REF + s for s in player.spells)]


def triggered(state: State, player: Player) -> list[tuple[int, int]]:
    """(card reference, times) for every card not yet resolved whose condition is met."""
    c = counts(state, player)
    out = []
    for ref in _refs(player):
        if ref in player.resolved:
            continue
        condition, _, once = card_of(player, ref)
        times = condition.times(c)
        if times:
            out.append((ref, 1 if once else times))
    return out


def _check_done(state: State, player: Player) -> None:
    if player.stage == RESOLVING and not triggered(state, player):
        player.stage = IDLE
        player.done = True


# --- the decision: resolve one triggered card, in the order the player chooses -----------


def resolve_moves(state: State, seat: int) -> list[Resolve]:
    return [Resolve(ref) for ref in sorted(ref for ref, _ in triggered(state, state.players[seat]))]


def resolve(state: State, seat: int, move: Resolve) -> list[Event]:
    player = state.players[seat]
    ref = move.card
    times = dict(triggered(state, player))[ref]
    condition, effect, _ = card_of(player, ref)
    player.resolved.append(ref)
    name = (
        f"{ADVENTURER[player.adventurer].name}"
        if ref == ADVENTURER_REF
        else spell_text(ref - SPELL_REF)
        if ref > SPELL_REF
        else f"{COMPANIONS[ref].name} ({ref})"
    )
    events = [
        Event(
            "resolve",
            f"{player_name(state, seat)} resolves {name}: {condition.text} x{times}",
            seat,
            {"card": ref, "times": times},
        )
    ]
    scaled = dataclasses.replace(
        effect,
        bursts=effect.bursts * times,
        footprints=effect.footprints * times,
        fireflies=effect.fireflies * times,
        rerolls=effect.rerolls * times,
    )
    events += apply_tokens(state, seat, scaled, f"from {name}")
    if ref > SPELL_REF:
        # Xar'gok: the companion under the spell goes, without its effect; the token is boxed.
        spell = ref - SPELL_REF
        player.spells.remove(spell)
        insort(state.spell_box, spell)
        if player.companions:
            events += to_cemetery(state, seat, player.companions[-1], "a spell")
    elif effect.skull and ref != ADVENTURER_REF:
        events += to_cemetery(state, seat, ref, "skull")
    if effect.spell:
        events += cast_spells(state, seat)
    if effect.resurrect and any(c != ref for c in cemetery_for(state, seat)):
        player.pending = ref
        player.stage = RESURRECT
    _check_done(state, player)
    return events


def _not_triggered(state: State, seat: int, move: Resolve) -> str:
    if move.card in state.players[seat].resolved:
        return "this card was already resolved this round"
    return "this card is not in play or its condition is not met by the dice"


def _triggered(state: State, seat: int, move: Resolve) -> bool:
    """Whether ``resolve_moves`` lists the card, without listing them all."""
    player = state.players[seat]
    card = move.card
    if card in player.resolved:
        return False
    if card > SPELL_REF:
        if card - SPELL_REF not in player.spells:
            return False
    elif card != ADVENTURER_REF and card not in player.companions:
        return False
    condition, _, _ = card_of(player, card)
    return condition.times(counts(state, player)) > 0


RESOLVING_A_CARD = Decision(
    rule=rulebook.RESOLVE_THE_CARDS,
    moves=resolve_moves,
    allows=_triggered,
    explain=_not_triggered,
    do=resolve,
)


def cast_spells(state: State, seat: int) -> list[Event]:
    """Xar'gok: each other player, clockwise, takes a spell token face down."""
    events = []
    for step in range(1, state.n):
        other = (seat + step) % state.n
        if not state.spell_pile:
            break
        spell = state.spell_pile.pop(0)
        state.players[other].hidden_spells.append(spell)
        events.append(
            Event(
                "spell",
                f"{player_name(state, other)} takes a face-down spell token",
                other,
                {"spell_pile": len(state.spell_pile)},
            )
        )
        events.append(
            Event(
                "spell_secret",
                f"{player_name(state, other)} takes {spell_text(spell)}",
                other,
                {"spell": spell},
                to=frozenset({other}),
            )
        )
    return events


# --- the decision of Cromaug: a companion back from the cemetery, or no one --------------


def raise_moves(state: State, seat: int) -> list[Raise]:
    """Cromaug's choice: no one, or a companion from the cemetery as this seat sees it
    (see ``cemetery_for``), but not Cromaug itself."""
    pending = state.players[seat].pending
    return [Raise(NONE)] + [Raise(c) for c in cemetery_for(state, seat) if c != pending]


def resurrect(state: State, seat: int, move: Raise) -> list[Event]:
    """Cromaug: a companion of the player's choice from the cemetery, now the last recruit."""
    player = state.players[seat]
    player.pending = 0
    player.stage = RESOLVING
    if move.companion == NONE:
        _check_done(state, player)
        return [Event("resurrect", f"{player_name(state, seat)} takes no one back", seat)]
    companion = move.companion
    state.cemetery.remove(companion)
    player.companions.append(companion)
    events = [
        Event(
            "resurrect",
            f"{player_name(state, seat)} takes {COMPANIONS[companion].name} ({companion}) "
            "back from the cemetery",
            seat,
            {"companion": companion},
        )
    ]
    player.stage = IDLE
    events += companion_arrives(state, seat, companion)
    if player.stage == IDLE:
        player.stage = RESOLVING
    _check_done(state, player)
    return events


def _not_in_cemetery(state: State, seat: int, move: Raise) -> str:
    companion = move.companion
    if companion == state.players[seat].pending:
        return "Cromaug cannot take itself back from the cemetery"
    if companion in state.cemetery:
        return (
            f"companion {companion} went to the cemetery from another seat during this "
            "Noon, at the same time: it cannot be taken back before the next Noon"
        )
    return f"companion {companion} is not in the cemetery to take back"


def _raisable(state: State, seat: int, move: Raise) -> bool:
    companion = move.companion
    if companion == NONE:
        return True
    return companion != state.players[seat].pending and companion in cemetery_for(state, seat)


RAISING = Decision(
    rule=rulebook.CROMAUG,
    moves=raise_moves,
    allows=_raisable,
    explain=_not_in_cemetery,
    do=resurrect,
)


# --- the decision of a multicoloured Sketal raised by Cromaug: its die's colour -----------


def raised_sketal_die(state: State, seat: int, move: ChooseSketalDie) -> list[Event]:
    """The Sketal has its die: back to resolving."""
    events = choose_sketal_die(state, seat, move)
    player = state.players[seat]
    player.stage = RESOLVING
    _check_done(state, player)
    return events


CHOOSING_A_RAISED_SKETAL_DIE = Decision(
    rule=rulebook.SKETALS, moves=sketal_die_moves, explain=no_such_die, do=raised_sketal_die
)
