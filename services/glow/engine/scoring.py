"""End of Game: the final count, the winner and the tie-break."""

from __future__ import annotations

from services.kit.engine import Event, Outcome

from .content import ADVENTURER, ARCHIPELAGO, COMPANIONS, FIREFLY_BONUS, PROVINCE
from .effects import move_score, player_name
from .state import Player, State


def card_bursts(player: Player) -> int:
    """1. Bursts of light on the adventurer and the companions, losses included."""
    return ADVENTURER[player.adventurer].card.bursts + sum(
        COMPANIONS[c].bursts for c in player.companions
    )


def journey_bursts(state: State, player: Player) -> int:
    """2. The encampment's village, or the islands of the four boats."""
    if state.options.board == "province":
        return max(0, PROVINCE.spots[player.encampment].village)
    return sum(ARCHIPELAGO.islands[i].value for i in player.boats)


def fireflies(player: Player) -> int:
    return player.fireflies + sum(COMPANIONS[c].fireflies for c in player.companions)


def firefly_bonus(player: Player) -> int:
    """3. Ten bursts if the fireflies are at least as many as the companions in play."""
    return FIREFLY_BONUS if fireflies(player) >= len(player.companions) else 0


def final_count(state: State) -> tuple[Outcome, list[Event]]:
    details = []
    events = []
    for seat, player in enumerate(state.players):
        start = player.score
        parts = []
        for label, amount in (
            ("cards", card_bursts(player)),
            ("journey", journey_bursts(state, player)),
            ("fireflies", firefly_bonus(player)),
            ("footprints", player.footprints),
        ):
            moved = move_score(player, amount)
            parts.append(f"{label} {moved:+d}")
        line = f"{player_name(state, seat)}: {start}, {', '.join(parts)} = {player.score}"
        details.append(line)
        events.append(Event("final_count", line, seat, {"score": player.score}))
    scores = tuple(p.score for p in state.players)
    best = max(scores)
    leaders = [s for s in range(state.n) if scores[s] == best]
    if len(leaders) == 1:
        winners, reason = leaders, "MOST_BURSTS_OF_LIGHT"
    else:
        most = max(state.players[s].rerolls for s in leaders)
        winners = [s for s in leaders if state.players[s].rerolls == most]
        reason = "TIE_MOST_REROLL_TOKENS" if len(winners) == 1 else "SHARED_VICTORY"
    outcome = Outcome(scores, tuple(winners), reason, tuple(details))
    text = ", ".join(player_name(state, w) for w in winners)
    events.append(Event("game_over", f"game over ({reason}): {text}", None, {"reason": reason}))
    return outcome, events
