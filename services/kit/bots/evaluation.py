"""What a bot's search scores: the game's evaluation, with one fallback for every game.

``values(engine, state, players)`` is, per seat, an estimate in [0, 1] of that seat's
chance to win (team mates share it). A finished game scores 1/len(winners) for each
winner and 0 for the rest (0 for all when everyone lost). An unfinished one asks the
game's optional ``evaluate(state)`` hook (services/<game>/engine/evaluate.py); a game
without that heuristic scores every seat 1/players, so a search there learns only from
rollouts that reach the end.
"""

from __future__ import annotations

from typing import Any

from services.kit.engine import Engine


def players_of(engine: Engine, state: Any) -> int:
    """How many seats ``state`` has: the game's fixed count, else its ``players`` list."""
    game = engine.GAME
    if game.min_players == game.max_players:
        return game.min_players
    seats = getattr(state, "players", None)
    if isinstance(seats, (list, tuple)):
        return len(seats)
    raise TypeError(
        f"{game.name}: the state has no players list to count seats from; pass players="
    )


def outcome_values(winners: tuple[int, ...], players: int) -> tuple[float, ...]:
    """A finished game's values: the win shared among the winners."""
    share = 1.0 / len(winners) if winners else 0.0
    return tuple(share if seat in winners else 0.0 for seat in range(players))


def values(engine: Engine, state: Any, players: int) -> tuple[float, ...]:
    """Per seat, the chance to win ``state`` gives it, in [0, 1] (see the module doc)."""
    done = engine.outcome(state)
    if done is not None:
        return outcome_values(done.winners, players)
    # The hook is optional: a game without a heuristic is scored evenly.
    evaluate = getattr(engine, "evaluate", None)
    if evaluate is None:
        return (1.0 / players,) * players
    return tuple(evaluate(state))
