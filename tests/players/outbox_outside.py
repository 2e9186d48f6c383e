"""The control of the SIGKILL test: a channeling service whose players' events are
written *outside* the move's transaction, a moment after it commits (as an outbox
written by a second step would be). ``python -m tests.players.outbox_outside``."""

from __future__ import annotations

import asyncio
from typing import Any

from services.kit.outbox import settings as outbox_settings
from services.kit.outbox.tracker import PlayerEvents
from services.kit.store import sqlite as sqlite_store

DELAY = 2.0  # seconds between the move's commit and its events' own write

_made = PlayerEvents.made
_committed = PlayerEvents.committed
_start = outbox_settings.start
_later: dict[int, Any] = {}
_tasks: set[asyncio.Task[None]] = set()
_store: list[Any] = []


def made(self, game, version, finished, at):
    _later[id(game)] = _made(self, game, version, finished, at)
    return ()  # nothing goes with the move


def committed(self, game, events):
    later = _later.pop(id(game), ())
    _committed(self, game, events)
    if later:
        task = asyncio.get_running_loop().create_task(_write(self, later))
        _tasks.add(task)
        task.add_done_callback(_tasks.discard)


async def _write(self, events) -> None:
    await asyncio.sleep(DELAY)
    await _store[0]._write(lambda conn: sqlite_store._write_outbox(conn, self.game_type, events))
    self.wake({e.player_id for e in events})
    if self.on_webhook is not None:
        self.on_webhook()


def start(manager, cfg, shared):
    _store.append(manager.store)
    return _start(manager, cfg, shared)


PlayerEvents.made = made
PlayerEvents.committed = committed
outbox_settings.start = start

from services.kit.server import main  # noqa: E402  (after the patches: it imports start)

if __name__ == "__main__":
    main("channeling")
