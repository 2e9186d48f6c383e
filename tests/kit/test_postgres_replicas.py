"""Two replicas of one game service on one PostgreSQL database, as in Kubernetes.

Each replica is its own process (``python -m services.<game>``) with the same
``postgresql://`` store URL. Runs when TABLETOP_TEST_POSTGRES_URL is set (``.ci/run``
and ``make test-postgres`` set it); skipped with a message otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import pytest

from client.api import FINISHED, GameClient
from services import registry
from tests.support import Process, service_in_process, start_process

POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL")
NAME = registry.SERVICES[0].name
PLAYERS = registry.SERVICES[0].engine().GAME.min_players

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        not POSTGRES,
        reason="TABLETOP_TEST_POSTGRES_URL is not set: no PostgreSQL to share "
        "(make test-postgres starts one; .ci/run always does)",
    ),
]


@pytest.fixture
def replicas(tmp_path) -> Iterator[tuple[Process, Process]]:
    env = {"TABLETOP_STORE_URL": POSTGRES or "", "TABLETOP_ALLOW_SEED": "true"}
    started: list[Process] = []
    try:
        for label in ("a", "b"):
            started.append(start_process(f"services.{NAME}", env, tmp_path / f"{label}.log"))
        yield started[0], started[1]
    finally:
        for process in started:
            if process.popen.poll() is None:
                process.stop()


async def wait_version(client: GameClient, game_id: str, version: int, timeout: float = 5) -> None:
    """Until this replica shows ``version`` (it hears of other replicas' moves by NOTIFY)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while (await client.get(game_id)).game.version < version:
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"the replica did not reach version {version} in {timeout}s")
        await asyncio.sleep(0.02)


async def test_moves_sent_alternately_to_either_replica_apply_in_order(replicas):
    a, b = replicas
    rng = random.Random(11)
    async with (
        grpc.aio.insecure_channel(a.address) as ca,
        grpc.aio.insecure_channel(b.address) as cb,
    ):
        clients = [GameClient(NAME, ca), GameClient(NAME, cb)]
        game = await clients[0].create(PLAYERS, seed=404)
        version = 0
        for turn in range(40):
            # Legal moves from the replica that made the last move (it is current); the
            # move itself to the other one, which has perhaps not heard of that move yet:
            # expected_version tells it to read the log first.
            here, there = clients[turn % 2], clients[(turn + 1) % 2]
            state = await here.get(game.game_id)
            assert state.game.version == version
            if state.game.status == FINISHED:
                break
            seat = rng.choice(list(state.game.to_act))
            listed = await here.moves(game.game_id, game.tokens[seat])
            move = rng.choice(list(listed.moves))
            reply = await there.submit(
                game.game_id, game.tokens[seat], move, expected_version=version,
                request_id=f"alt-{version}",
            )  # fmt: skip
            assert reply.game.version == version + 1
            version += 1
            # A stale version is refused by either replica, whichever made the move.
            with pytest.raises(grpc.aio.AioRpcError) as stale:
                await here.submit(
                    game.game_id, game.tokens[seat], move, expected_version=version - 1
                )
            assert stale.value.code() == grpc.StatusCode.ABORTED
        assert version >= 10
        for client in clients:
            await wait_version(client, game.game_id, version)
        histories = [await c.history(game.game_id) for c in clients]
        assert [t.version for t in histories[0]] == list(range(1, version + 1))
        assert [(t.version, t.seat, t.move_text) for t in histories[0]] == [
            (t.version, t.seat, t.move_text) for t in histories[1]
        ]
        views = [(await c.get(game.game_id, game.tokens[0])).view for c in clients]
        assert views[0] == views[1]


async def test_concurrent_moves_on_both_replicas_resolve_to_one_winner(replicas):
    a, b = replicas
    rng = random.Random(12)
    async with (
        grpc.aio.insecure_channel(a.address) as ca,
        grpc.aio.insecure_channel(b.address) as cb,
    ):
        clients = [GameClient(NAME, ca), GameClient(NAME, cb)]
        game = await clients[0].create(PLAYERS, seed=405)
        rounds = 0
        version = 0
        while rounds < 12:
            for client in clients:
                await wait_version(client, game.game_id, version)
            state = await clients[0].get(game.game_id)
            if state.game.status == FINISHED:
                break
            seat = rng.choice(list(state.game.to_act))
            listed = await clients[0].moves(game.game_id, game.tokens[seat])
            choices = [rng.choice(list(listed.moves)) for _ in clients]
            results = await asyncio.gather(
                *(
                    client.submit(
                        game.game_id,
                        game.tokens[seat],
                        move,
                        expected_version=version,
                        request_id=f"race-{version}-{i}",
                    )
                    for i, (client, move) in enumerate(zip(clients, choices, strict=True))
                ),
                return_exceptions=True,
            )
            won = [r for r in results if not isinstance(r, BaseException)]
            lost = [r for r in results if isinstance(r, BaseException)]
            assert len(won) == 1, results
            assert all(
                isinstance(e, grpc.aio.AioRpcError) and e.code() == grpc.StatusCode.ABORTED
                for e in lost
            ), lost
            version += 1
            assert won[0].game.version == version
            rounds += 1
        assert rounds >= 5
        for client in clients:
            await wait_version(client, game.game_id, version)
        histories = [await c.history(game.game_id) for c in clients]
        assert [t.version for t in histories[0]] == list(range(1, version + 1))
        assert [t.move_text for t in histories[0]] == [t.move_text for t in histories[1]]
        # The game goes on to its end from either replica.
        result = await clients[1].play_random(game, random.Random(13))
        assert result.final.game.status == FINISHED


async def test_watch_on_one_replica_sees_moves_made_on_the_other(replicas):
    a, b = replicas
    rng = random.Random(14)
    async with (
        grpc.aio.insecure_channel(a.address) as ca,
        grpc.aio.insecure_channel(b.address) as cb,
    ):
        player, watcher = GameClient(NAME, ca), GameClient(NAME, cb)
        game = await player.create(PLAYERS, seed=406)
        stream = watcher.watch(game.game_id, timeout=60)
        first = await stream.read()
        assert first.HasField("view") and first.game.version == 0
        made = 0
        for _ in range(15):
            state = await player.get(game.game_id)
            if state.game.status == FINISHED:
                break
            seat = rng.choice(list(state.game.to_act))
            listed = await player.moves(game.game_id, game.tokens[seat])
            await player.submit(game.game_id, game.tokens[seat], rng.choice(list(listed.moves)))
            made += 1
        seen: list[int] = []
        while len(seen) < made:
            update = await asyncio.wait_for(stream.read(), timeout=10)
            assert update.HasField("turn")
            seen.append(update.turn.version)
        assert seen == list(range(1, made + 1))
        stream.cancel()


@contextlib.asynccontextmanager
async def two_replicas_one_behind(seed: int) -> AsyncIterator[tuple[Any, Any, Any, int]]:
    """Two in-process replicas without the listener (a notification never arrives), a
    game live on both, and three moves made on the first: (a, b, game, version), with b
    still at version 0."""
    async with (
        service_in_process(NAME, POSTGRES or "") as first,
        service_in_process(NAME, POSTGRES or "") as second,
    ):
        async with (
            grpc.aio.insecure_channel(first.address) as ca,
            grpc.aio.insecure_channel(second.address) as cb,
        ):
            a, b = GameClient(NAME, ca), GameClient(NAME, cb)
            game = await a.create(PLAYERS, seed=seed)
            assert (await b.get(game.game_id)).game.version == 0  # live on b at version 0
            version = 0
            for _ in range(3):
                seat, move = await _a_legal_move(a, game, random.Random(seed + version))
                reply = await a.submit(
                    game.game_id, game.tokens[seat], move, expected_version=version
                )
                version = reply.game.version
            assert (await b.get(game.game_id)).game.version == 0  # b has not heard
            yield a, b, game, version


async def _a_legal_move(client: GameClient, game: Any, rng: random.Random) -> tuple[int, Any]:
    seat = rng.choice(list((await client.get(game.game_id)).game.to_act))
    return seat, rng.choice(list((await client.moves(game.game_id, game.tokens[seat])).moves))


async def test_a_replica_that_has_not_heard_of_a_move_yet_reads_the_log_when_asked_to():
    """A move sent with an expected_version ahead of this replica's live game (its
    notification still on the way) is applied after reading the log, not refused."""
    async with two_replicas_one_behind(407) as (a, b, game, version):
        seat, move = await _a_legal_move(a, game, random.Random(15))
        reply = await b.submit(game.game_id, game.tokens[seat], move, expected_version=version)
        assert reply.game.version == version + 1
        # A stale version is still refused, with the version the log holds.
        with pytest.raises(grpc.aio.AioRpcError) as stale:
            await b.submit(game.game_id, game.tokens[seat], move, expected_version=version)
        assert stale.value.code() == grpc.StatusCode.ABORTED


async def test_a_retry_that_reaches_a_replica_further_behind_gets_its_first_answer():
    """A move applied on one replica whose answer was lost, retried (same request id,
    same expected version) on a replica that has not yet heard even of the moves before
    it: the retry reads the log, finds its request there, and answers with the first
    turn. It is not refused as stale (the caller would take its own acknowledged move for
    somebody else's)."""
    async with two_replicas_one_behind(408) as (a, b, game, version):
        seat, move = await _a_legal_move(a, game, random.Random(16))
        first_answer = await a.submit(
            game.game_id, game.tokens[seat], move, expected_version=version,
            request_id="lost-answer",
        )  # fmt: skip
        assert (await b.get(game.game_id)).game.version == 0  # b has heard of nothing
        retried = await b.submit(
            game.game_id, game.tokens[seat], move, expected_version=version,
            request_id="lost-answer",
        )  # fmt: skip
        assert retried.turn.version == first_answer.turn.version == version + 1
        assert retried.turn.move_text == first_answer.turn.move_text
        assert (await b.history(game.game_id))[-1].version == version + 1  # applied once
        # Control: a new request at that expected version is stale, as it should be.
        with pytest.raises(grpc.aio.AioRpcError) as stale:
            await b.submit(
                game.game_id, game.tokens[seat], move, expected_version=version,
                request_id="another",
            )  # fmt: skip
        assert stale.value.code() == grpc.StatusCode.ABORTED
