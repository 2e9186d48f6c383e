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
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from .base import (
    CorruptRow,
    DuplicateRequest,
    GameExists,
    GameRecord,
    MoveRecord,
    Quarantined,
    QuotaExceeded,
    StoreCorrupt,
    StoreError,
    VersionConflict,
)

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

# Columns added after the first release: files written before get them on open.
MIGRATIONS = (("games", "owner", "ALTER TABLE games ADD COLUMN owner TEXT"),)
OWNER_INDEX = (
    "CREATE INDEX IF NOT EXISTS games_owner ON games (game_type, owner)"
    " WHERE finished_at IS NULL AND owner IS NOT NULL"
)
_GAME_COLUMNS = (
    "g.game_id, g.game_type, g.players, g.options, g.seed, g.token_hashes, g.version,"
    " g.created_at, g.updated_at, g.finished_at, g.owner, q.reason"
)

_BATCH = 512
_STOP = object()

Op = Callable[[sqlite3.Connection], Any]


def _game(row: tuple[Any, ...]) -> GameRecord:
    gid, gtype, players, options, seed, hashes, version, created, updated, finished = row[:10]
    owner, quarantined = row[10:]
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
        )
    except (TypeError, ValueError) as exc:
        raise CorruptRow(gid, None, type(exc).__name__) from None


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
        first = rows[0][0] if rows else "no answer"
        raise StoreCorrupt(
            f"sqlite file {path} fails PRAGMA quick_check ({len(rows)} problems; first: "
            f"{first}); restore it from a backup"
        )


class SqliteStore:
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
            setup.execute(OWNER_INDEX)
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

    async def _write(self, op: Op) -> Any:
        if self._closed:
            raise StoreError("the store is closed")
        loop = asyncio.get_running_loop()
        future = loop.create_future()
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

    async def create(self, game: GameRecord, owner_limit: int = 0) -> None:
        def op(conn: sqlite3.Connection) -> None:
            if owner_limit and game.owner is not None:
                # One writer thread: the count and the insert below are one step.
                (held,) = conn.execute(
                    "SELECT count(*) FROM games WHERE game_type = ? AND owner = ?"
                    " AND finished_at IS NULL",
                    (game.game_type, game.owner),
                ).fetchone()
                if held >= owner_limit:
                    raise QuotaExceeded(game.owner, owner_limit)
            try:
                conn.execute(
                    "INSERT INTO games (game_id, game_type, players, options, seed,"
                    " token_hashes, version, created_at, updated_at, finished_at, owner)"
                    " VALUES (?, ?, ?, ?, ?, ?, 0, ?, ?, NULL, ?)",
                    (
                        game.game_id,
                        game.game_type,
                        game.players,
                        json.dumps(dict(game.options), sort_keys=True),
                        str(game.seed),
                        json.dumps(list(game.token_hashes)),
                        game.created_at,
                        game.created_at,
                        game.owner,
                    ),
                )
            except sqlite3.IntegrityError as exc:
                raise GameExists(game.game_id) from exc

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

        def op(conn: sqlite3.Connection) -> None:
            # The request id is looked up only when the write fails: a used id wins over a
            # stale version (a retry of an applied move), and the unique index catches it
            # on the way in otherwise. The common path is one UPDATE and one INSERT.
            changed = conn.execute(
                "UPDATE games SET version = ?, updated_at = ?,"
                " finished_at = CASE WHEN ? THEN ? ELSE finished_at END"
                " WHERE game_id = ? AND version = ?",
                (
                    move.version,
                    move.applied_at,
                    move.finished,
                    move.applied_at,
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
                        json.dumps(move.events, separators=(",", ":")),
                        move.request_id,
                        move.applied_at,
                    ),
                )
            except sqlite3.IntegrityError:
                used = duplicate(conn)
                if used is None:
                    raise
                raise used from None

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

    async def _read(self, fn: Callable[[sqlite3.Connection], Any]) -> Any:
        if self._closed:
            raise StoreError("the store is closed")
        loop = asyncio.get_running_loop()

        def run() -> Any:
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
            return {
                "game": game[0],
                "quarantine": (rows(conn, "SELECT * FROM quarantine WHERE game_id = ?") or [None])[
                    0
                ],
                "moves": rows(conn, "SELECT * FROM moves WHERE game_id = ? ORDER BY version"),
            }

        return await self._read(fn)

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
