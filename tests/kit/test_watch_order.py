"""A watcher sees every version once, in order, however its backlog and the new turns meet.

Two managers on one store stand for two replicas: moves logged by one reach the other
only when it follows the log (on a NOTIFY, or when a caller names a later version). A
watcher resuming far behind on the replica that has not followed yet gets its backlog from
the store; the turns the replica then follows must not come to it a second time.
"""

from __future__ import annotations

import asyncio
import random

from services.channeling import engine
from services.kit.games import RECENT_TURNS, GameManager
from services.kit.store import open_store

QUIET = 0.3  # seconds without news: the stream has sent everything it had


async def play(manager, game_id, tokens, count, rng):
    for _ in range(count):
        async with manager.locked(game_id) as live:
            seat = engine.to_act(live.state)[0]
            move = rng.choice(engine.legal_moves(live.state, seat))
        await manager.submit(game_id, tokens[seat], lambda m=move: m, None, None)


async def versions_seen(stream) -> list[int]:
    """Every version a watch stream delivers (turns, or the view it starts from) until it
    has nothing more for a while: a turn sent twice shows, and so does a missing one."""
    seen: list[int] = []
    while True:
        try:
            item = await asyncio.wait_for(anext(stream), QUIET)
        except TimeoutError:
            return seen
        seen.append(item.turn.version if item.turn is not None else item.snapshot.version)


async def two_replicas():
    store = open_store("memory://")
    return GameManager(engine, store), GameManager(engine, store)


async def test_a_backlog_from_the_store_and_the_turns_followed_after_it_do_not_overlap():
    one, other = await two_replicas()
    game, tokens = await one.create(2, engine.Options(), seed=3)
    gid = game.record.game_id
    rng = random.Random(3)
    await play(one, gid, tokens, RECENT_TURNS + 10, rng)
    await other.read(gid, None)  # the other replica loads the game at this version
    loaded = RECENT_TURNS + 10
    await play(one, gid, tokens, 2, rng)  # logged by one; the other has not heard yet

    # Far enough behind that the backlog comes from the store, not the recent turns.
    stream = await other.watch(gid, None, 1)
    await other.catch_up(gid)  # the NOTIFY for the two new moves arrives
    seen = await versions_seen(stream)
    await stream.aclose()
    assert seen == list(range(2, loaded + 3)), seen


async def test_a_watcher_resumed_past_what_the_replica_knows_sees_each_version_once():
    one, other = await two_replicas()
    game, tokens = await one.create(2, engine.Options(), seed=4)
    gid = game.record.game_id
    rng = random.Random(4)
    await play(one, gid, tokens, 4, rng)
    await other.read(gid, None)
    await play(one, gid, tokens, 3, rng)  # versions 5..7, on one only

    # The watcher saw version 6 elsewhere: the other replica reads the log first.
    stream = await other.watch(gid, None, 6)
    await play(one, gid, tokens, 2, rng)
    await other.catch_up(gid)
    seen = await versions_seen(stream)
    await stream.aclose()
    assert seen == [7, 8, 9], seen
