"""Seats: what a token allows, what no token allows, and what guessing costs."""

from __future__ import annotations

import random

import grpc
import pytest
from prometheus_client import REGISTRY

from client.api import GameClient
from services import registry
from services.kit.limits import ADDRESS_FACTOR, Limits
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


async def expect_locked_out(call) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    info = error_info(caught.value)
    assert info.reason == "RATE_LIMITED"
    assert info.metadata["limit"] == "auth_failures"
    assert int(info.metadata["retry_after_ms"]) > 0


async def expect_unauthenticated(call) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED


async def lockout_holds_only_for_failures(
    address: str, limit: int, family: str, registry=REGISTRY
) -> None:
    """``limit`` bad guesses on one game from one address, then: further failures on
    that game are refused; valid tokens and spectators from the same address, on many
    connections, go through; another game still answers its own UNAUTHENTICATED."""
    name = GAMES[0]
    channels = [grpc.aio.insecure_channel(address) for _ in range(8)]
    try:
        clients = [GameClient(name, ch) for ch in channels]
        attacked = await clients[0].create(players_for(name))
        other = await clients[0].create(players_for(name))
        before = registry.get_sample_value(family, {"limit": "auth_failures"}) or 0
        for _ in range(limit):
            await expect_unauthenticated(clients[0].get(attacked.game_id, f"g-{random.random()}"))
        # From the same address (every channel here is 127.0.0.1): the guesser's next
        # failure is refused, and so is any other client's failure on that game.
        await expect_locked_out(clients[0].get(attacked.game_id, "another-guess"))
        await expect_locked_out(clients[1].submit(attacked.game_id, "guess", empty_move(name)))
        after = registry.get_sample_value(family, {"limit": "auth_failures"})
        assert after == before + 2
        # Everyone else behind that address plays on: seats and spectators alike.
        for client in clients:
            for seat, token in enumerate(attacked.tokens):
                view = await client.get(attacked.game_id, token)
                assert view.game.viewer == seat
            assert not (await client.get(attacked.game_id)).game.HasField("viewer")
            stream = client.watch(attacked.game_id, attacked.tokens[0])
            assert (await stream.read()).HasField("view")
            stream.cancel()
        # The attack on one game locks no other game.
        await expect_unauthenticated(clients[2].get(other.game_id, "guess"))
    finally:
        for channel in channels:
            await channel.close()


def empty_move(name: str):
    return registry.by_name(name).pb2().Move()


async def test_a_lockout_refuses_only_failing_authentications_on_the_game_attacked():
    name = GAMES[0]
    limits = Limits(auth_failures_per_client=3, auth_failure_window=60)
    async with service_in_process(name, limits=limits) as running:
        before = (
            REGISTRY.get_sample_value(
                "tabletop_auth_failures_total", {"game": name, "reason": "BAD_TOKEN"}
            )
            or 0
        )
        await lockout_holds_only_for_failures(running.address, 3, "tabletop_limited_total")
        after = REGISTRY.get_sample_value(
            "tabletop_auth_failures_total", {"game": name, "reason": "BAD_TOKEN"}
        )
        assert after == before + 6  # 3 counted guesses, 2 refused ones, 1 on the other game


async def test_the_gateway_refuses_only_failing_authentications_it_relays():
    name = GAMES[0]
    async with service_in_process(name) as running:
        limits = Limits(auth_failures_per_client=2)
        async with gateway_in_process({name: [running.address]}, limits=limits) as (port, gw):
            await lockout_holds_only_for_failures(
                f"127.0.0.1:{port}", 2, "tabletop_gateway_limited_total", gw.registry
            )


async def test_behind_the_gateway_a_service_locks_out_failures_of_each_client_address():
    """With trust_forwarded_for, the service keys the lockout by the gateway's
    x-forwarded-for: clients behind one address keep their valid calls."""
    name = GAMES[0]
    limits = Limits(auth_failures_per_client=1, trust_forwarded_for=True)
    async with service_in_process(name, limits=limits) as running:
        async with gateway_in_process({name: [running.address]}) as (port, _):
            await lockout_holds_only_for_failures(f"127.0.0.1:{port}", 1, "tabletop_limited_total")


async def test_spraying_guesses_over_many_games_locks_the_address_out_of_failing():
    name = GAMES[0]
    limits = Limits(auth_failures_per_client=1, auth_failure_window=60)
    async with service_in_process(name, limits=limits) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient(name, channel)
            games = [await client.create(players_for(name)) for _ in range(ADDRESS_FACTOR + 1)]
            for game in games[:ADDRESS_FACTOR]:
                await expect_unauthenticated(client.get(game.game_id, "guess"))
            fresh = games[ADDRESS_FACTOR]
            await expect_locked_out(client.get(fresh.game_id, "guess"))
            assert (await client.get(fresh.game_id, fresh.tokens[0])).game.viewer == 0
