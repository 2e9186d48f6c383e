"""Every game service over real gRPC on loopback, in this process.

Written against the service list, so each game added to it gets these tests: a full
random game, every refusal with its status and reason (and the game unchanged), version
races, retries, watching and resuming, history, health and reflection.
"""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from client.api import FINISHED, GameClient
from services import registry
from services.kit.status import error_info
from tests.support import service_in_process

GAMES = registry.names()


def players_for(name: str) -> int:
    info = registry.by_name(name).engine().GAME
    return info.min_players


@pytest.fixture(params=GAMES)
async def svc(request, tmp_path):
    async with service_in_process(request.param, f"sqlite:///{tmp_path}/s.db") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            yield running, GameClient(request.param, channel), channel


async def refused(coro, code: grpc.StatusCode, reason: str):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await coro
    assert caught.value.code() == code, caught.value.details()
    info = error_info(caught.value)
    assert info is not None, "every refusal carries an ErrorInfo"
    assert info.reason == reason and info.domain == "tabletop"
    return caught.value, info


async def test_a_full_random_game_reaches_its_outcome(svc):
    running, client, _ = svc
    game = await client.create(players_for(running.name), seed=11)
    result = await client.play_random(game, random.Random(3))
    header = result.final.game
    assert header.status == FINISHED
    assert len(header.outcome.scores) == len(game.tokens)
    assert header.version == result.moves
    assert result.versions == list(range(1, result.moves + 1))  # one version per move
    turns = await client.history(game.game_id)
    assert [t.version for t in turns] == list(range(1, result.moves + 1))


async def test_create_returns_one_secret_token_per_seat_and_stores_only_hashes(svc):
    running, client, _ = svc
    game = await client.create(players_for(running.name))
    assert len(set(game.tokens)) == len(game.tokens)
    assert all(len(t) >= 43 for t in game.tokens)  # 256 bits, url-safe base64
    record = await running.store.load(game.game_id)
    for token in game.tokens:
        assert token not in repr(record)
    assert len(record.token_hashes) == len(game.tokens)


async def state_of(client: GameClient, game_id: str) -> tuple[int, bytes]:
    reply = await client.get(game_id)
    return reply.game.version, reply.view.SerializeToString()


async def test_bad_input_gets_its_status_and_leaves_the_game_unchanged(svc):
    running, client, channel = svc
    game = await client.create(players_for(running.name), seed=5)
    other = await client.create(players_for(running.name), seed=6)
    before = await state_of(client, game.game_id)
    seat = (await client.get(game.game_id)).game.to_act[0]
    listed = await client.moves(game.game_id, game.tokens[seat])
    move = listed.moves[0]

    await refused(
        client.submit("no-such-game", game.tokens[seat], move),
        grpc.StatusCode.NOT_FOUND,
        "GAME_NOT_FOUND",
    )
    await refused(
        client.submit(game.game_id, None, move), grpc.StatusCode.UNAUTHENTICATED, "MISSING_TOKEN"
    )
    await refused(
        client.submit(game.game_id, other.tokens[seat], move),
        grpc.StatusCode.UNAUTHENTICATED,
        "BAD_TOKEN",
    )
    await refused(
        client.submit(game.game_id, game.tokens[seat], client.pb2.Move()),
        grpc.StatusCode.INVALID_ARGUMENT,
        "MALFORMED_MOVE",
    )
    await refused(
        client.submit(game.game_id, game.tokens[seat], move, expected_version=7),
        grpc.StatusCode.ABORTED,
        "STALE_VERSION",
    )
    raw = channel.unary_unary(f"/{client.service}/SubmitMove")
    await refused(raw(b"\xff\xff\xff garbage"), grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST")
    await refused(
        client.call("GetGame", game_id=""), grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST"
    )
    assert await state_of(client, game.game_id) == before


async def test_another_seats_decision_is_permission_denied(svc):
    running, client, _ = svc
    game = await client.create(players_for(running.name), seed=8)
    rng = random.Random(2)
    for _ in range(500):
        state = await client.get(game.game_id)
        idle = [s for s in range(len(game.tokens)) if s not in state.game.to_act]
        if idle:
            break
        seat = rng.choice(list(state.game.to_act))
        listed = await client.moves(game.game_id, game.tokens[seat])
        await client.submit(game.game_id, game.tokens[seat], rng.choice(list(listed.moves)))
    else:
        pytest.fail("no seat was ever idle")
    acting = state.game.to_act[0]
    move = (await client.moves(game.game_id, game.tokens[acting])).moves[0]
    assert (await client.moves(game.game_id, game.tokens[idle[0]])).moves == []
    before = await state_of(client, game.game_id)
    await refused(
        client.submit(game.game_id, game.tokens[idle[0]], move),
        grpc.StatusCode.PERMISSION_DENIED,
        "NOT_YOUR_DECISION",
    )
    assert await state_of(client, game.game_id) == before


async def test_a_move_no_longer_legal_is_failed_precondition_naming_the_rule(svc):
    running, client, _ = svc
    game = await client.create(players_for(running.name), seed=21)
    rng = random.Random(5)
    seen: list = []
    for _ in range(2000):
        state = await client.get(game.game_id)
        if state.game.status == FINISHED:
            break
        seat = rng.choice(list(state.game.to_act))
        listed = list((await client.moves(game.game_id, game.tokens[seat])).moves)
        stale = [m for m in seen if m not in listed]
        if stale:
            before = await state_of(client, game.game_id)
            _, info = await refused(
                client.submit(game.game_id, game.tokens[seat], stale[0]),
                grpc.StatusCode.FAILED_PRECONDITION,
                "ILLEGAL_MOVE",
            )
            assert info.metadata["rule"]
            assert await state_of(client, game.game_id) == before
            return
        seen.extend(listed)
        await client.submit(game.game_id, game.tokens[seat], rng.choice(listed))
    pytest.fail("never found a move that stopped being legal")


async def test_game_over_refuses_further_moves(svc):
    running, client, _ = svc
    game = await client.create(players_for(running.name), seed=3)
    result = await client.play_random(game, random.Random(1))
    last = (await client.history(game.game_id))[-1]
    token = game.tokens[last.seat]
    move = (await client.moves(game.game_id, token)).moves
    assert list(move) == []
    some_move = client.pb2.Move()
    some_move.CopyFrom(await first_move_of(client, running.name))
    await refused(
        client.submit(game.game_id, token, some_move),
        grpc.StatusCode.FAILED_PRECONDITION,
        "GAME_OVER",
    )
    assert (await client.get(game.game_id)).game.version == result.moves


async def first_move_of(client: GameClient, name: str):
    fresh = await client.create(players_for(name), seed=1)
    seat = (await client.get(fresh.game_id)).game.to_act[0]
    return (await client.moves(fresh.game_id, fresh.tokens[seat])).moves[0]


async def test_two_submits_on_one_version_one_wins_the_other_is_aborted(svc):
    running, client, _ = svc
    game = await client.create(players_for(running.name), seed=4)
    state = await client.get(game.game_id)
    seat = state.game.to_act[0]
    listed = await client.moves(game.game_id, game.tokens[seat])
    version = listed.game.version
    results = await asyncio.gather(
        *(
            client.submit(game.game_id, game.tokens[seat], m, expected_version=version)
            for m in (listed.moves[0], listed.moves[-1], listed.moves[0])
        ),
        return_exceptions=True,
    )
    ok = [r for r in results if not isinstance(r, Exception)]
    failed = [r for r in results if isinstance(r, Exception)]
    assert len(ok) == 1
    assert all(isinstance(f, grpc.aio.AioRpcError) for f in failed)
    assert all(f.code() == grpc.StatusCode.ABORTED for f in failed)
    assert (await client.get(game.game_id)).game.version == version + 1


async def test_a_retried_request_id_is_applied_once_and_answers_the_same_turn(svc):
    running, client, _ = svc
    game = await client.create(players_for(running.name), seed=9)
    seat = (await client.get(game.game_id)).game.to_act[0]
    move = (await client.moves(game.game_id, game.tokens[seat])).moves[0]
    first = await client.submit(game.game_id, game.tokens[seat], move, request_id="once")
    again = await client.submit(game.game_id, game.tokens[seat], move, request_id="once")
    assert again.turn == first.turn
    assert (await client.get(game.game_id)).game.version == 1
    other = await first_move_of(client, running.name)
    if other != move:
        await refused(
            client.submit(game.game_id, game.tokens[seat], other, request_id="once"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "REQUEST_ID_REUSED",
        )


async def test_watch_sends_the_view_then_every_update_and_resumes_without_gaps(svc):
    running, client, _ = svc
    game = await client.create(players_for(running.name), seed=12)
    stream = client.watch(game.game_id, game.tokens[0])
    first = await stream.read()
    assert first.HasField("view") and not first.HasField("turn")
    assert first.game.version == 0 and first.game.viewer == 0
    rng = random.Random(7)
    for _ in range(6):
        state = await client.get(game.game_id)
        seat = rng.choice(list(state.game.to_act))
        listed = await client.moves(game.game_id, game.tokens[seat])
        await client.submit(game.game_id, game.tokens[seat], rng.choice(list(listed.moves)))
    got = [await stream.read() for _ in range(6)]
    stream.cancel()
    assert [u.turn.version for u in got] == [1, 2, 3, 4, 5, 6]
    assert all(u.HasField("view") for u in got)
    assert got[-1].view == (await client.get(game.game_id, game.tokens[0])).view

    resumed = client.watch(game.game_id, game.tokens[0], from_version=3)
    again = [await resumed.read() for _ in range(3)]
    resumed.cancel()
    assert [u.turn.version for u in again] == [4, 5, 6]
    assert [u.turn for u in again] == [u.turn for u in got[3:]]
    assert again[-1].HasField("view") and not again[0].HasField("view")

    await refused(
        _first(client.watch(game.game_id, None, from_version=99)),
        grpc.StatusCode.OUT_OF_RANGE,
        "VERSION_OUT_OF_RANGE",
    )


async def _first(stream):
    async for item in stream:
        return item


async def test_history_pages_and_filters_by_viewer(svc):
    running, client, _ = svc
    game = await client.create(players_for(running.name), seed=13)
    await client.play_random(game, random.Random(4))
    final = (await client.get(game.game_id)).game.version
    page = await client.call("GetHistory", game_id=game.game_id, from_version=2, page_size=3)
    assert [t.version for t in page.turns] == [3, 4, 5][: max(0, final - 2)]
    await refused(
        client.call("GetHistory", game_id=game.game_id, page_size=5000),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_REQUEST",
    )


async def test_seeds_are_refused_unless_allowed(tmp_path):
    name = GAMES[0]
    async with service_in_process(name, allow_seed=False) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient(name, channel)
            await refused(
                client.create(players_for(name), seed=1),
                grpc.StatusCode.INVALID_ARGUMENT,
                "SEED_NOT_ALLOWED",
            )
            game = await client.create(players_for(name))
            assert game.game_id


async def test_health_and_reflection(svc):
    _, client, channel = svc
    health = health_pb2_grpc.HealthStub(channel)
    for service in ("", client.service):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=service))
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    request = reflection_pb2.ServerReflectionRequest(list_services="")
    async for reply in stub.ServerReflectionInfo(iter([request])):
        names = {s.name for s in reply.list_services_response.service}
        break
    assert client.service in names and "grpc.health.v1.Health" in names


async def test_views_and_errors_never_carry_the_seed(svc):
    running, client, _ = svc
    seed = 987654321987
    game = await client.create(players_for(running.name), seed=seed)
    blobs = [game.response.SerializeToString()]
    for token in [None, *game.tokens]:
        blobs.append((await client.get(game.game_id, token)).SerializeToString())
    text = b"".join(blobs)
    assert str(seed).encode() not in text
    import struct

    assert struct.pack("<Q", seed) not in text
    for message in (client.pb2.View, client.pb2.GetGameResponse):
        names = {f.name for f in message.DESCRIPTOR.fields}
        assert not names & {"seed", "rng", "deck", "deck_order"}


async def test_a_watcher_that_saw_only_version_0_resumes_with_every_turn(svc):
    running, client, _ = svc
    game = await client.create(players_for(running.name), seed=14)
    await client.play_random(game, random.Random(6), max_moves=100_000)
    final = (await client.get(game.game_id)).game.version
    stream = client.watch(game.game_id, None, from_version=0)
    got = [await stream.read() for _ in range(final)]
    stream.cancel()
    assert [u.turn.version for u in got] == list(range(1, final + 1))
    assert got[-1].HasField("view") and got[-1].game.version == final


async def test_the_header_names_the_options_the_game_was_created_with(svc):
    running, client, _ = svc
    game = await client.create(players_for(running.name))
    engine = registry.by_name(running.name).engine()
    expected = engine.GAME.options_type().to_dict()
    header = (await client.get(game.game_id)).game
    from google.protobuf import json_format

    shown = json_format.MessageToDict(header.options)
    assert set(shown) == set(expected)
    for key, value in expected.items():
        if isinstance(value, bool | str) or value is None:
            assert shown[key] == value
        elif isinstance(value, int | float):
            assert shown[key] == float(value)
