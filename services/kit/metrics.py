"""Prometheus metrics, served on their own HTTP port (docs/metrics.md lists them all).

Calls are counted in the names of go-grpc-prometheus / py-grpc-prometheus
(``grpc_server_*``, ``grpc_client_*``, labels grpc_type, grpc_service, grpc_method and
grpc_code), so existing dashboards and alerts work; the games add ``tabletop_*``.

A game service exposes the default registry: its calls and its game families, labelled
by game, so several services in one process (tests) share them. The gateway builds a
registry of its own (``process_registry``) holding only what it sets: no empty game
families there, and in tests its counts never mix with the services'.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any

import grpc
from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    start_http_server,
)
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector

from services.kit import engine, status
from services.kit.corruption import CORRUPT_GAMES
from services.kit.store.base import DuplicateRequest, GameExists, VersionConflict

LATENCY_BUCKETS = (
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
    2.5, 5.0, 10.0,
)  # fmt: skip
ENGINE_BUCKETS = (
    0.000005, 0.00001, 0.000025, 0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005,
    0.01, 0.025, 0.1,
)  # fmt: skip

# grpc_type values, as go-grpc-prometheus names the four call shapes.
UNARY = "unary"
SERVER_STREAM = "server_stream"
CLIENT_STREAM = "client_stream"
BIDI_STREAM = "bidi_stream"

_CALL = ["grpc_type", "grpc_service", "grpc_method"]


class RpcMetrics:
    """The five call families of one side (``server`` or ``client``) in one registry."""

    def __init__(self, side: str, registry: CollectorRegistry = REGISTRY) -> None:
        who = "the server" if side == "server" else "the client"
        p = f"grpc_{side}"
        self.started = Counter(f"{p}_started", f"RPCs started on {who}", _CALL, registry=registry)
        self.handled = Counter(
            f"{p}_handled", f"RPCs completed on {who}, by status code",
            [*_CALL, "grpc_code"], registry=registry,
        )  # fmt: skip
        self.seconds = Histogram(
            f"{p}_handling_seconds",
            f"Time from an RPC's start to its status on {who} (streams: until they end)",
            _CALL, buckets=LATENCY_BUCKETS, registry=registry,
        )  # fmt: skip
        self.received = Counter(
            f"{p}_msg_received", f"Messages received by {who}", _CALL, registry=registry
        )
        self.sent = Counter(f"{p}_msg_sent", f"Messages sent by {who}", _CALL, registry=registry)

    def call(self, grpc_type: str, service: str, method: str) -> CallMetrics:
        return CallMetrics(self, grpc_type, service, method)


class CallMetrics:
    """One method's children, looked up once (the hot path only increments)."""

    def __init__(self, rpc: RpcMetrics, grpc_type: str, service: str, method: str) -> None:
        labels = (grpc_type, service, method)
        self._labels = labels
        self._handled = rpc.handled
        self._codes: dict[str, Any] = {}
        self.started = rpc.started.labels(*labels)
        self.seconds = rpc.seconds.labels(*labels)
        self.received = rpc.received.labels(*labels)
        self.sent = rpc.sent.labels(*labels)

    def handled(self, code: str, seconds: float) -> None:
        child = self._codes.get(code)
        if child is None:
            child = self._codes[code] = self._handled.labels(*self._labels, code)
        child.inc()
        self.seconds.observe(seconds)


@functools.cache
def server_metrics() -> RpcMetrics:
    """The game services' ``grpc_server_*`` families, in the default registry."""
    return RpcMetrics("server")


def process_registry() -> CollectorRegistry:
    """A fresh registry with the usual process_*, python_* collectors in it."""
    registry = CollectorRegistry(auto_describe=True)
    if PROCESS_COLLECTOR is not None:
        ProcessCollector(registry=registry)
    if PLATFORM_COLLECTOR is not None:
        PlatformCollector(registry=registry)
    if GC_COLLECTOR is not None:
        GCCollector(registry=registry)
    return registry


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
WATCHERS = Gauge("tabletop_watchers", "WatchGame streams open", ["game"])
STORE_ERRORS = Counter("tabletop_store_errors", "Store operations that raised an error", ["game"])


# The ``limit`` of every game limit a service refuses a call by (tabletop_limits_hit_total):
# the ``limit=`` of each LimitReached and WatcherTooSlow raised, and the quota a creator
# counts against (services.kit.creators.Owner.quota).
GAME_LIMITS = (
    "max_games",
    "games_per_client",
    "games_per_key",
    "games_per_owner",
    "waiting_per_client",
    "bot_tables_per_client",
    "all_bot_tables_per_client",
    "watch_stall",
    "watch_queue_limit",
    "games_per_player",
    "waiting_per_player",
)


def rejection_reasons() -> tuple[str, ...]:
    """The reason of every engine error class (a move the engine refuses is counted by it),
    subclasses an engine declares included."""
    reasons: list[str] = []
    classes: list[type[engine.EngineError]] = [engine.EngineError]
    while classes:
        cls = classes.pop(0)
        if cls.reason not in reasons:
            reasons.append(cls.reason)
        classes.extend(cls.__subclasses__())
    return tuple(reasons)


def auth_reasons() -> tuple[str, ...]:
    """The reason of every error answered UNAUTHENTICATED, as services.kit.status gives it."""
    reasons: list[str] = []
    for cls in status.KNOWN:
        code, reason, _ = status.classify(cls.__new__(cls))  # the class decides, not the text
        if code is grpc.StatusCode.UNAUTHENTICATED and reason not in reasons:
            reasons.append(reason)
    return tuple(reasons)


class GameMetrics:
    """The manager's reports, for one game type.

    Every series whose labels are known beforehand exists from the start, at 0: a family
    is never empty, and rate() sees the first refusal, not a series born at 1.
    """

    def __init__(self, game: str) -> None:
        for reason in rejection_reasons():
            MOVES_REJECTED.labels(game, reason)
        for reason in auth_reasons():
            AUTH_FAILURES.labels(game, reason)
        for limit in GAME_LIMITS:
            LIMITS_HIT.labels(game, limit)
        CORRUPT_GAMES.labels(game)
        self._applied = MOVES_APPLIED.labels(game)
        self._engine = ENGINE_SECONDS.labels(game)
        self._live = GAMES_LIVE.labels(game)
        self._created = GAMES_CREATED.labels(game)
        self._finished = GAMES_FINISHED.labels(game)
        self._watchers = WATCHERS.labels(game)
        self._store_errors = STORE_ERRORS.labels(game)
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

    async def watching(self, stream: AsyncIterator[Any]) -> AsyncGenerator[Any, None]:
        """``stream``, counted in tabletop_watchers until it ends or is closed (closing
        this closes ``stream`` too)."""
        self._watchers.inc()
        try:
            async for item in stream:
                yield item
        finally:
            self._watchers.dec()
            close = getattr(stream, "aclose", None)
            if close is not None:
                await close()

    def store_error(self) -> None:
        self._store_errors.inc()


EXPECTED = (VersionConflict, DuplicateRequest, GameExists)


class CountedStore:
    """A store whose failing operations are counted (``tabletop_store_errors_total``).

    Wraps every coroutine method of the store it is given; everything else passes through
    unchanged, so the manager cannot tell the difference. The store's answers that are part
    of its contract (a version conflict, a repeated request id, a taken game id) are not
    errors and are not counted.
    """

    def __init__(self, store: Any, metrics: GameMetrics) -> None:
        self._store = store
        self._metrics = metrics

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._store, name)
        if not inspect.iscoroutinefunction(value):
            return value
        metrics = self._metrics

        @functools.wraps(value)
        async def counted(*args: Any, **kwargs: Any) -> Any:
            try:
                return await value(*args, **kwargs)
            except EXPECTED:
                raise
            except Exception:
                metrics.store_error()
                raise

        setattr(self, name, counted)
        return counted


def serve_metrics(port: int, address: str, registry: CollectorRegistry = REGISTRY) -> int:
    """Start the /metrics HTTP endpoint; returns the bound port (0 picks a free one)."""
    server, _thread = start_http_server(port, addr=address, registry=registry)
    return int(server.server_port)
