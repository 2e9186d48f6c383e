"""Prometheus metrics of a game service, served on their own HTTP port.

One interceptor counts every RPC by method and code and times it; the game manager
reports games and moves. Metric objects are process-wide (prometheus_client's default
registry), labelled by game, so several services in one process (tests) share them.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram, start_http_server

LATENCY_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
)  # fmt: skip
ENGINE_BUCKETS = (
    0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
    0.01, 0.025, 0.1,
)  # fmt: skip

RPCS = Counter(
    "tabletop_rpc_requests", "RPCs handled, by service, method and status code",
    ["service", "method", "code"],
)  # fmt: skip
RPC_LATENCY = Histogram(
    "tabletop_rpc_latency_seconds", "Time to handle an RPC (for streams: until it ends)",
    ["service", "method"], buckets=LATENCY_BUCKETS,
)  # fmt: skip
RPC_IN_FLIGHT = Gauge("tabletop_rpc_in_flight", "RPCs being handled now", ["service", "method"])
GAMES_LIVE = Gauge("tabletop_games_live", "Games held in memory", ["game"])
GAMES_CREATED = Counter("tabletop_games_created", "Games created", ["game"])
GAMES_FINISHED = Counter("tabletop_games_finished", "Games that reached an outcome", ["game"])
MOVES_APPLIED = Counter("tabletop_moves_applied", "Moves accepted and logged", ["game"])
MOVES_REJECTED = Counter(
    "tabletop_moves_rejected", "Moves refused by the rules, by reason", ["game", "reason"]
)
ENGINE_SECONDS = Histogram(
    "tabletop_engine_move_seconds", "Engine time to validate and apply one move", ["game"],
    buckets=ENGINE_BUCKETS,
)  # fmt: skip
AUTH_FAILURES = Counter(
    "tabletop_auth_failures", "Calls refused for a missing or bad seat token", ["game", "reason"]
)
LIMITED = Counter("tabletop_limited", "Calls refused by a per-client limit", ["limit"])
LIMITS_HIT = Counter("tabletop_limits_hit", "Calls refused by a game limit", ["game", "limit"])


class GameMetrics:
    """The manager's reports, for one game type."""

    def __init__(self, game: str) -> None:
        self._applied = MOVES_APPLIED.labels(game)
        self._engine = ENGINE_SECONDS.labels(game)
        self._live = GAMES_LIVE.labels(game)
        self._created = GAMES_CREATED.labels(game)
        self._finished = GAMES_FINISHED.labels(game)
        self._game = game

    def move_applied(self, game: str, engine_seconds: float) -> None:
        self._applied.inc()
        self._engine.observe(engine_seconds)

    def move_rejected(self, game: str, reason: str) -> None:
        MOVES_REJECTED.labels(self._game, reason).inc()

    def games_live(self, game: str, count: int) -> None:
        self._live.set(count)

    def game_created(self, game: str) -> None:
        self._created.inc()

    def game_finished(self, game: str) -> None:
        self._finished.inc()

    def auth_failed(self, reason: str) -> None:
        AUTH_FAILURES.labels(self._game, reason).inc()

    def limit_hit(self, limit: str) -> None:
        LIMITS_HIT.labels(self._game, limit).inc()


def serve_metrics(port: int, address: str = "0.0.0.0") -> int:
    """Start the /metrics HTTP endpoint; returns the bound port (0 picks a free one)."""
    server, _thread = start_http_server(port, addr=address)
    return int(server.server_port)
