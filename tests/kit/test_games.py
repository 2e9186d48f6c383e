"""The game manager without gRPC: replay after a restart, watchers, retries."""

from __future__ import annotations

import asyncio
import random

import pytest

from services.channeling import engine
from services.kit.errors import StaleVersion, WatcherTooSlow
from services.kit.games import GameManager
from services.kit.store import open_store


async def play(manager, game_id, tokens, count, rng):
    for _ in range(count):
        async with manager.locked(game_id) as live:
            seat = engine.to_act(live.state)[0]
            move = rng.choice(engine.legal_moves(live.state, seat))
        await manager.submit(game_id, tokens[seat], lambda m=move: m, None, None)


async def test_a_restarted_manager_rebuilds_games_by_replay(tmp_path):
    url = f"sqlite:///{tmp_path}/g.db"
    first = GameManager(engine, open_store(url))
    game, tokens = await first.create(2, engine.Options(), seed=42)
    gid = game.record.game_id
    await play(first, gid, tokens, 20, random.Random(1))
    async with first.locked(gid) as live:
        expected = live.state
        version = live.version
    await first.store.close()

    second = GameManager(engine, open_store(url))
    try:
        async with second.locked(gid) as live:
            assert live.version == version == 20
            assert live.state == expected  # the same state, generator included
        snap, seat = await second.read(gid, tokens[1])
        assert seat == 1 and snap.version == 20
    finally:
        await second.store.close()


async def test_evicted_games_come_back_from_the_log():
    manager = GameManager(engine, open_store("memory://"), max_live_games=2)
    made = [await manager.create(2, engine.Options(), seed=i) for i in range(4)]
    assert manager.live_count == 2
    game, tokens = made[0]
    await play(manager, game.record.game_id, tokens, 3, random.Random(0))
    snap, _ = await manager.read(game.record.game_id, None)
    assert snap.version == 3


async def test_stale_version_names_the_current_one():
    manager = GameManager(engine, open_store("memory://"))
    game, tokens = await manager.create(2, engine.Options(), seed=1)
    move = engine.legal_moves(game.state, 0)[0]
    with pytest.raises(StaleVersion) as stale:
        await manager.submit(game.record.game_id, tokens[0], lambda: move, 3, None)
    assert stale.value.current == 0 and stale.value.metadata["current_version"] == "0"


async def test_a_slow_watcher_is_cut_off_with_the_version_to_resume_from():
    manager = GameManager(engine, open_store("memory://"), watch_queue_limit=3)
    game, tokens = await manager.create(2, engine.Options(), seed=3)
    gid = game.record.game_id
    stream = await manager.watch(gid, None, 0)
    first = await stream.__anext__()
    assert first.turn is None and first.snapshot.version == 0
    await play(manager, gid, tokens, 5, random.Random(2))
    seen = []
    with pytest.raises(WatcherTooSlow) as slow:
        async for item in stream:
            seen.append(item.turn.version)
    assert seen == [1, 2, 3]
    assert slow.value.metadata["version"] == "3"
    assert slow.value.metadata["limit"] == "watch_queue_limit"
    # It resumes from there without a gap.
    again = await manager.watch(gid, None, 3)
    assert [(await again.__anext__()).turn.version for _ in range(2)] == [4, 5]


async def test_a_watcher_behind_holds_one_view_however_many_turns_it_missed():
    manager = GameManager(engine, open_store("memory://"))
    game, tokens = await manager.create(2, engine.Options(), seed=3)
    gid = game.record.game_id
    stream = await manager.watch(gid, None, None)
    await stream.__anext__()  # the view now
    await play(manager, gid, tokens, 5, random.Random(2))
    (watcher,) = manager._live[gid].watchers
    assert [snap is not None for _, snap in watcher.pending] == [False] * 4 + [True]
    items = [await stream.__anext__() for _ in range(5)]
    assert [i.turn.version for i in items] == [1, 2, 3, 4, 5]
    assert [i.snapshot.version for i in items if i.snapshot] == [5]  # the latest only
    await stream.aclose()
    assert manager._live[gid].watchers == []


async def test_concurrent_submits_on_one_game_are_applied_one_at_a_time():
    manager = GameManager(engine, open_store("memory://"))
    game, tokens = await manager.create(2, engine.Options(), seed=5)
    gid = game.record.game_id
    move = engine.legal_moves(game.state, 0)[0]
    results = await asyncio.gather(
        *(manager.submit(gid, tokens[0], lambda: move, 0, None) for _ in range(5)),
        return_exceptions=True,
    )
    assert sum(not isinstance(r, Exception) for r in results) == 1
    assert all(isinstance(r, StaleVersion) for r in results if isinstance(r, Exception))
