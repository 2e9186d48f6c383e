"""ListMyGames through an in-process gateway: the caller's turn first by deadline, then
waiting tables, then the rest; a service down is named; refusals passed on; the cap on
a player's WatchMyGames streams. And the events a clock's timeout makes."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from tabletop.gateway.v1 import players_pb2, players_pb2_grpc

from gateway.players import Players
from services.channeling import engine as channeling
from services.glow import engine as glow
from services.kit import table as tables
from services.kit.games import GameManager
from services.kit.outbox.events import PlayerEvent
from services.kit.players import Player
from services.kit.status import error_info
from services.kit.store import open_store
from tests.players.support import ISSUER, Signer
from tests.players.test_mygames_streams import bearer, trust
from tests.support import free_port, gateway_in_process, service_in_process

ALICE, BOB = Player("alice", "Alice", ISSUER), Player("bob", "Bob", ISSUER)


@pytest.fixture(scope="module")
def signer() -> Signer:
    return Signer.new("EdDSA", "k1")


def plan(*kinds: str, clock: tables.Clock | None = None) -> tables.Plan:
    return tables.Plan(tuple(tables.SeatPlan(k, "", "medium") for k in kinds), clock)


async def started(manager, *, clock=None, engine=channeling, options=None):
    """Alice creates, Bob joins: a game in progress held by both."""
    options = options or engine.Options()
    game, _ = await manager.create(
        2, options, plan=plan("reserved", "open", clock=clock), player=ALICE
    )
    await manager.join(game.record.game_id, None, "", BOB)
    return game.record.game_id


async def list_my_games(port: int, token: str, **request) -> players_pb2.ListMyGamesResponse:
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = players_pb2_grpc.PlayersServiceStub(channel)
        return await stub.ListMyGames(
            players_pb2.ListMyGamesRequest(**request), metadata=bearer(token)
        )


async def test_my_games_sorted_across_services_and_a_service_down_is_named(signer):
    async with (
        service_in_process("channeling") as ch,
        service_in_process("glow") as gl,
    ):
        for svc in (ch, gl):
            trust(svc, signer)
        # Bob to act in two games with clocks (the shorter first), one without a clock,
        # a table waiting, and a game where Alice is to act.
        long_clock = await started(ch.manager, clock=tables.Clock(per_decision=3600))
        short_clock = await started(gl.manager, clock=tables.Clock(per_decision=600), engine=glow)
        no_clock = await started(ch.manager)
        waiting, _ = await ch.manager.create(
            2, channeling.Options(), plan=plan("reserved", "open"), player=BOB
        )
        ids = {
            long_clock: "long",
            short_clock: "short",
            no_clock: "none",
            waiting.record.game_id: "waiting",
        }
        to_act = {}
        for gid, mgr in (
            (long_clock, ch.manager),
            (short_clock, gl.manager),
            (no_clock, ch.manager),
        ):
            snap, _ = await mgr.read(gid, None)
            to_act[gid] = snap.to_act
        down = free_port()
        routes = {"channeling": [ch.address], "glow": [gl.address], "shen": [f"127.0.0.1:{down}"]}
        async with gateway_in_process(routes, players=Players(None)) as (gw, _):
            reply = await list_my_games(gw, signer.token(sub="bob"))
        assert reply.unavailable_services == ["tabletop.shen.v1.ShenService"]
        order = [ids[g.header.game_id] for g in reply.games]
        assert sorted(order) == sorted(ids.values())
        mine = {ids[g.header.game_id]: g for g in reply.games}
        turns = [k for k, g in mine.items() if g.your_turn]
        # Every your-turn game comes first, clocks by deadline, then no clock; then waiting.
        assert order[: len(turns)] == [k for k in ("short", "long", "none") if k in turns]
        assert order[len(turns)] == "waiting"
        for key, game in mine.items():
            seat = 1 if key != "waiting" else 0
            assert game.seat == seat
            gid = game.header.game_id
            assert game.your_turn == (key != "waiting" and seat in to_act[gid])
            assert game.HasField("deadline") == (game.your_turn and key in ("short", "long"))
        if "short" in turns and "long" in turns:
            assert mine["short"].deadline.seconds < mine["long"].deadline.seconds


async def test_my_games_needs_a_players_token_and_passes_the_services_refusal_on(signer):
    async with service_in_process("channeling") as ch:
        trust(ch, signer)
        async with gateway_in_process({"channeling": [ch.address]}, players=Players(None)) as (
            gw,
            _,
        ):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{gw}") as channel:
                stub = players_pb2_grpc.PlayersServiceStub(channel)
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await stub.ListMyGames(players_pb2.ListMyGamesRequest())
                assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
                assert error_info(caught.value).reason == "PLAYER_TOKEN_REQUIRED"
            expired = signer.token(sub="bob", exp=1, iat=0)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await list_my_games(gw, expired)
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert error_info(caught.value).reason == "TOKEN_EXPIRED"
            other = Signer.new("EdDSA", "k1")  # same kid, another key: a forgery
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await list_my_games(gw, other.token(sub="bob"))
            assert error_info(caught.value).reason == "TOKEN_INVALID"


async def test_a_player_holds_at_most_its_streams(signer):
    async with service_in_process("channeling") as ch:
        trust(ch, signer)
        async with gateway_in_process(
            {"channeling": [ch.address]}, players=Players(None), streams_per_player=2
        ) as (gw, _):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{gw}") as channel:
                watch = channel.unary_stream(
                    "/tabletop.gateway.v1.PlayersService/WatchMyGames",
                    request_serializer=players_pb2.WatchMyGamesRequest.SerializeToString,
                    response_deserializer=players_pb2.WatchMyGamesResponse.FromString,
                )
                token = signer.token(sub="bob")
                held = [
                    watch(players_pb2.WatchMyGamesRequest(), metadata=bearer(token))
                    for _ in range(2)
                ]
                for stream in held:
                    assert not (await asyncio.wait_for(stream.read(), 10)).HasField("event")
                third = watch(players_pb2.WatchMyGamesRequest(), metadata=bearer(token))
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await asyncio.wait_for(third.read(), 10)
                assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                assert dict(error_info(caught.value).metadata)["limit"] == "streams_per_player"
                # Another player is not held back; one closed frees a place.
                other = watch(
                    players_pb2.WatchMyGamesRequest(), metadata=bearer(signer.token(sub="ann"))
                )
                assert not (await asyncio.wait_for(other.read(), 10)).HasField("event")
                held[0].cancel()
                for _ in range(50):
                    again = watch(players_pb2.WatchMyGamesRequest(), metadata=bearer(token))
                    try:
                        await asyncio.wait_for(again.read(), 10)
                        break
                    except grpc.aio.AioRpcError:
                        await asyncio.sleep(0.1)
                else:
                    raise AssertionError("a closed stream did not free its place")
                for stream in (*held, other, again):
                    stream.cancel()


class Now:
    def __init__(self) -> None:
        self.at = 1_000_000.0

    def __call__(self) -> float:
        return self.at


async def test_a_timeout_tells_the_next_player_with_its_deadline():
    now = Now()
    store = open_store("memory://")
    m = GameManager(channeling, store, clock=now)
    gid = await started(m, clock=tables.Clock(per_decision=30))
    snap, _ = await m.read(gid, None)
    late = snap.to_act[0]
    # Timeouts until the turn passes (a turn may hold several decisions: the bot plays
    # each for the seat out of time; a seat still to act is not told again).
    for _ in range(20):
        now.at += 31
        await m.sweep()
        snap, _ = await m.read(gid, None)
        if snap.outcome is not None or set(snap.to_act) - {late}:
            break
    rows = [
        *await store.player_events("channeling", "alice", 0),
        *await store.player_events("channeling", "bob", 0),
    ]
    turns = [PlayerEvent.from_json(r.event.body) for r in rows if r.event.kind == "your_turn"]
    after = [t for t in turns if t.version == snap.version]
    assert snap.version > 1 and snap.outcome is None
    # The turn passed on a timeout: the other player is told, with its new deadline.
    assert [t.seat for t in after] == sorted(set(snap.to_act) - {late}) != []
    for t in after:
        assert t.deadline == pytest.approx(now.at + 30, abs=1)
    assert {t.version for t in turns} == {1, snap.version}  # none while the seat stayed
