"""Small state changes many rules share: bursts on the score track, tokens, the cemetery."""

from __future__ import annotations

from bisect import insort

from services.kit.engine import Event

from .content import ADVENTURER, COMPANIONS, SPELLS, Effect
from .state import Player, State


def player_name(state: State, seat: int) -> str:
    adventurer = state.players[seat].adventurer
    return f"seat {seat}" + (f" ({ADVENTURER[adventurer].name})" if adventurer else "")


def move_score(player: Player, amount: int) -> int:
    """Move on the score track; never below 0 (the track starts at 0). Returns the change."""
    before = player.score
    player.score = max(0, before + amount)
    return player.score - before


def take_rerolls(state: State, player: Player, amount: int) -> int:
    """Reroll tokens come from the reserve pool of 44 while it lasts."""
    got = min(amount, state.reroll_pool)
    state.reroll_pool -= got
    player.rerolls += got
    return got


def apply_tokens(state: State, seat: int, effect: Effect, why: str) -> list[Event]:
    """Bursts, footprints, fireflies and reroll tokens of an effect (not skull/spell)."""
    player = state.players[seat]
    parts = []
    if effect.bursts:
        moved = move_score(player, effect.bursts)
        parts.append(f"{moved:+d} bursts (score {player.score})")
    if effect.footprints:
        before = player.footprints
        player.footprints = max(0, before + effect.footprints)
        parts.append(f"{player.footprints - before:+d} footprints")
    if effect.fireflies:
        player.fireflies += effect.fireflies
        parts.append(f"{effect.fireflies:+d} fireflies")
    if effect.rerolls:
        got = take_rerolls(state, player, effect.rerolls)
        parts.append(f"{got:+d} reroll tokens")
    if not parts:
        return []
    return [
        Event(
            "tokens",
            f"{player_name(state, seat)} {why}: {', '.join(parts)}",
            seat,
            {
                "bursts": effect.bursts,
                "footprints": effect.footprints,
                "fireflies": effect.fireflies,
                "rerolls": effect.rerolls,
                "score": player.score,
            },
        )
    ]


def to_cemetery(state: State, seat: int, companion: int, why: str) -> list[Event]:
    """A companion leaves play; a Sketal's large die goes back to the reserve pool."""
    player = state.players[seat]
    player.companions.remove(companion)
    insort(state.cemetery, companion)
    events = [
        Event(
            "cemetery",
            f"{player_name(state, seat)}: {COMPANIONS[companion].name} ({companion}) "
            f"goes to the cemetery ({why})",
            seat,
            {"companion": companion},
        )
    ]
    for pair in [p for p in player.sketal_dice if p[0] == companion]:
        die = pair[1]
        player.sketal_dice.remove(pair)
        if die in player.rolled:
            player.rolled.remove(die)
        if die in player.cancelled:
            player.cancelled.remove(die)
        state.pool.append(die)
        state.pool.sort()
        events.append(
            Event(
                "die_returned",
                f"{player_name(state, seat)}: die {die} returns to the reserve pool",
                seat,
                {"die": die},
            )
        )
    return events


def spell_text(spell: int) -> str:
    s = SPELLS[spell]
    return f"spell {spell} ({s.condition.text} -> {s.effect.text()}, and the companion under it)"
