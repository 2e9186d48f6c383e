"""``postgresql://user:password@host:port/database``: the store replicas share.

Several replicas of one game service use one database. ``append`` checks the version
and the request id and writes the move in one transaction: the ``UPDATE ... WHERE
version = v - 1`` takes the game row's lock, so of two replicas appending on the same
version one waits for the other, then finds the version moved and is refused
(VersionConflict). The unique index on (game, request id) refuses a request id used
twice, even when both appends race. Every append also sends ``NOTIFY tabletop_moves``
in its transaction, delivered only once it commits; :meth:`PostgresStore.listen` turns
those into ``on_append(game_id, version)`` so each replica's live games and watchers
follow the moves the others logged.

Connections come from a psycopg_pool pool opened on first use; the schema is created
then (under an advisory lock, so replicas starting together do not race). Every call is
scoped by game type, so services may share a database; giving each its own (or a schema,
with ``?options=-csearch_path%3Dname``) keeps their load apart.

URL options besides libpq's own: ``pool_min`` (default 1) and ``pool_max`` (default 10).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
import structlog
from psycopg import errors, sql
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool, PoolTimeout

from .base import (
    QUOTA_COUNTS,
    CorruptRow,
    DuplicateRequest,
    GameExists,
    GameRecord,
    MoveRecord,
    OutboxEvent,
    PlayerQuotas,
    Quarantined,
    QuotaExceeded,
    Quotas,
    StoredEvent,
    StoreError,
    VersionConflict,
    check_status,
    lobby_waiting,
    option_filter,
    over_quota,
    players_of,
)
from .pool import POSTGRES_SCHEMA as POOL_SCHEMA
from .pool import PostgresPool
from .ratings import POSTGRES_SCHEMA as RATINGS_SCHEMA
from .ratings import PostgresRatings, rate_postgres

CHANNEL = "tabletop_moves"
_SCHEMA_LOCK = 0x7AB1E70B  # pg_advisory_xact_lock key: one replica creates the schema
_RECONNECT_SECONDS = (0.1, 0.5, 1.0, 2.0, 5.0)

SCHEMA = """
CREATE TABLE IF NOT EXISTS tabletop_games (
    game_id      TEXT PRIMARY KEY,
    game_type    TEXT NOT NULL,
    players      INTEGER NOT NULL,
    options      JSONB NOT NULL,
    seed         TEXT NOT NULL,
    token_hashes JSONB NOT NULL,
    version      INTEGER NOT NULL DEFAULT 0,
    created_at   DOUBLE PRECISION NOT NULL,
    updated_at   DOUBLE PRECISION NOT NULL,
    finished_at  DOUBLE PRECISION
);
CREATE TABLE IF NOT EXISTS tabletop_moves (
    game_id    TEXT NOT NULL REFERENCES tabletop_games (game_id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    seat       INTEGER NOT NULL,
    move       TEXT NOT NULL,
    events     JSONB NOT NULL,
    request_id TEXT,
    applied_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (game_id, version)
);
CREATE UNIQUE INDEX IF NOT EXISTS tabletop_moves_request
    ON tabletop_moves (game_id, request_id) WHERE request_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS tabletop_games_finished
    ON tabletop_games (finished_at) WHERE finished_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS tabletop_games_updated ON tabletop_games (updated_at);
ALTER TABLE tabletop_games ADD COLUMN IF NOT EXISTS owner TEXT;
CREATE INDEX IF NOT EXISTS tabletop_games_owner ON tabletop_games (game_type, owner)
    WHERE finished_at IS NULL AND owner IS NOT NULL;
CREATE TABLE IF NOT EXISTS tabletop_quarantine (
    game_id TEXT PRIMARY KEY REFERENCES tabletop_games (game_id) ON DELETE CASCADE,
    reason  TEXT NOT NULL,
    at      DOUBLE PRECISION NOT NULL
);
ALTER TABLE tabletop_games ADD COLUMN IF NOT EXISTS table_config JSONB;
ALTER TABLE tabletop_games ADD COLUMN IF NOT EXISTS lobby JSONB;
ALTER TABLE tabletop_games ADD COLUMN IF NOT EXISTS waiting BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE tabletop_games ADD COLUMN IF NOT EXISTS due_at DOUBLE PRECISION;
-- list_games with any status but "waiting": a type's games newest first, from the cursor.
CREATE INDEX IF NOT EXISTS tabletop_games_lobby
    ON tabletop_games (game_type, created_at DESC, game_id DESC);
-- list_games(status="waiting"), count_waiting, and due's waiting-TTL branch.
CREATE INDEX IF NOT EXISTS tabletop_games_waiting
    ON tabletop_games (game_type, created_at DESC, game_id DESC)
    WHERE waiting AND finished_at IS NULL;
-- due's due_at branch: deadlines of unfinished games, earliest first.
CREATE INDEX IF NOT EXISTS tabletop_games_due ON tabletop_games (game_type, due_at)
    WHERE finished_at IS NULL AND due_at IS NOT NULL;
ALTER TABLE tabletop_games ADD COLUMN IF NOT EXISTS bot_turn BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE tabletop_games ADD COLUMN IF NOT EXISTS human_at DOUBLE PRECISION;
ALTER TABLE tabletop_games ADD COLUMN IF NOT EXISTS bot_seats INTEGER NOT NULL DEFAULT 0;
-- Rows written before human_at: their last entry is the last a person could have made.
UPDATE tabletop_games SET human_at = updated_at WHERE human_at IS NULL;
-- due's idle branch: games in progress, the longest without a person's entry first (it
-- replaces tabletop_games_idle, which left games with a clock out).
DROP INDEX IF EXISTS tabletop_games_idle;
CREATE INDEX IF NOT EXISTS tabletop_games_human ON tabletop_games (game_type, human_at)
    WHERE finished_at IS NULL AND NOT waiting;
-- bot_turns: games with a bot to move, the longest waiting first.
CREATE INDEX IF NOT EXISTS tabletop_games_bot_turn ON tabletop_games (game_type, updated_at)
    WHERE finished_at IS NULL AND bot_turn;
-- players (issue 26): who holds each seat, by player: ListGames "mine" and the
-- per-player quotas read it, never scanning every game.
CREATE TABLE IF NOT EXISTS tabletop_game_players (
    game_id   TEXT NOT NULL REFERENCES tabletop_games (game_id) ON DELETE CASCADE,
    seat      INTEGER NOT NULL,
    player_id TEXT NOT NULL,
    game_type TEXT NOT NULL,
    PRIMARY KEY (game_id, seat)
);
CREATE INDEX IF NOT EXISTS tabletop_game_players_player
    ON tabletop_game_players (player_id, game_type, game_id);
-- end of players
-- The outbox (services.kit.outbox): players' events, written in the transaction of the
-- move that makes them. An identity is never reused, so cursors stay valid.
CREATE TABLE IF NOT EXISTS tabletop_player_events (
    sequence      BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id      TEXT NOT NULL UNIQUE,
    game_type     TEXT NOT NULL,
    player_id     TEXT NOT NULL,
    game_id       TEXT NOT NULL,
    kind          TEXT NOT NULL,
    body          TEXT NOT NULL,
    created_at    DOUBLE PRECISION NOT NULL,
    webhook       BOOLEAN NOT NULL DEFAULT false,
    delivered_at  DOUBLE PRECISION,
    attempts      INTEGER NOT NULL DEFAULT 0,
    retry_at      DOUBLE PRECISION NOT NULL DEFAULT 0,
    claimed_by    TEXT,
    claimed_until DOUBLE PRECISION
);
CREATE INDEX IF NOT EXISTS tabletop_player_events_player
    ON tabletop_player_events (game_type, player_id, sequence);
CREATE INDEX IF NOT EXISTS tabletop_player_events_created
    ON tabletop_player_events (game_type, created_at);
CREATE INDEX IF NOT EXISTS tabletop_player_events_webhook
    ON tabletop_player_events (game_type, retry_at, sequence)
    WHERE webhook AND delivered_at IS NULL;
"""
SCHEMA += RATINGS_SCHEMA  # issue 28: tables of their own (store/ratings.py)
SCHEMA += POOL_SCHEMA  # issue 28: the replicas' matchmaking pool (store/pool.py)


# Outbox rows of a game type commit in their sequence's order: every write of events
# takes its type's lock (until its commit) before its rows draw their sequences, so a
# reader that has seen sequence n never later finds a smaller one committed (it would
# skip it for ever). Readers read one type at a time: other types need not wait.
_OUTBOX_LOCK = "SELECT pg_advisory_xact_lock(hashtextextended('tabletop_outbox ' || %s, 0))"
_EVENT_COLUMNS = "sequence, event_id, player_id, game_id, kind, body, created_at, webhook, attempts"


def _stored_event(row: tuple[Any, ...]) -> StoredEvent:
    sequence, event_id, player_id, game_id, kind, body, created_at, webhook, attempts = row
    event = OutboxEvent(event_id, player_id, game_id, kind, body, created_at, bool(webhook))
    return StoredEvent(sequence, event, attempts)


async def _write_outbox(
    conn: psycopg.AsyncConnection[Any], game_type: str, events: tuple[OutboxEvent, ...]
) -> None:
    """The events' rows, in the caller's transaction (an id written before is skipped)."""
    if not events:
        return
    await conn.execute(_OUTBOX_LOCK, (game_type,))
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO tabletop_player_events (event_id, game_type, player_id, game_id,"
            " kind, body, created_at, webhook) VALUES (%s, %s, %s, %s, %s, %s, %s, %s)"
            " ON CONFLICT (event_id) DO NOTHING",
            [
                (e.event_id, game_type, e.player_id, e.game_id, e.kind, e.body, e.created_at,
                 e.webhook)
                for e in events
            ],
        )  # fmt: skip


# A player's unfinished tables of a type, and of those the waiting ones.
_PLAYER_HELD = (
    "SELECT count(DISTINCT p.game_id), count(DISTINCT p.game_id) FILTER (WHERE g.waiting)"
    " FROM tabletop_game_players p JOIN tabletop_games g ON g.game_id = p.game_id"
    " WHERE p.player_id = %s AND p.game_type = %s AND g.finished_at IS NULL"
)

_GAME_COLUMNS = (
    "game_id, game_type, players, options, seed, token_hashes, version,"
    " created_at, updated_at, finished_at, owner, table_config, lobby, waiting, due_at,"
    " bot_turn, human_at, bot_seats"
)
# Which games each list_games status takes (the waiting one repeats the partial index's
# WHERE, so the planner can use it).
_STATUS_WHERE = {
    "waiting": " AND g.waiting AND g.finished_at IS NULL",
    "in_progress": " AND NOT g.waiting AND g.finished_at IS NULL",
    "finished": " AND g.finished_at IS NOT NULL",
}
# A game no quarantine row holds.
_SOUND = "NOT EXISTS (SELECT 1 FROM tabletop_quarantine q WHERE q.game_id = g.game_id)"

# What SCHEMA makes, read from it: a store that finds all of it runs no DDL. Even with IF
# NOT EXISTS, CREATE INDEX locks its table (SHARE) and ALTER TABLE locks it exclusively
# before looking, so a replica starting under load deadlocked with the others' appends
# (UPDATE games, then INSERT moves): the start or an append failed.
_RELATIONS = re.findall(r"(?:TABLE|INDEX) IF NOT EXISTS (\w+)", SCHEMA)
_COLUMNS = re.findall(r"ALTER TABLE (\w+) ADD COLUMN IF NOT EXISTS (\w+)", SCHEMA)

_log = structlog.get_logger("store")


def _game(row: tuple[Any, ...]) -> GameRecord:
    gid, gtype, players, options, seed, hashes, version, created, updated, finished = row[:10]
    owner, table, lobby, waiting, due_at, bot_turn, human_at, bot_seats, quarantined = row[10:]
    try:
        return GameRecord(
            game_id=gid,
            game_type=gtype,
            players=players,
            options=options,
            seed=int(seed),
            token_hashes=tuple(hashes),
            created_at=created,
            version=version,
            updated_at=updated,
            finished_at=finished,
            owner=owner,
            quarantined=quarantined,
            table=table,
            lobby=lobby,
            waiting=bool(waiting),
            due_at=due_at,
            bot_turn=bool(bot_turn),
            human_at=human_at,
            bot_seats=bot_seats,
        )
    except (TypeError, ValueError) as exc:
        raise CorruptRow(gid, None, type(exc).__name__) from None


def _jsonb_or_none(value: Any) -> Jsonb | None:
    return None if value is None else Jsonb(dict(value))


def _move(game_id: str, row: tuple[Any, ...]) -> MoveRecord:
    version, seat, text, events, rid, at = row
    if not isinstance(events, list):
        raise CorruptRow(game_id, version, "events are not a list")
    return MoveRecord(version, seat, text, events, rid, at)


async def _schema_complete(conn: psycopg.AsyncConnection) -> bool:
    """Every table, index and column SCHEMA creates is there (catalog reads: no locks)."""
    cur = await conn.execute(
        "SELECT (SELECT count(*) FROM unnest(%s::text[]) AS r(name)"
        "        WHERE to_regclass(r.name) IS NULL)"
        " + (SELECT count(*) FROM unnest(%s::text[], %s::text[]) AS c(tab, col)"
        "    WHERE NOT EXISTS (SELECT 1 FROM pg_attribute"
        "        WHERE attrelid = to_regclass(c.tab) AND attname = c.col AND NOT attisdropped))",
        (_RELATIONS, [t for t, _ in _COLUMNS], [c for _, c in _COLUMNS]),
    )
    row = await cur.fetchone()
    return row is not None and row[0] == 0


def split_url(url: str) -> tuple[str, int, int]:
    """The libpq URL without this store's own options, and the pool's sizes."""
    parts = urlsplit(url)
    if parts.scheme == "postgres":
        parts = parts._replace(scheme="postgresql")
    query = parse_qsl(parts.query, keep_blank_values=True)
    ours = {k: v for k, v in query if k in ("pool_min", "pool_max")}
    rest = [(k, v) for k, v in query if k not in ours]
    try:
        pool_min = int(ours.get("pool_min", 1))
        pool_max = int(ours.get("pool_max", 10))
    except ValueError as exc:
        raise StoreError(f"pool_min and pool_max must be numbers: {exc}") from exc
    if not 0 <= pool_min <= pool_max or pool_max < 1:
        raise StoreError("need 0 <= pool_min <= pool_max and pool_max >= 1")
    return urlunsplit(parts._replace(query=urlencode(rest))), pool_min, pool_max


class PostgresStore(PostgresRatings, PostgresPool):
    def __init__(self, url: str) -> None:
        self.url = url
        self._conninfo, pool_min, pool_max = split_url(url)
        self._pool = AsyncConnectionPool(
            self._conninfo,
            min_size=pool_min,
            max_size=pool_max,
            kwargs={"autocommit": True},
            check=AsyncConnectionPool.check_connection,
            open=False,
            name="tabletop-store",
            timeout=10.0,
        )
        self._ready = False
        self._opening = asyncio.Lock()
        self._closed = False
        self._listener: psycopg.AsyncConnection | None = None

    # --- connections -----------------------------------------------------------------

    async def _open(self) -> None:
        if self._ready:
            return
        async with self._opening:
            if self._ready:
                return
            if self._closed:
                raise StoreError("the store is closed")
            try:
                await self._pool.open(wait=False)
                async with self._pool.connection() as conn:
                    if not await _schema_complete(conn):
                        async with conn.transaction():
                            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
                            await conn.execute(SCHEMA)
            except (psycopg.Error, PoolTimeout) as exc:
                raise StoreError(f"postgresql: {exc}") from exc
            self._ready = True

    @contextlib.asynccontextmanager
    async def _connection(self) -> AsyncIterator[psycopg.AsyncConnection[Any]]:
        if self._closed:
            raise StoreError("the store is closed")
        await self._open()
        try:
            async with self._pool.connection() as conn:
                yield conn
        except (VersionConflict, DuplicateRequest, GameExists, QuotaExceeded, KeyError):
            raise
        except (psycopg.Error, PoolTimeout) as exc:
            raise StoreError(f"postgresql: {exc}") from exc

    # --- writes ----------------------------------------------------------------------

    async def create(
        self,
        game: GameRecord,
        owner_limit: int = 0,
        waiting_limit: int = 0,
        quotas: Quotas | None = None,
        player_quotas: PlayerQuotas | None = None,
    ) -> None:
        limits = (quotas or Quotas(owner_limit, waiting_limit)).applying_to(game)
        player_limits = (player_quotas or PlayerQuotas()).applying_to(game)
        async with self._connection() as conn, conn.transaction():
            if game.owner is not None and limits:
                # One owner's creates take turns (on every replica), so the counts hold.
                await conn.execute(
                    "SELECT pg_advisory_xact_lock(hashtext(%s))", (f"owner {game.owner}",)
                )
                counted = ", ".join(
                    f"count(*) FILTER (WHERE {QUOTA_COUNTS[name]})" for name in limits
                )
                cur = await conn.execute(
                    f"SELECT {counted} FROM tabletop_games"
                    " WHERE game_type = %s AND owner = %s AND finished_at IS NULL",
                    (game.game_type, game.owner),
                )
                row = await cur.fetchone()
                counts = row if row is not None else (0,) * len(limits)
                over_quota(game.owner, limits, dict(zip(limits, counts, strict=True)))
            for player in players_of(game) if player_limits else ():
                await self._player_turn(conn, player)
                cur = await conn.execute(_PLAYER_HELD, (player, game.game_type))
                held = await cur.fetchone() or (0, 0)
                counts = {"player_games": held[0], "player_waiting": held[1]}
                over_quota(player, player_limits, counts)
            try:
                await conn.execute(
                    f"INSERT INTO tabletop_games ({_GAME_COLUMNS}) VALUES (%s, %s, %s, %s, %s,"
                    " %s, 0, %s, %s, NULL, %s, %s, %s, %s, %s, %s, %s, %s)",
                    (
                        game.game_id,
                        game.game_type,
                        game.players,
                        Jsonb(dict(game.options)),
                        str(game.seed),
                        Jsonb(list(game.token_hashes)),
                        game.created_at,
                        game.created_at,
                        game.owner,
                        _jsonb_or_none(game.table),
                        _jsonb_or_none(game.lobby),
                        game.waiting,
                        game.due_at,
                        game.bot_turn,
                        game.created_at if game.human_at is None else game.human_at,
                        game.bot_seats,
                    ),
                )
            except errors.UniqueViolation as exc:
                raise GameExists(game.game_id) from exc
            await _write_outbox(conn, game.game_type, game.outbox)
            for seat, player in enumerate(game.seat_players):
                if player:
                    await conn.execute(
                        "INSERT INTO tabletop_game_players VALUES (%s, %s, %s, %s)",
                        (game.game_id, seat, player, game.game_type),
                    )

    @staticmethod
    async def _player_turn(conn: psycopg.AsyncConnection, player: str) -> None:
        """One player's quota checks take turns (on every replica), so the counts hold."""
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (f"player {player}",))

    async def append(self, game_id: str, move: MoveRecord) -> None:
        async with self._connection() as conn:
            try:
                async with conn.transaction():
                    await self._append(conn, game_id, move)
            except errors.UniqueViolation as exc:
                # A concurrent append with the same request id committed first.
                found = await self._request_version(conn, game_id, move.request_id)
                if found is None:
                    raise StoreError(f"postgresql: {exc}") from exc
                raise DuplicateRequest(found) from exc

    async def _request_version(
        self, conn: psycopg.AsyncConnection, game_id: str, request_id: str | None
    ) -> int | None:
        if request_id is None:
            return None
        cur = await conn.execute(
            "SELECT version FROM tabletop_moves WHERE game_id = %s AND request_id = %s",
            (game_id, request_id),
        )
        row = await cur.fetchone()
        return None if row is None else row[0]

    async def _append(self, conn: psycopg.AsyncConnection, game_id: str, move: MoveRecord) -> None:
        found = await self._request_version(conn, game_id, move.request_id)
        if found is not None:
            raise DuplicateRequest(found)
        if move.seat_player and move.player_games:
            # Before the game row's lock, as create takes it: no two orders of locks.
            await self._player_turn(conn, move.seat_player)
        has_lobby = move.lobby is not None
        cur = await conn.execute(
            "UPDATE tabletop_games SET version = %s, updated_at = %s,"
            " finished_at = CASE WHEN %s THEN %s ELSE finished_at END,"
            " lobby = CASE WHEN %s THEN %s::jsonb ELSE lobby END,"
            " waiting = CASE WHEN %s THEN false WHEN %s THEN %s ELSE waiting END,"
            " due_at = %s::double precision, bot_turn = %s, human_at = %s::double precision"
            " WHERE game_id = %s AND version = %s",
            (
                move.version,
                move.applied_at,
                move.finished,
                move.applied_at,
                has_lobby,
                _jsonb_or_none(move.lobby),
                move.finished,
                has_lobby,
                move.lobby is not None and lobby_waiting(move.lobby),
                move.due_at,
                move.bot_turn,
                move.applied_at if move.human_at is None else move.human_at,
                game_id,
                move.version - 1,
            ),
        )
        if cur.rowcount != 1:
            # Refused: say why. A request id another append committed meanwhile wins over
            # the version, as it would have had the two run one after the other.
            found = await self._request_version(conn, game_id, move.request_id)
            if found is not None:
                raise DuplicateRequest(found)
            cur = await conn.execute(
                "SELECT version FROM tabletop_games WHERE game_id = %s", (game_id,)
            )
            row = await cur.fetchone()
            if row is None:
                raise KeyError(game_id)
            raise VersionConflict(row[0])
        await conn.execute(
            "INSERT INTO tabletop_moves"
            " (game_id, version, seat, move, events, request_id, applied_at)"
            " VALUES (%s, %s, %s, %s, %s, %s, %s)",
            (
                game_id,
                move.version,
                move.seat,
                move.move,
                Jsonb(move.events),
                move.request_id,
                move.applied_at,
            ),
        )
        if move.outbox:
            cur = await conn.execute(
                "SELECT game_type FROM tabletop_games WHERE game_id = %s", (game_id,)
            )
            row = await cur.fetchone()
            await _write_outbox(conn, row[0] if row else "", move.outbox)
        if move.rating is not None:  # after the game row's lock and checks: rated once
            await rate_postgres(conn, move.rating, move.applied_at)
        if move.seat_player is not None:
            await self._seat_player(conn, game_id, move)
        await conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{move.version} {game_id}"))

    async def _seat_player(
        self, conn: psycopg.AsyncConnection, game_id: str, move: MoveRecord
    ) -> None:
        """The seat's player in the players' index (the quota first)."""
        cur = await conn.execute(
            "SELECT game_type FROM tabletop_games WHERE game_id = %s", (game_id,)
        )
        row = await cur.fetchone()
        game_type = row[0] if row else ""
        if move.seat_player and move.player_games:
            cur = await conn.execute(_PLAYER_HELD, (move.seat_player, game_type))
            held = await cur.fetchone() or (0, 0)
            if held[0] >= move.player_games:
                raise QuotaExceeded(move.seat_player, move.player_games, "player_games")
        await conn.execute(
            "DELETE FROM tabletop_game_players WHERE game_id = %s AND seat = %s",
            (game_id, move.seat),
        )
        if move.seat_player:
            await conn.execute(
                "INSERT INTO tabletop_game_players VALUES (%s, %s, %s, %s)",
                (game_id, move.seat, move.seat_player, game_type),
            )

    async def delete_finished_before(self, timestamp: float, game_type: str) -> list[str]:
        async with self._connection() as conn:
            cur = await conn.execute(
                "DELETE FROM tabletop_games WHERE game_type = %s AND finished_at IS NOT NULL"
                " AND finished_at < %s RETURNING game_id",
                (game_type, timestamp),
            )
            return [row[0] for row in await cur.fetchall()]

    # --- reads -----------------------------------------------------------------------

    async def count_active(self, game_type: str) -> int:
        async with self._connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) FROM tabletop_games WHERE finished_at IS NULL AND game_type = %s",
                (game_type,),
            )
            row = await cur.fetchone()
            return int(row[0]) if row else 0

    async def list_games(
        self,
        game_type: str,
        *,
        status: str | None = None,
        players: int | None = None,
        options: Mapping[str, Any] | None = None,
        after: tuple[float, str] | None = None,
        limit: int = 50,
        player: str | None = None,
    ) -> list[GameRecord]:
        check_status(status)
        wanted = option_filter(options)
        query = f"SELECT {_GAME_COLUMNS}, NULL FROM tabletop_games g WHERE game_type = %s"
        args: list[Any] = [game_type]
        if player is not None:
            # The players' index finds the player's games; no walk of the type's games.
            query += (
                " AND g.game_id IN (SELECT p.game_id FROM tabletop_game_players p"
                " WHERE p.player_id = %s AND p.game_type = %s)"
            )
            args += [player, game_type]
        if status is not None:
            query += _STATUS_WHERE[status]
        if players is not None:
            query += " AND g.players = %s"
            args.append(players)
        if wanted:
            # Containment of scalars is equality per key, with JSON's types (true is not 1).
            query += " AND g.options @> %s"
            args.append(Jsonb(wanted))
        if after is not None:
            query += " AND (g.created_at, g.game_id) < (%s, %s)"
            args += [after[0], after[1]]
        query += f" AND {_SOUND} ORDER BY g.created_at DESC, g.game_id DESC LIMIT %s"
        args.append(max(limit, 0))
        async with self._connection() as conn:
            cur = await conn.execute(query, args)
            return [_game(row) for row in await cur.fetchall()]

    async def count_waiting(self, game_type: str) -> int:
        async with self._connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) FROM tabletop_games g WHERE game_type = %s"
                f" AND waiting AND finished_at IS NULL AND {_SOUND}",
                (game_type,),
            )
            row = await cur.fetchone()
            return int(row[0]) if row else 0

    async def due(
        self,
        game_type: str,
        now: float,
        *,
        waiting_ttl: float,
        idle_seconds: float,
        limit: int = 100,
    ) -> list[str]:
        # One branch per condition, each on its own partial index and cut at the limit
        # before the merge (quarantined games left out first, so they cannot fill a
        # branch); a game two branches find keeps its earliest deadline.
        query = f"""
            SELECT game_id FROM (
                (SELECT game_id, created_at + %(ttl)s AS deadline FROM tabletop_games g
                 WHERE game_type = %(type)s AND waiting AND finished_at IS NULL
                   AND %(ttl)s > 0 AND created_at <= %(now)s - %(ttl)s AND {_SOUND}
                 ORDER BY created_at LIMIT %(limit)s)
                UNION ALL
                (SELECT game_id, human_at + %(idle)s FROM tabletop_games g
                 WHERE game_type = %(type)s AND finished_at IS NULL AND NOT waiting
                   AND %(idle)s > 0 AND human_at <= %(now)s - %(idle)s AND {_SOUND}
                 ORDER BY human_at LIMIT %(limit)s)
                UNION ALL
                (SELECT game_id, due_at FROM tabletop_games g
                 WHERE game_type = %(type)s AND finished_at IS NULL AND due_at IS NOT NULL
                   AND due_at <= %(now)s AND {_SOUND}
                 ORDER BY due_at LIMIT %(limit)s)
            ) AS found
            GROUP BY game_id ORDER BY min(deadline), game_id LIMIT %(limit)s
        """
        args = {
            "type": game_type,
            "now": float(now),
            "ttl": float(waiting_ttl),
            "idle": float(idle_seconds),
            "limit": max(limit, 0),
        }
        async with self._connection() as conn:
            cur = await conn.execute(query, args)
            return [row[0] for row in await cur.fetchall()]

    async def bot_turns(self, game_type: str, before: float, limit: int = 100) -> list[str]:
        async with self._connection() as conn:
            cur = await conn.execute(
                "SELECT game_id FROM tabletop_games g WHERE game_type = %s"
                f" AND finished_at IS NULL AND bot_turn AND updated_at <= %s AND {_SOUND}"
                " ORDER BY updated_at LIMIT %s",
                (game_type, float(before), max(limit, 0)),
            )
            return [row[0] for row in await cur.fetchall()]

    async def load(self, game_id: str) -> GameRecord | None:
        async with self._connection() as conn:
            cur = await conn.execute(
                f"SELECT {_GAME_COLUMNS}, (SELECT reason FROM tabletop_quarantine q"
                " WHERE q.game_id = g.game_id) FROM tabletop_games g WHERE game_id = %s",
                (game_id,),
            )
            row = await cur.fetchone()
            return None if row is None else _game(row)

    async def moves(
        self, game_id: str, after: int = 0, limit: int | None = None
    ) -> list[MoveRecord]:
        async with self._connection() as conn:
            cur = await conn.execute(
                "SELECT version, seat, move, events, request_id, applied_at FROM tabletop_moves"
                " WHERE game_id = %s AND version > %s ORDER BY version LIMIT %s",
                (game_id, after, limit),
            )
            return [_move(game_id, row) for row in await cur.fetchall()]

    async def quarantine(self, game_id: str, reason: str, at: float) -> None:
        async with self._connection() as conn:
            await conn.execute(
                "INSERT INTO tabletop_quarantine (game_id, reason, at)"
                " SELECT game_id, %s, %s FROM tabletop_games WHERE game_id = %s"
                " ON CONFLICT (game_id) DO NOTHING",
                (reason, at, game_id),
            )

    async def quarantined(self) -> list[Quarantined]:
        async with self._connection() as conn:
            cur = await conn.execute(
                "SELECT q.game_id, g.game_type, q.reason, q.at FROM tabletop_quarantine q"
                " JOIN tabletop_games g USING (game_id) ORDER BY q.at, q.game_id"
            )
            return [Quarantined(*row) for row in await cur.fetchall()]

    async def release(self, game_id: str) -> bool:
        async with self._connection() as conn:
            cur = await conn.execute(
                "DELETE FROM tabletop_quarantine WHERE game_id = %s", (game_id,)
            )
            return cur.rowcount == 1

    async def raw(self, game_id: str) -> dict[str, Any] | None:
        async with self._connection() as conn:

            async def rows(query: str) -> list[dict[str, Any]]:
                cur = await conn.execute(query, (game_id,))
                names = [d.name for d in cur.description or ()]
                return [dict(zip(names, r, strict=True)) for r in await cur.fetchall()]

            game = await rows("SELECT * FROM tabletop_games WHERE game_id = %s")
            if not game:
                return None
            quarantine = await rows("SELECT * FROM tabletop_quarantine WHERE game_id = %s")
            return {
                "game": game[0],
                "quarantine": quarantine[0] if quarantine else None,
                "moves": await rows(
                    "SELECT * FROM tabletop_moves WHERE game_id = %s ORDER BY version"
                ),
            }

    # --- the outbox ------------------------------------------------------------------

    async def player_events(
        self, game_type: str, player_id: str, after: int, limit: int = 200
    ) -> list[StoredEvent]:
        async with self._connection() as conn:
            cur = await conn.execute(
                f"SELECT {_EVENT_COLUMNS} FROM tabletop_player_events WHERE game_type = %s"
                " AND player_id = %s AND sequence > %s ORDER BY sequence LIMIT %s",
                (game_type, player_id, after, max(limit, 0)),
            )
            return [_stored_event(row) for row in await cur.fetchall()]

    async def last_event(self, game_type: str) -> int:
        async with self._connection() as conn:
            cur = await conn.execute(
                "SELECT max(sequence) FROM tabletop_player_events WHERE game_type = %s",
                (game_type,),
            )
            row = await cur.fetchone()
            return int(row[0] or 0) if row else 0

    async def claim_webhooks(
        self, game_type: str, claimant: str, now: float, lease: float, limit: int = 20
    ) -> list[StoredEvent]:
        # SKIP LOCKED: replicas claiming at once take different rows; a claim whose lease
        # ran out (its replica died) is taken again.
        async with self._connection() as conn, conn.transaction():
            cur = await conn.execute(
                "UPDATE tabletop_player_events SET claimed_by = %s, claimed_until = %s"
                " WHERE sequence IN (SELECT sequence FROM tabletop_player_events"
                "   WHERE game_type = %s AND webhook AND delivered_at IS NULL AND retry_at <= %s"
                "   AND (claimed_until IS NULL OR claimed_until < %s)"
                "   ORDER BY retry_at, sequence LIMIT %s FOR UPDATE SKIP LOCKED)"
                f" RETURNING {_EVENT_COLUMNS}",
                (claimant, now + lease, game_type, now, now, max(limit, 0)),
            )
            rows = sorted(await cur.fetchall(), key=lambda r: r[0])
            return [_stored_event(row) for row in rows]

    async def webhook_result(
        self, sequence: int, claimant: str, delivered: bool, now: float, retry_at: float
    ) -> None:
        async with self._connection() as conn:
            await conn.execute(
                "UPDATE tabletop_player_events SET attempts = attempts + 1, claimed_by = NULL,"
                " claimed_until = NULL,"
                " delivered_at = CASE WHEN %s THEN %s::double precision END, retry_at = %s"
                " WHERE sequence = %s AND claimed_by = %s AND delivered_at IS NULL",
                (delivered, now, retry_at, sequence, claimant),
            )

    async def webhooks_pending(self, game_type: str) -> int:
        async with self._connection() as conn:
            cur = await conn.execute(
                "SELECT count(*) FROM tabletop_player_events WHERE game_type = %s"
                " AND webhook AND delivered_at IS NULL",
                (game_type,),
            )
            row = await cur.fetchone()
            return int(row[0]) if row else 0

    async def delete_events_before(self, game_type: str, timestamp: float) -> int:
        async with self._connection() as conn:
            cur = await conn.execute(
                "DELETE FROM tabletop_player_events WHERE game_type = %s AND created_at < %s",
                (game_type, timestamp),
            )
            return cur.rowcount

    # --- following the other replicas ------------------------------------------------

    async def listen(self, on_append: Callable[[str, int], Awaitable[None]]) -> None:
        """Call ``on_append(game_id, version)`` for every move any replica appends.

        Runs until the store is closed or the task is cancelled. After a lost connection
        it reconnects and reports every game changed while it was away, so no move is
        missed for long.
        """
        heard_at: float | None = None  # when we last knew we were listening
        attempt = 0
        while not self._closed:
            try:
                await self._open()
                conn = await psycopg.AsyncConnection.connect(self._conninfo, autocommit=True)
            except (psycopg.Error, StoreError) as exc:
                delay = _RECONNECT_SECONDS[min(attempt, len(_RECONNECT_SECONDS) - 1)]
                attempt += 1
                _log.warning("store_listen_retry", error=str(exc), retry_in=delay)
                await asyncio.sleep(delay)
                continue
            self._listener = conn
            try:
                async with conn:
                    await conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(CHANNEL)))
                    if heard_at is not None:
                        await self._report_changed_since(conn, heard_at - 5.0, on_append)
                    attempt = 0
                    heard_at = time.time()
                    async for note in conn.notifies():
                        heard_at = time.time()
                        version, _, game_id = note.payload.partition(" ")
                        try:
                            await on_append(game_id, int(version))
                        except Exception as exc:  # one game's trouble must not stop the rest
                            _log.warning("store_listen_callback", game_id=game_id, error=str(exc))
            except psycopg.Error as exc:
                if self._closed:
                    break
                _log.warning("store_listen_lost", error=str(exc))
                await asyncio.sleep(_RECONNECT_SECONDS[0])
            finally:
                self._listener = None

    async def _report_changed_since(
        self,
        conn: psycopg.AsyncConnection,
        since: float,
        on_append: Callable[[str, int], Awaitable[None]],
    ) -> None:
        cur = await conn.execute(
            "SELECT game_id, version FROM tabletop_games WHERE updated_at >= %s", (since,)
        )
        for game_id, version in await cur.fetchall():
            with contextlib.suppress(Exception):
                await on_append(game_id, version)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        listener = self._listener
        if listener is not None:
            with contextlib.suppress(Exception):
                await listener.cancel_safe()
        await self._pool.close()
