"""The rating of one finished game, as the finishing append carries it to the store.

The game manager builds a :class:`RatingJob` from a rated table when an entry finishes
the game; the store rates it inside the transaction that writes that entry (it reads and
locks the seats' standings there), so the game is rated exactly when it is finished:
never twice, never skipped (docs/ratings.md, "Exactly once").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.kit.engine import Outcome
from services.kit.ratings.ranks import NotRated
from services.kit.ratings.rate import Rated, RatedGame, SeatPlayer, check_game, rate_game
from services.kit.ratings.scale import Standing
from services.kit.ratings.shapes import Shape

RATED = "rated"  # the verdict of a game that was rated (else the NotRated reason)


@dataclass(frozen=True)
class RatingJob:
    """A finished game of a rated table: who held each seat, and how it ended."""

    game_id: str
    shape: Shape
    players: tuple[str | None, ...]  # per seat: the player id, None for none
    names: tuple[str, ...]  # per seat: the name the seat showed (leaderboards)
    outcome: Outcome
    given_up: frozenset[int] = frozenset()

    @property
    def game_type(self) -> str:
        return self.shape.game

    def rated_game(self) -> RatedGame:
        """What the store keeps of it: the rebuild's input."""
        return RatedGame(self.game_id, self.shape, self.players, self.outcome, self.given_up)

    def rate(self, standings: Mapping[str, Standing]) -> Rated:
        """The update on the seats' current ``standings`` (a player missing: a newcomer);
        raises NotRated as :func:`rate_game` does."""
        seats = [
            None if p is None else SeatPlayer(p, standings.get(p, Standing())) for p in self.players
        ]
        return rate_game(self.shape, seats, self.outcome, self.given_up)

    def verdict(self) -> str:
        """``"rated"`` or the NotRated reason: what the store decides, known without it
        (no reason depends on the standings)."""
        try:  # the checks alone: running the model twice a game cost as much again
            check_game(self.shape, self.players, self.outcome, self.given_up)
        except NotRated as exc:
            return exc.reason
        return RATED

    def name_of(self, player: str) -> str:
        for seat, held in enumerate(self.players):
            if held == player:
                return self.names[seat] if seat < len(self.names) else ""
        return ""


def job_for(
    game_id: str,
    shape: Shape | None,
    seat_players: Sequence[str],
    names: Sequence[str],
    outcome: Outcome | None,
    given_up: Sequence[int],
) -> RatingJob | None:
    """The job of a rated table's finishing entry (None without a shape or an outcome):
    ``seat_players`` per seat, "" where no player holds it."""
    if shape is None or outcome is None:
        return None
    return RatingJob(
        game_id,
        shape,
        tuple(p or None for p in seat_players),
        tuple(names),
        outcome,
        frozenset(given_up),
    )


def result_dict(job: RatingJob) -> dict[str, Any]:
    """The stored result (``tabletop_rated_games.result``), with the seats' names."""
    return {**job.rated_game().to_dict(), "names": list(job.names)}
