"""Who finished where: a finished game's outcome as ranks, the input of a rating update.

openskill rates contestants (teams of one or more players) by rank, lower is better,
equal ranks a tie. From the outcome (services/kit/engine.py ``Outcome``) and the table:

1. A seat that gave up (resigned, or forfeited on time) is a contestant of its own and
   ranks last, below every side still playing, tied with any other seat that gave up. It
   leaves its side: its teammates are rated as the side that played on (a bot played
   the given-up seat, which no rating should credit or blame them for), and it is rated
   as having lost to everyone. The table already keeps it out of the winners.
2. The sides still playing with a winning seat rank first, tied with each other (a shared
   win is a tie for first).
3. The other sides rank after them by score, the sum of their seats' scores (higher
   first; Glow's points, Shén's cards left), equal scores tied. A game that everyone
   lost (Shrine's both out of treasure, Shén's no cards left) ranks every side by score.

Games the table ended off the rules, abandoned or expired, have no ranks: no one won
or lost them (:class:`NotRated`).
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from services.kit.engine import Outcome

# Outcome reasons of games the table ended with no result (services/kit/table.py ENDINGS).
NO_RESULT = frozenset({"ABANDONED", "EXPIRED"})


class NotRated(Exception):
    """The game is not rated; ``reason`` is an UPPER_SNAKE code (docs/ratings.md)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


@dataclass(frozen=True)
class Contestant:
    """Seats rated together (a side, or one seat that gave up) and their rank (1 first)."""

    seats: tuple[int, ...]
    rank: int
    gave_up: bool = False


def contestants(
    outcome: Outcome,
    sides: tuple[tuple[int, ...], ...],
    given_up: Collection[int] = (),
) -> tuple[Contestant, ...]:
    """The ranked contestants of a finished game, in side order (each side's playing
    seats, then each given-up seat in seat order)."""
    if outcome.reason in NO_RESULT:
        raise NotRated(outcome.reason, f"a game ended {outcome.reason.lower()} is not rated")
    seats = sorted(seat for side in sides for seat in side)
    if seats != list(range(len(outcome.scores))):
        raise ValueError("the sides must hold every seat of the outcome once")
    gone = set(given_up)
    if not gone <= set(seats):
        raise ValueError("a given-up seat is not a seat of the table")
    winners = set(outcome.winners) - gone
    playing = [tuple(s for s in side if s not in gone) for side in sides]
    scored = [
        (side, sum(outcome.scores[s] for s in full))
        for side, full in zip(playing, sides, strict=True)
        if side
    ]
    winning = [side for side, _ in scored if winners & set(side)]
    others = sorted({score for side, score in scored if side not in winning}, reverse=True)
    rank_of: dict[tuple[int, ...], int] = {}
    first = 1 if winning else 0
    for side, score in scored:
        rank_of[side] = 1 if side in winning else first + 1 + others.index(score)
    last = max(rank_of.values(), default=0) + 1
    found = [Contestant(side, rank_of[side]) for side, _ in scored]
    found.extend(Contestant((seat,), last, gave_up=True) for seat in sorted(gone))
    return tuple(found)
