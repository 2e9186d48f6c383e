"""The gateway on Envoy, its default data path: what the Python router did, Envoy does.

Each test runs ``python -m gateway`` as it is deployed (it starts Envoy) in front of a
real game service and checks one guarantee of docs/design.md's list, with a control.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from client.api import GameClient
from gateway import envoy
from gateway.proxy import binary
from services import registry
from services.kit.status import error_info
from tests.security.h2raw import RawCall
from tests.support import Process, running, wait_serving

pytestmark = pytest.mark.skipif(binary() is None, reason="no Envoy binary")

GAME = registry.by_name("channeling")


def _routes(address: str) -> dict[str, str]:
    """Route only the one game: the other routes empty (their defaults are not running)."""
    return {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES} | {
        f"TABLETOP_ROUTE_{GAME.name.upper()}": address
    }


@contextlib.contextmanager
def stack(tmp_path: Path, gateway: dict[str, str] | None = None,
          service: dict[str, str] | None = None) -> Iterator[tuple[Process, Process]]:  # fmt: skip
    service_env = {"TABLETOP_STORE_URL": "memory://", **(service or {})}
    with running(f"services.{GAME.name}", service_env, tmp_path / "svc.log") as svc:
        wait_serving(svc.address, GAME.service_name)
        env = {**_routes(svc.address), "TABLETOP_HEALTH_INTERVAL_SECONDS": "0.2", **(gateway or {})}
        with running("gateway", env, tmp_path / "gw.log") as gw:
            wait_serving(gw.address, GAME.service_name)
            yield svc, gw


def metric(gw: Process, line_start: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{gw.metrics_port}/metrics", timeout=5) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(line_start + " "):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


def envoy_child(gw: Process) -> int:
    """The pid of the Envoy the gateway process started."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            if parent == gw.popen.pid and "envoy" in Path(f"/proc/{entry}/cmdline").read_text():
                return int(entry)
    raise AssertionError("the gateway has no Envoy child")


def alive(pid: int) -> bool:
    with contextlib.suppress(OSError):
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    return False


async def test_calls_per_client_address_are_limited_with_a_reason_and_counted(tmp_path):
    burst = 8
    settings = {"TABLETOP_RATE_PER_CLIENT": "0.2", "TABLETOP_BURST_PER_CLIENT": str(burst)}
    with stack(tmp_path, settings) as (_, gw):
        passed, refusals = 0, []
        async with grpc.aio.insecure_channel(gw.address) as channel:
            client = GameClient(GAME.name, channel)
            get = client._method("GetGame")
            request = client.pb2.GetGameRequest(game_id="none")
            # Until the bucket is empty (the start's health checks took some of it).
            while not refusals:
                try:
                    await get(request)
                except grpc.aio.AioRpcError as error:
                    if error.code() == grpc.StatusCode.NOT_FOUND:
                        passed += 1
                    else:
                        refusals.append(error)
                assert passed <= burst, "more calls than the burst went through"
            # A client's own x-forwarded-for changes nothing: still this address.
            for claimed in ("10.9.8.7", "10.9.8.8"):
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await get(request, metadata=[("x-forwarded-for", claimed)])
                refusals.append(caught.value)
        assert passed >= 1
        assert {r.code() for r in refusals} == {grpc.StatusCode.RESOURCE_EXHAUSTED}
        for refusal in refusals:
            info = error_info(refusal)
            assert info.reason == "RATE_LIMITED"
            assert info.metadata["limit"] == "rate_per_client"
            assert int(info.metadata["retry_after_ms"]) >= 1
        # Control: another address has a bucket of its own.
        other = RawCall(
            "127.0.0.1", gw.port, f"/{GAME.service_name}/GetGame",
            request.SerializeToString(), window=65_535, source="127.0.0.2",
        ).start()  # fmt: skip
        assert other.wait(10)
        other.close()
        assert other.trailer("grpc-status") == str(grpc.StatusCode.NOT_FOUND.value[0]).encode()
        assert metric(gw, 'tabletop_gateway_limited_total{limit="rate_per_client"}') == len(
            refusals
        )


async def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_bucket(tmp_path):
    settings = {
        "TABLETOP_RATE_PER_CLIENT": "0.2",
        "TABLETOP_BURST_PER_CLIENT": "2",
        "TABLETOP_TRUST_FORWARDED_FOR": "true",
    }
    with stack(tmp_path, settings) as (_, gw):
        async with grpc.aio.insecure_channel(gw.address) as channel:
            client = GameClient(GAME.name, channel)
            get = client._method("GetGame")
            request = client.pb2.GetGameRequest(game_id="none")

            async def code(forwarded: str) -> grpc.StatusCode:
                try:
                    await get(request, metadata=[("x-forwarded-for", forwarded)])
                except grpc.aio.AioRpcError as error:
                    return error.code()
                raise AssertionError("GetGame of no game answered")

            codes = [await code("10.0.0.1") for _ in range(3)]
            assert codes == [grpc.StatusCode.NOT_FOUND] * 2 + [grpc.StatusCode.RESOURCE_EXHAUSTED]
            # Another client behind the same proxy (control: the same one is still refused).
            assert await code("10.0.0.2") == grpc.StatusCode.NOT_FOUND
            assert await code("10.0.0.1") == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_a_game_whose_backends_are_down_is_refused_at_once_with_a_reason(tmp_path):
    with stack(tmp_path) as (svc, gw):
        async with grpc.aio.insecure_channel(gw.address) as channel:
            client = GameClient(GAME.name, channel)
            game = await client.create(2)  # control: routed while the backend is up
            svc.popen.kill()
            svc.popen.wait(10)
            time.sleep(1.0)  # a few of the gateway's 0.2 s health checks
            started = time.monotonic()
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await client._method("GetGame")(
                    client.pb2.GetGameRequest(game_id=game.game_id), timeout=10
                )
            elapsed = time.monotonic() - started
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    assert error_info(caught.value).reason == "BACKEND_UNAVAILABLE"
    assert elapsed < 2, "refused at once, not left to its 10 s deadline"
    assert str(svc.port) not in (caught.value.details() or ""), "no backend address"


async def test_the_services_see_the_clients_own_address_not_one_it_claims(tmp_path):
    limits = {"TABLETOP_TRUST_FORWARDED_FOR": "true", "TABLETOP_STREAMS_PER_CLIENT": "1"}
    with stack(tmp_path, service=limits) as (svc, gw):

        async def watchers(address: str) -> list[grpc.StatusCode | None]:
            """Two watchers claiming two client addresses; each reads its first update."""
            outcomes: list[grpc.StatusCode | None] = []
            async with grpc.aio.insecure_channel(address) as channel:
                client = GameClient(GAME.name, channel)
                game = await client.create(2)
                calls = []
                for claimed in ("10.0.0.1", "10.0.0.2"):
                    call = client._method("WatchGame", streaming=True)(
                        client.pb2.WatchGameRequest(game_id=game.game_id),
                        metadata=[("x-forwarded-for", claimed)],
                    )
                    calls.append(call)
                    try:
                        await call.read()
                        outcomes.append(None)
                    except grpc.aio.AioRpcError as error:
                        outcomes.append(error.code())
                for call in calls:
                    call.cancel()
            return outcomes

        # Control: called directly, the service keys on the claims (it trusts them).
        assert await watchers(svc.address) == [None, None]
        # Through the gateway both are 127.0.0.1, which Envoy says instead: one stream.
        assert await watchers(gw.address) == [None, grpc.StatusCode.RESOURCE_EXHAUSTED]


async def test_routed_calls_are_counted_under_our_metric_names(tmp_path):
    with stack(tmp_path) as (_, gw):
        async with grpc.aio.insecure_channel(gw.address) as channel:
            client = GameClient(GAME.name, channel)
            await client.create(2)
            with pytest.raises(grpc.aio.AioRpcError):
                await client.get("none")
        labels = f'grpc_method="{{}}",grpc_service="{GAME.service_name}",grpc_type="unary"'
        create = labels.format("CreateGame")
        get = labels.format("GetGame")
        assert metric(gw, f'grpc_server_handled_total{{grpc_code="OK",{create}}}') == 1
        assert metric(gw, f'grpc_server_handled_total{{grpc_code="NOT_FOUND",{get}}}') == 1
        # Control: a code no call got has no count.
        assert metric(gw, f'grpc_server_handled_total{{grpc_code="OK",{get}}}') == 0


def test_envoy_dies_with_the_gateway_process(tmp_path):
    with stack(tmp_path) as (_, gw):
        pid = envoy_child(gw)
        assert alive(pid)  # control
        gw.popen.kill()
        gw.popen.wait(10)
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not alive(pid), "Envoy outlived the killed gateway process"


def test_the_gateway_ends_when_its_envoy_does(tmp_path):
    with stack(tmp_path) as (_, gw):
        os.kill(envoy_child(gw), signal.SIGKILL)
        assert gw.popen.wait(15) == 1
    events = [json.loads(line).get("event") for line in gw.log.read_text().splitlines()
              if line.startswith("{")]  # fmt: skip
    assert "envoy_exited" in events


@pytest.mark.parametrize(
    "routes",
    [
        {"channeling": ["127.0.0.1:50051"]},
        {"glow": ["dns:///tabletop-glow-headless:50055"], "shen": ["localhost:1", "[::1]:2"]},
    ],
)
def test_the_bootstrap_is_configuration_envoy_accepts(routes):
    plan = envoy.Plan(
        host="0.0.0.0", port=50050, admin_port=9901, control_port=40000, routes=routes,
        rate_per_client=30, burst_per_client=60, access_log_sample=10, max_connection_age=300,
    )  # fmt: skip
    bootstrap = envoy.bootstrap(plan)
    checked = subprocess.run(
        [str(binary()), "--mode", "validate", "--config-yaml", json.dumps(bootstrap)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]
    # Control: Envoy does refuse a broken one.
    bootstrap["static_resources"]["clusters"][0]["lb_policy"] = "NO_SUCH_POLICY"
    broken = subprocess.run(
        [str(binary()), "--mode", "validate", "--config-yaml", json.dumps(bootstrap)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert broken.returncode != 0


@pytest.mark.parametrize("rate", [0.5, 2, 25, 30, 500, 1234.5])
def test_the_token_bucket_refills_at_the_rate_asked(rate):
    tokens, seconds = envoy._fill(rate)
    assert tokens >= 1 and seconds >= 0.05
    assert tokens / seconds == pytest.approx(rate)
