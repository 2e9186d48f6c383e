"""``sqlite:///path/to/file.db``: the embedded default, in WAL mode.

One writer thread owns the write connection and commits in groups: every append or
create waiting when a transaction starts goes into it, each inside its own savepoint
(so one refused append does not undo the others), and all are acknowledged only after
COMMIT returns. With ``synchronous=FULL`` (the default) a commit is on disk before any
move in it is acknowledged; grouping spreads that fsync over every concurrent move.
Reads use their own connections on a small thread pool and never wait for the writer.

On open the file is checked with ``PRAGMA quick_check`` (every page and index entry is
read once, about a second per few hundred MB): a file that fails it, or that is not a
database at all, raises StoreCorrupt naming the file and the first problem, and is not
served. A move row whose columns no longer decode raises CorruptRow.

URL options: ``?synchronous=normal`` trades the last commits on power loss (not on a
process crash) for speed; ``?check=none`` skips the check on open (a very large file
that was checked otherwise).
"""

from __future__ import annotations

import asyncio
import json
import queue
import sqlite3
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit

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
    StoreCorrupt,
    StoredEvent,
    StoreError,
    VersionConflict,
    check_status,
    lobby_waiting,
    option_filter,
    over_quota,
    players_of,
)
from .ratings import SQLITE_SCHEMA as RATINGS_SCHEMA
from .ratings import SqliteRatings, rate_sqlite

SCHEMA = """
CREATE TABLE IF NOT EXISTS games (
    game_id      TEXT PRIMARY KEY,
    game_type    TEXT NOT NULL,
    players      INTEGER NOT NULL,
    options      TEXT NOT NULL,
    seed         TEXT NOT NULL,
    token_hashes TEXT NOT NULL,
    version      INTEGER NOT NULL DEFAULT 0,
    created_at   REAL NOT NULL,
    updated_at   REAL NOT NULL,
    finished_at  REAL
);
CREATE TABLE IF NOT EXISTS moves (
    game_id    TEXT NOT NULL REFERENCES games(game_id) ON DELETE CASCADE,
    version    INTEGER NOT NULL,
    seat       INTEGER NOT NULL,
    move       TEXT NOT NULL,
    events     TEXT NOT NULL,
    request_id TEXT,
    applied_at REAL NOT NULL,
    PRIMARY KEY (game_id, version)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS quarantine (
    game_id TEXT PRIMARY KEY REFERENCES games(game_id) ON DELETE CASCADE,
    reason  TEXT NOT NULL,
    at      REAL NOT NULL
);
CREATE UNIQUE INDEX IF NOT EXISTS moves_request
    ON moves (game_id, request_id) WHERE request_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS games_finished ON games (finished_at) WHERE finished_at IS NOT NULL;
"""

# Columns added after the first release: files written before get them on open (old
# rows read back with the column's default: no table, no lobby, not waiting, not due).
MIGRATIONS = (
    ("games", "owner", "ALTER TABLE games ADD COLUMN owner TEXT"),
    ("games", "table_config", "ALTER TABLE games ADD COLUMN table_config TEXT"),
    ("games", "lobby", "ALTER TABLE games ADD COLUMN lobby TEXT"),
    ("games", "waiting", "ALTER TABLE games ADD COLUMN waiting INTEGER NOT NULL DEFAULT 0"),
    ("games", "due_at", "ALTER TABLE games ADD COLUMN due_at REAL"),
    ("games", "bot_turn", "ALTER TABLE games ADD COLUMN bot_turn INTEGER NOT NULL DEFAULT 0"),
    ("games", "human_at", "ALTER TABLE games ADD COLUMN human_at REAL"),
    ("games", "bot_seats", "ALTER TABLE games ADD COLUMN bot_seats INTEGER NOT NULL DEFAULT 0"),
)
# What a migrated column holds for the rows written before it, set once when it is added:
# a game's last entry is the last a person could have made.
BACKFILLS = {
    ("games", "human_at"): "UPDATE games SET human_at = updated_at WHERE human_at IS NULL",
}
# Indexes on migrated columns, made once the columns exist. A query uses a partial index
# only when its WHERE repeats the index's condition, so the queries below spell it out.
INDEXES = (
    # create's quotas: an owner's unfinished games (and waiting tables) of a type.
    "CREATE INDEX IF NOT EXISTS games_owner ON games (game_type, owner)"
    " WHERE finished_at IS NULL AND owner IS NOT NULL",
    # list_games with any status but "waiting": walks a type's games newest first and
    # stops after a page; the cursor (created_at, game_id) < (?, ?) starts the walk.
    "CREATE INDEX IF NOT EXISTS games_lobby ON games (game_type, created_at DESC, game_id DESC)",
    # list_games(status="waiting"), count_waiting, and due's waiting-TTL branch.
    "CREATE INDEX IF NOT EXISTS games_waiting ON games (game_type, created_at DESC, game_id DESC)"
    " WHERE waiting = 1 AND finished_at IS NULL",
    # due's due_at branch: deadlines of unfinished games, earliest first.
    "CREATE INDEX IF NOT EXISTS games_due ON games (game_type, due_at)"
    " WHERE finished_at IS NULL AND due_at IS NOT NULL",
    # due's idle branch: games in progress, the longest without a person's entry first
    # (it replaces games_idle, which left games with a clock out).
    "DROP INDEX IF EXISTS games_idle",
    "CREATE INDEX IF NOT EXISTS games_human ON games (game_type, human_at)"
    " WHERE finished_at IS NULL AND waiting = 0",
    # bot_turns: games with a bot to move, the longest waiting first.
    "CREATE INDEX IF NOT EXISTS games_bot_turn ON games (game_type, updated_at)"
    " WHERE finished_at IS NULL AND bot_turn = 1",
)
# The outbox (services.kit.outbox): players' events, written in the transaction of the
# move that makes them; a file written before it gets the table on open. AUTOINCREMENT:
# a sequence is never reused once the retention deletes rows (cursors hold sequences).
OUTBOX_SCHEMA = """
CREATE TABLE IF NOT EXISTS player_events (
    sequence      INTEGER PRIMARY KEY AUTOINCREMENT,
    event_id      TEXT NOT NULL UNIQUE,
    game_type     TEXT NOT NULL,
    player_id     TEXT NOT NULL,
    game_id       TEXT NOT NULL,
    kind          TEXT NOT NULL,
    body          TEXT NOT NULL,
    created_at    REAL NOT NULL,
    webhook       INTEGER NOT NULL DEFAULT 0,
    delivered_at  REAL,
    attempts      INTEGER NOT NULL DEFAULT 0,
    retry_at      REAL NOT NULL DEFAULT 0,
    claimed_by    TEXT,
    claimed_until REAL
);
CREATE INDEX IF NOT EXISTS player_events_player ON player_events (game_type, player_id, sequence);
CREATE INDEX IF NOT EXISTS player_events_created ON player_events (game_type, created_at);
CREATE INDEX IF NOT EXISTS player_events_webhook ON player_events (game_type, retry_at, sequence)
    WHERE webhook = 1 AND delivered_at IS NULL;
"""
_EVENT_COLUMNS = "sequence, event_id, player_id, game_id, kind, body, created_at, webhook, attempts"


def _stored_event(row: tuple[Any, ...]) -> StoredEvent:
    sequence, event_id, player_id, game_id, kind, body, created_at, webhook, attempts = row
    event = OutboxEvent(event_id, player_id, game_id, kind, body, created_at, bool(webhook))
    return StoredEvent(sequence, event, attempts)


def _write_outbox(
    conn: sqlite3.Connection, game_type: str, events: tuple[OutboxEvent, ...]
) -> None:
    """The events' rows, in the caller's transaction (an id written before is skipped)."""
    conn.executemany(
        "INSERT INTO player_events (event_id, game_type, player_id, game_id, kind, body,"
        " created_at, webhook) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (event_id) DO NOTHING",
        [
            (e.event_id, game_type, e.player_id, e.game_id, e.kind, e.body, e.created_at,
             int(e.webhook))
            for e in events
        ],
    )  # fmt: skip


# --- players (issue 26): who holds each seat, an index the game's log also says --------
# A table of its own (new files and old ones alike get it on open): ListGames "mine"
# and the per-player quotas read it by player, never scanning every game.
PLAYERS_SCHEMA = """
CREATE TABLE IF NOT EXISTS game_players (
    game_id   TEXT NOT NULL REFERENCES games(game_id) ON DELETE CASCADE,
    seat      INTEGER NOT NULL,
    player_id TEXT NOT NULL,
    game_type TEXT NOT NULL,
    PRIMARY KEY (game_id, seat)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS game_players_player ON game_players (player_id, game_type, game_id);
"""
# A player's unfinished tables of a type, and of those the waiting ones.
_PLAYER_HELD = (
    "SELECT count(DISTINCT p.game_id),"
    " count(DISTINCT CASE WHEN g.waiting = 1 THEN p.game_id END)"
    " FROM game_players p JOIN games g ON g.game_id = p.game_id"
    " WHERE p.player_id = ? AND p.game_type = ? AND g.finished_at IS NULL"
)
# --- end of players --------------------------------------------------------------------

_GAME_COLUMNS = (
    "g.game_id, g.game_type, g.players, g.options, g.seed, g.token_hashes, g.version,"
    " g.created_at, g.updated_at, g.finished_at, g.owner, q.reason,"
    " g.table_config, g.lobby, g.waiting, g.due_at, g.bot_turn, g.human_at, g.bot_seats"
)
# Which games each list_games status takes (the waiting one repeats games_waiting's WHERE).
_STATUS_WHERE = {
    "waiting": " AND g.waiting = 1 AND g.finished_at IS NULL",
    "in_progress": " AND g.waiting = 0 AND g.finished_at IS NULL",
    "finished": " AND g.finished_at IS NOT NULL",
}

_BATCH = 512
_STOP = object()

Op = Callable[[sqlite3.Connection], Any]
T = TypeVar("T")


def _json_or_none(text: str | None) -> Any:
    return None if text is None else json.loads(text)


def _dumps_or_none(value: Any) -> str | None:
    return None if value is None else json.dumps(dict(value), sort_keys=True)


def _game(row: tuple[Any, ...]) -> GameRecord:
    gid, gtype, players, options, seed, hashes, version, created, updated, finished = row[:10]
    owner, quarantined, table, lobby, waiting, due_at, bot_turn, human_at, bot_seats = row[10:]
    try:
        return GameRecord(
            game_id=gid,
            game_type=gtype,
            players=players,
            options=json.loads(options),
            seed=int(seed),
            token_hashes=tuple(json.loads(hashes)),
            created_at=created,
            version=version,
            updated_at=updated,
            finished_at=finished,
            owner=owner,
            quarantined=quarantined,
            table=_json_or_none(table),
            lobby=_json_or_none(lobby),
            waiting=bool(waiting),
            due_at=due_at,
            bot_turn=bool(bot_turn),
            human_at=human_at,
            bot_seats=bot_seats,
        )
    except (TypeError, ValueError) as exc:
        raise CorruptRow(gid, None, type(exc).__name__) from None


def _option_where(options: dict[str, Any]) -> tuple[str, list[Any]]:
    """SQL and parameters matching games whose options hold each of ``options`` (JSON
    scalars) with the same JSON type: true is not 1, "1" is not 1."""
    sql, params = "", []
    for name, value in options.items():
        path = '$."' + name + '"'
        if value is None:
            sql += " AND json_type(g.options, ?) = 'null'"
            params.append(path)
        elif isinstance(value, bool):
            sql += " AND json_type(g.options, ?) = ?"
            params += [path, "true" if value else "false"]
        elif isinstance(value, str):
            sql += " AND json_type(g.options, ?) = 'text' AND json_extract(g.options, ?) = ?"
            params += [path, path, value]
        else:
            sql += (
                " AND json_type(g.options, ?) IN ('integer', 'real')"
                " AND json_extract(g.options, ?) = ?"
            )
            params += [path, path, value]
    return sql, params


def _move(game_id: str, row: tuple[Any, ...]) -> MoveRecord:
    version, seat, move, events, rid, at = row
    try:
        decoded = json.loads(events)
    except (TypeError, ValueError) as exc:
        raise CorruptRow(game_id, version, f"events: {type(exc).__name__}") from None
    if not isinstance(move, str) or not isinstance(seat, int) or not isinstance(decoded, list):
        raise CorruptRow(game_id, version, "a column has the wrong type")
    return MoveRecord(version, seat, move, decoded, rid, at)


def _plain(value: Any) -> Any:
    """A stored value as JSON can carry it (bytes where text should be: as hex)."""
    return value.hex() if isinstance(value, bytes) else value


def check(conn: sqlite3.Connection, path: Path) -> None:
    """Raise StoreCorrupt unless ``PRAGMA quick_check`` finds the file sound."""
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        raise StoreCorrupt(
            f"sqlite file {path} is corrupt ({exc}); restore it from a backup"
        ) from None
    if rows != [("ok",)]:
        # One line: SQLite writes some problems over several ("*** in database main ***").
        first = " ".join(str(rows[0][0]).split()) if rows else "no answer"
        raise StoreCorrupt(
            f"sqlite file {path} fails PRAGMA quick_check ({len(rows)} problems; first: "
            f"{first}); restore it from a backup"
        )


class SqliteStore(SqliteRatings):
    def __init__(self, url: str) -> None:
        self.url = url
        parts = urlsplit(url)
        if parts.path in ("", "/"):
            raise StoreError(f"sqlite URL needs a file path: {url}")
        # sqlite:///data/x.db is relative (data/x.db); sqlite:////abs/x.db is absolute.
        self.path = Path(parts.path[1:])
        options = parse_qs(parts.query)
        self.synchronous = options.get("synchronous", ["full"])[0].upper()
        if self.synchronous not in ("FULL", "NORMAL", "EXTRA"):
            raise StoreError(f"synchronous must be full, normal or extra: {url}")
        checked = options.get("check", ["quick"])[0].lower()
        if checked not in ("quick", "none"):
            raise StoreError(f"check must be quick or none: {url}")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._setup(checked == "quick")
        self._ops: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._writer = threading.Thread(target=self._write_loop, name="sqlite-writer", daemon=True)
        self._writer.start()
        self._local = threading.local()
        self._reader_conns: list[sqlite3.Connection] = []
        self._readers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="sqlite-reader")
        self._closed = False

    def _setup(self, quick_check: bool) -> None:
        try:
            setup = self._connect()
        except sqlite3.DatabaseError as exc:
            raise StoreCorrupt(
                f"sqlite file {self.path} is corrupt ({exc}); restore it from a backup"
            ) from None
        try:
            if quick_check:
                check(setup, self.path)
            setup.executescript(SCHEMA)
            for table, column, statement in MIGRATIONS:
                columns = {row[1] for row in setup.execute(f"PRAGMA table_info({table})")}
                if column not in columns:
                    setup.execute(statement)
                    if (table, column) in BACKFILLS:
                        setup.execute(BACKFILLS[table, column])
            for statement in INDEXES:
                setup.execute(statement)
            setup.executescript(OUTBOX_SCHEMA)
            setup.executescript(RATINGS_SCHEMA)  # issue 28: tables of their own
            setup.executescript(PLAYERS_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise StoreCorrupt(
                f"sqlite file {self.path} is corrupt ({exc}); restore it from a backup"
            ) from None
        finally:
            setup.close()

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute(f"PRAGMA synchronous={self.synchronous}")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=30000")
        return conn

    # --- writes: one thread, group commit --------------------------------------------

    async def _write(self, op: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise StoreError("the store is closed")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[T] = loop.create_future()
        self._ops.put((op, future, loop))
        return await future

    def _write_loop(self) -> None:
        conn = self._connect()
        while True:
            item = self._ops.get()
            if item is _STOP:
                break
            batch = [item]
            stop = False
            while len(batch) < _BATCH:
                try:
                    more = self._ops.get_nowait()
                except queue.Empty:
                    break
                if more is _STOP:
                    stop = True
                    break
                batch.append(more)
            results = self._run_batch(conn, [op for op, _, _ in batch])
            # One wake-up per event loop for the whole batch, not one per move.
            by_loop: dict[asyncio.AbstractEventLoop, list[tuple[Any, Any]]] = {}
            for (_, future, loop), result in zip(batch, results, strict=True):
                by_loop.setdefault(loop, []).append((future, result))
            for loop, done in by_loop.items():
                loop.call_soon_threadsafe(_resolve_all, done)
            if stop:
                break
        conn.close()

    def _run_batch(self, conn: sqlite3.Connection, ops: list[Op]) -> list[tuple[bool, Any]]:
        results: list[tuple[bool, Any]] = []
        try:
            conn.execute("BEGIN IMMEDIATE")
            for op in ops:
                conn.execute("SAVEPOINT op")
                try:
                    value = op(conn)
                except (
                    VersionConflict,
                    DuplicateRequest,
                    GameExists,
                    QuotaExceeded,
                    KeyError,
                ) as refused:
                    conn.execute("ROLLBACK TO op")
                    results.append((False, refused))
                else:
                    results.append((True, value))
                conn.execute("RELEASE op")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            return [(False, StoreError(f"sqlite: {exc}"))] * len(ops)
        return results

    async def create(
        self,
        game: GameRecord,
        owner_limit: int = 0,
        waiting_limit: int = 0,
        quotas: Quotas | None = None,
        player_quotas: PlayerQuotas | None = None,
    ) -> None:
        # Encoded here, not in the writer thread: a value JSON cannot carry fails this call.
        row = (
            game.game_id,
            game.game_type,
            game.players,
            json.dumps(dict(game.options), sort_keys=True),
            str(game.seed),
            json.dumps(list(game.token_hashes)),
            game.created_at,
            game.created_at,
            game.owner,
            _dumps_or_none(game.table),
            _dumps_or_none(game.lobby),
            int(game.waiting),
            game.due_at,
            int(game.bot_turn),
            game.created_at if game.human_at is None else game.human_at,
            game.bot_seats,
        )
        limits = (quotas or Quotas(owner_limit, waiting_limit)).applying_to(game)
        counted = ", ".join(
            f"coalesce(sum(CASE WHEN {QUOTA_COUNTS[name]} THEN 1 ELSE 0 END), 0)" for name in limits
        )
        player_limits = (player_quotas or PlayerQuotas()).applying_to(game)
        seat_rows = [
            (game.game_id, i, p, game.game_type) for i, p in enumerate(game.seat_players) if p
        ]

        def op(conn: sqlite3.Connection) -> None:
            if game.owner is not None and limits:
                # One writer thread: the counts and the insert below are one step.
                counts = conn.execute(
                    f"SELECT {counted} FROM games"
                    " WHERE game_type = ? AND owner = ? AND finished_at IS NULL",
                    (game.game_type, game.owner),
                ).fetchone()
                over_quota(game.owner, limits, dict(zip(limits, counts, strict=True)))
            for player in players_of(game) if player_limits else ():
                games, waiting = conn.execute(_PLAYER_HELD, (player, game.game_type)).fetchone()
                counts = {"player_games": games, "player_waiting": waiting}
                over_quota(player, player_limits, counts)
            try:
                conn.execute(
                    "INSERT INTO games (game_id, game_type, players, options, seed,"
                    " token_hashes, version, created_at, updated_at, finished_at, owner,"
                    " table_config, lobby, waiting, due_at, bot_turn, human_at, bot_seats)"
                    " VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
            except sqlite3.IntegrityError as exc:
                raise GameExists(game.game_id) from exc
            _write_outbox(conn, game.game_type, game.outbox)
            conn.executemany("INSERT INTO game_players VALUES (?, ?, ?, ?)", seat_rows)

        await self._write(op)

    async def append(self, game_id: str, move: MoveRecord) -> None:
        def duplicate(conn: sqlite3.Connection) -> DuplicateRequest | None:
            if move.request_id is None:
                return None
            row = conn.execute(
                "SELECT version FROM moves WHERE game_id = ? AND request_id = ?",
                (game_id, move.request_id),
            ).fetchone()
            return None if row is None else DuplicateRequest(row[0])

        has_lobby = move.lobby is not None
        lobby = _dumps_or_none(move.lobby)
        waiting = move.lobby is not None and lobby_waiting(move.lobby)
        events = json.dumps(move.events, separators=(",", ":"))

        def players(conn: sqlite3.Connection) -> None:
            """The seat's player in the players' index (the quota first)."""
            game_type = conn.execute(
                "SELECT game_type FROM games WHERE game_id = ?", (game_id,)
            ).fetchone()[0]
            if move.seat_player and move.player_games:
                held = conn.execute(_PLAYER_HELD, (move.seat_player, game_type)).fetchone()[0]
                if held >= move.player_games:
                    raise QuotaExceeded(move.seat_player, move.player_games, "player_games")
            conn.execute(
                "DELETE FROM game_players WHERE game_id = ? AND seat = ?", (game_id, move.seat)
            )
            if move.seat_player:
                conn.execute(
                    "INSERT INTO game_players VALUES (?, ?, ?, ?)",
                    (game_id, move.seat, move.seat_player, game_type),
                )

        def op(conn: sqlite3.Connection) -> None:
            # The request id is looked up only when the write fails: a used id wins over a
            # stale version (a retry of an applied move), and the unique index catches it
            # on the way in otherwise. The common path is one UPDATE and one INSERT.
            changed = conn.execute(
                "UPDATE games SET version = ?, updated_at = ?,"
                " finished_at = CASE WHEN ? THEN ? ELSE finished_at END,"
                " lobby = CASE WHEN ? THEN ? ELSE lobby END,"
                " waiting = CASE WHEN ? THEN 0 WHEN ? THEN ? ELSE waiting END,"
                " due_at = ?, bot_turn = ?, human_at = ?"
                " WHERE game_id = ? AND version = ?",
                (
                    move.version,
                    move.applied_at,
                    move.finished,
                    move.applied_at,
                    has_lobby,
                    lobby,
                    move.finished,
                    has_lobby,
                    int(waiting),
                    move.due_at,
                    int(move.bot_turn),
                    move.applied_at if move.human_at is None else move.human_at,
                    game_id,
                    move.version - 1,
                ),
            ).rowcount
            if changed != 1:
                used = duplicate(conn)
                if used is not None:
                    raise used
                row = conn.execute(
                    "SELECT version FROM games WHERE game_id = ?", (game_id,)
                ).fetchone()
                if row is None:
                    raise KeyError(game_id)
                raise VersionConflict(row[0])
            try:
                conn.execute(
                    "INSERT INTO moves VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (
                        game_id,
                        move.version,
                        move.seat,
                        move.move,
                        events,
                        move.request_id,
                        move.applied_at,
                    ),
                )
            except sqlite3.IntegrityError:
                used = duplicate(conn)
                if used is None:
                    raise
                raise used from None
            if move.outbox:
                game_type = conn.execute(
                    "SELECT game_type FROM games WHERE game_id = ?", (game_id,)
                ).fetchone()[0]
                _write_outbox(conn, game_type, move.outbox)
            if move.rating is not None:  # after the checks: rated once, with the finish
                rate_sqlite(conn, move.rating, move.applied_at)
            if move.seat_player is not None:
                players(conn)

        await self._write(op)

    async def delete_finished_before(self, timestamp: float, game_type: str) -> list[str]:
        def op(conn: sqlite3.Connection) -> list[str]:
            rows = conn.execute(
                "SELECT game_id FROM games WHERE game_type = ? AND finished_at IS NOT NULL"
                " AND finished_at < ?",
                (game_type, timestamp),
            ).fetchall()
            ids = [r[0] for r in rows]
            for gid in ids:
                conn.execute("DELETE FROM moves WHERE game_id = ?", (gid,))
                conn.execute("DELETE FROM quarantine WHERE game_id = ?", (gid,))
                conn.execute("DELETE FROM game_players WHERE game_id = ?", (gid,))
                conn.execute("DELETE FROM games WHERE game_id = ?", (gid,))
            return ids

        return await self._write(op)

    # --- reads: their own connections --------------------------------------------------

    def _reader(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
            self._reader_conns.append(conn)
        return conn

    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise StoreError("the store is closed")
        loop = asyncio.get_running_loop()

        def run() -> T:
            try:
                return fn(self._reader())
            except sqlite3.Error as exc:
                raise StoreError(f"sqlite: {exc}") from exc

        return await loop.run_in_executor(self._readers, run)

    async def load(self, game_id: str) -> GameRecord | None:
        def fn(conn: sqlite3.Connection) -> GameRecord | None:
            row = conn.execute(
                f"SELECT {_GAME_COLUMNS} FROM games g LEFT JOIN quarantine q USING (game_id)"
                " WHERE g.game_id = ?",
                (game_id,),
            ).fetchone()
            return None if row is None else _game(row)

        return await self._read(fn)

    async def moves(
        self, game_id: str, after: int = 0, limit: int | None = None
    ) -> list[MoveRecord]:
        def fn(conn: sqlite3.Connection) -> list[MoveRecord]:
            rows = conn.execute(
                "SELECT version, seat, move, events, request_id, applied_at FROM moves"
                " WHERE game_id = ? AND version > ? ORDER BY version LIMIT ?",
                (game_id, after, -1 if limit is None else limit),
            ).fetchall()
            return [_move(game_id, row) for row in rows]

        return await self._read(fn)

    async def count_active(self, game_type: str) -> int:
        def fn(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT count(*) FROM games WHERE finished_at IS NULL AND game_type = ?",
                (game_type,),
            ).fetchone()
            return int(row[0])

        return await self._read(fn)

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
        where, params = _option_where(option_filter(options))
        query = (
            f"SELECT {_GAME_COLUMNS} FROM games g LEFT JOIN quarantine q USING (game_id)"
            " WHERE g.game_type = ? AND q.game_id IS NULL"
        )
        args: list[Any] = [game_type]
        if player is not None:
            # The players' index finds the player's games; no walk of the type's games.
            query += (
                " AND g.game_id IN (SELECT p.game_id FROM game_players p"
                " WHERE p.player_id = ? AND p.game_type = ?)"
            )
            args += [player, game_type]
        if status is not None:
            query += _STATUS_WHERE[status]
        if players is not None:
            query += " AND g.players = ?"
            args.append(players)
        if after is not None:
            query += " AND (g.created_at, g.game_id) < (?, ?)"
            args += [after[0], after[1]]
        query += where + " ORDER BY g.created_at DESC, g.game_id DESC LIMIT ?"
        args += [*params, max(limit, 0)]

        def fn(conn: sqlite3.Connection) -> list[GameRecord]:
            return [_game(row) for row in conn.execute(query, args).fetchall()]

        return await self._read(fn)

    async def count_waiting(self, game_type: str) -> int:
        def fn(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT count(*) FROM games g WHERE g.game_type = ?"
                " AND g.waiting = 1 AND g.finished_at IS NULL"
                " AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.game_id = g.game_id)",
                (game_type,),
            ).fetchone()
            return int(row[0])

        return await self._read(fn)

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
        sound = "NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.game_id = g.game_id)"
        query = f"""
            SELECT game_id FROM (
                SELECT * FROM (
                    SELECT game_id, created_at + :ttl AS deadline FROM games g
                    WHERE game_type = :type AND waiting = 1 AND finished_at IS NULL
                      AND :ttl > 0 AND created_at <= :now - :ttl AND {sound}
                    ORDER BY created_at LIMIT :limit)
                UNION ALL
                SELECT * FROM (
                    SELECT game_id, human_at + :idle FROM games g
                    WHERE game_type = :type AND finished_at IS NULL AND waiting = 0
                      AND :idle > 0 AND human_at <= :now - :idle AND {sound}
                    ORDER BY human_at LIMIT :limit)
                UNION ALL
                SELECT * FROM (
                    SELECT game_id, due_at FROM games g
                    WHERE game_type = :type AND finished_at IS NULL AND due_at IS NOT NULL
                      AND due_at <= :now AND {sound}
                    ORDER BY due_at LIMIT :limit)
            )
            GROUP BY game_id ORDER BY min(deadline), game_id LIMIT :limit
        """
        args = {
            "type": game_type,
            "now": now,
            "ttl": waiting_ttl,
            "idle": idle_seconds,
            "limit": max(limit, 0),
        }

        def fn(conn: sqlite3.Connection) -> list[str]:
            return [row[0] for row in conn.execute(query, args).fetchall()]

        return await self._read(fn)

    async def bot_turns(self, game_type: str, before: float, limit: int = 100) -> list[str]:
        query = (
            "SELECT game_id FROM games g WHERE game_type = ? AND finished_at IS NULL"
            " AND bot_turn = 1 AND updated_at <= ?"
            " AND NOT EXISTS (SELECT 1 FROM quarantine q WHERE q.game_id = g.game_id)"
            " ORDER BY updated_at LIMIT ?"
        )

        def fn(conn: sqlite3.Connection) -> list[str]:
            args = (game_type, before, max(limit, 0))
            return [row[0] for row in conn.execute(query, args).fetchall()]

        return await self._read(fn)

    async def quarantine(self, game_id: str, reason: str, at: float) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "INSERT INTO quarantine (game_id, reason, at) SELECT game_id, ?, ? FROM games"
                " WHERE game_id = ? ON CONFLICT (game_id) DO NOTHING",
                (reason, at, game_id),
            )

        await self._write(op)

    async def quarantined(self) -> list[Quarantined]:
        def fn(conn: sqlite3.Connection) -> list[Quarantined]:
            rows = conn.execute(
                "SELECT q.game_id, g.game_type, q.reason, q.at FROM quarantine q"
                " JOIN games g USING (game_id) ORDER BY q.at, q.game_id"
            ).fetchall()
            return [Quarantined(*row) for row in rows]

        return await self._read(fn)

    async def release(self, game_id: str) -> bool:
        def op(conn: sqlite3.Connection) -> bool:
            gone = conn.execute("DELETE FROM quarantine WHERE game_id = ?", (game_id,))
            return gone.rowcount == 1

        return await self._write(op)

    async def raw(self, game_id: str) -> dict[str, Any] | None:
        def rows(conn: sqlite3.Connection, query: str) -> list[dict[str, Any]]:
            cur = conn.execute(query, (game_id,))
            names = [d[0] for d in cur.description]
            return [{n: _plain(v) for n, v in zip(names, r, strict=True)} for r in cur]

        def fn(conn: sqlite3.Connection) -> dict[str, Any] | None:
            game = rows(conn, "SELECT * FROM games WHERE game_id = ?")
            if not game:
                return None
            quarantine = rows(conn, "SELECT * FROM quarantine WHERE game_id = ?")
            return {
                "game": game[0],
                "quarantine": quarantine[0] if quarantine else None,
                "moves": rows(conn, "SELECT * FROM moves WHERE game_id = ? ORDER BY version"),
            }

        return await self._read(fn)

    # --- the outbox --------------------------------------------------------------------

    async def player_events(
        self, game_type: str, player_id: str, after: int, limit: int = 200
    ) -> list[StoredEvent]:
        def fn(conn: sqlite3.Connection) -> list[StoredEvent]:
            rows = conn.execute(
                f"SELECT {_EVENT_COLUMNS} FROM player_events WHERE game_type = ?"
                " AND player_id = ? AND sequence > ? ORDER BY sequence LIMIT ?",
                (game_type, player_id, after, max(limit, 0)),
            ).fetchall()
            return [_stored_event(row) for row in rows]

        return await self._read(fn)

    async def last_event(self, game_type: str) -> int:
        def fn(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT max(sequence) FROM player_events WHERE game_type = ?", (game_type,)
            ).fetchone()
            return int(row[0] or 0)

        return await self._read(fn)

    async def claim_webhooks(
        self, game_type: str, claimant: str, now: float, lease: float, limit: int = 20
    ) -> list[StoredEvent]:
        def op(conn: sqlite3.Connection) -> list[StoredEvent]:
            # One writer thread: the select and the claim are one step.
            rows = conn.execute(
                f"SELECT {_EVENT_COLUMNS} FROM player_events WHERE game_type = ?"
                " AND webhook = 1 AND delivered_at IS NULL AND retry_at <= ?"
                " AND (claimed_until IS NULL OR claimed_until < ?)"
                " ORDER BY retry_at, sequence LIMIT ?",
                (game_type, now, now, max(limit, 0)),
            ).fetchall()
            conn.executemany(
                "UPDATE player_events SET claimed_by = ?, claimed_until = ? WHERE sequence = ?",
                [(claimant, now + lease, row[0]) for row in rows],
            )
            return [_stored_event(row) for row in rows]

        return await self._write(op)

    async def webhook_result(
        self, sequence: int, claimant: str, delivered: bool, now: float, retry_at: float
    ) -> None:
        def op(conn: sqlite3.Connection) -> None:
            conn.execute(
                "UPDATE player_events SET attempts = attempts + 1, claimed_by = NULL,"
                " claimed_until = NULL, delivered_at = CASE WHEN ? THEN ? END, retry_at = ?"
                " WHERE sequence = ? AND claimed_by = ? AND delivered_at IS NULL",
                (delivered, now, retry_at, sequence, claimant),
            )

        await self._write(op)

    async def webhooks_pending(self, game_type: str) -> int:
        def fn(conn: sqlite3.Connection) -> int:
            row = conn.execute(
                "SELECT count(*) FROM player_events WHERE game_type = ? AND webhook = 1"
                " AND delivered_at IS NULL AND retry_at >= 0",
                (game_type,),
            ).fetchone()
            return int(row[0])

        return await self._read(fn)

    async def delete_events_before(self, game_type: str, timestamp: float) -> int:
        def op(conn: sqlite3.Connection) -> int:
            gone = conn.execute(
                "DELETE FROM player_events WHERE game_type = ? AND created_at < ?",
                (game_type, timestamp),
            )
            return int(gone.rowcount)

        return await self._write(op)

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._ops.put(_STOP)
        await asyncio.get_running_loop().run_in_executor(None, self._writer.join)
        self._readers.shutdown(wait=True)
        for conn in self._reader_conns:
            conn.close()


def _resolve_all(done: list[tuple[asyncio.Future[Any], tuple[bool, Any]]]) -> None:
    for future, result in done:
        _resolve(future, result)


def _resolve(future: asyncio.Future[Any], result: tuple[bool, Any]) -> None:
    if future.cancelled():
        return
    ok, value = result
    if ok:
        future.set_result(value)
    else:
        future.set_exception(value)
