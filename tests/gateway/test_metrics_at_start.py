"""The gateway's call series exist at 0 for every routed method before any call, as
go-grpc-prometheus creates them: a real gateway (Envoy on the data path) routing one game
service, scraped before anything is asked of it. A game it does not route has none."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator

import grpc
import pytest
from prometheus_client import CollectorRegistry
from prometheus_client.parser import text_string_to_metric_families

from client.api import GameClient
from gateway.envoystats import ENVOY_BUCKETS_MS, GATEWAY_SERVICES, EnvoyStats
from gateway.proxy import binary
from services import registry
from tests.support import Process, _json, running

pytestmark = pytest.mark.skipif(binary() is None, reason="no Envoy binary (the gateway extra)")

ROUTED = registry.by_name("channeling")
NOT_ROUTED = registry.by_name("glow")
CODES = {code.name for code in grpc.StatusCode}


def methods(service_name: str) -> list[str]:
    from google.protobuf import descriptor_pool

    for entry in registry.SERVICES:
        entry.pb2()
    return [m.name for m in descriptor_pool.Default().FindServiceByName(service_name).methods]


def scrape(process: Process) -> dict[str, dict[tuple[tuple[str, str], ...], float]]:
    """Every sample of /metrics: by sample name, then by its labels."""
    with urllib.request.urlopen(f"http://127.0.0.1:{process.metrics_port}/metrics") as reply:
        text = reply.read().decode()
    found: dict[str, dict[tuple[tuple[str, str], ...], float]] = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found.setdefault(sample.name, {})[tuple(sorted(sample.labels.items()))] = sample.value
    return found


def series(found, name: str, service: str, method: str, **labels: str) -> list[float]:
    """The values of ``name`` for one method (and the extra labels given)."""
    want = {"grpc_service": service, "grpc_method": method, **labels}
    return [v for key, v in found.get(name, {}).items() if want.items() <= dict(key).items()]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory) -> Iterator[Process]:
    logs = tmp_path_factory.mktemp("metrics-at-start")
    with running(
        "services.channeling", {"TABLETOP_STORE_URL": "memory://"}, logs / "game.log"
    ) as game:
        routes = {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES}
        routes[f"TABLETOP_ROUTE_{ROUTED.name.upper()}"] = game.address
        with running("gateway", {"TABLETOP_ACCESS_LOG": "false", **routes}, logs / "gw.log") as gw:
            yield gw


def test_every_routed_method_has_its_series_at_0_before_any_call(gateway):
    found = scrape(gateway)  # the first thing asked of the gateway
    assert found["tabletop_gateway_envoy_up"][()] == 1
    routed = [(ROUTED.service_name, m) for m in methods(ROUTED.service_name)]
    own = [
        (s, m)
        for s in GATEWAY_SERVICES
        for m in methods(s.replace(".v1.Server", ".v1alpha.Server"))
    ]
    assert len(routed) >= 10 and own
    for service, method in routed + own:
        for name in (
            "grpc_server_started_total",
            "grpc_server_msg_received_total",
            "grpc_server_msg_sent_total",
            "grpc_server_handling_seconds_count",
            "grpc_client_handling_seconds_count",
            "grpc_client_started_total",
        ):
            assert series(found, name, service, method) == [0], (name, service, method)
        # Every code, OK first of all, as go-grpc-prometheus.
        codes = {
            dict(key)["grpc_code"]: value
            for key, value in found["grpc_server_handled_total"].items()
            if dict(key)["grpc_service"] == service and dict(key)["grpc_method"] == method
        }
        assert codes == dict.fromkeys(CODES, 0), (service, method)
        # The histogram in Envoy's buckets, each at 0.
        buckets = series(found, "grpc_server_handling_seconds_bucket", service, method)
        assert buckets == [0] * (len(ENVOY_BUCKETS_MS) + 1)
    # The control: a game the gateway does not route has no series at all.
    for method in methods(NOT_ROUTED.service_name):
        for name in found:
            assert not series(found, name, NOT_ROUTED.service_name, method), (name, method)


async def test_a_call_counts_in_the_series_that_were_there(gateway):
    before = scrape(gateway)
    service = ROUTED.service_name
    async with grpc.aio.insecure_channel(gateway.address) as channel:
        client = GameClient(ROUTED.name, channel)
        await client.create(2)
        with pytest.raises(grpc.aio.AioRpcError) as missing:
            await client.get("no-such-game")
    assert missing.value.code() == grpc.StatusCode.NOT_FOUND

    def counted(found, method: str, code: str) -> float:
        (value,) = series(found, "grpc_server_handled_total", service, method, grpc_code=code)
        return value

    after = scrape(gateway)
    assert counted(after, "CreateGame", "OK") - counted(before, "CreateGame", "OK") == 1
    assert counted(after, "GetGame", "NOT_FOUND") - counted(before, "GetGame", "NOT_FOUND") == 1
    # Envoy's own buckets, once it has timed the method, are those the series began with.
    bounds = {
        dict(key)["le"]
        for key in after["grpc_server_handling_seconds_bucket"]
        if dict(key)["grpc_method"] == "CreateGame" and dict(key)["grpc_service"] == service
    }
    assert bounds == {str(ms / 1000) for ms in ENVOY_BUCKETS_MS} | {"+Inf"}


def test_control_a_collector_told_of_no_routes_has_no_series_for_the_game(gateway):
    """The series come from Envoy's route table: the same Envoy read by a collector given
    no routes (what every method had before its first call) shows none for the game."""
    admin = next(
        line["envoy_admin"]
        for line in map(_json, gateway.lines())
        if line.get("event") == "serving"
    )
    registry_ = CollectorRegistry()
    registry_.register(EnvoyStats(admin, routed=()))
    for method in methods(ROUTED.service_name):
        labels = {"grpc_type": "unary", "grpc_service": ROUTED.service_name, "grpc_method": method}
        if method in ("CreateGame", "GetGame"):
            continue  # called by the test above
        assert registry_.get_sample_value("grpc_server_started_total", labels) is None
    collector = EnvoyStats(admin)
    assert (ROUTED.service_name, "SubmitMove") in collector.routed()
    assert not [key for key in collector.routed() if key[0] == NOT_ROUTED.service_name]
