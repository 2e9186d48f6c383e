"""GetRatings, ListLeaderboard and rated tables over real gRPC, in every game; bad input
gets its status and reason and changes nothing."""

from __future__ import annotations

import random
import uuid

import grpc
import pytest
from prometheus_client import REGISTRY
from tabletop.common.v1 import table_pb2

from client.api import GameClient
from services import registry
from services.kit import ratings
from services.kit.status import error_info
from tests.ratings.test_store import play
from tests.support import service_in_process

OPEN = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_OPEN)
MINE = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED, player_name="Ann")
BOT = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_BOT, bot_level=table_pb2.BOT_LEVEL_EASY)


@pytest.fixture(params=registry.names())
async def svc(request):
    async with service_in_process(request.param) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            yield running, GameClient(request.param, channel)


async def refused(coro, code: grpc.StatusCode, reason: str):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await coro
    assert caught.value.code() == code, caught.value.details()
    info = error_info(caught.value)
    assert info is not None and info.reason == reason, (info, caught.value.details())
    return info


async def test_get_ratings_lists_every_shape_with_a_newcomer_where_unplayed(svc):
    running, client = svc
    info = running.manager.engine.GAME
    shape = ratings.shapes(info)[0]
    a, b = "a-" + uuid.uuid4().hex, "b-" + uuid.uuid4().hex
    seats = [a, b, *(f"x{i}-{uuid.uuid4().hex}" for i in range(shape.players - 2))]
    await play(running.store, seats, winner=0, shape=shape)
    got = await client.call("GetRatings", player_id=a)
    assert got.player_id == a
    assert [r.shape for r in got.ratings] == [s.name for s in ratings.shapes(info)]
    first = got.ratings[0]
    stored = (await running.store.standings(info.name, shape.name, [a]))[a]
    assert (first.mu, first.sigma, first.games) == (stored.rating.mu, stored.rating.sigma, 1)
    assert first.shown == stored.shown and first.provisional
    for other in got.ratings[1:]:
        assert (other.games, other.shown, other.mu) == (0, 750, ratings.NEW.mu)


async def test_the_leaderboard_pages_established_players_best_first(svc):
    running, client = svc
    info = running.manager.engine.GAME
    shape = ratings.shapes(info)[0]
    rng = random.Random(1)
    people = [f"p{i}-{uuid.uuid4().hex[:8]}" for i in range(shape.players + 3)]
    for _ in range(14 * len(people) // shape.players):
        seats = rng.sample(people, shape.players)
        await play(running.store, seats, winner=0, shape=shape)
    newcomer = "n-" + uuid.uuid4().hex
    await play(running.store, [newcomer, *people[: shape.players - 1]], winner=0, shape=shape)
    entries, token = [], ""
    while True:
        page = await client.call("ListLeaderboard", page_size=2, page_token=token)
        assert page.shape == shape.name
        entries += page.entries
        token = page.next_page_token
        if not token:
            break
    everyone = await running.store.all_ratings(info.name)
    established = sorted(
        (e for e in everyone if e.standing.games >= 10),
        key=lambda e: (-e.standing.rating.ordinal, e.player_id),
    )
    assert [e.player_id for e in entries] == [e.player_id for e in established]
    assert [e.rank for e in entries] == list(range(1, len(entries) + 1))
    assert newcomer not in {e.player_id for e in entries} and len(entries) >= 2
    assert [e.shown for e in entries] == [e.standing.shown for e in established]


async def test_bad_reads_are_refused_with_their_reason(svc):
    running, client = svc
    info = running.manager.engine.GAME
    known = ",".join(s.name for s in ratings.shapes(info))
    got = await refused(
        client.call("ListLeaderboard", shape="9v9"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "UNKNOWN_SHAPE",
    )
    assert got.metadata["shapes"] == known
    await refused(
        client.call("ListLeaderboard", page_size=101),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_REQUEST",
    )
    await refused(
        client.call("ListLeaderboard", page_token="forged.0123456789abcdef"),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_PAGE_TOKEN",
    )
    await refused(
        client.call("GetRatings"), grpc.StatusCode.UNAUTHENTICATED, "PLAYER_TOKEN_REQUIRED"
    )


async def test_a_rated_table_refuses_a_bot_or_a_creator_without_a_player(svc):
    running, client = svc
    info = running.manager.engine.GAME
    n = info.min_players
    await refused(
        client.create(n, seats=[MINE, *[BOT] * (n - 1)], rated=True),
        grpc.StatusCode.INVALID_ARGUMENT,
        "RATED_NEEDS_PLAYERS",
    )
    await refused(
        client.create(n, seats=[MINE, *[OPEN] * (n - 1)], rated=True),
        grpc.StatusCode.UNAUTHENTICATED,
        "PLAYER_TOKEN_REQUIRED",
    )
    await refused(
        client.create(n, rated=True), grpc.StatusCode.INVALID_ARGUMENT, "RATED_NEEDS_PLAYERS"
    )
    assert await running.store.count_active(info.name) == 0  # nothing was created
    unrated = await client.create(n, seats=[MINE, *[OPEN] * (n - 1)])
    assert not unrated.response.game.rated
    assert not unrated.response.game.seats[0].HasField("rating")


async def test_the_ratings_series_exist_at_zero_from_the_start(svc):
    running, _ = svc
    info = running.manager.engine.GAME
    for shape in ratings.shapes(info):
        for result in ("rated", "ABANDONED", "NOT_ALL_PLAYERS"):
            labels = {"game": info.name, "shape": shape.name, "result": result}
            assert REGISTRY.get_sample_value("tabletop_rated_games_total", labels) is not None
        labels = {"game": info.name, "shape": shape.name}
        assert REGISTRY.get_sample_value("tabletop_rating_updates_total", labels) is not None
