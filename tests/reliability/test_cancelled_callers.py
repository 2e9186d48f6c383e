"""A caller that gives up must not take other callers down with it.

After a restart a game is rebuilt from its log by the first call that needs it, and
calls for the same game that arrive meanwhile wait for that load. If the first caller's
deadline passes (or it cancels) during the load, the others must still get their answer.
Found while probing the restart path of the fault test: the waiting calls were handed
the first caller's cancellation and never answered at all (a client without a deadline
would have waited forever).
"""

from __future__ import annotations

import asyncio
import gc
import time

import grpc
import pytest

from client.api import GameClient
from services import registry
from services.kit.games import GameManager
from services.kit.store import StoreError, open_store
from tests.support import service_in_process

GAMES = registry.names()
LOAD_SECONDS = 1.0


@pytest.mark.parametrize("name", GAMES)
async def test_a_caller_that_gives_up_during_a_load_does_not_strand_the_others(name, tmp_path):
    store = f"sqlite:///{tmp_path}/game.db"
    players = registry.by_name(name).engine().GAME.min_players
    async with service_in_process(name, store) as first:
        async with grpc.aio.insecure_channel(first.address) as channel:
            game = await GameClient(name, channel).create(players)

    # A restart: the game is only in the log now, and loading it is slow.
    async with service_in_process(name, store) as running:
        load = running.store.load

        async def slow_load(game_id: str):
            await asyncio.sleep(LOAD_SECONDS)
            return await load(game_id)

        running.store.load = slow_load  # type: ignore[method-assign]
        async with grpc.aio.insecure_channel(running.address) as channel:
            impatient = GameClient(name, channel, timeout=LOAD_SECONDS / 4)
            patient = GameClient(name, channel, timeout=10 * LOAD_SECONDS + 20)
            started = time.monotonic()
            first_call = asyncio.create_task(impatient.get(game.game_id, game.tokens[0]))
            await asyncio.sleep(LOAD_SECONDS / 10)  # the impatient call starts the load
            others = [
                patient.get(game.game_id),
                patient.moves(game.game_id, game.tokens[0]),
                patient.call("GetHistory", game_id=game.game_id),
            ]
            answers = await asyncio.gather(*others, return_exceptions=True)
            waited = time.monotonic() - started
            with pytest.raises(grpc.aio.AioRpcError) as gave_up:
                await first_call
    assert gave_up.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    failed = [a for a in answers if isinstance(a, BaseException)]
    assert not failed, [f"{e.code()} {e.details()}" for e in failed]  # type: ignore[attr-defined]
    assert all(a.game.game_id == game.game_id for a in answers)
    assert waited < 5 * LOAD_SECONDS + 5, f"the others waited {waited:.1f}s"


async def test_a_load_that_fails_after_every_caller_gave_up_is_not_logged_as_unretrieved():
    """The store fails (PostgreSQL restarting, say) after the only caller's deadline: the
    caller had its DEADLINE_EXCEEDED; the failed load must not surface later as asyncio's
    "Task exception was never retrieved" traceback, which reads as a crash in the logs."""
    name = GAMES[0]
    engine = registry.by_name(name).engine()
    store = open_store("memory://")

    async def failing_load(game_id: str):
        await asyncio.sleep(0.05)
        raise StoreError("the store went away")

    store.load = failing_load  # type: ignore[method-assign]
    manager = GameManager(engine, store)
    loop = asyncio.get_running_loop()
    unretrieved: list[dict] = []
    previous = loop.get_exception_handler()
    loop.set_exception_handler(lambda _loop, context: unretrieved.append(context))
    try:
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(manager.get("g1"), 0.01)
        await asyncio.sleep(0.2)  # the load fails with nobody waiting
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(previous)
    assert not unretrieved, [c.get("message") for c in unretrieved]
