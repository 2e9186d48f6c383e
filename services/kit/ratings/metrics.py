"""The ratings' Prometheus series (docs/metrics.md): every finished game of a rated
table by its result, and every seat's rating update. Each game's shapes and results are
there at 0 from the start."""

from __future__ import annotations

from prometheus_client import Counter

from services.kit.engine import GameInfo
from services.kit.ratings.job import RATED, RatingJob
from services.kit.ratings.shapes import shapes

# Why a finished game of a rated table was not rated (services/kit/ratings ranks, rate).
RESULTS = (RATED, "ABANDONED", "EXPIRED", "NOT_ALL_PLAYERS", "PLAYER_HOLDS_TWO_SEATS")

RATED_GAMES = Counter(
    "tabletop_rated_games_total",
    "Finished games of rated tables, by result: rated, or why not",
    ["game", "shape", "result"],
)
RATING_UPDATES = Counter(
    "tabletop_rating_updates_total",
    "Seats whose rating a finished game updated",
    ["game", "shape"],
)


def start(info: GameInfo) -> None:
    """Every series of this game at 0."""
    for shape in shapes(info):
        RATING_UPDATES.labels(info.name, shape.name)
        for result in RESULTS:
            RATED_GAMES.labels(info.name, shape.name, result)


def finished(job: RatingJob | None) -> None:
    """Count a rated table's finished game, once the store has written it."""
    if job is None:
        return
    verdict = job.verdict()
    RATED_GAMES.labels(job.game_type, job.shape.name, verdict).inc()
    if verdict == RATED:
        RATING_UPDATES.labels(job.game_type, job.shape.name).inc(len(job.players))
