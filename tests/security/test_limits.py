"""Every limit: its status and reason, its metric, its setting."""

from __future__ import annotations

import asyncio
import random
import signal

import grpc
import pytest
from prometheus_client import REGISTRY

from client.api import GameClient
from services import registry
from services.kit import server as kit_server
from services.kit.limits import Limits
from services.kit.status import error_info
from tests.support import eventually, gateway_in_process, running, service_in_process

NAME = registry.names()[0]
PLAYERS = registry.by_name(NAME).engine().GAME.min_players


def limited(limit: str, family: str = "tabletop_limited_total", registry_=REGISTRY) -> float:
    return registry_.get_sample_value(family, {"limit": limit}) or 0.0


async def expect_limit(coro, limit: str, reason: str = "LIMIT_REACHED") -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await coro
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info = error_info(caught.value)
    assert info.reason == reason and info.metadata["limit"] == limit


async def test_games_per_service():
    async with service_in_process(NAME, max_games=2) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient(NAME, channel)
            first = await client.create(PLAYERS, seed=1)
            await client.create(PLAYERS, seed=2)
            before = (
                REGISTRY.get_sample_value(
                    "tabletop_limits_hit_total", {"game": NAME, "limit": "max_games"}
                )
                or 0
            )
            await expect_limit(client.create(PLAYERS), "max_games")
            assert (
                REGISTRY.get_sample_value(
                    "tabletop_limits_hit_total", {"game": NAME, "limit": "max_games"}
                )
                == before + 1
            )
            await client.play_random(first, random.Random(1))  # a finished game frees a place
            assert (await client.create(PLAYERS)).game_id


async def test_the_count_of_games_in_progress_survives_a_restart(tmp_path):
    url = f"sqlite:///{tmp_path}/count.db"
    async with service_in_process(NAME, url) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient(NAME, channel)
            await client.create(PLAYERS)
    async with service_in_process(NAME, url, max_games=1) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            await expect_limit(GameClient(NAME, channel).create(PLAYERS), "max_games")


@pytest.mark.parametrize("where", ["service", "gateway"])
async def test_message_size(where):
    limits = Limits(max_message_bytes=2048)
    async with service_in_process(NAME, limits=limits if where == "service" else None) as svc:
        if where == "service":
            address, family = svc.address, "tabletop_limited_total"
            context, registry_ = None, REGISTRY
        else:
            context = gateway_in_process({NAME: [svc.address]}, limits=limits)
            port, gw = await context.__aenter__()
            address, family = f"127.0.0.1:{port}", "tabletop_gateway_limited_total"
            registry_ = gw.registry
        try:
            async with grpc.aio.insecure_channel(address) as channel:
                client = GameClient(NAME, channel)
                before = limited("max_message_bytes", family, registry_)
                await expect_limit(client.call("GetGame", game_id="x" * 5000), "max_message_bytes")
                assert limited("max_message_bytes", family, registry_) == before + 1
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await client.call("GetGame", game_id="x" * 100)  # small: a normal answer
                assert caught.value.code() == grpc.StatusCode.NOT_FOUND
        finally:
            if context is not None:
                await context.__aexit__(None, None, None)


async def test_open_streams_per_client_at_the_service():
    async with service_in_process(NAME, limits=Limits(streams_per_client=1)) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient(NAME, channel)
            game = await client.create(PLAYERS)
            first = client.watch(game.game_id)
            await first.read()
            await expect_limit(client.watch(game.game_id).read(), "streams_per_client")
            first.cancel()
            # The place is free again once the server has seen the cancel (a moment later).
            for _ in range(100):
                second = client.watch(game.game_id)
                try:
                    assert (await second.read()).HasField("view")
                    break
                except grpc.aio.AioRpcError as refused:
                    assert error_info(refused).metadata["limit"] == "streams_per_client"
                    await asyncio.sleep(0.05)
            else:
                pytest.fail("the cancelled watch's place was never freed")
            second.cancel()


async def test_request_rate_per_client_at_the_service():
    async with service_in_process(
        NAME, limits=Limits(rate_per_client=1, burst_per_client=3)
    ) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient(NAME, channel)
            game = await client.create(PLAYERS)  # one
            await client.get(game.game_id)  # two
            await client.get(game.game_id)  # three
            await expect_limit(client.get(game.game_id), "rate_per_client", "RATE_LIMITED")


async def test_the_gateway_puts_a_deadline_on_calls_that_have_none(tmp_path):
    """A stalled backend cannot hold a deadline-less call forever."""
    env = {"TABLETOP_STORE_URL": "memory://"}
    with running(f"services.{NAME}", env, tmp_path / "svc.log") as svc:
        async with gateway_in_process({NAME: [svc.address]}, unary_timeout=1.0) as (port, gw):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(NAME, channel, timeout=None)
                game = await client.create(PLAYERS)
                labels = {
                    "grpc_type": "unary",
                    "grpc_service": registry.by_name(NAME).service_name,
                    "grpc_method": "GetGame",
                    "grpc_code": "DEADLINE_EXCEEDED",
                }
                family = "grpc_server_handled_total"
                before = gw.registry.get_sample_value(family, labels) or 0.0
                svc.popen.send_signal(signal.SIGSTOP)
                try:
                    loop = asyncio.get_running_loop()
                    started = loop.time()
                    with pytest.raises(grpc.aio.AioRpcError) as caught:
                        await client.get(game.game_id)
                    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
                    assert loop.time() - started < 10
                    assert error_info(caught.value).reason == "DEADLINE_EXCEEDED"
                    # ...and it is counted, by the code the client got (just after the
                    # status leaves: context.abort sends it before the interceptor counts).
                    await eventually(
                        lambda: gw.registry.get_sample_value(family, labels) == before + 1
                    )
                finally:
                    svc.popen.send_signal(signal.SIGCONT)


def test_every_limit_is_configurable_by_environment():
    entry = registry.by_name(NAME)
    service = {s.env for s in kit_server.settings(entry)}
    from gateway.server import settings as gateway_settings

    gateway = {s.env for s in gateway_settings()}
    for env in (
        "TABLETOP_MAX_MESSAGE_BYTES",
        "TABLETOP_RATE_PER_CLIENT",
        "TABLETOP_STREAMS_PER_CLIENT",
        "TABLETOP_AUTH_FAILURES_PER_CLIENT",
    ):
        assert env in service and env in gateway
    assert "TABLETOP_MAX_GAMES" in service
    assert "TABLETOP_UPSTREAM_TIMEOUT_SECONDS" in gateway
