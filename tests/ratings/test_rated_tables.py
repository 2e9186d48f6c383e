"""Rated tables end to end over gRPC: players' tokens take the seats, the finish rates
the game once in the same store transaction, the seats show their ratings; the refusals
of a rated table; a rated pool makes a rated table."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from prometheus_client import REGISTRY
from tabletop.common.v1 import table_pb2

from client.api import GameClient
from services.kit import ratings
from services.kit.status import error_info
from tests.matchmaking.test_find_match import FORFEIT, find, found, service, token

NAME = "channeling"
MINE = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)
OPEN = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_OPEN)


def counted(result: str = "rated") -> float:
    labels = {"game": NAME, "shape": "2p", "result": result}
    return REGISTRY.get_sample_value("tabletop_rated_games_total", labels) or 0.0


async def refused(coro, code, reason):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await coro
    assert caught.value.code() == code, caught.value.details()
    assert error_info(caught.value).reason == reason, caught.value.details()


async def rated_table(client: GameClient, creator: str) -> str:
    created = await client.call(
        "CreateGame", token(creator), players=2, seats=[MINE, OPEN], time_control=FORFEIT,
        rated=True,
    )  # fmt: skip
    assert created.game.rated and created.game.seats[0].player_id == creator
    assert created.game.seats[0].rating.shown == 750 and created.game.seats[0].rating.provisional
    return str(created.game.game_id)


async def test_a_rated_game_is_rated_once_when_it_ends_and_headers_show_the_ratings():
    async with service() as (running, channel):
        client = GameClient(NAME, channel)
        before = counted()
        game_id = await rated_table(client, "ann-rated")
        joined = await client.join(game_id, "", token=token("bo-rated"))
        assert joined.game.seats[1].player_id == "bo-rated" and joined.game.rated
        ended = await client.resign(game_id, token("bo-rated"))
        assert ended.game.outcome.winners == [0]
        got = await running.store.standings(NAME, "2p", ["ann-rated", "bo-rated"])
        assert got["ann-rated"].games == got["bo-rated"].games == 1
        assert got["ann-rated"].rating.mu > got["bo-rated"].rating.mu
        assert counted() == before + 1
        (stored,) = await running.store.rated_games(NAME)
        assert stored.game_id == game_id and stored.result["given_up"] == [1]
        header = (await client.get(game_id)).game
        assert [s.rating.shown for s in header.seats] == [
            got["ann-rated"].shown,
            got["bo-rated"].shown,
        ]
        # A retry of the resignation rates nothing again.
        with pytest.raises(grpc.aio.AioRpcError):
            await client.resign(game_id, token("bo-rated"))
        assert (await running.store.standings(NAME, "2p", ["bo-rated"]))["bo-rated"].games == 1
        assert counted() == before + 1


async def test_control_an_unrated_table_of_players_is_not_rated():
    async with service() as (running, channel):
        client = GameClient(NAME, channel)
        created = await client.call(
            "CreateGame", token("cy-casual"), players=2, seats=[MINE, OPEN], time_control=FORFEIT
        )
        game_id = created.game.game_id
        await client.join(game_id, "", token=token("di-casual"))
        await client.resign(game_id, token("di-casual"))
        assert await running.store.standings(NAME, "2p", ["cy-casual", "di-casual"]) == {}
        assert await running.store.rated_games(NAME) == []


async def test_a_rated_table_refuses_what_could_not_be_rated():
    async with service() as (_running, channel):
        client = GameClient(NAME, channel)
        await refused(
            client.call("CreateGame", token("ed"), players=2, seats=[MINE, OPEN], rated=True),
            grpc.StatusCode.INVALID_ARGUMENT,
            "RATED_NEEDS_CLOCK",
        )
        bot_moves = table_pb2.TimeControl(per_decision=FORFEIT.per_decision)
        await refused(
            client.call(
                "CreateGame", token("ed"), players=2, seats=[MINE, OPEN], rated=True,
                time_control=bot_moves,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "RATED_NEEDS_CLOCK",
        )  # fmt: skip
        await refused(
            client.call(
                "CreateGame", token("ed"), players=2, seats=[MINE, OPEN], rated=True,
                time_control=FORFEIT, several_seats_per_player=True,
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "RATED_NEEDS_PLAYERS",
        )  # fmt: skip
        game_id = await rated_table(client, "ed")
        await refused(  # a name and no player's token
            client.join(game_id, "Fay"), grpc.StatusCode.UNAUTHENTICATED, "RATED_NEEDS_PLAYERS"
        )
        await refused(  # the creator a second time
            client.join(game_id, "", token=token("ed")),
            grpc.StatusCode.FAILED_PRECONDITION,
            "PLAYER_HAS_SEAT",
        )
        header = (await client.get(game_id)).game
        assert header.seats[1].state == table_pb2.SEAT_STATE_OPEN  # nothing changed


async def test_a_rated_pool_makes_a_rated_table_and_its_end_is_rated():
    async with service() as (running, channel):
        a = find(channel, "gil-pool", rated=True, time_control=FORFEIT)
        b = find(channel, "hal-pool", rated=True, time_control=FORFEIT)
        got_a, got_b = await asyncio.wait_for(asyncio.gather(found(a), found(b)), 30)
        assert got_a.rated and got_a.game.rated and got_a.game_id == got_b.game_id
        seats = {s.player_id: s.index for s in got_a.game.seats}
        assert seats == {"gil-pool": got_a.seat, "hal-pool": got_b.seat}
        client = GameClient(NAME, channel)
        await client.resign(got_a.game_id, token("gil-pool"))  # the player's token acts
        got = await running.store.standings(NAME, "2p", ["gil-pool", "hal-pool"])
        assert got["hal-pool"].rating.mu > got["gil-pool"].rating.mu
        assert ratings.Standing().rating.mu < got["hal-pool"].rating.mu


async def test_a_rated_tables_rematch_is_rated_too():
    async with service() as (running, channel):
        client = GameClient(NAME, channel)
        game_id = await rated_table(client, "ivy-re")
        await client.join(game_id, "", token=token("jon-re"))
        await client.resign(game_id, token("jon-re"))
        await client.call("OfferRematch", token("ivy-re"), game_id=game_id)
        offered = await client.call("OfferRematch", token("jon-re"), game_id=game_id)
        rematch = offered.game.rematch_game_id
        assert rematch
        header = (await client.get(rematch)).game
        assert header.rated and [s.player_id for s in header.seats] == ["jon-re", "ivy-re"]
        await client.resign(rematch, token("jon-re"))
        got = await running.store.standings(NAME, "2p", ["ivy-re", "jon-re"])
        assert got["ivy-re"].games == got["jon-re"].games == 2
