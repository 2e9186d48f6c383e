"""WatchPlayerEvents in a game service and WatchMyGames through the gateway, in process:
the backlog, the caught-up mark, live events, resuming from a cursor, a service that
restarts, refusals."""

from __future__ import annotations

import asyncio
import random

import grpc
import jwt
import pytest
from tabletop.channeling.v1 import channeling_pb2
from tabletop.common.v1 import game_pb2
from tabletop.gateway.v1 import players_pb2

from gateway.players import Players
from gateway.players.mygames import decode_cursor
from services.channeling import engine as channeling
from services.kit import table as tables
from services.kit.players import Player, StaticKey, Verifier
from services.kit.players.seats import PlayerPolicy
from services.kit.status import error_info
from tests.players.support import AUDIENCE, ISSUER, Signer
from tests.support import gateway_in_process, service_in_process

CHANNELING = "/tabletop.channeling.v1.ChannelingService/"
PLAYERS = "/tabletop.gateway.v1.PlayersService/"


@pytest.fixture(scope="module")
def signer() -> Signer:
    return Signer.new("EdDSA", "k1")


def trust(svc, signer: Signer) -> None:
    key = jwt.PyJWK(signer.jwk(), algorithm="EdDSA")
    svc.manager.players = PlayerPolicy(Verifier(StaticKey(key), issuer=ISSUER, audience=AUDIENCE))


def bearer(token: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {token}"),)


async def table_of(manager, alice: str, bob: str):
    """A two-player game: alice's CreateGame with an open seat, bob's JoinGame starts it."""
    plan = tables.Plan(
        (tables.SeatPlan("reserved", "", "medium"), tables.SeatPlan("open", "", "medium")), None
    )
    game, tokens = await manager.create(
        2, channeling.Options(), plan=plan, player=Player(alice, "Alice", ISSUER)
    )
    _, seat, token = await manager.join(game.record.game_id, None, "", Player(bob, "Bob", ISSUER))
    tokens[seat] = token
    return game.record.game_id, tokens


async def move(manager, game_id: str, tokens: dict[int, str], rng: random.Random):
    snap, _ = await manager.read(game_id, None)
    seat = rng.choice(sorted(snap.to_act))
    _, moves, _ = await manager.legal_moves(game_id, tokens[seat])
    choice = rng.choice(moves)
    snap, _ = await manager.submit(game_id, tokens[seat], lambda: choice, None, None)
    return snap


async def next_message(stream, timeout: float = 10.0):
    return await asyncio.wait_for(stream.read(), timeout)


async def test_a_players_events_backlog_then_the_mark_then_live(signer):
    async with service_in_process("channeling") as svc:
        trust(svc, signer)
        gid, tokens = await table_of(svc.manager, "alice", "bob")
        async with grpc.aio.insecure_channel(svc.address) as channel:
            watch = channel.unary_stream(
                CHANNELING + "WatchPlayerEvents",
                request_serializer=channeling_pb2.WatchPlayerEventsRequest.SerializeToString,
                response_deserializer=channeling_pb2.WatchPlayerEventsResponse.FromString,
            )
            stream = watch(
                channeling_pb2.WatchPlayerEventsRequest(after=0),
                metadata=bearer(signer.token(sub="alice")),
            )
            backlog = []
            while True:
                message = await next_message(stream)
                if not message.HasField("event"):
                    break
                backlog.append(message.event)
            assert backlog[0].kind == game_pb2.PLAYER_EVENT_KIND_GAME_STARTED
            assert all(e.player_id == "alice" and e.game_id == gid for e in backlog)
            sequences = [e.sequence for e in backlog]
            assert sequences == sorted(sequences)
            # Live: alice hears of her turns as the game goes on, woken by the writes.
            rng = random.Random(5)
            turns = 0
            for _ in range(6):
                before, snap = (await svc.manager.read(gid, None))[0].to_act, None
                snap = await move(svc.manager, gid, tokens, rng)
                if 0 in snap.to_act and 0 not in before and snap.outcome is None:
                    message = await next_message(stream)
                    assert message.event.kind == game_pb2.PLAYER_EVENT_KIND_YOUR_TURN
                    assert message.event.seat == 0 and message.event.sequence > sequences[-1]
                    turns += 1
            assert turns > 0
            stream.cancel()


@pytest.mark.parametrize(
    "metadata, reason",
    [
        ((), "PLAYER_TOKEN_REQUIRED"),
        (bearer("A" * 43), "PLAYER_TOKEN_REQUIRED"),  # a seat token
        (bearer("eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0."), "TOKEN_INVALID"),  # alg none
    ],
)
async def test_a_stream_of_events_needs_a_players_token(signer, metadata, reason):
    async with service_in_process("channeling") as svc:
        trust(svc, signer)
        async with grpc.aio.insecure_channel(svc.address) as channel:
            stream = channel.unary_stream(CHANNELING + "WatchPlayerEvents")(b"", metadata=metadata)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await next_message(stream)
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert error_info(caught.value).reason == reason


async def test_watch_my_games_fans_in_resumes_and_survives_a_service_restart(signer, tmp_path):
    url = f"sqlite:///{tmp_path}/channeling.db"
    rng = random.Random(8)
    token = signer.token(sub="bob")
    svc_cm = service_in_process("channeling", url)
    svc = await svc_cm.__aenter__()
    port = svc.port
    try:
        trust(svc, signer)
        gid, tokens = await table_of(svc.manager, "alice", "bob")
        async with (
            gateway_in_process({"channeling": [svc.address]}, players=Players(None)) as (gw, _),
            grpc.aio.insecure_channel(f"127.0.0.1:{gw}") as channel,
        ):
            watch = channel.unary_stream(
                PLAYERS + "WatchMyGames",
                request_serializer=players_pb2.WatchMyGamesRequest.SerializeToString,
                response_deserializer=players_pb2.WatchMyGamesResponse.FromString,
            )
            # From the start (a cursor at 0): the backlog, then the mark.
            stream = watch(
                players_pb2.WatchMyGamesRequest(cursor=_cursor({"channeling": 0})),
                metadata=bearer(token),
            )
            seen = []
            while True:
                message = await next_message(stream)
                if not message.HasField("event"):
                    break
                seen.append(message.event)
            assert [e.kind for e in seen][:1] == [game_pb2.PLAYER_EVENT_KIND_GAME_STARTED]
            mark = message.cursor
            assert decode_cursor(mark) == {"channeling": seen[-1].sequence}
            stream.cancel()
            # From now on (no cursor): the first message is the mark, nothing before.
            fresh = watch(players_pb2.WatchMyGamesRequest(), metadata=bearer(token))
            first = await next_message(fresh)
            assert not first.HasField("event") and decode_cursor(first.cursor) == decode_cursor(
                mark
            )
            # Moves until bob's turn comes; the stream says so.
            while True:
                snap = await move(svc.manager, gid, tokens, rng)
                if snap.outcome is not None or 1 in snap.to_act:
                    break
            message = await next_message(fresh)
            assert message.event.player_id == "bob" and message.event.game_id == gid
            last = message.cursor
            # The service restarts (same store); moves meanwhile are not lost to the stream.
            await svc.server.stop(0)
            await svc.store.close()
            await svc_cm.__aexit__(None, None, None)
            svc_cm = _service_on(url, port)
            svc = await svc_cm.__aenter__()
            trust(svc, signer)
            events_after = []
            for _ in range(40):
                snap = await move(svc.manager, gid, tokens, rng)
                if snap.outcome is not None:
                    break
            rows = await svc.store.player_events(
                "channeling", "bob", decode_cursor(last)["channeling"]
            )
            assert rows, "bob was told nothing in 40 moves"
            for _ in rows:
                message = await next_message(fresh, timeout=20)
                events_after.append(message.event.event_id)
            assert events_after == [r.event.event_id for r in rows]
            fresh.cancel()
    finally:
        await svc_cm.__aexit__(None, None, None)


def _cursor(positions):
    from gateway.players.mygames import encode_cursor

    return encode_cursor(positions)


def _service_on(url: str, port: int):
    """The service again on the same port (the gateway's channel reconnects to it)."""
    import contextlib

    from services import registry
    from services.kit.games import GameManager
    from services.kit.metrics import GameMetrics
    from services.kit.server import create_server, set_serving
    from services.kit.service import GameService
    from services.kit.store import open_store
    from tests.support import RunningService

    @contextlib.asynccontextmanager
    async def running():
        spec = GameService.load(registry.by_name("channeling"))
        store = open_store(url)
        manager = GameManager(spec.engine, store, metrics=GameMetrics("channeling"))
        await manager.start()
        server, bound, health = create_server(f"127.0.0.1:{port}", spec, manager, access_log=False)
        await server.start()
        await set_serving(health, [spec.name], True)
        try:
            yield RunningService("channeling", bound, manager, store, server)
        finally:
            await server.stop(0)
            await store.close()

    return running()


async def test_a_bad_cursor_is_refused(signer):
    async with service_in_process("channeling") as svc:
        trust(svc, signer)
        async with (
            gateway_in_process({"channeling": [svc.address]}, players=Players(None)) as (gw, _),
            grpc.aio.insecure_channel(f"127.0.0.1:{gw}") as channel,
        ):
            watch = channel.unary_stream(
                PLAYERS + "WatchMyGames",
                request_serializer=players_pb2.WatchMyGamesRequest.SerializeToString,
                response_deserializer=players_pb2.WatchMyGamesResponse.FromString,
            )
            for cursor in ("not base64 at all!", _cursor({"channeling": -1})):
                stream = watch(
                    players_pb2.WatchMyGamesRequest(cursor=cursor),
                    metadata=bearer(signer.token(sub="bob")),
                )
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await next_message(stream)
                assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
            stream = watch(players_pb2.WatchMyGamesRequest())
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await next_message(stream)
            assert caught.value.code() == grpc.StatusCode.UNAUTHENTICATED
            assert error_info(caught.value).reason == "PLAYER_TOKEN_REQUIRED"
