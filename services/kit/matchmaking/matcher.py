"""FindMatch in a game service: the pools of waiting players, matched at every arrival
and every tick, each match made into a table (docs/ratings.md, "Matchmaking").

The pools live in this process (the memory and SQLite stores serve one process: a
restart ends every stream, and the clients ask again). A player is in at most one
entry: a second FindMatch replaces the first, whose stream ends MATCH_REPLACED. An
entry leaves the pool when matched (matched once) or when its stream closes. Before a
match becomes a table every one of its players' streams is checked: a player who left
the moment the match was made is dropped and the others are put back first, with their
join times, so no table is made that nobody joins. One who leaves while the table is
being made (its one store write) has the table cancelled at once (abandoned, not rated)
and the others put back the same way.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass, field
from typing import Any

import structlog

from services.kit import table as tables
from services.kit.matchmaking import metrics as pool_metrics
from services.kit.matchmaking.cancel import cancel_table
from services.kit.matchmaking.pool import Bot, BotFill, Entry, Match
from services.kit.matchmaking.pools import PoolFull, PoolKey, Pools
from services.kit.matchmaking.settings import MatchSettings
from services.kit.ratings.errors import MatchReplaced
from services.kit.ratings.errors import PoolFull as PoolFullError
from services.kit.ratings.scale import Rating

_log = structlog.get_logger("matchmaking")

# The streams are checked again once the table is made: a test's control switches it off.
RECHECK_AFTER_TABLE = True


@dataclass(frozen=True)
class Ask:
    """What a FindMatch asks for, checked: the pool, and how to make its table."""

    key: PoolKey
    options: Any  # the game's options object (the shape's team options filled in)
    clock: tables.Clock | None
    bots: BotFill | None


@dataclass(frozen=True)
class Found:
    game_id: str
    seat: int
    rated: bool


@dataclass(frozen=True)
class Waiting:
    players_waiting: int
    waited: float
    window_points: float


@dataclass(eq=False)
class Waiter:
    player: str
    name: str
    ask: Ask
    result: asyncio.Future[Found] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    open: bool = True


def seat_plan(
    kind: str, name: str = "", level: str = "medium", player: str = ""
) -> tables.SeatPlan:
    """A planned seat, held by ``player`` (docs/players.md)."""
    return tables.SeatPlan(kind, name, level, player)


class Matchmaker:
    """The pools of one game service."""

    def __init__(
        self,
        manager: Any,
        settings: MatchSettings | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.manager = manager
        self.info = manager.engine.GAME
        self.settings = settings or MatchSettings()
        self.clock = clock
        self.pools = Pools(window=self.settings.window, max_entries=self.settings.max_players)
        self._waiters: dict[str, Waiter] = {}
        self._ticker: asyncio.Task[None] | None = None
        self._matching = asyncio.Lock()
        pool_metrics.start(self.info)

    # --- a player's stream ----------------------------------------------------------

    async def find(self, player: str, name: str, ask: Ask) -> AsyncGenerator[Waiting | Found, None]:
        """Wait in ``ask``'s pool: Waiting now and every few seconds, then Found (last).
        Closing the iterator leaves the pool."""
        standing = await self.manager.store.standings(self.info.name, ask.key.shape.name, [player])
        rating = standing[player].rating if player in standing else Rating()
        waiter = Waiter(player, name, ask)
        try:
            replaced = self.pools.add(ask.key, Entry(player, rating, self.clock(), ask.bots))
        except PoolFull as exc:
            raise PoolFullError(str(exc), retry_after_ms=1000) from None
        old = self._waiters.get(player)
        if old is not None and not old.result.done():
            old.result.set_exception(
                MatchReplaced("a newer FindMatch of this player replaced this one")
            )
        del replaced  # its stream is the old waiter's, ended above
        self._waiters[player] = waiter
        self._gauge()
        try:
            await self._match()
            self._tick()
            while True:
                if not waiter.result.done():
                    yield self._waiting(waiter)
                with contextlib.suppress(TimeoutError):
                    found = await asyncio.wait_for(
                        asyncio.shield(waiter.result), self.settings.waiting_every
                    )
                    yield found
                    return
        finally:
            waiter.open = False
            if self._waiters.get(player) is waiter:
                del self._waiters[player]
                if not waiter.result.done():
                    self.pools.remove(player)
                    waiter.result.cancel()
            self._gauge()

    def _waiting(self, waiter: Waiter) -> Waiting:
        now = self.clock()
        key = self.pools.where(waiter.player)
        entry = None if key is None else self.pools._pools[key].get(waiter.player)
        waited = 0.0 if entry is None else entry.waited(now)
        size = 0 if key is None else self.pools.sizes().get(key, 0)
        return Waiting(size, waited, self.settings.window.at(waited))

    # --- matching -------------------------------------------------------------------

    def _tick(self) -> None:
        if self._ticker is None or self._ticker.done():
            self._ticker = asyncio.get_running_loop().create_task(self._ticking())

    async def _ticking(self) -> None:
        while len(self.pools):
            await asyncio.sleep(self.settings.tick)
            try:
                await self._match()
            except Exception:  # one bad table must not stop the pools
                _log.exception("matching failed")

    async def _match(self) -> None:
        async with self._matching:
            made = self.pools.match(self.clock())
            for key, match in made:
                await self._table(key, match)
            if made:
                self._gauge()

    async def _table(self, key: PoolKey, match: Match) -> None:
        waiters = [self._waiters.get(e.player) for e in match.entries]
        gone = self._gone(match, waiters)
        if gone:
            # Someone left the moment the match was made: the others first, back in.
            stay = [e for e in match.entries if e not in gone]
            self.pools.put_back(key, stay)
            pool_metrics.dissolved(self.info.name, "left")
            return
        ask = next(w.ask for w in waiters if w is not None)
        named = {w.player: w.name for w in waiters if w is not None}
        seats = tuple(
            seat_plan(tables.BOT, level=s.level)
            if isinstance(s, Bot)
            else seat_plan(tables.RESERVED, named[s.player], player=s.player)
            for s in match.seats
        )
        try:
            game, _ = await self.manager.create(
                len(match.seats),
                ask.options,
                plan=tables.Plan(seats, ask.clock),
                rated=match.rated,
            )
        except Exception as exc:
            self.pools.put_back(key, list(match.entries))
            pool_metrics.dissolved(self.info.name, "failed")
            _log.warning("match_table_failed", error=str(exc))
            return
        waiters = [self._waiters.get(e.player) for e in match.entries]
        gone = self._gone(match, waiters) if RECHECK_AFTER_TABLE else []
        if gone:
            # Someone left while the table was being made: nobody is left at it.
            await cancel_table(self.manager, game.record.game_id)
            self.pools.put_back(key, [e for e in match.entries if e not in gone])
            pool_metrics.dissolved(self.info.name, "left")
            return
        pool_metrics.matched(self.info.name, key, match)
        for seat, s in enumerate(match.seats):
            if isinstance(s, Entry):
                waiter = self._waiters.get(s.player)
                if waiter is not None and not waiter.result.done():
                    waiter.result.set_result(Found(game.record.game_id, seat, match.rated))

    @staticmethod
    def _gone(match: Match, waiters: list[Waiter | None]) -> list[Entry]:
        """The match's players whose stream is no longer open."""
        return [e for e, w in zip(match.entries, waiters, strict=True) if w is None or not w.open]

    def _gauge(self) -> None:
        pool_metrics.sizes(self.info, self.pool_sizes())

    def pool_sizes(self) -> dict[tuple[str, bool], int]:
        """Players waiting by (shape name, rated)."""
        sizes: dict[tuple[str, bool], int] = {}
        for key, n in self.pools.sizes().items():
            at = (key.shape.name, key.rated)
            sizes[at] = sizes.get(at, 0) + n
        return sizes
