"""The clock: what is due on a game lands before anything else touches it.

Due on a game: a deadline passed (the bot moves for the seat, or it forfeits), a table
nobody plays any more (abandoned), a waiting table expired. Each is an ordinary entry
through the same versioned append, so replicas and restarts never apply one twice.

Deadlines are law at every entry point: a call that acts on or lists for a seat holds
the game's lock through :meth:`ClockSweep.acting`, which first lands whatever is due,
then lets the call be judged against the new state. Reads (GetGame, GetHistory,
WatchGame) never write and never start a search: they start the landing in the
background (:meth:`ClockSweep.due_soon`) and answer the state as it is; watchers get
the timeout a moment later. A landing under way holds the game's lock, so a read may wait
for it: at most a timeout's move, which waits ``TIMEOUT_WAIT_S`` for a worker at most
(:mod:`services.kit.botmoves`).

Nothing waits for a call, though: a game this process holds rings an alarm at its next
due time, a deadline, a waiting table's expiry or the idle time (:mod:`services.kit.alarms`),
and the service's sweep asks the store every interval for whatever else is due (another
replica's games, what fell due while the service was down or while the game was out of
memory), landing them side by side so that no
game's bot search holds up another's forfeit. Bot turns are not the clock's: the sweep
only hands those a crash or another replica left behind to the bot queue. Part of
:class:`services.kit.games.GameManager` (see :mod:`services.kit.manager`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import structlog

from services.kit import table as tables
from services.kit import tracing
from services.kit.alarms import Alarms
from services.kit.errors import GameCorrupt, GameNotFound, StaleVersion, Unavailable
from services.kit.manager import Manager
from services.kit.seats import table_event
from services.kit.store import MoveRecord, StoreError

if TYPE_CHECKING:
    from services.kit.games import LiveGame

_log = structlog.get_logger("games")

# What may be due on a game.
EXPIRE, ABSENT, IDLE, TIMEOUT = "expire", "absent", "idle", "timeout"
# A bot turn waiting this long is taken up by the sweep: the service that queued it
# crashed, or is another replica (which plays its own turns sooner).
BOT_TURN_GRACE = 10.0
# Entries one landing writes at most (several seats out of time at once, then the end);
# anything beyond is the next call's or the sweep's.
MOST_LANDED = 32
# Tries of a landing that another replica's append beat, each on the reloaded game.
LANDING_TRIES = 3
_QUIET = (StaleVersion, Unavailable, GameCorrupt, GameNotFound)


class ClockSweep(Manager):
    """The clock: part of the game manager."""

    def _init_clock(self, alarms: bool) -> None:
        """The clock's state, set by the manager's constructor."""
        self._alarms = Alarms(self.fire_soon, self.clock) if alarms else None
        self._firing: dict[str, asyncio.Task[int]] = {}
        self._stopped = False

    # --- what is due --------------------------------------------------------------------

    def _due(self, game: LiveGame, now: float) -> str | None:
        """What the clock makes due on the game now, if anything (lock held)."""
        if self.outcome(game) is not None:
            return None
        table = game.table
        if table.waiting:
            ttl = self.waiting_ttl
            return EXPIRE if ttl and game.record.created_at <= now - ttl else None
        if table.absent():
            return ABSENT
        if self.idle_seconds and table.human_at <= now - self.idle_seconds:
            return IDLE
        if table.overdue(now) is not None:
            return TIMEOUT
        return None

    async def _land(self, game: LiveGame) -> int:
        """Land everything due on the game now (lock held), one entry after another; the
        number of entries logged. A timeout's bot move searches at once (the priority
        lane: see services.kit.botmoves); everything else needs no search."""
        landed = 0
        while landed < MOST_LANDED:
            now = self.clock()
            due = self._due(game, now)
            if due is None:
                break
            if due == TIMEOUT:
                seat = game.table.overdue(now)
                assert seat is not None
                timeout = table_event("timeout", f"seat {seat} ran out of time", seat)
                clock = game.table.plan.clock
                if clock is not None and clock.forfeit:
                    await self._give_up(game, seat, "forfeited on time", (timeout,))
                else:
                    await self._bot_move(game, seat, (timeout,), urgent=True)
            else:
                await self._end(game, now, due)
            landed += 1
        if landed:
            self._kick(game)
        return landed

    async def _end(self, game: LiveGame, now: float, why: str) -> None:
        """End the game off the rules (lock held): expired, or abandoned."""
        entry = tables.EXPIRE if why == EXPIRE else tables.ABANDON
        kind = "table_expired" if why == EXPIRE else "game_abandoned"
        text = tables.ENDINGS[entry][1]
        if why == ABSENT:
            text = "every player let two deadlines in a row pass: nobody plays this table"
        game.table.end(entry, game.record.players)
        record = MoveRecord(
            game.version + 1,
            tables.SERVICE_SEAT,
            entry,
            [table_event(kind, text)],
            applied_at=now,
            finished=True,
        )
        await self._append(game, record)

    @contextlib.asynccontextmanager
    async def acting(self, game_id: str) -> AsyncIterator[LiveGame]:
        """The live game with its lock held, once whatever was due has landed: every call
        that acts on or lists for a seat is judged against the game as the clock left it.
        A landing another replica beat is tried again on the game reloaded from the log."""
        for _ in range(LANDING_TRIES):
            async with self.locked(game_id) as game:
                try:
                    await self._land(game)
                except StaleVersion:
                    continue  # another replica landed it first: read the log again
                yield game
                return
        raise Unavailable("this game is changing too fast on another replica; retry")

    def due_soon(self, game: LiveGame) -> None:
        """For a read (lock held): start landing whatever is due, without waiting for it."""
        if self._due(game, self.clock()) is not None:
            self.fire_soon(game.record.game_id)

    def _arm(self, game: LiveGame) -> None:
        """Ring the game's alarm at the next time the clock makes something due on it
        (none once it is over)."""
        if self._alarms is None:
            return
        self._alarms.set(game.record.game_id, self._rings_at(game))

    def _rings_at(self, game: LiveGame) -> float | None:
        """When :meth:`_due` next finds something due on the game: its next deadline, a
        waiting table's expiry, or the idle time after the last person's move. All ring,
        so a process that owns its store needs no quick poll (services.kit.server's
        CLOCK_INTERVAL_OWN)."""
        if self.outcome(game) is not None:
            return None
        table = game.table
        if table.waiting:
            ttl = self.waiting_ttl
            return game.record.created_at + ttl if ttl else None
        times = [table.due_at(self.clock())]
        if self.idle_seconds:
            times.append(table.human_at + self.idle_seconds)
        return min((t for t in times if t is not None), default=None)

    async def stop_clock(self) -> None:
        """No more alarms, and no landing left running (the service is stopping)."""
        self._stopped = True
        if self._alarms is not None:
            self._alarms.clear()
        for task in list(self._firing.values()):
            task.cancel()
        await asyncio.gather(*list(self._firing.values()), return_exceptions=True)

    # --- firing without a call ----------------------------------------------------------

    def fire_soon(self, game_id: str) -> None:
        """Land whatever is due on the game, in a task of its own (one per game at once)."""
        if game_id in self._firing or self._stopped:
            return
        task = asyncio.get_running_loop().create_task(self._fire_logged(game_id))
        self._firing[game_id] = task
        task.add_done_callback(lambda _: self._firing.pop(game_id, None))

    @tracing.traced_root("clock.fire")
    async def _fire_logged(self, game_id: str) -> int:
        try:
            return await self.fire(game_id)
        except _QUIET as exc:  # the next call, alarm or sweep tries again
            _log.info("sweep_skipped", game_id=game_id, why=str(exc))
        except Exception as exc:
            _log.warning("clock_failed", game_id=game_id, error=repr(exc))
        return 0

    async def fire(self, game_id: str) -> int:
        """Land whatever is due on one game now; the number of entries logged. A bot to
        move is queued too: a row written before bot turns left the due list (its due_at
        was "now" for a bot's turn) is due until that bot has moved."""
        async with self.locked(game_id) as game:
            landed = await self._land(game)
            self._kick(game)
            self._arm(game)
            return landed

    async def sweep(self, limit: int = 100) -> int:
        """Land what is due on every game the store says is due now, side by side (one
        game's search never holds up another's forfeit), and queue the bot turns left
        behind. The number of entries logged."""
        now = self.clock()
        try:
            due = await self.store.due(
                self.game_type,
                now,
                waiting_ttl=self.waiting_ttl,
                idle_seconds=self.idle_seconds,
                limit=limit,
            )
            stranded = await self.store.bot_turns(self.game_type, now - BOT_TURN_GRACE, limit)
        except StoreError as exc:
            raise Unavailable(f"the store is unavailable: {exc}") from exc
        landed = await asyncio.gather(*(self._swept(game_id) for game_id in due))
        for game_id in stranded:
            if game_id not in self._bot_turns:
                with contextlib.suppress(*_QUIET):
                    self._kick(await self.get(game_id))
        return sum(landed)

    @tracing.traced_root("clock.fire")
    async def _swept(self, game_id: str) -> int:
        try:
            return await self.fire(game_id)
        except _QUIET as exc:
            # Another replica fired first, or the store is down: the next sweep sees.
            _log.info("sweep_skipped", game_id=game_id, why=str(exc))
            return 0
