"""One player's events of one game service, as a stream: the backlog, then live ones.

A stream reads the outbox from its cursor, then waits. This process's writes wake the
streams of the players they concern at once (no polling at rest). Replicas sharing a
PostgreSQL store also write events this process does not see: there the stream reads
the outbox again every ``poll_seconds`` while it is open (a modest poll, one indexed
query per open stream per interval), so another replica's event arrives within it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator

from services.kit.outbox.tracker import PlayerEvents
from services.kit.store import OutboxStore, StoredEvent

PAGE = 200


async def follow(
    store: OutboxStore,
    events: PlayerEvents,
    player_id: str,
    after: int,
    poll_seconds: float | None,
) -> AsyncGenerator[StoredEvent | None]:
    """Every event of ``player_id`` after sequence ``after``, then each as it is written.
    Yields None once, when the backlog is sent (what follows is live)."""
    waiter = events.waiter(player_id)
    caught_up = False
    try:
        while True:
            waiter.clear()  # before the read: a write after it sets it again
            rows = await store.player_events(events.game_type, player_id, after, PAGE)
            for row in rows:
                after = row.sequence
                yield row
            if len(rows) == PAGE:
                continue
            if not caught_up:
                caught_up = True
                yield None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(waiter.wait(), poll_seconds)
    finally:
        events.forget(player_id, waiter)
