"""The clock's sweep: act on every game due now.

Deadlines passed (the bot moves for the seat, or it forfeits), bots to move after a
restart, waiting tables expired, games abandoned: each is an ordinary entry through the
same versioned append, so replicas and restarts never apply one twice. The service runs
the sweep in a loop (services.kit.server). Part of
:class:`services.kit.games.GameManager` (see :mod:`services.kit.manager`).
"""

from __future__ import annotations

import structlog

from services.kit import table as tables
from services.kit.errors import GameCorrupt, GameNotFound, StaleVersion, Unavailable
from services.kit.manager import Manager
from services.kit.seats import table_event
from services.kit.store import MoveRecord, StoreError

_log = structlog.get_logger("games")


class ClockSweep(Manager):
    """The clock's sweep: part of the game manager."""

    async def sweep(self, limit: int = 100) -> int:
        """Act on every game due now: deadlines passed, bots to move after a restart,
        waiting tables expired, games abandoned. The number of entries logged."""
        now = self.clock()
        try:
            due = await self.store.due(
                self.game_type,
                now,
                waiting_ttl=self.waiting_ttl,
                idle_seconds=self.idle_seconds,
                limit=limit,
            )
        except StoreError as exc:
            raise Unavailable(f"the store is unavailable: {exc}") from exc
        done = 0
        for game_id in due:
            try:
                done += await self.fire(game_id)
            except (StaleVersion, Unavailable, GameCorrupt, GameNotFound) as exc:
                # Another replica fired first, or the store is down: the next sweep sees.
                _log.info("sweep_skipped", game_id=game_id, why=str(exc))
        return done

    async def fire(self, game_id: str) -> int:
        """Whatever is due on one game now, at most one entry; 1 if one was logged."""
        async with self.locked(game_id) as game:
            if self.outcome(game) is not None:
                return 0
            now = self.clock()
            table, players = game.table, game.record.players
            if table.waiting:
                if not self.waiting_ttl or game.record.created_at > now - self.waiting_ttl:
                    return 0
                entry, kind = tables.EXPIRE, "table_expired"
            elif (seat := table.overdue(now)) is not None:
                timeout = table_event("timeout", f"seat {seat} ran out of time", seat)
                if table.plan.clock is not None and table.plan.clock.forfeit:
                    await self._give_up(game, seat, "forfeited on time", (timeout,))
                else:
                    await self._bot_move(game, seat, (timeout,))
                self._kick(game)
                return 1
            elif (seat := table.bot_to_move()) is not None:
                await self._bot_move(game, seat, ())
                self._kick(game)
                return 1
            elif (
                table.plan.clock is None
                and self.idle_seconds
                and game.updated_at <= now - self.idle_seconds
            ):
                entry, kind = tables.ABANDON, "game_abandoned"
            else:
                return 0
            table.end(entry, players)
            event = table_event(kind, tables.ENDINGS[entry][1])
            record = MoveRecord(
                game.version + 1, tables.SERVICE_SEAT, entry, [event], applied_at=now, finished=True
            )
            await self._append(game, record)
            return 1
