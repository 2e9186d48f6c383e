"""Streams end with their game (issue 25, finding 5).

The outside attack: WatchGame never ended when the game ended, though the README says
it does, and watching a finished game answered once and stayed open until the deadline,
holding one of the 64 per-address stream slots and the game in memory. Here: a watcher
of a game that finishes gets the final update and then the stream ends OK; a watcher of
a finished game gets its view (or, resuming, the turns it missed, the last with the
view) and the stream ends OK at once. Control: with the end of the stream switched off
the same watchers are left open.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest
from tabletop.common.v1 import game_pb2

from client.api import GameClient
from services.kit import watchers
from tests.support import service_in_process

WAIT = 2.0  # seconds a stream is given to end before the test calls it open


async def read_to_end(stream) -> tuple[list, bool]:
    """The stream's messages, and whether it ended OK within WAIT of the last one."""
    got = []
    iterator = stream.__aiter__()
    while True:
        try:
            message = await asyncio.wait_for(iterator.__anext__(), WAIT)
        except StopAsyncIteration:
            return got, True
        except TimeoutError:
            stream.cancel()
            return got, False
        got.append(message)


@pytest.fixture(params=["ends", "control"])
def ending(request, monkeypatch) -> bool:
    if request.param == "control":
        monkeypatch.setattr(watchers, "_final", lambda item: False)
    return request.param == "ends"


async def test_a_watcher_gets_the_final_update_then_the_stream_ends_ok(ending):
    async with service_in_process("channeling") as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient("channeling", channel)
            game = await client.create(2)
            stream = client.watch(game.game_id, timeout=60)
            reading = asyncio.create_task(read_to_end(stream))
            await asyncio.sleep(0.2)
            await client.resign(game.game_id, game.tokens[0])
            got, ended = await reading
            if not ending:
                assert not ended  # the old behaviour: open after the end
                return
            assert ended and await stream.code() == grpc.StatusCode.OK
            assert [m.game.status for m in got] == [
                game_pb2.GAME_STATUS_IN_PROGRESS,
                game_pb2.GAME_STATUS_FINISHED,
            ]
            assert got[-1].game.outcome.reason == "RESIGNED" and got[-1].HasField("view")


async def test_watching_a_finished_game_answers_and_ends_at_once(ending):
    async with service_in_process("channeling") as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient("channeling", channel)
            game = await client.create(2)
            listed = await client.moves(game.game_id, game.tokens[0])
            await client.submit(game.game_id, game.tokens[0], listed.moves[0])
            await client.resign(game.game_id, game.tokens[1])
            now, now_ended = await read_to_end(client.watch(game.game_id, timeout=60))
            stream = client.watch(game.game_id, from_version=0, timeout=60)
            missed, missed_ended = await read_to_end(stream)
            if not ending:
                assert not now_ended and not missed_ended
                return
            assert now_ended and missed_ended and await stream.code() == grpc.StatusCode.OK
            (view,) = now
            assert view.game.status == game_pb2.GAME_STATUS_FINISHED and view.HasField("view")
            assert [m.turn.version for m in missed] == [1, 2]
            assert missed[-1].game.outcome.reason == "RESIGNED" and missed[-1].HasField("view")
            assert not missed[0].HasField("view")
