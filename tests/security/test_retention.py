"""Old games: finished games are kept for the retention time, then removed."""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest

from client.api import GameClient
from services import registry
from services.kit.games import GameManager
from services.kit.server import sweep
from services.kit.store import open_store
from tests.support import running

NAME = registry.names()[0]
ENGINE = registry.by_name(NAME).engine()
PLAYERS = ENGINE.GAME.min_players


async def finish(manager: GameManager, game_id: str, tokens: list[str]) -> None:
    rng = random.Random(1)
    while True:
        async with manager.locked(game_id) as live:
            if ENGINE.outcome(live.state) is not None:
                return
            seat = rng.choice(ENGINE.to_act(live.state))
            move = rng.choice(ENGINE.legal_moves(live.state, seat))
        await manager.submit(game_id, tokens[seat], lambda m=move: m, None, None)


async def test_finished_games_are_removed_after_retention_and_live_games_stay(tmp_path):
    now = [1_000_000.0]
    manager = GameManager(ENGINE, open_store(f"sqlite:///{tmp_path}/r.db"), clock=lambda: now[0])
    try:
        done, done_tokens = await manager.create(PLAYERS, ENGINE.GAME.options_type(), seed=1)
        live, _ = await manager.create(PLAYERS, ENGINE.GAME.options_type(), seed=2)
        await finish(manager, done.record.game_id, done_tokens)
        now[0] += 3600
        assert await manager.remove_finished(7200) == []  # still within its retention
        now[0] += 7200
        assert await manager.remove_finished(7200) == [done.record.game_id]
        from services.kit.errors import GameNotFound

        with pytest.raises(GameNotFound):
            await manager.read(done.record.game_id, None)
        snap, _ = await manager.read(live.record.game_id, None)
        assert snap.version == 0 and snap.outcome is None
    finally:
        await manager.store.close()


async def test_the_sweeper_runs_on_its_interval():
    manager = GameManager(ENGINE, open_store("memory://"))
    game, tokens = await manager.create(PLAYERS, ENGINE.GAME.options_type(), seed=3)
    await finish(manager, game.record.game_id, tokens)
    task = asyncio.create_task(sweep(manager, retention=0.05, interval=0.05))
    try:
        for _ in range(100):
            if await manager.store.load(game.record.game_id) is None:
                break
            await asyncio.sleep(0.05)
        assert await manager.store.load(game.record.game_id) is None
    finally:
        task.cancel()


async def test_a_service_configured_with_a_retention_removes_old_games(tmp_path):
    env = {
        "TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/svc.db",
        "TABLETOP_FINISHED_RETENTION_SECONDS": "0.5",
        "TABLETOP_SWEEP_INTERVAL_SECONDS": "0.2",
    }
    with running(f"services.{NAME}", env, tmp_path / "svc.log") as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient(NAME, channel)
            done = await client.create(PLAYERS)
            live = await client.create(PLAYERS)
            await client.play_random(done, random.Random(2))
            history = await client.history(done.game_id)
            assert history
            for _ in range(100):
                try:
                    await client.get(done.game_id)
                except grpc.aio.AioRpcError as error:
                    assert error.code() == grpc.StatusCode.NOT_FOUND
                    break
                await asyncio.sleep(0.1)
            else:
                pytest.fail("the finished game was never removed")
            assert (await client.get(live.game_id)).game.version == 0
