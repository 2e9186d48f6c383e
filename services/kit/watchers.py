"""Watchers: the streams that follow a game, from a version on.

A watcher resumes from the version it last saw: the turns it missed, then the view, then
every new turn as it is acknowledged (queued here by the manager, with the game's lock
held, so each view is the one at exactly that version). A stream that asked for moves
also gets its own seat's legal moves with each view that puts the seat to act, listed
then too. Each version's update is one object per seat watching (and one for every
spectator), shared by all the streams of that seat, so the service builds and serializes
its message once however many streams write it (``encoded``). The stream ends once it has sent
the view of the game's end (at once for a game already over). A watcher too far behind,
a game being reloaded or a drain ends the stream with an error, and the client resumes
from the last version it saw. Part of :class:`services.kit.games.GameManager` (see
:mod:`services.kit.manager`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from services.kit import table as tables
from services.kit.errors import Unavailable, VersionOutOfRange, WatcherTooSlow
from services.kit.manager import Manager
from services.kit.players.seats import Caller
from services.kit.store import MoveRecord

if TYPE_CHECKING:
    from services.kit.games import LiveGame, Snapshot, Turn

_log = structlog.get_logger("watchers")


@dataclass(eq=False)
class WatchItem:
    """One update as one seat sees it. Those the manager queues are shared by every
    stream of the seat (and by every spectator): whatever is derived from one (its turn,
    its bytes) is derived once."""

    turn: Turn | None  # a queued item's is filled by the first stream that sends it
    snapshot: Snapshot | None  # set when this item is the game's latest version
    # The seat's legal moves at this version, once a stream that asked for them is queued
    # it: empty when the seat is not to act (or a bot plays it), None when none asked.
    moves: list[Any] | None = None
    # The service's serialized message for this item, without and with its moves.
    encoded: bytes | None = field(default=None, repr=False)
    encoded_moves: bytes | None = field(default=None, repr=False)

    @property
    def version(self) -> int:
        if self.snapshot is not None:
            return self.snapshot.version
        assert self.turn is not None
        return self.turn.version


@dataclass
class Watcher:
    """One stream's pending updates. A watcher that falls behind holds the logged moves
    it has not been sent (shared with every other watcher, not copies) and only the
    newest view: the ones before it are dropped, as a resume sends turns then one view."""

    seat: int | None
    limit: int  # pending moves before the stream is ended
    # Each move not yet sent, with the seat's shared item for that version while it is
    # the newest pending one (None once a newer one is queued: its view is dropped).
    pending: deque[tuple[MoveRecord, WatchItem | None]] = field(default_factory=deque)
    with_moves: bool = False  # the stream's updates carry its seat's legal moves
    error: BaseException | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False
    # Resumed at a finished game's last version while its rematch may start: the stream
    # follows the rematch offers, and ends once the rematch's id is sent.
    follows_rematch: bool = False


def _final(item: WatchItem) -> bool:
    """The item shows the game's end: nothing follows it, and the stream ends."""
    return item.snapshot is not None and item.snapshot.outcome is not None


def _ends(item: WatchItem, watcher: Watcher) -> bool:
    """The stream ends after this item: the game's end, unless the watcher follows the
    rematch and it may still start."""
    if not _final(item):
        return False
    return not (
        watcher.follows_rematch and item.snapshot is not None and item.snapshot.rematch_open
    )


class Watchers(Manager):
    """Watchers: part of the game manager."""

    _closing: str | None = None  # why every stream was ended (set once, by a drain)

    def _notify(self, game: LiveGame, record: MoveRecord) -> None:
        """Queue the new turn, and the view at this version, for every watcher.

        Views (and legal moves) are built here, with the lock held, so each is the one at
        exactly this version; one item per seat watching, shared by that seat's watchers.
        """
        if not game.watchers:
            return
        items: dict[int | None, WatchItem] = {}
        game.notified.clear()  # the snapshots of this version, for the mover's answer
        game.notified_version = game.version
        for watcher in list(game.watchers):
            if watcher.closed:
                continue
            item = items.get(watcher.seat)
            if item is None:
                snap = game.notified[watcher.seat] = self.snapshot(game, watcher.seat)
                item = items[watcher.seat] = WatchItem(None, snap)
            if len(watcher.pending) >= watcher.limit:
                self._close_watcher(
                    watcher,
                    WatcherTooSlow(
                        "this watcher fell too far behind; resume from the last version seen",
                        version=record.version - 1,
                        limit="watch_queue_limit",
                    ),
                )
                game.watchers.remove(watcher)
                continue
            if watcher.with_moves and item.moves is None:
                try:
                    item.moves = self._moves_now(game, item.snapshot)
                except Exception as exc:  # an engine bug: this stream ends, the move stands
                    _log.exception("watch_moves_failed", version=record.version)
                    self._close_watcher(watcher, exc)
                    game.watchers.remove(watcher)
                    continue
            if watcher.pending:
                # Only the newest pending update keeps its view: a slow watcher pins
                # one view, not one per move it is behind.
                watcher.pending[-1] = (watcher.pending[-1][0], None)
            watcher.pending.append((record, item))
            watcher.wake.set()

    def _moves_now(self, game: LiveGame, snap: Snapshot | None) -> list[Any]:
        """The legal moves of ``snap``'s seat at the live version (lock held), as
        ListMoves lists them: none for a spectator, a seat not to act, or a bot's seat."""
        seat = snap.viewer if snap is not None else None
        if (
            snap is None
            or seat is None
            or seat not in snap.to_act
            or game.table.seats[seat].state != tables.TAKEN
        ):
            return []
        return list(self.engine.legal_moves(game.state, seat))

    def _close_watcher(self, watcher: Watcher, error: BaseException) -> None:
        watcher.closed = True
        watcher.error = error
        watcher.wake.set()

    async def watch(
        self,
        game_id: str,
        seat_token: Caller,
        from_version: int | None,
        with_moves: bool = False,
    ) -> AsyncGenerator[WatchItem, None]:
        """The view now (``from_version`` None), or the turns after ``from_version``; then
        every new turn. ``with_moves``: each item with a view carries the seat's legal
        moves at that version (none when it is not to act)."""
        async with self.locked(game_id) as game:
            if self._closing is not None:
                # Admitted before the drain began, here after close_watchers ran.
                raise self._closed_error(from_version)
            self.due_soon(game)  # a deadline passed: the watcher gets its timeout next
            seat = self._seat(game, seat_token)
            if from_version is not None and from_version > game.version:
                await self._follow(game)  # seen on another replica: read the log first
            if from_version is not None and not 0 <= from_version <= game.version:
                raise VersionOutOfRange(f"from_version must be 0..{game.version}")
            snap = self.snapshot(game, seat)
            moves = self._moves_now(game, snap) if with_moves else None
            backlog: list[WatchItem] = []
            if from_version is not None and from_version < game.version:
                missed = [m for m in game.recent if m.version > from_version]
                if not missed or missed[0].version != from_version + 1:
                    # No further than the live version: a shared log may already hold
                    # moves of another replica, which _follow queues when it hears of them.
                    missed = await self._moves(game_id, from_version, game.version - from_version)
                backlog = [WatchItem(self.turn_for(m, seat), None) for m in missed]
                backlog[-1] = WatchItem(backlog[-1].turn, snap, moves)
            else:
                backlog = [WatchItem(None, snap, moves)]
            watcher = Watcher(seat, self.watch_queue_limit, with_moves=with_moves)
            # A watcher that saw the end and resumes from it waits for the rematch.
            watcher.follows_rematch = from_version == game.version and snap.rematch_open
            game.watchers.append(watcher)
        return self._stream(game, watcher, backlog)

    async def _stream(
        self, game: LiveGame, watcher: Watcher, backlog: list[WatchItem]
    ) -> AsyncGenerator[WatchItem, None]:
        try:
            for item in backlog:
                yield item
                if _ends(item, watcher):
                    return
            while True:
                if watcher.pending:
                    record, shared = watcher.pending.popleft()
                    if shared is None:  # a view dropped for a newer one: the turn alone
                        item = WatchItem(self.turn_for(record, watcher.seat), None)
                    else:
                        item = shared
                        if item.turn is None:  # the first of the seat's streams to send it
                            item.turn = self.turn_for(record, watcher.seat)
                    yield item
                    if _ends(item, watcher):
                        return
                    continue
                if watcher.error is not None:
                    raise watcher.error
                watcher.wake.clear()
                await watcher.wake.wait()
        finally:
            watcher.closed = True
            if watcher in game.watchers:
                game.watchers.remove(watcher)

    def close_watchers(self, message: str) -> None:
        """End every stream, and refuse those still on their way in (the service is
        draining): UNAVAILABLE with the version to resume from, once what is pending is
        sent. Clients resume elsewhere."""
        self._closing = message
        for game in self._live.values():
            for watcher in game.watchers:
                self._close_watcher(watcher, self._closed_error(game.version))
            game.watchers.clear()

    def _closed_error(self, version: int | None) -> Unavailable:
        if version is None:
            return Unavailable(f"{self._closing}; watch again", draining="true")
        return Unavailable(
            f"{self._closing}; resume from version {version}", draining="true", version=version
        )
