"""Small state changes many rules share: bursts on the score track, tokens, the cemetery."""

from __future__ import annotations

from bisect import insort

from services.kit.engine import Event

from .content import ADVENTURER, COMPANIONS, SPELLS, Effect
from .state import AFTERNOON, NOON, Player, State


def player_name(state: State, seat: int) -> str:
    adventurer = state.players[seat].adventurer
    return f"seat {seat}" + (f" ({ADVENTURER[adventurer].name})" if adventurer else "")


def move_score(player: Player, amount: int) -> int:
    """Move on the score track; never below 0 (the track starts at 0). Returns the change."""
    before = player.score
    player.score = max(0, before + amount)
    return player.score - before


def simultaneous(state: State) -> bool:
    """In a step where the seats decide at once, under the fixed rule (Options.simultaneous):
    one seat's moves do not change the shared supplies the others see until it ends."""
    return state.step in (NOON, AFTERNOON) and state.options.simultaneous == "fixed"


def take_rerolls(state: State, player: Player, amount: int) -> int:
    """Reroll tokens come from the reserve pool of 44 while it lasts.

    During Noon and the Afternoon they are only counted as due, and handed out when the
    step ends (``hand_out_rerolls``): which seat gets the last tokens must not depend on
    whose move arrived first. Nobody uses a token before the next Late Morning.
    """
    if simultaneous(state):
        player.rerolls_due += amount
        return amount
    got = min(amount, state.reroll_pool)
    state.reroll_pool -= got
    player.rerolls += got
    return got


def hand_out_rerolls(state: State) -> list[Event]:
    """The end of a simultaneous step: the reroll tokens due, from the first player
    clockwise (the order of play), while the reserve pool lasts."""
    events = []
    for turn in range(state.n):
        seat = (state.first + turn) % state.n
        player = state.players[seat]
        due, player.rerolls_due = player.rerolls_due, 0
        got = min(due, state.reroll_pool)
        state.reroll_pool -= got
        player.rerolls += got
        if got < due:
            events.append(
                Event(
                    "rerolls_short",
                    f"{player_name(state, seat)} gets {got} of {due} reroll tokens: "
                    "the reserve pool is empty",
                    seat,
                    {"due": due, "got": got},
                )
            )
    return events


def cemetery_for(state: State, seat: int) -> list[int]:
    """The cemetery as ``seat`` may take from it now: under the fixed rule, without the
    companions the other seats sent there during this Noon."""
    if not simultaneous(state):
        return list(state.cemetery)
    others = {c for other, p in enumerate(state.players) if other != seat for c in p.fallen}
    return [c for c in state.cemetery if c not in others]


def pool_for(state: State, seat: int) -> list[int]:
    """The reserve pool's dice as ``seat`` may take them now: under the fixed rule,
    without the dice the other seats' Sketals put back during this Noon."""
    if not simultaneous(state):
        return list(state.pool)
    others = {d for other, p in enumerate(state.players) if other != seat for d in p.returned}
    return [d for d in state.pool if d not in others]


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
        due = " (due when the step ends)" if simultaneous(state) else ""
        parts.append(f"{got:+d} reroll tokens{due}")
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
    if state.step == NOON:
        player.fallen.append(companion)
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
        if state.step == NOON:
            player.returned.append(die)
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
