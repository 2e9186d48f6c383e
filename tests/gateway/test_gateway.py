"""The gateway over real gRPC: routing, pass-through, health, catalog, limits, metrics."""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from prometheus_client import CollectorRegistry, Counter
from tabletop.gateway.v1 import catalog_pb2, catalog_pb2_grpc

from client.api import FINISHED, GameClient
from gateway.metrics import LIMITS as GATEWAY_LIMITS
from services import registry
from services.kit.limits import Limits
from services.kit.status import error_info
from tests.support import eventually, gateway_in_process, service_in_process

GAMES = registry.names()


def players_for(name: str) -> int:
    return registry.by_name(name).engine().GAME.min_players


@pytest.fixture
async def stack(tmp_path):
    """Every game service in this process, and a gateway routing to them."""
    async with contextlib_stack() as stack:
        services = {}
        for name in GAMES:
            services[name] = await stack.enter_async_context(
                service_in_process(name, f"sqlite:///{tmp_path}/{name}.db")
            )
        port, gateway = await stack.enter_async_context(
            gateway_in_process({n: [s.address] for n, s in services.items()})
        )
        channel = await stack.enter_async_context(grpc.aio.insecure_channel(f"127.0.0.1:{port}"))
        yield services, gateway, channel


def contextlib_stack():
    import contextlib

    return contextlib.AsyncExitStack()


@pytest.mark.parametrize("name", GAMES)
async def test_a_full_game_of_each_game_through_the_gateway(stack, name):
    services, _, channel = stack
    client = GameClient(name, channel)
    game = await client.create(players_for(name), seed=31)
    result = await client.play_random(game, random.Random(8))
    assert result.final.game.status == FINISHED
    # The backend holds exactly what the gateway's client saw acknowledged.
    direct = await services[name].store.load(game.game_id)
    assert direct.version == result.moves


async def test_errors_pass_through_with_their_details(stack):
    _, _, channel = stack
    client = GameClient(GAMES[0], channel)
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.get("missing-game")
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert error_info(caught.value).reason == "GAME_NOT_FOUND"
    game = await client.create(players_for(GAMES[0]))
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client.submit(game.game_id, "not-a-token", client.pb2.Move())
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
    assert error_info(caught.value).reason == "BAD_TOKEN"


async def test_the_token_travels_as_metadata_and_names_the_seat(stack):
    _, _, channel = stack
    client = GameClient(GAMES[0], channel)
    game = await client.create(players_for(GAMES[0]))
    for seat, token in enumerate(game.tokens):
        assert (await client.get(game.game_id, token)).game.viewer == seat
    assert not (await client.get(game.game_id)).game.HasField("viewer")


async def test_a_deadline_passes_through_and_cancellation_reaches_the_backend(stack):
    services, _, channel = stack
    name = GAMES[0]
    client = GameClient(name, channel)
    game = await client.create(players_for(name))
    manager = services[name].manager
    stream = client.watch(game.game_id, timeout=0.5)
    await stream.read()
    assert len(manager._live[game.game_id].watchers) == 1
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await stream.read()
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    await eventually(lambda: not manager._live[game.game_id].watchers)

    stream = client.watch(game.game_id)
    await stream.read()
    assert len(manager._live[game.game_id].watchers) == 1
    stream.cancel()
    await eventually(lambda: not manager._live[game.game_id].watchers)


async def test_a_watch_through_the_gateway_sees_every_move(stack):
    _, _, channel = stack
    name = GAMES[0]
    client = GameClient(name, channel)
    game = await client.create(players_for(name), seed=2)
    stream = client.watch(game.game_id)
    assert (await stream.read()).game.version == 0
    result = await client.play_random(game, random.Random(1))
    versions = []
    while len(versions) < result.moves:
        versions.append((await stream.read()).turn.version)
    stream.cancel()
    assert versions == list(range(1, result.moves + 1))


async def test_reflection_lists_every_routed_service_and_the_catalog(stack):
    _, _, channel = stack
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    async for reply in stub.ServerReflectionInfo(iter([request])):
        names = {s.name for s in reply.list_services_response.service}
        break
    expected = {registry.by_name(n).service_name for n in GAMES}
    assert expected <= names
    assert "tabletop.gateway.v1.CatalogService" in names
    # The routed service's descriptors are served too, so grpcurl can build requests.
    symbol = reflection_pb2.ServerReflectionRequest(
        file_containing_symbol=registry.by_name(GAMES[0]).service_name
    )
    async for reply in stub.ServerReflectionInfo(iter([symbol])):
        assert reply.file_descriptor_response.file_descriptor_proto
        break


async def test_catalog_and_health_follow_the_backends(tmp_path):
    name = GAMES[0]
    service = registry.by_name(name).service_name
    async with service_in_process(name) as running:
        async with gateway_in_process({name: [running.address]}) as (port, gateway):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                catalog = catalog_pb2_grpc.CatalogServiceStub(channel)
                games = (await catalog.ListGames(catalog_pb2.ListGamesRequest())).games
                entry = next(g for g in games if g.name == name)
                assert entry.up and entry.service == service
                assert entry.min_players == players_for(name)
                health = health_pb2_grpc.HealthStub(channel)
                reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
                await running.server.stop(0)
                await gateway.check_backends()
                reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
                assert reply.status == health_pb2.HealthCheckResponse.NOT_SERVING
                games = (await catalog.ListGames(catalog_pb2.ListGamesRequest())).games
                assert not next(g for g in games if g.name == name).up
                assert (
                    gateway.registry.get_sample_value(
                        "tabletop_gateway_backend_up", {"grpc_service": service}
                    )
                    == 0.0
                )
                client = GameClient(name, channel)
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await client.create(players_for(name))
                assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
                assert error_info(caught.value).reason == "BACKEND_UNAVAILABLE"


async def test_round_robin_over_several_backends_per_call(tmp_path):
    name = GAMES[0]
    store = f"sqlite:///{tmp_path}/shared.db"
    async with service_in_process(name, store) as one, service_in_process(name, store) as two:
        async with gateway_in_process({name: [one.address, two.address]}) as (port, _):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(name, channel)
                created = [await client.create(players_for(name)) for _ in range(6)]
    assert len(one.manager._live) == 3 and len(two.manager._live) == 3
    assert len({g.game_id for g in created}) == 6


async def test_rate_and_stream_limits_answer_resource_exhausted(tmp_path):
    name = GAMES[0]
    async with service_in_process(name) as running:
        routes = {name: [running.address]}
        limits = Limits(rate_per_client=2, burst_per_client=5, streams_per_client=2)
        async with (
            gateway_in_process(routes, limits=limits) as (port, _),
            grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel,
        ):
            client = GameClient(name, channel)
            game = await client.create(players_for(name))
            streams = [client.watch(game.game_id) for _ in range(2)]
            for s in streams:
                await s.read()
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await client.watch(game.game_id).read()
            assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            info = error_info(caught.value)
            assert info.reason == "LIMIT_REACHED"
            assert info.metadata["limit"] == "streams_per_client"
            for s in streams:
                s.cancel()
            results = await asyncio.gather(
                *(client.get(game.game_id) for _ in range(10)), return_exceptions=True
            )
            limited = [r for r in results if isinstance(r, grpc.aio.AioRpcError)]
            assert limited, "ten calls at once must exceed a burst of five"
            assert all(r.code() == grpc.StatusCode.RESOURCE_EXHAUSTED for r in limited)
            info = error_info(limited[0])
            assert info.reason == "RATE_LIMITED" and int(info.metadata["retry_after_ms"]) > 0


async def test_an_oversized_request_is_refused(tmp_path):
    name = GAMES[0]
    async with service_in_process(name) as running:
        async with gateway_in_process({name: [running.address]}, max_message_bytes=4096) as (
            port,
            _,
        ):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(name, channel)
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await client.call("GetGame", game_id="x" * 10_000)
                assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


async def test_gateway_metrics_count_calls_by_service_method_and_code(stack):
    _, gateway, channel = stack
    name = GAMES[0]
    service = registry.by_name(name).service_name
    call = {"grpc_type": "unary", "grpc_service": service, "grpc_method": "GetGame"}
    handled = {**call, "grpc_code": "NOT_FOUND"}

    def sample(family: str, labels: dict[str, str]) -> float:
        return gateway.registry.get_sample_value(family, labels) or 0.0

    before = {
        family: sample(family, handled)
        for family in ("grpc_server_handled_total", "grpc_client_handled_total")
    }
    started = sample("grpc_server_started_total", call)
    client = GameClient(name, channel)
    for _ in range(3):
        with pytest.raises(grpc.aio.AioRpcError):
            await client.get("nope")
    # An aborted call's status leaves before the interceptor counts it: wait for the count.
    await eventually(
        lambda: (
            sample("grpc_server_handled_total", handled) == before["grpc_server_handled_total"] + 3
        )
    )
    # Each call is counted once on the server side and once per upstream call it made.
    assert sample("grpc_client_handled_total", handled) == before["grpc_client_handled_total"] + 3
    assert sample("grpc_server_started_total", call) == started + 3
    assert sample("grpc_server_handling_seconds_count", call) >= 3
    assert sample("grpc_client_handling_seconds_count", call) >= 3
    assert sample("grpc_server_msg_received_total", call) >= 3
    assert sample("grpc_client_msg_sent_total", call) >= 3
    # The gateway's registry holds no game families: it never sets them.
    families = {m.name for m in gateway.registry.collect()}
    assert not [f for f in families if f.startswith(("tabletop_games", "tabletop_moves"))]
    assert not [
        m for m in gateway.registry.collect() for s in m.samples if "service" in s.labels
    ], "no label is named service"


def empty_families(registry_) -> list[str]:
    """Families a scrape would show with a HELP and TYPE line and no series."""
    return [m.name for m in registry_.collect() if not m.samples]


async def test_after_one_call_the_gateway_exposes_no_empty_family(stack):
    _, gateway, channel = stack
    client = GameClient(GAMES[0], channel)
    with pytest.raises(grpc.aio.AioRpcError):
        await client.get("nope")
    await eventually(lambda: not empty_families(gateway.registry))
    # Every limit the gateway applies is a series from the start, at 0 until one refuses.
    limits = {
        s.labels["limit"]: s.value
        for m in gateway.registry.collect()
        for s in m.samples
        if s.name == "tabletop_gateway_limited_total"
    }
    assert set(limits) == set(GATEWAY_LIMITS) and not any(limits.values()), limits


def test_control_a_labelled_family_never_used_is_seen_empty():
    registry_ = CollectorRegistry()
    Counter("tabletop_control_limited", "never incremented", ["limit"], registry=registry_)
    assert empty_families(registry_) == ["tabletop_control_limited"]


async def test_an_unrouted_service_is_unimplemented():
    async with gateway_in_process({}) as (port, _):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            client = GameClient(GAMES[0], channel)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await client.get("x")
            assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
