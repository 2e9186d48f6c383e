"""FindMatch across replicas: the pools in PostgreSQL's ``tabletop_pool`` table
(services/kit/store/pool.py; docs/ratings.md, "The replica pool").

Each replica writes a row for every FindMatch stream it holds and refreshes their
heartbeats; every tick (and at every arrival) it runs one matching round on the rows
no other replica is matching (``FOR UPDATE SKIP LOCKED``), with the same pure pools
as one process, and proposes each group (a match row naming the table's id to be).
The accept step: each member's replica accepts for its stream while it is open (the
proposing replica for its own streams at once, the others at their next tick) or
dissolves the group when it closed; the accept that completes a group seats it: the
table made under the match's id, then the rows marked in a transaction that checks the
match still stands (a member gone meanwhile: the table is cancelled). Each tick a
replica also reads its players' rows: a row marked with a table ends the stream with
its MatchFound, a row another stream took ends this one MATCH_REPLACED, and a row gone
(dropped as stale while this replica stalled) is written again.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import secrets
import signal
import uuid
from collections.abc import AsyncGenerator, Callable
from typing import Any

import structlog

from services.kit import table as tables
from services.kit.errors import Unavailable
from services.kit.matchmaking import metrics as pool_metrics
from services.kit.matchmaking.cancel import cancel_table
from services.kit.matchmaking.matcher import Ask, Found, Matchmaker, Waiter, Waiting, seat_plan
from services.kit.matchmaking.pool import Bot, BotFill, Entry
from services.kit.matchmaking.pools import PoolFull, PoolKey, Pools, canonical
from services.kit.matchmaking.settings import MatchSettings
from services.kit.ratings.errors import MatchReplaced
from services.kit.ratings.errors import PoolFull as PoolFullError
from services.kit.ratings.rpcs import shape_named
from services.kit.ratings.scale import Rating
from services.kit.store import GameExists, StoreError
from services.kit.store.pool import Member, PoolRow, Proposal

_log = structlog.get_logger("matchmaking")

STALE_BEATS = 3  # a row this many heartbeats old belongs to a dead or stalled replica
# The accept step: a test's control switches it off (every member taken as accepted
# at the proposal, as before the step: a stream gone on another replica is seated).
ACCEPT = True
# TEST ONLY: a point of the seating where a test has this process SIGKILL itself
# (tests/matchmaking/test_replicas_killed.py), named by this variable. Never set it in
# a deployment.
FAULT_ENV = "TABLETOP_TEST_MATCH_FAULT"


def fault_point(name: str) -> None:
    """TEST ONLY: die here, as a crash would, when FAULT_ENV names this point."""
    if os.environ.get(FAULT_ENV) == name:
        os.kill(os.getpid(), signal.SIGKILL)


def new_game_id() -> str:
    """A table's id, chosen when its group is proposed (as the manager chooses one)."""
    return secrets.token_urlsafe(12)


def key_text(key: PoolKey) -> str:
    """The pool key as the table stores it (canonical JSON)."""
    return canonical(
        {"shape": key.shape.name, "clock": key.clock, "options": key.options, "rated": key.rated}
    )


class SharedMatchmaker(Matchmaker):
    """The pools of one game service whose replicas share a PostgreSQL store."""

    def __init__(
        self,
        manager: Any,
        settings: MatchSettings | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        if clock is None:
            super().__init__(manager, settings)
        else:
            super().__init__(manager, settings, clock)
        self.store = manager.store
        self.holder = uuid.uuid4().hex  # this replica, in the rows it holds
        self._streams: dict[str, Waiter] = {}  # stream id: the waiter it serves
        self._joining: dict[str, Waiter] = {}  # streams whose row is being written
        self._joined: dict[str, float] = {}  # stream id: when its player joined
        self._beater: asyncio.Task[None] | None = None
        self._sizes: dict[str, int] = {}
        self._keys: dict[str, PoolKey] = {}  # key text: the key, of pools seen
        self._leaving: set[asyncio.Task[None]] = set()

    @property
    def stale_after(self) -> float:
        return STALE_BEATS * self.settings.heartbeat

    # --- a player's stream ----------------------------------------------------------

    async def find(self, player: str, name: str, ask: Ask) -> AsyncGenerator[Waiting | Found, None]:
        most = self.settings.max_players
        if most and len(self._streams) >= most:  # the streams this replica holds
            raise PoolFullError(str(PoolFull(most)), retry_after_ms=1000)
        standing = await self.store.standings(self.info.name, ask.key.shape.name, [player])
        rating = standing[player].rating if player in standing else Rating()
        waiter = Waiter(player, name, ask)
        stream = uuid.uuid4().hex
        now = self.clock()
        text = key_text(ask.key)
        self._keys[text] = ask.key
        row = PoolRow(
            player, name, text, rating.mu, rating.sigma, _bots(ask.bots), now, self.holder,
            stream, now,
        )  # fmt: skip
        self._joining[stream] = waiter
        self._joined[stream] = now
        try:
            await self.store.pool_join(self.info.name, row)
            # Held (read at each tick) only once its row is written: a tick reading the
            # row this FindMatch replaces (a client asking again) would take it for a
            # newer stream's and end this one MATCH_REPLACED.
            self._streams[stream] = waiter
            self._joining.pop(stream, None)
            await self._match()
            await self._measure()
            self._tick()
            while True:
                if not waiter.result.done():
                    yield self._waiting_for(waiter, text, stream)
                with contextlib.suppress(TimeoutError):
                    found = await asyncio.wait_for(
                        asyncio.shield(waiter.result), self.settings.waiting_every
                    )
                    yield found
                    return
        finally:
            waiter.open = False
            self._streams.pop(stream, None)
            self._joining.pop(stream, None)
            self._joined.pop(stream, None)
            if not waiter.result.done():
                waiter.result.cancel()
            # The row goes in a task of its own: a cancelled stream cannot await here.
            task = asyncio.get_running_loop().create_task(self._leave(player, stream))
            self._leaving.add(task)
            task.add_done_callback(self._leaving.discard)

    async def _leave(self, player: str, stream: str) -> None:
        try:
            if await self.store.pool_leave(self.info.name, player, stream):
                pool_metrics.dissolved(self.info.name, "left")
        except Exception:  # its heartbeat stops: the row goes stale and is dropped
            _log.warning("pool_leave_failed", exc_info=True)

    def _waiting_for(self, waiter: Waiter, text: str, stream: str) -> Waiting:
        waited = max(0.0, self.clock() - self._joined.get(stream, self.clock()))
        return Waiting(max(1, self._sizes.get(text, 1)), waited, self.settings.window.at(waited))

    # --- the rounds -----------------------------------------------------------------

    async def _ticking(self) -> None:
        while self._streams:
            await asyncio.sleep(self.settings.tick)
            try:
                await self._round()
            except Exception:  # a database hiccup must not stop the pools
                _log.exception("matching failed")

    def _tick(self) -> None:
        super()._tick()
        if self._beater is None or self._beater.done():
            self._beater = asyncio.get_running_loop().create_task(self._beating())

    async def _beating(self) -> None:
        """The held rows' heartbeats, in a task of their own: a long matching round
        (tables being made) must not let this replica's rows go stale."""
        while self._streams:
            try:
                await self.store.pool_beat(self.info.name, list(self._streams), self.clock())
            except Exception:  # the next beat may pass; three missed ones drop the rows
                _log.warning("pool_heartbeat_failed", exc_info=True)
            await asyncio.sleep(self.settings.heartbeat)

    async def _round(self) -> None:
        await self._accept()
        await self._deliver()
        await self._match()
        await self._measure()

    async def _measure(self) -> None:
        """The pools' sizes across replicas (MatchWaiting, the catalog, /metrics)."""
        self._sizes = await self.store.pool_sizes(self.info.name, self.clock() - self.stale_after)
        self._gauge()

    async def _deliver(self) -> None:
        """Each held stream's row read: matched, replaced, or gone and written again."""
        held = dict(self._streams)
        players = [w.player for w in held.values()]
        rows = {r.player: r for r in await self.store.pool_rows(self.info.name, players)}
        for stream, waiter in held.items():
            if waiter.result.done():
                continue
            row = rows.get(waiter.player)
            if row is None:
                await self._rejoin(waiter, stream)
            elif row.stream != stream:
                waiter.result.set_exception(
                    MatchReplaced("a newer FindMatch of this player replaced this one")
                )
            elif row.game_id is not None and row.seat is not None:
                waiter.result.set_result(Found(row.game_id, row.seat, bool(row.rated)))

    async def _rejoin(self, waiter: Waiter, stream: str) -> None:
        standing = await self.store.standings(
            self.info.name, waiter.ask.key.shape.name, [waiter.player]
        )
        rating = standing[waiter.player].rating if waiter.player in standing else Rating()
        now = self.clock()
        row = PoolRow(
            waiter.player, waiter.name, key_text(waiter.ask.key), rating.mu, rating.sigma,
            _bots(waiter.ask.bots), self._joined.get(stream, now), self.holder, stream, now,
        )  # fmt: skip
        await self.store.pool_join(self.info.name, row)

    async def _accept(self) -> None:
        """The accept step for the groups other replicas proposed with this one's
        players: accepted while the stream is open, dissolved when it closed; the
        groups this completes are seated here."""
        if not ACCEPT:
            return
        held = {**self._joining, **self._streams}
        open_streams = [s for s, w in held.items() if w.open]
        done = await self.store.pool_accept(self.info.name, self.holder, open_streams, self.clock())
        for _ in range(done.dissolved):
            pool_metrics.dissolved(self.info.name, "left")
        for group in done.ready:
            await self._seat(group)

    async def _match(self) -> None:
        async with self._matching:
            now = self.clock()
            done = await self.store.pool_match(
                self.info.name,
                now,
                now - self.stale_after,
                now - self.settings.accept,
                self._propose,
            )
        for _ in range(done.dissolved):
            pool_metrics.dissolved(self.info.name, "timeout")
        for group in done.ready:
            await self._seat(group)

    async def _propose(self, rows: list[PoolRow]) -> list[Proposal]:
        """The groups the locked rows make (pure): each a table's id, seats and pool,
        this replica's own open streams accepted at once."""
        now = self.clock()
        pools = Pools(window=self.settings.window)
        by_player: dict[str, PoolRow] = {}
        for row in rows:
            key = self._key_of(row.pool_key)
            ours = self._streams.get(row.stream) or self._joining.get(row.stream)
            if key is None or (row.holder == self.holder and ours is None):
                continue  # unreadable, or a stream of ours that just closed (its row goes)
            entry = Entry(row.player, Rating(row.mu, row.sigma), row.joined_at, _bot_fill(row.bots))
            pools.add(key, entry)
            by_player[row.player] = row
        groups: list[Proposal] = []
        for key, match in pools.match(now):
            seats: list[dict[str, Any]] = []
            members: list[Member] = []
            for seat, s in enumerate(match.seats):
                if isinstance(s, Bot):
                    seats.append({"bot": s.level})
                    continue
                row = by_player[s.player]
                seats.append({"player": s.player, "name": row.name, "joined_at": row.joined_at})
                held = self._streams.get(row.stream) or self._joining.get(row.stream)
                waiter = held if row.holder == self.holder else None
                mine = waiter is not None and waiter.open
                members.append(Member(s.player, row.stream, seat, mine or not ACCEPT))
            groups.append(Proposal(new_game_id(), key_text(key), seats, match.rated, members))
        return groups

    async def _seat(self, group: Proposal) -> None:
        """Make a complete group's table under the id its match named (one another
        replica, or this one before a crash, made already is the same table), then
        mark its rows if the match still stands; a member who left meanwhile has the
        table cancelled and the others wait on."""
        key = self._key_of(group.pool_key)
        if key is None:
            await self.store.pool_dissolve(self.info.name, group.game_id)
            return
        seats = tuple(
            seat_plan(tables.BOT, level=s["bot"])
            if "bot" in s
            else seat_plan(tables.RESERVED, s["name"], player=s["player"])
            for s in group.seats
        )
        try:
            options = self.info.options_type.from_dict(json.loads(key.options))
            clock = tables.Clock.from_dict(json.loads(key.clock)) if key.clock else None
            await self.manager.create(
                len(seats),
                options,
                plan=tables.Plan(seats, clock),
                rated=group.rated,
                game_id=group.game_id,
            )
        except GameExists:
            pass  # made already: the same table, seated below
        except (Unavailable, StoreError) as exc:  # left to the next round, after the timeout
            _log.warning("match_table_failed", game_id=group.game_id, error=str(exc))
            return
        except Exception as exc:  # refused: its players wait on
            await self.store.pool_dissolve(self.info.name, group.game_id)
            pool_metrics.dissolved(self.info.name, "failed")
            _log.warning("match_table_failed", error=str(exc))
            return
        fault_point("after_table")
        marks = await self.store.pool_complete(self.info.name, group)
        if marks is None:
            await cancel_table(self.manager, group.game_id)
            pool_metrics.dissolved(self.info.name, "left")
            return
        if marks:
            now = self.clock()
            waits = [now - s["joined_at"] for s in group.seats if "player" in s]
            bots = any("bot" in s for s in group.seats)
            pool_metrics.seated(self.info.name, key, group.rated, bots, waits)
        for mark in marks:  # this replica's own players hear at once
            waiter = self._streams.get(mark.stream) or self._joining.get(mark.stream)
            if waiter is not None and not waiter.result.done():
                waiter.result.set_result(Found(mark.game_id, mark.seat, mark.rated))

    def _key_of(self, text: str) -> PoolKey | None:
        key = self._keys.get(text)
        if key is not None:
            return key
        try:
            data = json.loads(text)
            key = PoolKey(
                shape_named(self.info, data["shape"]), data["clock"], data["options"],
                bool(data["rated"]),
            )  # fmt: skip
        except Exception:  # a row this version cannot read (another's pool): left alone
            _log.warning("pool_key_unreadable", key=text)
            return None
        self._keys[text] = key
        return key

    def pool_sizes(self) -> dict[tuple[str, bool], int]:
        """Players waiting by (shape name, rated), as this replica's last round saw."""
        sizes: dict[tuple[str, bool], int] = {}
        for text, n in self._sizes.items():
            key = self._key_of(text)
            if key is not None:
                at = (key.shape.name, key.rated)
                sizes[at] = sizes.get(at, 0) + n
        return sizes


def _bots(bots: BotFill | None) -> dict[str, Any] | None:
    return None if bots is None else {"after": bots.after, "level": bots.level}


def _bot_fill(data: dict[str, Any] | None) -> BotFill | None:
    return None if data is None else BotFill(float(data["after"]), str(data["level"]))


def matchmaker_for(manager: Any, settings: MatchSettings | None = None) -> Matchmaker:
    """The shared pool when the store is PostgreSQL (replicas), else the one in this
    process (memory, SQLite: one process). Asked of the store's methods, not its class:
    a process wraps its store (services/kit/metrics.py CountedStore)."""
    if callable(getattr(manager.store, "pool_match", None)):
        return SharedMatchmaker(manager, settings)
    return Matchmaker(manager, settings)
