"""A backend known to be down is answered at once; what the gateway shows anonymous
callers; where the metrics port listens."""

from __future__ import annotations

import asyncio
import signal
import time
import urllib.request
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tabletop.gateway.v1 import catalog_pb2, catalog_pb2_grpc

from client.api import GameClient
from gateway.backends import Backend, Backends
from services import registry
from services.kit.status import error_info
from tests.support import eventually, gateway_in_process, running, service_in_process

NAME = "channeling"
SERVICE = registry.by_name(NAME).service_name
LABEL = {"grpc_service": SERVICE}


def env(tmp_path, tag: str) -> dict[str, str]:
    return {"TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/{tag}.db"}


async def timed(coro) -> tuple[float, object]:
    t0 = time.monotonic()
    try:
        result = await coro
    except grpc.aio.AioRpcError as error:
        result = error
    return time.monotonic() - t0, result


async def test_a_stopped_backend_is_answered_unavailable_at_once(tmp_path):
    with running(f"services.{NAME}", env(tmp_path, "one"), tmp_path / "svc.log") as svc:
        async with gateway_in_process({NAME: [svc.address]}) as (port, gateway):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(NAME, channel)
                game = await client.create(2)
                svc.popen.send_signal(signal.SIGSTOP)
                try:
                    assert await gateway.check_backends() == {SERVICE: False}
                    assert gateway.backends.get(SERVICE).known_down
                    # No deadline from the client: before, this waited 30 s upstream.
                    seconds, result = await timed(client.get(game.game_id))
                    assert isinstance(result, grpc.aio.AioRpcError), result
                    assert seconds < 1.0
                    assert result.code() == grpc.StatusCode.UNAVAILABLE
                    info = error_info(result)
                    assert info.reason == "BACKEND_UNAVAILABLE"
                    assert info.metadata["backends"] == "down"
                    # The refusal is counted on the gateway's side, never sent upstream.
                    labels = {
                        "grpc_type": "unary",
                        "grpc_service": SERVICE,
                        "grpc_method": "GetGame",
                    }
                    assert gateway.registry.get_sample_value(
                        "grpc_server_handled_total", {**labels, "grpc_code": "UNAVAILABLE"}
                    )
                    assert not gateway.registry.get_sample_value(
                        "grpc_client_handled_total", {**labels, "grpc_code": "UNAVAILABLE"}
                    )
                finally:
                    svc.popen.send_signal(signal.SIGCONT)
                # Back up: the next check lets calls through again.
                assert await gateway.check_backends() == {SERVICE: True}
                assert (await client.get(game.game_id)).game.game_id == game.game_id


async def test_with_several_backends_the_stopped_one_is_skipped(tmp_path):
    with (
        running(f"services.{NAME}", env(tmp_path, "a"), tmp_path / "a.log") as one,
        running(f"services.{NAME}", env(tmp_path, "b"), tmp_path / "b.log") as two,
    ):
        async with gateway_in_process({NAME: [one.address, two.address]}) as (port, gateway):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(NAME, channel)
                two.popen.send_signal(signal.SIGSTOP)
                try:
                    await gateway.check_backends()
                    assert gateway.backends.get(SERVICE).healthy == [True, False]
                    for _ in range(6):  # round robin would send every other one to `two`
                        seconds, result = await timed(client.create(2))
                        assert not isinstance(result, grpc.aio.AioRpcError), result
                        assert seconds < 1.0
                finally:
                    two.popen.send_signal(signal.SIGCONT)


async def test_a_backend_lost_between_health_checks_is_refused_without_its_address(tmp_path):
    """Killed after its last health check: the call is forwarded and gRPC's own error
    names the backend's address; the caller gets UNAVAILABLE with a reason and a message
    of the gateway's, never that text (backend addresses are for operators only)."""
    with running(f"services.{NAME}", env(tmp_path, "lost"), tmp_path / "svc.log") as svc:
        async with gateway_in_process({NAME: [svc.address]}) as (port, gateway):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(NAME, channel)
                game = await client.create(2)
                svc.popen.send_signal(signal.SIGKILL)
                svc.popen.wait(10)
                assert not gateway.backends.get(SERVICE).known_down  # not checked since
                # Control: gRPC's text for this failure names the address.
                async with grpc.aio.insecure_channel(svc.address) as direct:
                    _, core = await timed(GameClient(NAME, direct).get(game.game_id))
                assert isinstance(core, grpc.aio.AioRpcError)
                assert svc.address.rpartition(":")[2] in (core.details() or "")
                for _ in range(3):  # a reset connection, then a refused one
                    _, result = await timed(client.get(game.game_id))
                    assert isinstance(result, grpc.aio.AioRpcError), result
                    assert result.code() == grpc.StatusCode.UNAVAILABLE
                    assert error_info(result).reason == "BACKEND_UNAVAILABLE"
                    text = (result.details() or "") + str(error_info(result))
                    assert svc.address.rpartition(":")[2] not in text, text


def test_until_health_is_known_every_channel_is_used():
    channels = [object(), object()]
    backend = Backend(SERVICE, ("a:1", "b:2"), channels)  # type: ignore[arg-type]
    assert backend.healthy == [None, None] and not backend.known_down
    assert {backend.next_channel()[0] for _ in range(4)} == {0, 1}
    backend.healthy = [None, False]
    assert {backend.next_channel()[0] for _ in range(4)} == {0}
    backend.healthy = [False, False]
    assert backend.known_down


@pytest.mark.parametrize("show", [False, True])
async def test_the_catalog_names_backend_addresses_only_when_the_operator_asks(show):
    async with service_in_process(NAME) as svc:
        async with gateway_in_process({NAME: [svc.address]}, catalog_show_backends=show) as (
            port,
            _,
        ):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                catalog = catalog_pb2_grpc.CatalogServiceStub(channel)
                games = (await catalog.ListGames(catalog_pb2.ListGamesRequest())).games
    (entry,) = [g for g in games if g.name == NAME]
    assert entry.up
    assert list(entry.backends) == ([svc.address] if show else [])
    assert (svc.address in str(games)) is show


def listening_on(port: int) -> set[str]:
    """The local addresses a TCP socket listens on at ``port`` (from /proc/net/tcp)."""
    found = set()
    for table, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, hex_port = fields[1].split(":")
            if int(hex_port, 16) == port and fields[3] == "0A":  # LISTEN
                if width == 8:
                    found.add(".".join(str(int(address[i : i + 2], 16)) for i in (6, 4, 2, 0)))
                else:
                    found.add(address)
    return found


@pytest.mark.parametrize(
    ("module", "extra", "expected"),
    [
        (f"services.{NAME}", {}, {"127.0.0.1"}),
        ("gateway", {}, {"127.0.0.1"}),
        (f"services.{NAME}", {"TABLETOP_METRICS_HOST": "0.0.0.0"}, {"0.0.0.0"}),
    ],
)
async def test_the_metrics_port_listens_on_the_configured_host(tmp_path, module, extra, expected):
    # start_process sets TABLETOP_HOST=127.0.0.1.
    environment = {**env(tmp_path, "m"), **extra}
    if module == "gateway":
        environment = {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES}
    with running(module, environment, tmp_path / "p.log") as process:
        assert listening_on(process.metrics_port) == expected
        url = f"http://127.0.0.1:{process.metrics_port}/metrics"
        body = await asyncio.to_thread(
            lambda: urllib.request.urlopen(url, timeout=5).read().decode()
        )
    assert "grpc_server_" in body
    if module == "gateway":
        assert "tabletop_games_" not in body and "tabletop_moves_" not in body


async def test_health_of_the_gateway_follows_a_stopped_backend(tmp_path):
    with running(f"services.{NAME}", env(tmp_path, "h"), tmp_path / "svc.log") as svc:
        async with gateway_in_process({NAME: [svc.address]}) as (port, gateway):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                health = health_pb2_grpc.HealthStub(channel)
                request = health_pb2.HealthCheckRequest(service=SERVICE)
                watch = health.Watch(request)
                assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
                svc.popen.send_signal(signal.SIGSTOP)
                try:
                    await gateway.check_backends()
                    reply = await asyncio.wait_for(watch.read(), 5)
                    assert reply.status == health_pb2.HealthCheckResponse.NOT_SERVING
                finally:
                    svc.popen.send_signal(signal.SIGCONT)
                    watch.cancel()


@pytest.mark.parametrize("watched", [True, False], ids=["health-watch", "control-poll-only"])
async def test_a_lost_backend_is_known_from_its_health_watch_without_a_poll(
    tmp_path, monkeypatch, watched
):
    """The gateway follows each backend's health Watch: a backend that goes away is
    marked down at once, long before the next polled Check (an hour here). Control: with
    the Watch streams off, only the poll would tell, and the gateway still thinks it up."""
    if not watched:

        async def no_watch(self, *args, **kwargs) -> None:
            return None

        monkeypatch.setattr(Backends, "watch", no_watch)
    with running(f"services.{NAME}", env(tmp_path, "w"), tmp_path / "svc.log") as svc:
        async with gateway_in_process({NAME: [svc.address]}) as (_, gateway):
            backend = gateway.backends.get(SERVICE)
            gateway.watch_backends(interval=0.2, poll=3600)
            await eventually(lambda: backend.healthy == [True], timeout=10)
            svc.popen.send_signal(signal.SIGKILL)
            svc.popen.wait(10)
            if watched:
                await eventually(lambda: backend.known_down, timeout=10)
                assert gateway.backends.watch_ends >= 1
                await eventually(
                    lambda: (
                        gateway.registry.get_sample_value("tabletop_gateway_backend_up", LABEL) == 0
                    )
                )
            else:
                await asyncio.sleep(2)
                assert not backend.known_down


async def test_a_draining_backend_is_known_from_its_health_watch(tmp_path):
    """SIGTERM: the service says NOT_SERVING while it drains, and the Watch pushes it."""
    settings = {**env(tmp_path, "d"), "TABLETOP_DRAIN_SECONDS": "30"}
    with running(f"services.{NAME}", settings, tmp_path / "svc.log") as svc:
        async with gateway_in_process({NAME: [svc.address]}) as (port, gateway):
            backend = gateway.backends.get(SERVICE)
            gateway.watch_backends(interval=0.2, poll=3600)
            await eventually(lambda: backend.healthy == [True], timeout=10)
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                health = health_pb2_grpc.HealthStub(channel)
                watch = health.Watch(health_pb2.HealthCheckRequest(service=SERVICE))
                assert (await watch.read()).status == health_pb2.HealthCheckResponse.SERVING
                svc.popen.send_signal(signal.SIGTERM)
                try:
                    reply = await asyncio.wait_for(watch.read(), 10)
                    assert reply.status == health_pb2.HealthCheckResponse.NOT_SERVING
                    assert backend.healthy == [False]
                    assert svc.popen.poll() is None  # still draining: no connection lost
                finally:
                    watch.cancel()


def test_the_python_side_polls_slowly_behind_envoy():
    from gateway.server import HEALTH_POLL_BEHIND_ENVOY, health_poll

    assert health_poll("", on_envoy=True, interval=2) == HEALTH_POLL_BEHIND_ENVOY
    assert health_poll("", on_envoy=False, interval=2) == 2
    assert health_poll("30", on_envoy=False, interval=2) == 30
    with pytest.raises(SystemExit):
        health_poll("0", on_envoy=True, interval=2)


async def test_a_backend_marked_down_is_polled_at_the_short_interval(tmp_path, monkeypatch):
    """A backend marked down by a check (stopped: its Watch says nothing) is polled every
    ``interval`` until it answers, not every ``poll``: on SIGCONT its status never
    changed, so its Watch has nothing to say, and only the poll lets it back."""
    polls: list[float] = []
    check = Backends.check

    async def counted(self, timeout: float = 1.0):  # type: ignore[no-untyped-def]
        polls.append(time.monotonic())
        return await check(self, timeout)

    monkeypatch.setattr(Backends, "check", counted)
    with running(f"services.{NAME}", env(tmp_path, "p"), tmp_path / "svc.log") as svc:
        async with gateway_in_process({NAME: [svc.address]}) as (_, gateway):
            backend = gateway.backends.get(SERVICE)
            gateway.watch_backends(interval=0.2, poll=3600)
            await eventually(lambda: backend.healthy == [True], timeout=10)
            svc.popen.send_signal(signal.SIGSTOP)
            try:
                assert await gateway.check_backends() == {SERVICE: False}
                polls.clear()
                await eventually(lambda: len(polls) >= 2, timeout=20)
            finally:
                svc.popen.send_signal(signal.SIGCONT)
            await eventually(lambda: backend.healthy == [True], timeout=20)
            assert not backend.known_down
