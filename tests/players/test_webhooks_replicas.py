"""Two replicas of a game service on one PostgreSQL store: each posts what it claims,
so no event is posted twice while both run, and a stream on one replica hears of the
events the other writes (its modest poll). Needs TABLETOP_TEST_POSTGRES_URL."""

from __future__ import annotations

import asyncio
import collections
import os
import random

import pytest

from services.channeling import engine as channeling
from services.kit import table as tables
from services.kit.games import GameManager
from services.kit.outbox import webhooks as hooks
from services.kit.outbox.feed import follow
from services.kit.players import Player
from services.kit.store import open_store
from tests.players.webhook_receiver import Receiver

POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL", "")
pytestmark = pytest.mark.skipif(not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL is not set")
SECRET = "replicas-share-this-secret"


async def a_game(manager: GameManager, alice: str, bob: str) -> tuple[str, dict[int, str]]:
    seats = (tables.SeatPlan("reserved", "", "medium"), tables.SeatPlan("open", "", "medium"))
    game, tokens = await manager.create(
        2, channeling.Options(), plan=tables.Plan(seats, None), player=Player(alice, "A", "i")
    )
    _, seat, token = await manager.join(game.record.game_id, None, "", Player(bob, "B", "i"))
    tokens[seat] = token
    return game.record.game_id, tokens


async def play(manager: GameManager, gid: str, tokens: dict[int, str], moves: int, rng) -> None:
    for _ in range(moves):
        snap, _ = await manager.read(gid, None)
        if snap.outcome is not None:
            return
        seat = rng.choice(sorted(snap.to_act))
        _, legal, _ = await manager.legal_moves(gid, tokens[seat])
        choice = rng.choice(legal)
        await manager.submit(gid, tokens[seat], lambda c=choice: c, None, None)


async def test_two_replicas_post_each_event_once_and_streams_hear_the_other():
    receiver = Receiver().start()
    stores = [open_store(POSTGRES), open_store(POSTGRES)]
    managers = [GameManager(channeling, s) for s in stores]
    run = f"r{random.randrange(10**9)}"
    posters = [
        hooks.Webhooks(s, m.player_events, receiver.url, SECRET, poll_seconds=0.1, batch=5)
        for s, m in zip(stores, managers, strict=True)
    ]
    tasks = [asyncio.ensure_future(p.run()) for p in posters]
    try:
        # Alice follows on replica 0 (polling the shared outbox); games are played on 1.
        managers[0].player_events.poll_seconds = 0.2
        alice = f"{run}-alice"
        stream = follow(stores[0], managers[0].player_events, alice, 0, 0.2)
        assert await asyncio.wait_for(anext(stream), 10) is None  # nothing yet: the mark
        rng = random.Random(2)
        games = [await a_game(managers[1], alice, f"{run}-bob{i}") for i in range(4)]
        for gid, tokens in games:
            await play(managers[1], gid, tokens, 12, rng)
        heard = await asyncio.wait_for(anext(stream), 10)  # written by the other replica
        assert heard is not None and heard.event.player_id == alice
        await stream.aclose()
        ids = {gid for gid, _ in games}
        rows = [
            r
            for who in [alice, *(f"{run}-bob{i}" for i in range(4))]
            for r in await stores[0].player_events("channeling", who, 0)
            if r.event.game_id in ids and r.event.webhook
        ]
        assert len(rows) > 10
        wanted = {r.event.event_id for r in rows}
        for _ in range(300):
            if wanted <= {p.event_id for p in receiver.delivered()}:
                break
            await asyncio.sleep(0.1)
        posted = collections.Counter(p.event_id for p in receiver.posts if p.event_id in wanted)
        assert set(posted) == wanted
        assert max(posted.values()) == 1, [k for k, n in posted.items() if n > 1]
    finally:
        for task in tasks:
            task.cancel()
        for store in stores:
            await store.close()
        receiver.stop()
