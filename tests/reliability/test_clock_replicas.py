"""Exactly one timeout per deadline with two replicas on PostgreSQL (issue 25, Deliver 1).

Two replicas in this process share one database, each following the other's moves as
the service does (the store's listen), each holding the game live with its own alarm at
every deadline, and a late move arriving at the second: both land every timeout they see
due, and the versioned append lets one through. The log then holds one timeout per
deadline: consecutive timeouts at least one per-decision clock apart, never two for the
same deadline. That both replicas really raced is counted (each tried timeouts), or
"exactly one" would say nothing.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import time

import pytest

from services.channeling import engine as channeling
from services.kit import table as tables
from services.kit.engine import EngineError
from services.kit.errors import PlatformError
from services.kit.games import GameManager
from services.kit.store import open_store

POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL")
PER_DECISION = 1.0


def replica() -> tuple[GameManager, list[int]]:
    """A manager on the shared database, and the timeouts it tried to land."""
    m = GameManager(channeling, open_store(POSTGRES or ""))
    tried: list[int] = []
    bot_move = m._bot_move

    async def counted(game, seat, extra, urgent=False, **more):
        if urgent:
            tried.append(seat)
        await bot_move(game, seat, extra, urgent, **more)

    m._bot_move = counted  # type: ignore[method-assign]
    return m, tried


@pytest.mark.skipif(not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL is not set")
async def test_two_replicas_land_each_deadline_once():
    one, tried_one = replica()
    two, tried_two = replica()
    listeners = [
        asyncio.create_task(m.store.listen(m.catch_up))  # type: ignore[attr-defined]
        for m in (one, two)
    ]
    try:
        clock = tables.Clock(per_decision=PER_DECISION)
        plan = tables.Plan(
            (tables.SeatPlan(tables.RESERVED), tables.SeatPlan(tables.RESERVED)), clock
        )
        game, tokens = await one.create(2, channeling.Options(), plan=plan)
        gid = game.record.game_id
        await two.read(gid, None)  # both hold it, each with its alarm
        late_moves = 0
        started = time.monotonic()
        while time.monotonic() - started < 30:
            snap, _ = await two.read(gid, None)
            if snap.outcome is not None:
                break
            deadline = min(snap.seats[s].deadline for s in snap.to_act)
            await asyncio.sleep(max(0.0, deadline - time.time()) + 0.02)
            # A move right at the deadline, on the replica that did not create the game.
            seat = snap.to_act[0]
            try:
                _, moves, _ = await two.legal_moves(gid, tokens[seat])
                if moves:
                    await two.submit(gid, tokens[seat], lambda mv=moves[0]: mv, snap.version, None)
            except (PlatformError, EngineError):
                late_moves += 1  # judged after the timeout: stale, or not its turn
        _, turns = await one.history(gid, None, 0, 1000)
    finally:
        for task in listeners:
            task.cancel()
        for m in (one, two):
            await m.close()
            await m.store.close()
    timeouts = [t for t in turns if t.events and t.events[0]["kind"] == "timeout"]
    print(
        f"{len(timeouts)} timeouts, tried {len(tried_one)} times by one and {len(tried_two)} "
        f"by two; {late_moves} late moves refused"
    )
    assert turns[-1].move_text == tables.ABANDON  # nobody played: it ended by itself
    assert len(timeouts) >= 4
    assert tried_one and tried_two and len(tried_one) + len(tried_two) > len(timeouts)
    for before, after in itertools.pairwise(timeouts):
        # The next decision's clock starts at the timeout's move: a second timeout for
        # the same deadline would follow at once.
        assert after.applied_at - before.applied_at >= PER_DECISION * 0.99, (before, after)
