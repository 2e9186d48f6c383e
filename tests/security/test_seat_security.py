"""Seats: what a token allows, what no token allows, and what guessing costs."""

from __future__ import annotations

import random

import grpc
import pytest
from prometheus_client import REGISTRY

from client.api import GameClient
from services import registry
from services.kit.limits import Limits
from services.kit.status import error_info
from tests.support import gateway_in_process, service_in_process

GAMES = registry.names()


def players_for(name: str) -> int:
    return registry.by_name(name).engine().GAME.min_players


@pytest.mark.parametrize("name", GAMES)
async def test_a_spectator_can_only_watch(name):
    async with service_in_process(name) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient(name, channel)
            game = await client.create(players_for(name), seed=4)
            view = await client.get(game.game_id)
            assert not view.game.HasField("viewer")
            assert list((await client.moves(game.game_id, None)).moves) == []
            seat = view.game.to_act[0]
            move = (await client.moves(game.game_id, game.tokens[seat])).moves[0]
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await client.submit(game.game_id, None, move)
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
            stream = client.watch(game.game_id)
            assert (await stream.read()).HasField("view")
            stream.cancel()
            await client.history(game.game_id)  # allowed, filtered for a spectator
            assert (await client.get(game.game_id)).game.version == 0


@pytest.mark.parametrize("name", GAMES)
async def test_the_store_never_holds_a_token(name, tmp_path):
    async with service_in_process(name, f"sqlite:///{tmp_path}/t.db") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient(name, channel)
            game = await client.create(players_for(name))
            await client.play_random(game, random.Random(1))
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("t.db*"))
    assert stored, "the store wrote its file"
    for token in game.tokens:
        assert token.encode() not in stored


async def test_failed_authentications_are_limited_per_client_and_counted():
    name = GAMES[0]
    limits = Limits(auth_failures_per_client=3, auth_failure_window=60)
    async with service_in_process(name, limits=limits) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient(name, channel)
            game = await client.create(players_for(name))
            before = (
                REGISTRY.get_sample_value(
                    "tabletop_auth_failures_total", {"game": name, "reason": "BAD_TOKEN"}
                )
                or 0
            )
            for _ in range(3):
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await client.get(game.game_id, "guess-" + str(random.random()))
                assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
            # The fourth guess, and even a right token, from this client now wait.
            for token in ("another-guess", game.tokens[0]):
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await client.get(game.game_id, token)
                assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                info = error_info(caught.value)
                assert info.reason == "RATE_LIMITED"
                assert info.metadata["limit"] == "auth_failures"
                assert int(info.metadata["retry_after_ms"]) > 0
            after = REGISTRY.get_sample_value(
                "tabletop_auth_failures_total", {"game": name, "reason": "BAD_TOKEN"}
            )
            assert after == before + 3
            assert REGISTRY.get_sample_value("tabletop_limited_total", {"limit": "auth_failures"})


async def test_the_gateway_limits_failed_authentications_of_its_clients():
    name = GAMES[0]
    async with service_in_process(name) as running:
        limits = Limits(auth_failures_per_client=2)
        async with gateway_in_process({name: [running.address]}, limits=limits) as (port, _):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(name, channel)
                game = await client.create(players_for(name))
                for _ in range(2):
                    with pytest.raises(grpc.aio.AioRpcError):
                        await client.get(game.game_id, "nope")
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await client.get(game.game_id, game.tokens[0])
                assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert error_info(caught.value).metadata["limit"] == "auth_failures"
                assert REGISTRY.get_sample_value(
                    "tabletop_gateway_limited_total", {"limit": "auth_failures"}
                )


async def test_behind_the_gateway_a_service_can_limit_each_client_not_the_gateway():
    """With trust_forwarded_for, the service sees the gateway's x-forwarded-for."""
    name = GAMES[0]
    limits = Limits(auth_failures_per_client=1, trust_forwarded_for=True)
    async with service_in_process(name, limits=limits) as running:
        async with gateway_in_process({name: [running.address]}) as (port, _):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(name, channel)
                game = await client.create(players_for(name))
                with pytest.raises(grpc.aio.AioRpcError):
                    await client.get(game.game_id, "nope")
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await client.get(game.game_id, game.tokens[0])
                assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
