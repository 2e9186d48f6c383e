"""A game service at run time: the gRPC server, health, reflection, metrics, drain.

``create_server(address, spec, manager)`` returns ``(server, port)`` with everything
registered, so tests bind ``127.0.0.1:0``. ``main(name)`` is what
``python -m services.<name>`` runs: configuration from the environment (``--help``
lists it), logs, store, metrics endpoint, and a graceful drain on SIGTERM.
"""

from __future__ import annotations

import asyncio
import gc
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from services import registry
from services.kit import config, creators, logs, overload, players, reflection, tracing
from services.kit.bots.pool import BotPool
from services.kit.drain import Drain, leave
from services.kit.errors import Unavailable
from services.kit.games import GameManager
from services.kit.interceptor import ObservingInterceptor
from services.kit.limits import CLIENT_LIMITS, GRPC_METADATA_BYTES, ClientLimits, Limits
from services.kit.matchmaking.settings import settings as matchmaking_settings
from services.kit.metrics import (
    LIMITED,
    CountedStore,
    GameMetrics,
    serve_metrics,
    server_metrics,
)
from services.kit.outbox.settings import settings as outbox_settings
from services.kit.outbox.settings import start as start_outbox
from services.kit.players import seats as holders
from services.kit.service import GameService, handlers
from services.kit.store import StoreError, open_store_or_exit
from services.kit.tls import ServerTls, bind, server_tls

HEALTH_SERVICE = health.SERVICE_NAME


def process_settings(port: int, metrics_port: int, max_connection_age: str) -> list[config.Setting]:
    """What every server process reads, the game services and the gateway alike."""
    S = config.Setting
    return [
        S("host", "TABLETOP_HOST", "0.0.0.0", "str", "address to listen on"),
        S("port", "TABLETOP_PORT", str(port), "port", "gRPC port"),
        S("metrics_port", "TABLETOP_METRICS_PORT", str(metrics_port), "port",
          "Prometheus /metrics port (0: none)"),
        S("metrics_host", "TABLETOP_METRICS_HOST", "", "str",
          "address the /metrics port listens on ('': the same as TABLETOP_HOST)"),
        S("log_level", "TABLETOP_LOG_LEVEL", "info", "str", "debug, info, warning or error"),
        S("log_format", "TABLETOP_LOG_FORMAT", "json", "str", "json or console"),
        S("access_log", "TABLETOP_ACCESS_LOG", "true", "bool", "one log line per call"),
        S("access_log_sample", "TABLETOP_ACCESS_LOG_SAMPLE", "1", "int",
          "write the access line of one in N successful calls (1: every call); a call "
          "ending in any other status is always written"),
        S("event_loop", "TABLETOP_EVENT_LOOP", "auto", "str",
          "asyncio event loop: uvloop, asyncio, or auto (uvloop when it is installed)"),
        S("gc_threshold", "TABLETOP_GC_THRESHOLD", str(GC_THRESHOLD), "int",
          "allocations between the garbage collector's young collections (0: Python's "
          "own, 700)"),
        S("gc_freeze", "TABLETOP_GC_FREEZE", "true", "bool",
          "at start, put every object then alive out of the collector's reach "
          "(gc.freeze): its full collections walk only what calls created"),
        S("max_message_bytes", "TABLETOP_MAX_MESSAGE_BYTES", "1048576", "int",
          "largest request accepted"),
        S("max_connection_age", "TABLETOP_MAX_CONNECTION_AGE_SECONDS", max_connection_age,
          "float", "close connections after this long so clients re-resolve (0: never)"),
        S("max_concurrent_calls", "TABLETOP_MAX_CONCURRENT_CALLS", "10000", "int",
          "unary calls handled at once; beyond, RESOURCE_EXHAUSTED (0: no limit)"),
        S("drain_seconds", "TABLETOP_DRAIN_SECONDS", "20", "float",
          "on SIGTERM, time given to calls in flight; new calls get UNAVAILABLE"),
        *tls_settings(),
        S("health_port", "TABLETOP_HEALTH_PORT", "0", "port",
          "plaintext port serving only grpc.health.v1, for probes that cannot speak TLS "
          "(kubelet's, the image's) when the gRPC port does (0: none)"),
    ]  # fmt: skip


def settings(entry: registry.ServiceEntry) -> list[config.Setting]:
    """The environment a game service reads; defaults come from the service list."""
    S = config.Setting
    return [
        *process_settings(entry.port, entry.metrics_port, max_connection_age="300"),
        S("store_url", "TABLETOP_STORE_URL", f"sqlite:///data/{entry.name}.db", "str",
          "move log: sqlite:///path, memory:// or postgresql://user:pass@host/db"),
        S("allow_seed", "TABLETOP_ALLOW_SEED", "false", "bool",
          "accept a client's seed in CreateGame (tests, replays; never for real play)"),
        S("max_live_games", "TABLETOP_MAX_LIVE_GAMES", "100000", "int",
          "games kept in memory; idle ones beyond are rebuilt from the log when needed"),
        S("watch_queue_limit", "TABLETOP_WATCH_QUEUE_LIMIT", "1000", "int",
          "updates queued for one slow watcher before its stream is ended"),
        S("watch_stall_seconds", "TABLETOP_WATCH_STALL_SECONDS", "30", "float",
          "a watcher that lets no update through for this long (its HTTP/2 window shut) is "
          "ended with WATCHER_TOO_SLOW (0: never)"),
        S("max_games", "TABLETOP_MAX_GAMES", "100000", "int",
          "games in progress this instance accepts (0: no limit); CreateGame beyond it is refused"),
        *creators.settings(),
        *players.settings(),
        *holders.settings(),
        S("retention", "TABLETOP_FINISHED_RETENTION_SECONDS", "604800", "float",
          "finished games are kept this long for history and replay, then removed (0: forever)"),
        S("sweep_interval", "TABLETOP_SWEEP_INTERVAL_SECONDS", "600", "float",
          "how often finished games past their retention are removed"),
        S("waiting_ttl", "TABLETOP_WAITING_TTL_SECONDS", "3600", "float",
          "a table whose open seats are not all taken this long after its creation expires "
          "(0: never)"),
        S("idle_game", "TABLETOP_IDLE_GAME_SECONDS", "604800", "float",
          "a game in progress in which no person made a move (or joined, or resigned) this "
          "long ends as abandoned, clock or not, bots or not (0: never)"),
        S("waiting_per_client", "TABLETOP_WAITING_PER_CLIENT", "20", "int",
          "tables waiting for players one client address (or application key) may hold "
          "(0: no limit)"),
        S("bot_tables_per_client", "TABLETOP_BOT_TABLES_PER_CLIENT", "10", "int",
          "unfinished tables with a bot seat one client address (or application key) may "
          "hold (0: no limit)"),
        S("all_bot_tables_per_client", "TABLETOP_ALL_BOT_TABLES_PER_CLIENT", "2", "int",
          "unfinished tables of bots alone one client address (or application key) may "
          "hold (0: no limit)"),
        S("bot_workers", "TABLETOP_BOT_WORKERS", "0", "int",
          "processes searching bot moves (0: one less than the cores, at least one)"),
        S("bot_ms", "TABLETOP_BOT_MS_PER_DECISION", "500", "float",
          "the time a hard bot takes for one decision (medium a fifth of it)"),
        S("bot_warm", "TABLETOP_BOT_WARM", "true", "bool",
          "start the bot workers with the service, so no bot's first move waits for a "
          "process to start (false: at the first table with a bot)"),
        S("clock_interval", "TABLETOP_CLOCK_INTERVAL_SECONDS", "", "str",
          "how often the store is asked for deadlines, idle and waiting tables and bot "
          "turns left behind (the games this process holds ring at every due time "
          "themselves); "
          f"empty: {CLOCK_INTERVAL_SHARED} s with a store replicas share (PostgreSQL), "
          f"{CLOCK_INTERVAL_OWN} s with one this process owns (SQLite, memory)"),
        *limit_settings(rate="0", burst="1000", streams="0", auth_failures="0"),
        *outbox_settings(),
        *matchmaking_settings(),
    ]  # fmt: skip


def limit_settings(rate: str, burst: str, streams: str, auth_failures: str) -> list[config.Setting]:
    """Per-client limits; the gateway and the services share them (with their defaults)."""
    S = config.Setting
    return [
        S("rate_per_client", "TABLETOP_RATE_PER_CLIENT", rate, "float",
          "calls a second per client address (0: no limit)"),
        S("burst_per_client", "TABLETOP_BURST_PER_CLIENT", burst, "float",
          "calls a client may make at once above its rate"),
        S("streams_per_client", "TABLETOP_STREAMS_PER_CLIENT", streams, "int",
          "open WatchGame streams per client address (0: no limit)"),
        S("auth_failures_per_client", "TABLETOP_AUTH_FAILURES_PER_CLIENT", auth_failures, "int",
          "failed authentications a client may make per window before it is refused (0: no limit)"),
        S("auth_failure_window", "TABLETOP_AUTH_FAILURE_WINDOW_SECONDS", "60", "float",
          "the window for TABLETOP_AUTH_FAILURES_PER_CLIENT"),
        S("trust_forwarded_for", "TABLETOP_TRUST_FORWARDED_FOR", "false", "bool",
          "take the client's address from x-forwarded-for (only behind the gateway)"),
    ]  # fmt: skip


def tls_settings() -> list[config.Setting]:
    S = config.Setting
    return [
        S("tls_cert", "TABLETOP_TLS_CERT", "", "str", "PEM certificate chain: serve TLS"),
        S("tls_key", "TABLETOP_TLS_KEY", "", "str", "PEM private key for TABLETOP_TLS_CERT"),
        S("tls_client_ca", "TABLETOP_TLS_CLIENT_CA", "", "str",
          "PEM CA: require client certificates signed by it (mutual TLS)"),
    ]  # fmt: skip


def metrics_host(cfg: config.Config) -> str:
    """The /metrics listener follows TABLETOP_HOST unless told otherwise: a process kept to
    loopback does not publish its metrics to every network it is on."""
    host: str = cfg.metrics_host or cfg.host
    return host


def limits_from(cfg: config.Config) -> Limits:
    return Limits(
        max_message_bytes=cfg.max_message_bytes,
        rate_per_client=cfg.rate_per_client,
        burst_per_client=cfg.burst_per_client,
        streams_per_client=cfg.streams_per_client,
        auth_failures_per_client=cfg.auth_failures_per_client,
        auth_failure_window=cfg.auth_failure_window,
        trust_forwarded_for=cfg.trust_forwarded_for,
    )


HARD_MAX_MESSAGE_BYTES = 16 * 1024 * 1024


def server_options(max_message_bytes: int, max_connection_age: float) -> list[tuple[str, int]]:
    # gRPC itself refuses only what is beyond a hard ceiling; the configured limit is
    # checked by ClientLimits, which answers with a reason and counts it. Metadata alike:
    # gRPC's own soft limit (8 KiB) refused calls below the documented 16 KiB at random.
    options = [
        ("grpc.max_receive_message_length", max(max_message_bytes, HARD_MAX_MESSAGE_BYTES)),
        ("grpc.max_send_message_length", 16 * 1024 * 1024),
        ("grpc.max_metadata_size", GRPC_METADATA_BYTES),
        ("grpc.absolute_max_metadata_size", GRPC_METADATA_BYTES),
        ("grpc.so_reuseport", 0),
        *overload.core_options(),
    ]
    if max_connection_age > 0:
        options += [
            ("grpc.max_connection_age_ms", int(max_connection_age * 1000)),
            ("grpc.max_connection_age_grace_ms", 30_000),
        ]
    return options


def create_server(
    address: str,
    spec: GameService,
    manager: GameManager,
    *,
    access_log: bool = True,
    access_log_sample: int = 1,
    max_message_bytes: int = 1024 * 1024,
    max_connection_age: float = 0,
    drain: Drain | None = None,
    limits: Limits | None = None,
    tls: ServerTls | None = None,
    max_concurrent_calls: int = 10_000,
) -> tuple[grpc.aio.Server, int, health.aio.HealthServicer]:
    """A ready-to-start server for one game; returns it, the bound port and its health."""
    for limit in CLIENT_LIMITS:  # each a series at 0 from the start, as on the gateway
        LIMITED.labels(limit)
    server = grpc.aio.server(
        interceptors=[
            ObservingInterceptor(
                server_metrics(),
                access_log=access_log,
                access_log_sample=access_log_sample,
                guards=(
                    drain or Drain(),
                    overload.ConcurrencyLimit(max_concurrent_calls, LIMITED),
                    ClientLimits(limits or Limits(max_message_bytes=max_message_bytes), LIMITED),
                ),
            ),
        ],
        options=server_options(max_message_bytes, max_connection_age),
    )
    server.add_generic_rpc_handlers([handlers(spec, manager)])
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    reflection.enable(server, (spec.name, HEALTH_SERVICE))
    return server, bind(server, address, tls), health_servicer


async def serve_health(
    host: str, port: int, health_servicer: health.aio.HealthServicer
) -> tuple[grpc.aio.Server, int]:
    """A plaintext listener with nothing but the health service, sharing ``health_servicer``
    with the main server, so it reports the same status (NOT_SERVING while draining).

    Kubernetes' gRPC probes and the image's HEALTHCHECK speak plaintext only; with TLS (and
    especially mutual TLS) on the gRPC port they need this port to see the process at all.
    It tells nothing but SERVING or NOT_SERVING.
    """
    server = grpc.aio.server(options=[("grpc.so_reuseport", 0)])
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    bound = bind(server, f"{host}:{port}", None)
    await server.start()
    return server, bound


async def set_serving(
    health_servicer: health.aio.HealthServicer, names: Sequence[str], up: bool
) -> None:
    status = (
        health_pb2.HealthCheckResponse.SERVING if up else health_pb2.HealthCheckResponse.NOT_SERVING
    )
    for name in ("", *names):
        await health_servicer.set(name, status)


def player_policy(cfg: config.Config) -> holders.PlayerPolicy:
    """Players' tokens and limits as the settings say; SystemExit with one line if wrong."""
    try:
        return holders.policy_from(cfg)
    except config.ConfigError as exc:
        raise SystemExit(f"configuration error: {exc}") from None


async def serve(entry: registry.ServiceEntry, cfg: config.Config) -> None:
    log = structlog.get_logger("server")
    spec = GameService.load(entry)
    metrics = GameMetrics(entry.name)
    store = CountedStore(open_store_or_exit(cfg.store_url), metrics)
    interval = clock_interval(cfg.clock_interval, shared=hasattr(store, "listen"))
    bots = BotPool(cfg.bot_workers or None, cfg.bot_ms)
    manager = GameManager(
        spec.engine,
        store,
        metrics=metrics,
        allow_seed=cfg.allow_seed,
        max_live_games=cfg.max_live_games,
        max_games=cfg.max_games,
        watch_queue_limit=cfg.watch_queue_limit,
        watch_stall_seconds=cfg.watch_stall_seconds,
        creators=creators.from_config(cfg),
        players=player_policy(cfg),
        waiting_ttl=cfg.waiting_ttl,
        idle_seconds=cfg.idle_game,
        waiting_per_client=cfg.waiting_per_client,
        bot_tables_per_client=cfg.bot_tables_per_client,
        all_bot_tables_per_client=cfg.all_bot_tables_per_client,
        bots=bots,
        bot_games=bots.workers,
    )
    await manager.start()
    drain = Drain()
    server, port, health_servicer = create_server(
        f"{cfg.host}:{cfg.port}",
        spec,
        manager,
        access_log=cfg.access_log,
        access_log_sample=cfg.access_log_sample,
        max_message_bytes=cfg.max_message_bytes,
        max_connection_age=cfg.max_connection_age,
        drain=drain,
        limits=limits_from(cfg),
        tls=server_tls(cfg.tls_cert, cfg.tls_key, cfg.tls_client_ca),
        max_concurrent_calls=cfg.max_concurrent_calls,
    )
    metrics_port = serve_metrics(cfg.metrics_port, metrics_host(cfg)) if cfg.metrics_port else None
    listener = None
    if hasattr(store, "listen"):
        # Several replicas share this store: follow the moves the others append.
        listener = asyncio.get_running_loop().create_task(store.listen(manager.catch_up))
    sweeper = None
    if cfg.retention > 0:
        sweeper = asyncio.get_running_loop().create_task(
            sweep(manager, cfg.retention, cfg.sweep_interval)
        )
    clock = asyncio.get_running_loop().create_task(tick(manager, interval))
    outboxes = start_outbox(manager, cfg, shared=listener is not None)  # webhooks, retention
    if cfg.bot_warm:
        manager.warm_bots()
    await server.start()
    probes = (
        await serve_health(cfg.host, cfg.health_port, health_servicer) if cfg.health_port else None
    )
    await set_serving(health_servicer, [spec.name], True)
    log.info(
        "serving",
        service=spec.name,
        port=port,
        metrics_port=metrics_port,
        health_port=probes[1] if probes else None,
        store=cfg.store_url.split("://", 1)[0],
    )

    await signalled()
    log.info("draining", grace_seconds=cfg.drain_seconds)
    # In this order: refuse new calls, tell probes, end the streams (see services.kit.drain).
    drain.start()
    await set_serving(health_servicer, [spec.name], False)
    manager.close_watchers("the service is shutting down")
    finished = await drain.wait(cfg.drain_seconds)
    log.info("drained", calls_cut_short=drain.in_flight, all_finished=finished)
    for task in (listener, sweeper, clock, *outboxes):
        if task is not None:
            task.cancel()
    await manager.close()
    await bots.aclose()
    await store.close()
    log.info("stopped")
    # Not server.stop (nor the probe port's): it would cancel the calls that reach it
    # meanwhile. The process ends and its connections close with it.
    leave()


async def sweep(manager: GameManager, retention: float, interval: float) -> None:
    """Remove finished games past their retention, now and then every ``interval``."""
    log = structlog.get_logger("sweeper")
    while True:
        try:
            gone = await manager.remove_finished(retention)
        except (StoreError, Unavailable) as exc:  # an outage, not a bug: no traceback
            log.warning("sweep failed: the store is unavailable; will try again", error=str(exc))
        except Exception:
            log.exception("sweep failed; will try again")
        else:
            if gone:
                log.info("removed finished games", count=len(gone))
        await asyncio.sleep(interval)


# The clock's poll of the store, by who else writes to it. Replicas sharing PostgreSQL:
# another's games (its deadlines, when it died) are found only by asking. A store this
# process owns: its games ring their own alarms at every due time (deadlines, a waiting
# table's expiry, the idle time: services.kit.sweep), so the poll is for what no alarm
# was set for (due while the service was down, a game evicted from memory, a bot turn a
# crash left behind) and may be slow: at rest it was most of the service's CPU.
CLOCK_INTERVAL_SHARED = 0.5
CLOCK_INTERVAL_OWN = 5.0


def clock_interval(raw: str, shared: bool) -> float:
    """TABLETOP_CLOCK_INTERVAL_SECONDS, or the default for the store; SystemExit if wrong."""
    if not raw.strip():
        return CLOCK_INTERVAL_SHARED if shared else CLOCK_INTERVAL_OWN
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0 or value == float("inf"):
        raise SystemExit(
            f"configuration error: TABLETOP_CLOCK_INTERVAL_SECONDS={raw!r}: seconds above 0"
        )
    return value


async def tick(manager: GameManager, interval: float) -> None:
    """Fire what is due (timeouts, bot moves, expiries) without any client call, every
    ``interval``; at start that includes whatever fell due while the service was down."""
    log = structlog.get_logger("clock")
    while True:
        try:
            while await manager.sweep() >= 100:  # a full batch: more may be waiting
                pass
        except (StoreError, Unavailable) as exc:  # an outage, not a bug: no traceback
            log.warning("clock sweep: the store is unavailable; will try again", error=str(exc))
        except Exception:
            log.exception("clock sweep failed; will try again")
        await asyncio.sleep(interval)


EVENT_LOOPS = ("auto", "uvloop", "asyncio")

# Young collections every 10,000 allocations instead of 700: a call allocates hundreds of
# short-lived objects (messages, views, log fields), almost none in cycles, and each
# collection walks the whole young generation (BENCHMARKS.md, "CPU per call: the levers").
GC_THRESHOLD = 10_000


def tune_gc(threshold: int, freeze: bool) -> None:
    """The collector as TABLETOP_GC_THRESHOLD and TABLETOP_GC_FREEZE say.

    Frozen at start, the modules, descriptors and settings loaded by then (most of a
    process's objects, alive for its whole life) are never walked again by a collection.
    """
    if threshold < 0:
        raise config.ConfigError(f"TABLETOP_GC_THRESHOLD={threshold}: 0 (Python's) or more")
    if threshold:
        _, second, third = gc.get_threshold()
        gc.set_threshold(threshold, second, third)
    if freeze:
        gc.collect()  # what is garbage now is not frozen with the rest
        gc.freeze()


def loop_factory(choice: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop factory for TABLETOP_EVENT_LOOP (None: asyncio's own loop).

    uvloop by default when installed: grpc.aio's callbacks cost less CPU on it
    (BENCHMARKS.md, "CPU per call"); ``asyncio`` keeps the standard loop.
    """
    if choice not in EVENT_LOOPS:
        raise config.ConfigError(f"TABLETOP_EVENT_LOOP={choice!r}: one of {', '.join(EVENT_LOOPS)}")
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            raise config.ConfigError(
                "TABLETOP_EVENT_LOOP='uvloop': uvloop is not installed"
            ) from None
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def run(
    prog: str,
    description: str,
    known: list[config.Setting],
    serve: Callable[[config.Config], Coroutine[Any, Any, None]],
    argv: Sequence[str] | None = None,
) -> None:
    """What ``python -m <process>`` does: ``--help``, configuration from the environment
    (a bad value exits naming the variable), logs, then ``serve`` until it returns."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in ("-h", "--help"):
        print(config.help_text(prog, description, known))
        return
    if argv:
        sys.exit(f"unexpected arguments {' '.join(argv)}; configuration is by environment (--help)")
    try:
        cfg = config.load(known)
        factory = loop_factory(cfg.event_loop)
        if cfg.access_log_sample < 1:
            raise config.ConfigError("TABLETOP_ACCESS_LOG_SAMPLE=0: 1 (every call) or more")
        tune_gc(cfg.gc_threshold, cfg.gc_freeze)
        tracing.setup(tracing.service_name(prog))  # OTEL_* (services.kit.tracing)
    except (config.ConfigError, tracing.TracingConfigError) as exc:
        sys.exit(f"configuration error: {exc}")
    logs.configure(cfg.log_level, cfg.log_format)
    with asyncio.Runner(loop_factory=factory) as runner:
        runner.run(serve(cfg))


async def signalled() -> None:
    """Return on SIGTERM or SIGINT: the caller drains then."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()


def main(name: str, argv: Sequence[str] | None = None) -> None:
    entry = registry.by_name(name)
    run(
        f"python -m services.{name}",
        f"Serve the {name} game over gRPC, with health, reflection and metrics.",
        settings(entry),
        lambda cfg: serve(entry, cfg),
        argv,
    )
