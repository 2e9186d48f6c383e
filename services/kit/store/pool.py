"""The matchmaking pool shared by replicas on PostgreSQL (docs/ratings.md, "The replica
pool"): one ``tabletop_pool`` row per waiting player and game type, and one
``tabletop_pool_matches`` row per group proposed and not yet seated.

The replica holding a player's FindMatch stream writes its row (a second FindMatch
anywhere overwrites it: one entry per player) and refreshes its heartbeat. Any replica
matches: it locks the waiting rows with fresh heartbeats ``FOR UPDATE SKIP LOCKED``
(rows another replica is matching are skipped, so no player is in two matches) and
**proposes** each group: a match row naming the table's id, seats and pool, and the
members' rows pointing at it, its own live streams' already accepted. Each member's
replica **accepts** for its stream while the stream is open, or, the stream gone,
dissolves the match (the others wait on with their join times). The accept that
completes a group is the go: the table is created under the id the match named, then
**completed** (the rows marked with the table, the match row deleted) in one
transaction that first checks the match still stands; one a member left meanwhile has
its table cancelled. A match stuck unaccepted is dissolved, one stuck accepted (its
maker died around the table's creation) is completed by any replica with the same id:
the table it finds, or makes, is the one the players get. Locks: a match row before its
members' rows, always.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

POSTGRES_SCHEMA = """
-- matchmaking across replicas (issue 28, store/pool.py): who waits in which pool,
-- which replica holds the stream, and once matched, the table and seat.
CREATE TABLE IF NOT EXISTS tabletop_pool (
    player_id    TEXT NOT NULL,
    game_type    TEXT NOT NULL,
    player_name  TEXT NOT NULL,
    pool_key     TEXT NOT NULL,
    mu           DOUBLE PRECISION NOT NULL,
    sigma        DOUBLE PRECISION NOT NULL,
    bots         JSONB,
    joined_at    DOUBLE PRECISION NOT NULL,
    holder       TEXT NOT NULL,
    stream       TEXT NOT NULL,
    heartbeat_at DOUBLE PRECISION NOT NULL,
    game_id      TEXT,
    seat         INTEGER,
    rated        BOOLEAN,
    PRIMARY KEY (player_id, game_type)
);
CREATE INDEX IF NOT EXISTS tabletop_pool_waiting ON tabletop_pool (game_type, joined_at)
    WHERE game_id IS NULL;
-- The accept step: the group a row is proposed in (the table's id to be), and whether
-- its stream's replica accepted for it.
ALTER TABLE tabletop_pool ADD COLUMN IF NOT EXISTS match_id TEXT;
ALTER TABLE tabletop_pool ADD COLUMN IF NOT EXISTS accepted BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX IF NOT EXISTS tabletop_pool_proposed ON tabletop_pool (match_id)
    WHERE match_id IS NOT NULL AND game_id IS NULL;
-- A group proposed and not yet seated: the table to make, under the id chosen here.
CREATE TABLE IF NOT EXISTS tabletop_pool_matches (
    game_id      TEXT PRIMARY KEY,
    game_type    TEXT NOT NULL,
    pool_key     TEXT NOT NULL,
    seats        JSONB NOT NULL,
    rated        BOOLEAN NOT NULL,
    proposed_at  DOUBLE PRECISION NOT NULL,
    complete_at  DOUBLE PRECISION
);
"""

# How the matcher takes its rows: a test's control switches it off (tests/matchmaking).
CLAIM = " FOR UPDATE SKIP LOCKED"
# Only a waiting row is proposed, and a group is seated only while its match stands
# with every member in it: a test's control switches both off (a player seated twice).
GUARDED = True
# A group is seated only while its match stands with every member in it: a test's
# control switches it off (a player who left during the table's creation is seated).
SEAT_ONLY_STANDING = True
# A match accepted but never seated (its maker died around the table's creation) is
# seated by the next round, under the same id: a test's control dissolves it instead
# (the players are matched again, and the first table is left to nobody).
RECOVER = True

MATCHED_KEPT = 3600.0  # seconds a matched row outlives its stale heartbeat

_COLUMNS = (
    "player_id, player_name, pool_key, mu, sigma, bots, joined_at, holder, stream,"
    " heartbeat_at, game_id, seat, rated, match_id, accepted"
)


@dataclass(frozen=True)
class PoolRow:
    player: str
    name: str
    pool_key: str  # the pool's canonical JSON (services/kit/matchmaking/shared.py)
    mu: float
    sigma: float
    bots: dict[str, Any] | None
    joined_at: float
    holder: str
    stream: str
    heartbeat_at: float
    game_id: str | None = None
    seat: int | None = None
    rated: bool | None = None
    match_id: str | None = None
    accepted: bool = False


@dataclass(frozen=True)
class Member:
    """A player of a proposed group: its row (by stream), seat, and whether its
    replica accepted for it as it proposed (a stream of its own, open)."""

    player: str
    stream: str
    seat: int
    accepted: bool


@dataclass(frozen=True)
class Proposal:
    """A group to seat: the table's id, its pool, its seats as the table's plan wants
    them (``{"player": id, "name": n}`` or ``{"bot": level}``), rated or not."""

    game_id: str
    pool_key: str
    seats: list[dict[str, Any]]
    rated: bool
    members: list[Member] = field(default_factory=list)


@dataclass(frozen=True)
class Mark:
    """A matched row: its player (and the stream read), the table and the seat."""

    player: str
    stream: str
    game_id: str
    seat: int
    rated: bool


@dataclass
class Round:
    """What one matching round did: groups proposed (those whose every member was
    accepted at once are to be seated now), matches it found stuck and completes
    (their maker died), and matches it dissolved because nobody accepted in time."""

    proposed: list[Proposal] = field(default_factory=list)
    ready: list[Proposal] = field(default_factory=list)
    dissolved: int = 0


@dataclass
class Accepted:
    """What one replica's accepting did: groups now complete (to be seated by it), and
    matches dissolved because one of its streams had closed."""

    ready: list[Proposal] = field(default_factory=list)
    dissolved: int = 0


def _row(row: tuple[Any, ...]) -> PoolRow:
    return PoolRow(*row)


def _proposal(row: tuple[Any, ...]) -> Proposal:
    game_id, pool_key, seats, rated = row[:4]
    return Proposal(game_id, pool_key, list(seats), bool(rated))


class _Undo(Exception):
    """A proposal whose rows changed under it: its savepoint is rolled back."""


async def _lock_match(conn: Any, game_id: str) -> bool:
    """The match row locked (before any of its members' rows); False if it is gone."""
    cur = await conn.execute(
        "SELECT 1 FROM tabletop_pool_matches WHERE game_id = %s FOR UPDATE", (game_id,)
    )
    return await cur.fetchone() is not None


async def _dissolve(conn: Any, game_type: str, game_id: str) -> None:
    """The match gone, its remaining members waiting again with their join times (match
    row locked)."""
    await conn.execute("DELETE FROM tabletop_pool_matches WHERE game_id = %s", (game_id,))
    await conn.execute(
        "UPDATE tabletop_pool SET match_id = NULL, accepted = false, seat = NULL"
        " WHERE game_type = %s AND match_id = %s AND game_id IS NULL",
        (game_type, game_id),
    )


class PostgresPool:
    """The pool's reads and writes, for the PostgreSQL store."""

    _connection: Callable[..., Any]

    async def pool_join(self, game_type: str, row: PoolRow) -> None:
        """The player's entry, replacing any other of this game type. A row already
        matched keeps its table (the new stream is sent it), and so does one proposed
        in a group of the same pool (the new stream's replica accepts for it); one
        waiting in the same pool keeps its join time, as in one process. A row proposed
        in another pool leaves its group, whose other members wait on."""
        for _ in range(5):
            async with self._connection() as conn, conn.transaction():
                cur = await conn.execute(
                    "SELECT match_id, game_id FROM tabletop_pool"
                    " WHERE player_id = %s AND game_type = %s",
                    (row.player, game_type),
                )
                seen = await cur.fetchone()
                proposed = None if seen is None or seen[1] is not None else seen[0]
                if proposed is not None and not await _lock_match(conn, proposed):
                    continue  # seated or dissolved meanwhile: read it again
                cur = await conn.execute(
                    "SELECT pool_key, joined_at, game_id, match_id FROM tabletop_pool"
                    " WHERE player_id = %s AND game_type = %s FOR UPDATE",
                    (row.player, game_type),
                )
                old = await cur.fetchone()
                if (old is None) != (seen is None) or (
                    old is not None and old[2] is None and old[3] != proposed
                ):
                    continue  # proposed (or not) meanwhile: its match's lock first
                if old is not None and (
                    old[2] is not None or (proposed is not None and old[0] == row.pool_key)
                ):
                    await conn.execute(
                        "UPDATE tabletop_pool SET holder = %s, stream = %s, heartbeat_at = %s"
                        " WHERE player_id = %s AND game_type = %s",
                        (row.holder, row.stream, row.heartbeat_at, row.player, game_type),
                    )
                    return
                if proposed is not None:
                    await _dissolve(conn, game_type, proposed)
                joined = row.joined_at
                if old is not None and old[0] == row.pool_key:
                    joined = min(joined, old[1])
                await conn.execute(
                    "INSERT INTO tabletop_pool (player_id, game_type, player_name, pool_key, mu,"
                    " sigma, bots, joined_at, holder, stream, heartbeat_at)"
                    " VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)"
                    " ON CONFLICT (player_id, game_type) DO UPDATE SET"
                    " player_name = EXCLUDED.player_name, pool_key = EXCLUDED.pool_key,"
                    " mu = EXCLUDED.mu, sigma = EXCLUDED.sigma, bots = EXCLUDED.bots,"
                    " joined_at = EXCLUDED.joined_at, holder = EXCLUDED.holder,"
                    " stream = EXCLUDED.stream, heartbeat_at = EXCLUDED.heartbeat_at,"
                    " game_id = NULL, seat = NULL, rated = NULL, match_id = NULL,"
                    " accepted = false",
                    (
                        row.player, game_type, row.name, row.pool_key, row.mu, row.sigma,
                        None if row.bots is None else json.dumps(row.bots), joined,
                        row.holder, row.stream, row.heartbeat_at,
                    ),
                )  # fmt: skip
                return
        raise RuntimeError("the pool row kept changing under FindMatch")

    async def pool_leave(self, game_type: str, player: str, stream: str) -> bool:
        """The stream ended: its row goes (a newer stream's row stays). A row proposed in
        a group takes the group with it: the others wait on, first (True then)."""
        for _ in range(5):
            async with self._connection() as conn, conn.transaction():
                cur = await conn.execute(
                    "SELECT match_id, game_id, stream FROM tabletop_pool"
                    " WHERE player_id = %s AND game_type = %s",
                    (player, game_type),
                )
                seen = await cur.fetchone()
                if seen is None or seen[2] != stream:
                    return False
                if seen[0] is not None and seen[1] is None:
                    if not await _lock_match(conn, seen[0]):
                        continue
                    cur = await conn.execute(
                        "DELETE FROM tabletop_pool WHERE player_id = %s AND game_type = %s"
                        " AND stream = %s AND match_id = %s AND game_id IS NULL",
                        (player, game_type, stream, seen[0]),
                    )
                    if not cur.rowcount:
                        continue
                    await _dissolve(conn, game_type, seen[0])
                    return True
                # A row proposed meanwhile is not deleted here: the next try dissolves.
                cur = await conn.execute(
                    "DELETE FROM tabletop_pool WHERE player_id = %s AND game_type = %s"
                    " AND stream = %s AND (match_id IS NULL OR game_id IS NOT NULL)",
                    (player, game_type, stream),
                )
                if cur.rowcount:
                    return False
        return False

    async def pool_beat(self, game_type: str, streams: Sequence[str], now: float) -> None:
        """The held streams are alive."""
        if not streams:
            return
        async with self._connection() as conn:
            # Rows a matching round holds are skipped, not waited for: it read them fresh.
            await conn.execute(
                "UPDATE tabletop_pool SET heartbeat_at = %s WHERE (player_id, game_type) IN ("
                " SELECT player_id, game_type FROM tabletop_pool"
                " WHERE game_type = %s AND stream = ANY(%s) FOR UPDATE SKIP LOCKED)",
                (now, game_type, list(streams)),
            )

    async def pool_rows(self, game_type: str, players: Sequence[str]) -> list[PoolRow]:
        """These players' rows (a held stream learns it was matched or replaced)."""
        if not players:
            return []
        async with self._connection() as conn:
            cur = await conn.execute(
                f"SELECT {_COLUMNS} FROM tabletop_pool"
                " WHERE game_type = %s AND player_id = ANY(%s)",
                (game_type, sorted(set(players))),
            )
            return [_row(r) for r in await cur.fetchall()]

    async def pool_sizes(self, game_type: str, fresh_after: float) -> dict[str, int]:
        """Players waiting per pool key, stale rows left out."""
        async with self._connection() as conn:
            cur = await conn.execute(
                "SELECT pool_key, count(*) FROM tabletop_pool WHERE game_type = %s"
                " AND game_id IS NULL AND heartbeat_at >= %s GROUP BY pool_key",
                (game_type, fresh_after),
            )
            return {key: int(n) for key, n in await cur.fetchall()}

    async def pool_match(
        self,
        game_type: str,
        now: float,
        fresh_after: float,
        accept_before: float,
        propose: Callable[[list[PoolRow]], Awaitable[list[Proposal]]],
    ) -> Round:
        """One matching round, in one transaction: matches stuck since ``accept_before``
        dissolved (unaccepted: stale members dropped) or handed back to be seated
        (accepted: their maker died); stale waiting rows dropped; the waiting fresh rows
        no other replica is matching locked and given to ``propose``, whose groups are
        written as matches before the locks go."""
        done = Round()
        async with self._connection() as conn, conn.transaction():
            cur = await conn.execute(
                "SELECT game_id, pool_key, seats, rated, complete_at FROM tabletop_pool_matches"
                " WHERE game_type = %s AND ((complete_at IS NULL AND proposed_at < %s)"
                " OR complete_at < %s) ORDER BY game_id FOR UPDATE SKIP LOCKED",
                (game_type, accept_before, accept_before),
            )
            for stuck in await cur.fetchall():
                if stuck[4] is not None and RECOVER:
                    done.ready.append(_proposal(stuck))
                    continue
                await conn.execute(
                    "DELETE FROM tabletop_pool WHERE game_type = %s AND match_id = %s"
                    " AND game_id IS NULL AND heartbeat_at < %s",
                    (game_type, stuck[0], fresh_after),
                )
                await _dissolve(conn, game_type, stuck[0])
                done.dissolved += 1
            # A matched row goes with its stream (pool_leave); one whose holder died
            # before sending the match goes much later: a slow holder still sends it. A
            # proposed row goes with its match (above).
            await conn.execute(
                "DELETE FROM tabletop_pool WHERE (player_id, game_type) IN ("
                " SELECT player_id, game_type FROM tabletop_pool WHERE game_type = %s AND"
                " ((game_id IS NULL AND match_id IS NULL AND heartbeat_at < %s)"
                " OR (game_id IS NOT NULL AND heartbeat_at < %s)) FOR UPDATE SKIP LOCKED)",
                (game_type, fresh_after, fresh_after - MATCHED_KEPT),
            )
            waiting = " AND match_id IS NULL" if GUARDED else ""
            cur = await conn.execute(
                f"SELECT {_COLUMNS} FROM tabletop_pool WHERE game_type = %s AND game_id IS NULL"
                f"{waiting} AND heartbeat_at >= %s ORDER BY joined_at, player_id" + CLAIM,
                (game_type, fresh_after),
            )
            rows = [_row(r) for r in await cur.fetchall()]
            if not rows:
                return done
            for group in await propose(rows):
                try:
                    async with conn.transaction():  # a savepoint: one group's writes
                        await self._propose(conn, game_type, now, group)
                except _Undo:
                    continue
                done.proposed.append(group)
                if all(m.accepted for m in group.members):
                    done.ready.append(group)
        return done

    @staticmethod
    async def _propose(conn: Any, game_type: str, now: float, group: Proposal) -> None:
        complete = now if all(m.accepted for m in group.members) else None
        await conn.execute(
            "INSERT INTO tabletop_pool_matches (game_id, game_type, pool_key, seats, rated,"
            " proposed_at, complete_at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (
                group.game_id, game_type, group.pool_key, json.dumps(group.seats),
                group.rated, now, complete,
            ),
        )  # fmt: skip
        waiting = " AND match_id IS NULL AND game_id IS NULL" if GUARDED else ""
        for m in group.members:
            cur = await conn.execute(
                "UPDATE tabletop_pool SET match_id = %s, seat = %s, accepted = %s"
                " WHERE player_id = %s AND game_type = %s AND stream = %s" + waiting,
                (group.game_id, m.seat, m.accepted, m.player, game_type, m.stream),
            )
            if not cur.rowcount:
                raise _Undo(m.player)

    async def pool_accept(
        self, game_type: str, holder: str, open_streams: Sequence[str], now: float
    ) -> Accepted:
        """This replica's answer for its proposed rows: accepted while the stream is
        open; a closed one dissolves its group. Groups this completes are handed back to
        be seated (the match's ``complete_at`` set)."""
        done = Accepted()
        alive = set(open_streams)
        async with self._connection() as conn, conn.transaction():
            cur = await conn.execute(
                "SELECT DISTINCT match_id FROM tabletop_pool WHERE game_type = %s"
                " AND holder = %s AND match_id IS NOT NULL AND game_id IS NULL AND NOT accepted",
                (game_type, holder),
            )
            ids = sorted(m for (m,) in await cur.fetchall())
            if not ids:
                return done
            cur = await conn.execute(
                "SELECT game_id, pool_key, seats, rated, complete_at FROM tabletop_pool_matches"
                " WHERE game_id = ANY(%s) ORDER BY game_id FOR UPDATE",
                (ids,),
            )
            for match in await cur.fetchall():
                game_id = match[0]
                rows = await conn.execute(
                    "SELECT player_id, stream, holder, accepted FROM tabletop_pool"
                    " WHERE game_type = %s AND match_id = %s AND game_id IS NULL"
                    " ORDER BY player_id FOR UPDATE",
                    (game_type, game_id),
                )
                members = await rows.fetchall()
                mine = [m for m in members if m[2] == holder and not m[3]]
                closed = [m[0] for m in mine if m[1] not in alive]
                if closed:
                    await conn.execute(
                        "DELETE FROM tabletop_pool WHERE game_type = %s AND match_id = %s"
                        " AND player_id = ANY(%s)",
                        (game_type, game_id, closed),
                    )
                    await _dissolve(conn, game_type, game_id)
                    done.dissolved += 1
                    continue
                await conn.execute(
                    "UPDATE tabletop_pool SET accepted = true WHERE game_type = %s"
                    " AND match_id = %s AND holder = %s AND stream = ANY(%s)",
                    (game_type, game_id, holder, [m[1] for m in mine]),
                )
                if match[4] is None and all(m[3] or m in mine for m in members):
                    await conn.execute(
                        "UPDATE tabletop_pool_matches SET complete_at = %s WHERE game_id = %s",
                        (now, game_id),
                    )
                    done.ready.append(_proposal(match))
        return done

    async def pool_complete(self, game_type: str, group: Proposal) -> list[Mark] | None:
        """The group's table exists: its members' rows marked with it, the match row
        gone, if the match still stands with every member in it. None when it does not
        (a member left while the table was made: the caller cancels the table); no marks
        when another replica completed it already."""
        players = {s["player"]: i for i, s in enumerate(group.seats) if "player" in s}
        async with self._connection() as conn, conn.transaction():
            if not (GUARDED and SEAT_ONLY_STANDING):  # a control: seated, whatever happened
                marks = []
                for player, seat in players.items():
                    cur = await conn.execute(
                        "UPDATE tabletop_pool SET game_id = %s, seat = %s, rated = %s"
                        " WHERE player_id = %s AND game_type = %s RETURNING stream",
                        (group.game_id, seat, group.rated, player, game_type),
                    )
                    for (stream,) in await cur.fetchall():
                        marks.append(Mark(player, stream, group.game_id, seat, group.rated))
                return marks
            if not await _lock_match(conn, group.game_id):
                cur = await conn.execute(
                    "SELECT count(*) FROM tabletop_pool WHERE game_type = %s AND game_id = %s",
                    (game_type, group.game_id),
                )
                row = await cur.fetchone()
                return [] if row is not None and row[0] else None
            cur = await conn.execute(
                "SELECT player_id, stream, seat FROM tabletop_pool WHERE game_type = %s"
                " AND match_id = %s AND game_id IS NULL FOR UPDATE",
                (game_type, group.game_id),
            )
            members = await cur.fetchall()
            if {m[0] for m in members} != set(players) or any(
                players[m[0]] != m[2] for m in members
            ):
                await _dissolve(conn, game_type, group.game_id)
                return None
            await conn.execute(
                "UPDATE tabletop_pool SET game_id = %s, rated = %s"
                " WHERE game_type = %s AND match_id = %s AND game_id IS NULL",
                (group.game_id, group.rated, game_type, group.game_id),
            )
            await conn.execute(
                "DELETE FROM tabletop_pool_matches WHERE game_id = %s", (group.game_id,)
            )
            return [Mark(m[0], m[1], group.game_id, m[2], group.rated) for m in members]

    async def pool_dissolve(self, game_type: str, game_id: str) -> None:
        """A group whose table could not be made: its members wait on."""
        async with self._connection() as conn, conn.transaction():
            if await _lock_match(conn, game_id):
                await _dissolve(conn, game_type, game_id)
