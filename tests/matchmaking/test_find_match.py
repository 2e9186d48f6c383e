"""FindMatch over real gRPC: players of a pool seated together, each once; a replaced
stream, a closed one, a player gone the moment of the match; bad requests refused."""

from __future__ import annotations

import asyncio
import contextlib

import grpc
import pytest
from google.protobuf import duration_pb2
from tabletop.common.v1 import table_pb2

from services import registry
from services.kit import players
from services.kit.players.seats import PlayerPolicy
from services.kit.status import error_info
from tests.players.support import AUDIENCE, ISSUER, Signer
from tests.support import service_in_process

NAME = "channeling"
SIGNER = Signer.new("ES256", "k1")
FORFEIT = table_pb2.TimeControl(
    per_decision=duration_pb2.Duration(seconds=60), on_timeout=table_pb2.TIMEOUT_ACTION_FORFEIT
)


def token(player: str) -> str:
    return SIGNER.token(sub=player, name=f"Name {player[-3:]}")


@contextlib.asynccontextmanager
async def service(**options):
    async with service_in_process(NAME, **options) as running:
        key = players.StaticKey(players.public_jwk(SIGNER.private.public_key()), "k1")
        verifier = players.Verifier(key, issuer=ISSUER, audience=AUDIENCE)
        running.manager.players = PlayerPolicy(verifier)
        async with grpc.aio.insecure_channel(running.address) as channel:
            yield running, channel


def pb2():
    return registry.by_name(NAME).pb2()


def find(channel, player: str | None, **fields):
    call = channel.unary_stream(
        f"/{registry.by_name(NAME).service_name}/FindMatch",
        request_serializer=pb2().FindMatchRequest.SerializeToString,
        response_deserializer=pb2().FindMatchResponse.FromString,
    )
    metadata = () if player is None else (("authorization", f"Bearer {token(player)}"),)
    return call(pb2().FindMatchRequest(**fields), metadata=metadata)


async def found(stream) -> object:
    async for message in stream:
        if message.HasField("found"):
            return message.found
    raise AssertionError("the stream ended without a match")


async def first_waiting(stream) -> object:
    async for message in stream:
        assert message.HasField("waiting")
        return message.waiting
    raise AssertionError("no waiting message")


async def pool_size(channel) -> int:
    call = channel.unary_unary(
        f"/{registry.by_name(NAME).service_name}/ListGames",
        request_serializer=pb2().ListGamesRequest.SerializeToString,
        response_deserializer=pb2().ListGamesResponse.FromString,
    )
    listed = await call(pb2().ListGamesRequest())
    return sum(p.players_waiting for p in listed.pools)


async def test_two_players_are_seated_at_one_new_table():
    async with service() as (running, channel):
        a, b = find(channel, "player-aaa"), find(channel, "player-bbb")
        got_a, got_b = await asyncio.wait_for(asyncio.gather(found(a), found(b)), 30)
        assert got_a.game_id == got_b.game_id and {got_a.seat, got_b.seat} == {0, 1}
        assert not got_a.rated
        names = {s.index: s.player_name for s in got_a.game.seats}
        assert names[got_a.seat] == "Name aaa" and names[got_b.seat] == "Name bbb"
        assert await pool_size(channel) == 0
        game = await running.store.load(got_a.game_id)
        assert game is not None and not game.waiting


async def test_a_closed_stream_leaves_the_pool():
    async with service() as (_running, channel):
        alone = find(channel, "player-one")
        waiting = await first_waiting(alone)
        assert waiting.players_waiting == 1 and waiting.window_points == 100
        assert await pool_size(channel) == 1  # control: while it waits it is counted
        alone.cancel()
        for _ in range(200):
            if await pool_size(channel) == 0:
                break
            await asyncio.sleep(0.05)
        assert await pool_size(channel) == 0
        later = find(channel, "player-two")
        assert (await first_waiting(later)).players_waiting == 1  # nobody to meet
        later.cancel()


async def test_a_second_find_match_replaces_the_first():
    async with service() as (_running, channel):
        first = find(channel, "player-twice")
        await first_waiting(first)
        second = find(channel, "player-twice")
        assert (await first_waiting(second)).players_waiting == 1  # one entry, not two
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in first:
                pass
        assert caught.value.code() == grpc.StatusCode.ABORTED
        assert error_info(caught.value).reason == "MATCH_REPLACED"
        other = find(channel, "player-other")
        got, got_other = await asyncio.wait_for(asyncio.gather(found(second), found(other)), 30)
        assert got.game_id == got_other.game_id


@pytest.mark.parametrize("check", [True, False], ids=["checked", "control-unchecked"])
async def test_a_player_gone_the_moment_of_the_match_puts_the_other_back_first(check, monkeypatch):
    """A leaves as B arrives (its stream closed, the matcher not told yet): B is not
    seated with A but put back, and meets C next. Control: without the check, B and A
    get a table nobody joins."""
    async with service() as (running, channel):
        matcher = running_matcher(running)
        a = find(channel, "player-aaa")
        await first_waiting(a)
        matcher._waiters["player-aaa"].open = False  # gone; its stream not closed yet
        if not check:
            monkeypatch.setattr(type(matcher), "_gone", staticmethod(lambda match, waiters: []))
        b = find(channel, "player-bbb")
        if not check:
            got = await asyncio.wait_for(found(b), 30)
            game = await running.store.load(got.game_id)
            assert game is not None  # the table A never joins
            return
        await first_waiting(b)
        c = find(channel, "player-ccc")
        got_b, got_c = await asyncio.wait_for(asyncio.gather(found(b), found(c)), 30)
        assert got_b.game_id == got_c.game_id
        a.cancel()


@pytest.mark.parametrize("recheck", [True, False], ids=["cancelled", "control-seated"])
async def test_a_player_gone_while_the_table_is_made_has_it_cancelled(recheck, monkeypatch):
    """A leaves while its table with B is being made (the one store write): the table
    ends at once (abandoned, not rated), B is put back and meets C. Control: without the
    check after the table, B is seated at a table A never joins."""
    from services.kit.matchmaking import matcher as matcher_module

    if not recheck:
        monkeypatch.setattr(matcher_module, "RECHECK_AFTER_TABLE", False)
    entered, release = asyncio.Event(), asyncio.Event()
    made: list[str] = []
    async with service() as (running, channel):
        create = running.manager.create

        async def held(*args, **kwargs):
            entered.set()
            await release.wait()
            game, tokens = await create(*args, **kwargs)
            made.append(game.record.game_id)
            return game, tokens

        monkeypatch.setattr(running.manager, "create", held)
        matcher = running_matcher(running)
        a = find(channel, "player-aaa")
        await first_waiting(a)
        b = find(channel, "player-bbb")
        b_found = asyncio.ensure_future(found(b))  # its arrival makes the table
        await asyncio.wait_for(entered.wait(), 30)
        a.cancel()
        for _ in range(600):
            if "player-aaa" not in matcher._waiters:
                break
            await asyncio.sleep(0.05)
        release.set()
        monkeypatch.setattr(running.manager, "create", create)
        if not recheck:
            got = await asyncio.wait_for(b_found, 30)
            assert "player-aaa" in {s.player_id for s in got.game.seats}  # nobody takes it
            return
        for _ in range(600):
            table = await running.store.load(made[0]) if made else None
            if table is not None and table.finished_at is not None:
                break
            await asyncio.sleep(0.05)
        assert table is not None and table.finished_at is not None  # made, then ended
        game = await running.manager.get(made[0])
        assert running.manager.outcome(game).reason == "ABANDONED"  # not rated
        assert not b_found.done()  # put back, waiting
        c = find(channel, "player-ccc")
        got_b, got_c = await asyncio.wait_for(asyncio.gather(b_found, found(c)), 30)
        assert got_b.game_id == got_c.game_id != made[0]
        assert {s.player_id for s in got_b.game.seats} == {"player-bbb", "player-ccc"}


def running_matcher(running):
    """The service's matchmaker (held by its FindMatch handler)."""
    import gc

    from services.kit.matchmaking.matcher import Matchmaker

    found = [
        m for m in gc.get_objects() if isinstance(m, Matchmaker) and m.manager is running.manager
    ]
    assert len(found) == 1
    return found[0]


async def test_a_hundred_players_at_once_are_all_paired_once():
    async with service() as (_running, channel):
        streams = [find(channel, f"player-{i:03d}") for i in range(100)]
        results = await asyncio.wait_for(asyncio.gather(*(found(s) for s in streams)), 120)
        tables: dict[str, list[int]] = {}
        for got in results:
            tables.setdefault(got.game_id, []).append(got.seat)
        assert len(tables) == 50
        assert all(sorted(seats) == [0, 1] for seats in tables.values())
        assert await pool_size(channel) == 0


async def refused(stream, code, reason):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for _ in stream:
            pass
    assert caught.value.code() == code, caught.value.details()
    assert error_info(caught.value).reason == reason
    return error_info(caught.value)


async def test_bad_requests_are_refused_and_join_no_pool():
    async with service() as (_running, channel):
        await refused(find(channel, None), grpc.StatusCode.UNAUTHENTICATED, "PLAYER_TOKEN_REQUIRED")
        info = await refused(
            find(channel, "p-1", shape="3p"), grpc.StatusCode.INVALID_ARGUMENT, "UNKNOWN_SHAPE"
        )
        assert info.metadata["shapes"] == "2p"
        await refused(
            find(channel, "p-1", rated=True), grpc.StatusCode.INVALID_ARGUMENT, "RATED_NEEDS_CLOCK"
        )
        assert await pool_size(channel) == 0


async def test_the_gateway_catalog_shows_each_pool_size():
    from tabletop.gateway.v1 import catalog_pb2, catalog_pb2_grpc

    from tests.support import gateway_in_process

    async with service() as (running, channel):
        routes = {NAME: [running.address]}
        async with gateway_in_process(routes) as (port, _):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as gw:
                catalog = catalog_pb2_grpc.CatalogServiceStub(gw)

                async def pools():
                    games = (await catalog.ListGames(catalog_pb2.ListGamesRequest())).games
                    game = next(g for g in games if g.name == NAME)
                    return [(p.shape, p.rated, p.players_waiting) for p in game.pools]

                assert await pools() == []
                waiting = find(channel, "player-solo")
                await first_waiting(waiting)
                assert await pools() == [("2p", False, 1)]
                waiting.cancel()


async def test_two_players_are_matched_through_the_gateway():
    from tests.support import gateway_in_process

    async with service() as (running, _):
        async with gateway_in_process({NAME: [running.address]}) as (port, _):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as gw:
                a, b = find(gw, "player-gw-a"), find(gw, "player-gw-b")
                got_a, got_b = await asyncio.wait_for(asyncio.gather(found(a), found(b)), 30)
                assert got_a.game_id == got_b.game_id and {got_a.seat, got_b.seat} == {0, 1}


async def test_a_player_due_bots_gets_a_table_with_a_bot_and_it_is_not_rated():
    async with service() as (_running, channel):
        alone = find(
            channel, "player-bots", rated=True, time_control=FORFEIT,
            bots_after=duration_pb2.Duration(seconds=0), bot_level=table_pb2.BOT_LEVEL_EASY,
        )  # fmt: skip
        got = await asyncio.wait_for(found(alone), 30)
        assert not got.rated and not got.game.rated
        states = [s.state for s in got.game.seats]
        assert states.count(table_pb2.SEAT_STATE_BOT) == 1
        assert got.game.seats[got.seat].player_id == "player-bots"
