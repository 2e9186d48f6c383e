"""The matchmaking pool shared by replicas on PostgreSQL (docs/ratings.md, "The replica
pool"): one ``tabletop_pool`` row per waiting player and game type.

The replica holding a player's FindMatch stream writes its row (a second FindMatch
anywhere overwrites it: one entry per player) and refreshes its heartbeat. Any replica
matches: it locks the unmatched rows with fresh heartbeats ``FOR UPDATE SKIP LOCKED``
(rows another replica is matching are skipped, so no player is in two matches), makes
the tables and marks the rows with their game and seat in the same transaction. The
holder of each marked row polls for it and sends the MatchFound; the row leaves the
table when that stream ends. Rows whose heartbeat went stale (their replica died or
stalled) are deleted before each match, so nobody is matched with a dead stream.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
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
"""

# How the matcher takes its rows: a test's control switches it off (tests/matchmaking).
CLAIM = " FOR UPDATE SKIP LOCKED"
# Only an unmatched row is marked: a row another replica marked meanwhile stays its.
MARK_ONLY_UNMATCHED = " AND game_id IS NULL"

MATCHED_KEPT = 3600.0  # seconds a matched row outlives its stale heartbeat

_COLUMNS = (
    "player_id, player_name, pool_key, mu, sigma, bots, joined_at, holder, stream,"
    " heartbeat_at, game_id, seat, rated"
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


@dataclass(frozen=True)
class Mark:
    """A matched row: its player (and the stream read), the table and the seat."""

    player: str
    stream: str
    game_id: str
    seat: int
    rated: bool


def _row(row: tuple[Any, ...]) -> PoolRow:
    return PoolRow(*row)


class PostgresPool:
    """The pool's reads and writes, for the PostgreSQL store."""

    _connection: Callable[..., Any]

    async def pool_join(self, game_type: str, row: PoolRow) -> None:
        """The player's entry, replacing any other of this game type. A row already
        matched keeps its table (the new stream is sent it); one waiting in the same
        pool keeps its join time, as in one process."""
        async with self._connection() as conn, conn.transaction():
            cur = await conn.execute(
                "SELECT pool_key, joined_at, game_id FROM tabletop_pool"
                " WHERE player_id = %s AND game_type = %s FOR UPDATE",
                (row.player, game_type),
            )
            old = await cur.fetchone()
            if old is not None and old[2] is not None:
                await conn.execute(
                    "UPDATE tabletop_pool SET holder = %s, stream = %s, heartbeat_at = %s"
                    " WHERE player_id = %s AND game_type = %s",
                    (row.holder, row.stream, row.heartbeat_at, row.player, game_type),
                )
                return
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
                " game_id = NULL, seat = NULL, rated = NULL",
                (
                    row.player, game_type, row.name, row.pool_key, row.mu, row.sigma,
                    None if row.bots is None else json.dumps(row.bots), joined, row.holder,
                    row.stream, row.heartbeat_at,
                ),
            )  # fmt: skip

    async def pool_leave(self, game_type: str, player: str, stream: str) -> None:
        """The stream ended: its row goes (a newer stream's row stays)."""
        async with self._connection() as conn:
            await conn.execute(
                "DELETE FROM tabletop_pool WHERE player_id = %s AND game_type = %s AND stream = %s",
                (player, game_type, stream),
            )

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
        fresh_after: float,
        make: Callable[[list[PoolRow]], Awaitable[list[Mark]]],
    ) -> list[Mark]:
        """One matching round: stale rows dropped; the unmatched fresh rows no other
        replica is matching locked and given to ``make``, which makes tables of them;
        its marks written before the locks go. The marks written are returned."""
        async with self._connection() as conn, conn.transaction():
            # A matched row goes with its stream (pool_leave); one whose holder died
            # before sending the match goes much later: a slow holder still sends it.
            await conn.execute(
                "DELETE FROM tabletop_pool WHERE (player_id, game_type) IN ("
                " SELECT player_id, game_type FROM tabletop_pool WHERE game_type = %s"
                " AND heartbeat_at < (CASE WHEN game_id IS NULL THEN %s ELSE %s END)"
                " FOR UPDATE SKIP LOCKED)",
                (game_type, fresh_after, fresh_after - MATCHED_KEPT),
            )
            cur = await conn.execute(
                f"SELECT {_COLUMNS} FROM tabletop_pool WHERE game_type = %s"
                " AND game_id IS NULL AND heartbeat_at >= %s ORDER BY joined_at, player_id" + CLAIM,
                (game_type, fresh_after),
            )
            rows = [_row(r) for r in await cur.fetchall()]
            if not rows:
                return []
            marks = await make(rows)
            written: list[Mark] = []
            for mark in marks:
                cur = await conn.execute(
                    "UPDATE tabletop_pool SET game_id = %s, seat = %s, rated = %s"
                    " WHERE player_id = %s AND game_type = %s AND stream = %s"
                    + MARK_ONLY_UNMATCHED,
                    (mark.game_id, mark.seat, mark.rated, mark.player, game_type, mark.stream),
                )
                if cur.rowcount:
                    written.append(mark)
            return written
