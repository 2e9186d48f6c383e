"""Envoy's statistics in our metric names (gateway.envoystats): a real Envoy in front of a
real game service, calls of every outcome through it, and the collector's figures equal
to what those calls did."""

from __future__ import annotations

import collections
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest
from prometheus_client import CollectorRegistry

from client.api import GameClient
from gateway.envoystats import EnvoyStats
from gateway.proxy import Envoy, binary
from services import registry
from tests.support import eventually, free_port, service_in_process

ENVOY = binary()
pytestmark = pytest.mark.skipif(ENVOY is None, reason="no Envoy binary (the gateway extra)")

NAME = "channeling"
SERVICE = registry.by_name(NAME).service_name
BURST = 8  # calls a client address may make: the bucket is not refilled during a test


def bootstrap(backend: int, port: int, admin: int) -> dict:
    """Envoy as the gateway runs it, small: grpc_stats before a per-address rate limit, one
    cluster whose circuit breaker lets one call through at a time."""

    def typed(name: str, **fields) -> dict:
        return {"@type": f"type.googleapis.com/envoy.extensions.{name}", **fields}

    def address(port: int) -> dict:
        return {"socket_address": {"address": "127.0.0.1", "port_value": port}}

    always = {"default_value": {"numerator": 100, "denominator": "HUNDRED"}}
    filters = [
        {
            "name": "envoy.filters.http.grpc_stats",
            "typed_config": typed(
                "filters.http.grpc_stats.v3.FilterConfig",
                stats_for_all_methods=True,
                enable_upstream_stats=True,
            ),
        },
        {
            "name": "envoy.filters.http.local_ratelimit",
            "typed_config": typed(
                "filters.http.local_ratelimit.v3.LocalRateLimit",
                stat_prefix="per_client",
                token_bucket={"max_tokens": 10**6, "tokens_per_fill": 10**6, "fill_interval": "1s"},
                filter_enabled=always,
                filter_enforced=always,
                rate_limited_as_resource_exhausted=True,
                descriptors=[
                    {
                        "entries": [{"key": "remote_address", "value": ""}],
                        "token_bucket": {
                            "max_tokens": BURST,
                            "tokens_per_fill": 1,
                            "fill_interval": "3600s",
                        },
                    }
                ],
                max_dynamic_descriptors=100,
                rate_limits=[{"actions": [{"remote_address": {}}]}],
            ),
        },
        {
            "name": "envoy.filters.http.router",
            "typed_config": typed("filters.http.router.v3.Router"),
        },
    ]
    manager = typed(
        "filters.network.http_connection_manager.v3.HttpConnectionManager",
        stat_prefix="gateway",
        codec_type="HTTP2",
        use_remote_address=True,
        route_config={
            "virtual_hosts": [
                {
                    "name": "games",
                    "domains": ["*"],
                    "routes": [
                        {
                            "match": {"prefix": f"/{SERVICE}/"},
                            "route": {"cluster": NAME, "timeout": "0s"},
                        }
                    ],
                }
            ]
        },
        http_filters=filters,
    )
    cluster = {
        "name": NAME,
        "type": "STATIC",
        "connect_timeout": "1s",
        "typed_extension_protocol_options": {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": typed(
                "upstreams.http.v3.HttpProtocolOptions",
                explicit_http_config={"http2_protocol_options": {}},
            )
        },
        "circuit_breakers": {"thresholds": [{"max_requests": 1}]},
        "health_checks": [
            {
                "timeout": "1s",
                "interval": "1s",
                "unhealthy_threshold": 1,
                "healthy_threshold": 1,
                "grpc_health_check": {"service_name": SERVICE},
            }
        ],
        "load_assignment": {
            "cluster_name": NAME,
            "endpoints": [{"lb_endpoints": [{"endpoint": {"address": address(backend)}}]}],
        },
    }
    return {
        "admin": {"address": address(admin)},
        # Histograms reach the admin endpoint when Envoy merges them, at each flush.
        "stats_flush_interval": "0.1s",
        "static_resources": {
            "listeners": [
                {
                    "name": "grpc",
                    "address": address(port),
                    "filter_chains": [
                        {
                            "filters": [
                                {
                                    "name": "envoy.filters.network.http_connection_manager",
                                    "typed_config": manager,
                                }
                            ]
                        }
                    ],
                }
            ],
            "clusters": [cluster],
        },
    }


def admin_json(admin: int, **query: str) -> list[dict]:
    url = f"http://127.0.0.1:{admin}/stats?" + urllib.parse.urlencode({"format": "json", **query})
    with urllib.request.urlopen(url, timeout=2) as response:
        return json.load(response)["stats"]


def stat(admin: int, name: str) -> int | None:
    """One counter or gauge of Envoy's, or None (not there, or Envoy not answering)."""
    try:
        found = admin_json(admin, filter=f"^{re.escape(name)}$")
    except OSError:
        return None
    return found[0]["value"] if found else None


@dataclass
class Proxy:
    port: int
    admin: int


@pytest.fixture
async def envoy(tmp_path) -> AsyncIterator[Proxy]:
    async with service_in_process(NAME) as service:
        proxy = Proxy(free_port(), free_port())
        # Started as the gateway starts its own (gateway.proxy), with this test's bootstrap.
        process = Envoy(
            str(ENVOY),
            bootstrap(service.port, proxy.port, proxy.admin),
            concurrency=1,
            drain_seconds=1,
        )
        await process.start()
        try:

            def ready() -> bool:
                return stat(proxy.admin, f"cluster.{NAME}.membership_healthy") == 1

            await eventually(ready, timeout=20)
            yield proxy
        finally:
            await process.stop()


def scraped(admin: int) -> CollectorRegistry:
    registry = CollectorRegistry()
    registry.register(EnvoyStats(f"127.0.0.1:{admin}"))
    return registry


async def test_the_figures_are_the_calls_made_through_envoy(envoy):
    # What each call got, by method and code: the figures to find.
    seen: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)

    async def call(method: str, awaitable) -> None:
        try:
            await awaitable
            seen[method]["OK"] += 1
        except grpc.aio.AioRpcError as error:
            seen[method][error.code().name] += 1

    start = time.monotonic()
    async with grpc.aio.insecure_channel(f"127.0.0.1:{envoy.port}") as channel:
        client = GameClient(NAME, channel)
        game = await client.create(2, seed=1)
        seen["CreateGame"]["OK"] += 1
        await call("GetGame", client.get(game.game_id))
        await call("GetGame", client.get("missing-game"))
        stream = client.watch(game.game_id)
        updates = [await stream.read()]  # the game as it stands
        # The open stream holds the one call the circuit breaker allows: this one overflows.
        await call("GetGame", client.get(game.game_id))
        stream.cancel()
        await eventually(lambda: stat(envoy.admin, f"cluster.{NAME}.upstream_rq_active") == 0)
        while seen["GetGame"]["RESOURCE_EXHAUSTED"] < 3:
            await call("GetGame", client.get(game.game_id))
    elapsed = time.monotonic() - start
    assert seen["GetGame"]["NOT_FOUND"] == seen["GetGame"]["UNAVAILABLE"] == 1  # as intended

    registry = scraped(envoy.admin)

    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, labels)

    # A call reached the game service unless a limit refused it; only those send a
    # message on, and only those are timed upstream.
    reached = {m: codes["OK"] + codes["NOT_FOUND"] for m, codes in seen.items()}
    unary = {"grpc_type": "unary", "grpc_service": SERVICE}
    # Histograms show once Envoy has merged them (stats_flush_interval).
    await eventually(
        lambda: all(
            value("grpc_server_handling_seconds_count", **unary, grpc_method=m) == reached[m]
            for m in seen
        )
    )
    assert value("tabletop_gateway_envoy_up") == 1
    for method, by_code in seen.items():
        labels = {**unary, "grpc_method": method}
        assert value("grpc_server_started_total", **labels) == sum(by_code.values())
        for code, count in by_code.items():
            assert value("grpc_server_handled_total", **labels, grpc_code=code) == count
        assert value("grpc_server_msg_received_total", **labels) == reached[method]
        assert value("grpc_server_msg_sent_total", **labels) == by_code["OK"]
        for side in ("server", "client"):
            histogram = f"grpc_{side}_handling_seconds"
            assert value(f"{histogram}_count", **labels) == reached[method]
            assert value(f"{histogram}_bucket", **labels, le="+Inf") == reached[method]
            assert 0 <= value(f"{histogram}_sum", **labels) <= elapsed
        assert value("grpc_client_started_total", **labels) == reached[method]
    assert set(seen["GetGame"]) == {"OK", "NOT_FOUND", "UNAVAILABLE", "RESOURCE_EXHAUSTED"}

    # Envoy's own bucket bounds, from milliseconds to seconds, with its own counts.
    [times] = [
        h
        for entry in admin_json(envoy.admin, histogram_buckets="cumulative", type="Histograms")
        for h in entry["histograms"]
        if h["name"] == f"cluster.{NAME}.grpc.{SERVICE}.GetGame.upstream_rq_time"
    ]
    for bucket in times["buckets"]:
        le = str(bucket["upper_bound"] / 1000)
        labels = {**unary, "grpc_method": "GetGame", "le": le}
        assert value("grpc_server_handling_seconds_bucket", **labels) == bucket["cumulative"]

    # The stream: its shape from the protos, its messages counted; cancelled by the client,
    # it ended with no status, which Envoy neither counts nor times (its series, there
    # from the start as every counted method's, stay at 0).
    watch = {"grpc_type": "server_stream", "grpc_service": SERVICE, "grpc_method": "WatchGame"}
    assert value("grpc_server_msg_received_total", **watch) == 1
    assert value("grpc_server_msg_sent_total", **watch) == len(updates)
    assert value("grpc_server_started_total", **watch) == 0
    assert value("grpc_server_handled_total", **watch, grpc_code="CANCELLED") == 0
    assert value("grpc_server_handling_seconds_count", **watch) == 0

    limited = "tabletop_gateway_limited_total"
    assert value(limited, limit="rate_per_client") == seen["GetGame"]["RESOURCE_EXHAUSTED"]
    assert value(limited, limit="max_concurrent_calls") == seen["GetGame"]["UNAVAILABLE"]


async def test_clusters_carrying_one_service_are_summed():
    """Two clusters of one service, in the JSON shapes Envoy 1.40 answers."""
    service = "grpc.reflection.v1.ServerReflection"  # dotted; known to the pool as v1alpha
    prefix = f"cluster.{{}}.grpc.{service}.ServerReflectionInfo."
    # Per cluster: calls ended, of which UNAVAILABLE, and the upstream times recorded (ms),
    # one of them beyond Envoy's last bucket.
    clusters = {"a": (3, 2, [0, 1, 5_000_000]), "b": (4, 1, [1, 1])}
    bounds = [0.5, 1, 3_600_000]

    def fetch(url: str) -> str:
        query = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query)
        if query["histogram_buckets"] == ["detailed"]:
            details = [
                {
                    "name": prefix.format(c) + "upstream_rq_time",
                    "totals": [{"lower_bound": t, "width": 0, "count": 1} for t in times],
                }
                for c, (_, _, times) in clusters.items()
            ]
            return json.dumps({"stats": [{"histograms": {"details": details}}]})
        stats: list[dict] = []
        for c, (total, unavailable, _) in clusters.items():
            stats += [
                {"name": prefix.format(c) + "total", "value": total},
                {"name": prefix.format(c) + "14", "value": unavailable},
                {"name": f"cluster.{c}.upstream_rq_active_overflow", "value": unavailable},
            ]
        histograms = [
            {
                "name": prefix.format(c) + "upstream_rq_time",
                "buckets": [
                    {"upper_bound": b, "cumulative": sum(t <= b for t in times)} for b in bounds
                ],
            }
            for c, (_, _, times) in clusters.items()
        ]
        return json.dumps({"stats": [*stats, {"histograms": histograms}]})

    registry = CollectorRegistry()
    registry.register(EnvoyStats("127.0.0.1:1", fetch=fetch))

    def value(name: str, **labels: str) -> float | None:
        call = {"grpc_service": service, "grpc_method": "ServerReflectionInfo"}
        return registry.get_sample_value(name, {"grpc_type": "bidi_stream", **call, **labels})

    figures = list(clusters.values())
    times = [t for _, _, ts in figures for t in ts]
    assert value("grpc_server_started_total") == sum(f[0] for f in figures)
    assert value("grpc_server_handled_total", grpc_code="UNAVAILABLE") == sum(f[1] for f in figures)
    for bound in bounds:
        le = str(bound / 1000)
        assert value("grpc_server_handling_seconds_bucket", le=le) == sum(t <= bound for t in times)
    assert value("grpc_server_handling_seconds_bucket", le="+Inf") == len(times)
    assert value("grpc_server_handling_seconds_count") == len(times)
    assert value("grpc_server_handling_seconds_sum") == pytest.approx(sum(times) / 1000)
    assert value("grpc_client_started_total") == len(times)
    limited = registry.get_sample_value(
        "tabletop_gateway_limited_total", {"limit": "max_concurrent_calls"}
    )
    assert limited == sum(f[1] for f in figures)


async def test_an_envoy_that_does_not_answer_is_down_and_nothing_else():
    def fetch(url: str) -> str:
        raise urllib.error.URLError("connection refused")

    collector = EnvoyStats("127.0.0.1:1", fetch=fetch)
    families = list(collector.collect())
    assert [(f.name, [s.value for s in f.samples]) for f in families] == [
        ("tabletop_gateway_envoy_up", [0.0])
    ]
    registry = CollectorRegistry()
    registry.register(collector)
    assert registry.get_sample_value("tabletop_gateway_envoy_up") == 0
