"""The pools' Prometheus series (docs/metrics.md), each game's shapes at 0 from the start."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from services.kit.engine import GameInfo
from services.kit.matchmaking.pool import Match
from services.kit.matchmaking.pools import PoolKey
from services.kit.ratings.shapes import shapes

WAIT_BUCKETS = (0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 20.0, 30.0, 60.0, 120.0, 300.0)

POOL_PLAYERS = Gauge(
    "tabletop_pool_players", "Players waiting in a pool (FindMatch)", ["game", "shape", "rated"]
)
POOL_WAIT = Histogram(
    "tabletop_pool_wait_seconds",
    "From a player's FindMatch to its match",
    ["game", "shape", "rated"],
    buckets=WAIT_BUCKETS,
)
MATCHES = Counter(
    "tabletop_matches_total", "Tables made by matchmaking", ["game", "shape", "rated", "bots"]
)
DISSOLVED = Counter(
    "tabletop_matches_dissolved_total",
    "Matches not made into a table: a player left the moment it was made (or while its "
    "table was made: the table cancelled), its replicas did not accept it in time, or the "
    "table could not be created; the others were put back first",
    ["game", "why"],
)


def _rated(rated: bool) -> str:
    return "true" if rated else "false"


def start(info: GameInfo) -> None:
    for shape in shapes(info):
        for rated in (True, False):
            POOL_PLAYERS.labels(info.name, shape.name, _rated(rated))
            POOL_WAIT.labels(info.name, shape.name, _rated(rated))
            MATCHES.labels(info.name, shape.name, _rated(rated), "false")
        MATCHES.labels(info.name, shape.name, "false", "true")
    for why in ("left", "failed", "timeout"):
        DISSOLVED.labels(info.name, why)


def sizes(info: GameInfo, by_shape: dict[tuple[str, bool], int]) -> None:
    for shape in shapes(info):
        for rated in (True, False):
            POOL_PLAYERS.labels(info.name, shape.name, _rated(rated)).set(
                by_shape.get((shape.name, rated), 0)
            )


def matched(game: str, key: PoolKey, match: Match) -> None:
    bots = len(match.entries) < len(match.seats)
    seated(game, key, match.rated, bots, match.waits())


def seated(game: str, key: PoolKey, rated: bool, bots: bool, waits: list[float]) -> None:
    MATCHES.labels(game, key.shape.name, _rated(rated), "true" if bots else "false").inc()
    for waited in waits:
        POOL_WAIT.labels(game, key.shape.name, _rated(key.rated)).observe(waited)


def dissolved(game: str, why: str) -> None:
    DISSOLVED.labels(game, why).inc()
