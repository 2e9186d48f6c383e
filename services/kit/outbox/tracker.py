"""The game manager's hook: the events each write makes, and who to wake once it is in.

The manager calls :meth:`PlayerEvents.made` while it prepares a write (the events go
into the same store transaction as the move), :meth:`PlayerEvents.committed` once the
write is in, and :meth:`PlayerEvents.seen` whenever a live game settles at a version it
did not write itself (created, loaded, or caught up with another replica's moves), so
the next write's "before" is always the header the previous write left.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable
from typing import Any

import structlog

from services.kit import table as tables
from services.kit.outbox.events import Header, derive
from services.kit.store import OutboxEvent

_log = structlog.get_logger("outbox")


def header_of(
    game_type: str, game_id: str, version: int, table: tables.Table, finished: bool
) -> Header:
    """The header events are derived from, read from a game's table."""
    seats = table.seats
    live = not finished and not table.waiting
    to_act = frozenset(i for i in (table.to_act if live else ()) if seats[i].state == tables.TAKEN)
    return Header(
        game_type=game_type,
        game_id=game_id,
        version=version,
        players=tuple(s.player_id for s in seats),
        to_act=to_act,
        deadlines=tuple(table.deadline(i) if i in to_act else None for i in range(len(seats))),
        started=not table.waiting,
        finished=finished,
        rematch_offers=tuple(table.rematch_offers),
        rematch_game_id=table.rematch_game_id,
    )


class PlayerEvents:
    """One game service's events: the last header of each live game, and the streams
    waiting for a player's next event (woken by this process's writes)."""

    def __init__(self, game_type: str) -> None:
        self.game_type = game_type
        self.webhooks = False  # set when a webhook URL is configured: rows are marked to post
        # Streams read the outbox again this often (replicas sharing a store); None: only
        # when this process writes an event of theirs.
        self.poll_seconds: float | None = None
        self.on_webhook: Callable[[], None] | None = None  # a write made events to post
        self._seen: weakref.WeakKeyDictionary[Any, Header] = weakref.WeakKeyDictionary()
        self._pending: weakref.WeakKeyDictionary[Any, Header] = weakref.WeakKeyDictionary()
        self._waiting: dict[str, set[asyncio.Event]] = {}

    def _header(self, game: Any, finished: bool) -> Header:
        record = game.record
        return header_of(self.game_type, record.game_id, game.version, game.table, finished)

    def created(self, game_id: str, table: Any, at: float) -> tuple[OutboxEvent, ...]:
        """The events of a new game (a table full at once starts at creation)."""
        after = header_of(self.game_type, game_id, 0, table, False)
        return tuple(e.outbox(self.webhooks) for e in derive(None, after, at))

    def seen(self, game: Any, finished: bool) -> None:
        """``game`` is live at its version, its events already written (by whoever)."""
        self._seen[game] = self._header(game, finished)
        self._pending.pop(game, None)

    def made(self, game: Any, version: int, finished: bool, at: float) -> tuple[OutboxEvent, ...]:
        """The events of the write that takes ``game`` (already changed live) to
        ``version``; they are remembered as the game's header once it is committed."""
        record = game.record
        after = header_of(self.game_type, record.game_id, version, game.table, finished)
        self._pending[game] = after
        before = self._seen.get(game)
        if before is None or before.version != version - 1:
            # Never expected (every settle is seen): make none rather than repeat any.
            _log.warning("player_events_unknown_before", game_id=record.game_id)
            return ()
        return tuple(e.outbox(self.webhooks) for e in derive(before, after, at))

    def committed(self, game: Any, events: tuple[OutboxEvent, ...]) -> None:
        """The write is in: its header is the next write's before; wake its players."""
        after = self._pending.pop(game, None)
        if after is not None:
            self._seen[game] = after
        self.wake({e.player_id for e in events})
        if self.on_webhook is not None and any(e.webhook for e in events):
            self.on_webhook()

    # --- streams waiting for a player's events ------------------------------------------

    def waiter(self, player_id: str) -> asyncio.Event:
        event = asyncio.Event()
        self._waiting.setdefault(player_id, set()).add(event)
        return event

    def forget(self, player_id: str, event: asyncio.Event) -> None:
        found = self._waiting.get(player_id)
        if found is not None:
            found.discard(event)
            if not found:
                del self._waiting[player_id]

    def wake(self, player_ids: set[str]) -> None:
        for player in player_ids:
            for event in self._waiting.get(player, ()):
                event.set()

    def wake_all(self) -> None:
        for events in self._waiting.values():
            for event in events:
                event.set()
