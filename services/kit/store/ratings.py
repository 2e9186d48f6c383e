"""The ratings tables of every backend (issue 28; docs/ratings.md, "The store").

Two tables: a player's standing per game and shape, and each finished game of a rated
table (rated or, with its reason, not): the rebuild's input, kept when retention
deletes the game. A finishing entry that carries a :class:`RatingJob` is rated inside
the transaction that writes it, after the version check: a retry, a restart or another
replica's append of the same entry is refused before it reads a standing, and the
rated-games row's unique game id is the last guard. The seats' standings are read (on
PostgreSQL: locked) in player-id order, so two finishing games never deadlock.

Each backend takes a mixin of the reads (:class:`SqliteRatings`, :class:`PostgresRatings`,
:class:`MemoryRatings`) and calls ``rate_*`` from its ``append``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from services.kit.ratings import PROVISIONAL_GAMES, NotRated, Rated, Rating, Standing
from services.kit.ratings.job import RATED, RatingJob, result_dict

if TYPE_CHECKING:
    import psycopg

T = TypeVar("T")

SQLITE_SCHEMA = """
CREATE TABLE IF NOT EXISTS ratings (
    game_type   TEXT NOT NULL,
    shape       TEXT NOT NULL,
    player_id   TEXT NOT NULL,
    player_name TEXT NOT NULL,
    mu          REAL NOT NULL,
    sigma       REAL NOT NULL,
    ordinal     REAL NOT NULL,
    games       INTEGER NOT NULL,
    updated_at  REAL NOT NULL,
    PRIMARY KEY (game_type, shape, player_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ratings_board
    ON ratings (game_type, shape, ordinal DESC, player_id) WHERE games >= 10;
CREATE TABLE IF NOT EXISTS rated_games (
    seq       INTEGER PRIMARY KEY AUTOINCREMENT,
    game_type TEXT NOT NULL,
    game_id   TEXT NOT NULL UNIQUE,
    result    TEXT NOT NULL,
    rated     INTEGER NOT NULL,
    reason    TEXT,
    rated_at  REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS rated_games_type ON rated_games (game_type, seq);
"""

POSTGRES_SCHEMA = """
-- ratings (issue 28): a player's standing per game and shape; never rounded.
CREATE TABLE IF NOT EXISTS tabletop_ratings (
    game_type   TEXT NOT NULL,
    shape       TEXT NOT NULL,
    player_id   TEXT NOT NULL,
    player_name TEXT NOT NULL,
    mu          DOUBLE PRECISION NOT NULL,
    sigma       DOUBLE PRECISION NOT NULL,
    ordinal     DOUBLE PRECISION NOT NULL,
    games       INTEGER NOT NULL,
    updated_at  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (game_type, shape, player_id)
);
CREATE INDEX IF NOT EXISTS tabletop_ratings_board
    ON tabletop_ratings (game_type, shape, ordinal DESC, player_id) WHERE games >= 10;
-- Each finished game of a rated table, in the order it was rated: the rebuild's input.
CREATE TABLE IF NOT EXISTS tabletop_rated_games (
    seq       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    game_type TEXT NOT NULL,
    game_id   TEXT NOT NULL UNIQUE,
    result    JSONB NOT NULL,
    rated     BOOLEAN NOT NULL,
    reason    TEXT,
    rated_at  DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS tabletop_rated_games_type ON tabletop_rated_games (game_type, seq);
"""

_NEW = Standing()
# The leaderboard's players: past provisional (the partial indexes say 10 as well).
ESTABLISHED = PROVISIONAL_GAMES


@dataclass(frozen=True)
class Entry:
    """A player's standing in one shape, as the store holds it."""

    player_id: str
    player_name: str
    shape: str
    standing: Standing


@dataclass(frozen=True)
class StoredResult:
    """One row of the rated games: its order, and the result (``RatedGame.to_dict()``
    with the seats' names)."""

    seq: int
    game_id: str
    result: Mapping[str, Any]
    rated: bool
    reason: str | None


def _standing(mu: float, sigma: float, games: int) -> Standing:
    return Standing(Rating(mu, sigma), games)


def _outcome_of(job: RatingJob, standings: Mapping[str, Standing]) -> Rated | NotRated:
    try:
        return job.rate(standings)
    except NotRated as exc:
        return exc


def _players(job: RatingJob) -> list[str]:
    return sorted({p for p in job.players if p})


# --- SQLite -------------------------------------------------------------------------


def rate_sqlite(conn: sqlite3.Connection, job: RatingJob, at: float) -> Rated | NotRated:
    """Rate ``job`` inside the append's transaction (the writer thread's)."""
    players = _players(job)
    marks = ", ".join("?" * len(players))
    rows = conn.execute(
        "SELECT player_id, mu, sigma, games FROM ratings"
        f" WHERE game_type = ? AND shape = ? AND player_id IN ({marks}) ORDER BY player_id",
        (job.game_type, job.shape.name, *players),
    ).fetchall()
    standings = {p: _standing(mu, sigma, games) for p, mu, sigma, games in rows}
    rated = _outcome_of(job, standings)
    ok = isinstance(rated, Rated)
    conn.execute(
        "INSERT INTO rated_games (game_type, game_id, result, rated, reason, rated_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (
            job.game_type,
            job.game_id,
            json.dumps(result_dict(job), sort_keys=True),
            int(ok),
            None if ok else rated.reason,  # type: ignore[union-attr]
            at,
        ),
    )
    if isinstance(rated, Rated):
        conn.executemany(
            "INSERT INTO ratings (game_type, shape, player_id, player_name, mu, sigma,"
            " ordinal, games, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
            " ON CONFLICT (game_type, shape, player_id) DO UPDATE SET"
            " player_name = excluded.player_name, mu = excluded.mu, sigma = excluded.sigma,"
            " ordinal = excluded.ordinal, games = excluded.games,"
            " updated_at = excluded.updated_at",
            [_row(job, u.player, u.after, at) for u in rated.updates],
        )
    return rated


def _row(job: RatingJob, player: str, after: Standing, at: float) -> tuple[Any, ...]:
    r = after.rating
    return (
        job.game_type,
        job.shape.name,
        player,
        job.name_of(player),
        r.mu,
        r.sigma,
        r.ordinal,
        after.games,
        at,
    )


class SqliteRatings:
    """The reads and the rebuild's write, for :class:`~services.kit.store.sqlite.SqliteStore`."""

    _read: Callable[..., Any]
    _write: Callable[..., Any]

    async def standings(
        self, game_type: str, shape: str, players: Sequence[str]
    ) -> dict[str, Standing]:
        """The standings of ``players`` in a shape (a player without one is absent)."""
        wanted = sorted(set(players))
        marks = ", ".join("?" * len(wanted))

        def fn(conn: sqlite3.Connection) -> dict[str, Standing]:
            rows = conn.execute(
                "SELECT player_id, mu, sigma, games FROM ratings WHERE game_type = ?"
                f" AND shape = ? AND player_id IN ({marks})",
                (game_type, shape, *wanted),
            ).fetchall()
            return {p: _standing(mu, sigma, g) for p, mu, sigma, g in rows}

        return dict(await self._read(fn)) if wanted else {}

    async def ratings_of(self, game_type: str, player: str) -> list[Entry]:
        """A player's standing in every shape of a game it has played rated."""

        def fn(conn: sqlite3.Connection) -> list[Entry]:
            rows = conn.execute(
                "SELECT player_id, player_name, shape, mu, sigma, games FROM ratings"
                " WHERE game_type = ? AND player_id = ? ORDER BY shape",
                (game_type, player),
            ).fetchall()
            return [Entry(p, n, s, _standing(mu, sg, g)) for p, n, s, mu, sg, g in rows]

        return list(await self._read(fn))

    async def leaderboard(
        self,
        game_type: str,
        shape: str,
        *,
        after: tuple[float, str] | None = None,
        limit: int = 50,
    ) -> list[Entry]:
        """Players with at least ``established`` games in a shape, best ordinal first
        (ties by player id), after the keyset cursor ``(ordinal, player_id)``."""
        query = (
            "SELECT player_id, player_name, shape, mu, sigma, games FROM ratings"
            " WHERE game_type = ? AND shape = ? AND games >= 10"
        )
        args: list[Any] = [game_type, shape]
        if after is not None:
            query += " AND (ordinal < ? OR (ordinal = ? AND player_id > ?))"
            args += [after[0], after[0], after[1]]
        query += " ORDER BY ordinal DESC, player_id LIMIT ?"
        args.append(max(limit, 0))

        def fn(conn: sqlite3.Connection) -> list[Entry]:
            rows = conn.execute(query, args).fetchall()
            return [Entry(p, n, s, _standing(mu, sg, g)) for p, n, s, mu, sg, g in rows]

        return list(await self._read(fn))

    async def all_ratings(self, game_type: str) -> list[Entry]:
        """Every standing of a game (the rebuild compares them)."""

        def fn(conn: sqlite3.Connection) -> list[Entry]:
            rows = conn.execute(
                "SELECT player_id, player_name, shape, mu, sigma, games FROM ratings"
                " WHERE game_type = ? ORDER BY shape, player_id",
                (game_type,),
            ).fetchall()
            return [Entry(p, n, s, _standing(mu, sg, g)) for p, n, s, mu, sg, g in rows]

        return list(await self._read(fn))

    async def rated_games(self, game_type: str) -> list[StoredResult]:
        """Every finished game of a rated table of ``game_type``, in the order rated."""

        def fn(conn: sqlite3.Connection) -> list[StoredResult]:
            rows = conn.execute(
                "SELECT seq, game_id, result, rated, reason FROM rated_games"
                " WHERE game_type = ? ORDER BY seq",
                (game_type,),
            ).fetchall()
            return [StoredResult(s, g, json.loads(r), bool(ok), why) for s, g, r, ok, why in rows]

        return list(await self._read(fn))

    async def replace_ratings(self, game_type: str, entries: Sequence[Entry], at: float) -> None:
        """Every standing of ``game_type`` replaced by ``entries`` (the rebuild), in one
        transaction: finishing games wait for it (one writer)."""
        rows = [_entry_row(game_type, e, at) for e in entries]

        def op(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM ratings WHERE game_type = ?", (game_type,))
            conn.executemany("INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)

        await self._write(op)


def _entry_row(game_type: str, e: Entry, at: float) -> tuple[Any, ...]:
    r = e.standing.rating
    return (
        game_type,
        e.shape,
        e.player_id,
        e.player_name,
        r.mu,
        r.sigma,
        r.ordinal,
        e.standing.games,
        at,
    )


# --- PostgreSQL ---------------------------------------------------------------------


async def rate_postgres(
    conn: psycopg.AsyncConnection[Any], job: RatingJob, at: float
) -> Rated | NotRated:
    """Rate ``job`` inside the append's transaction: every seat's row made if new, then
    locked in player-id order (``FOR UPDATE``), rated, written."""
    players = _players(job)
    new = _NEW.rating
    if job.verdict() != RATED:  # no reason depends on a standing: lock none
        await _record_postgres(conn, job, job.verdict(), at)
        return _outcome_of(job, {})
    async with conn.cursor() as cur:
        await cur.executemany(
            "INSERT INTO tabletop_ratings (game_type, shape, player_id, player_name, mu,"
            " sigma, ordinal, games, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s, 0, %s)"
            " ON CONFLICT DO NOTHING",
            [
                (job.game_type, job.shape.name, p, job.name_of(p), new.mu, new.sigma,
                 new.ordinal, at)
                for p in players
            ],
        )  # fmt: skip
    cur2 = await conn.execute(
        "SELECT player_id, mu, sigma, games FROM tabletop_ratings"
        " WHERE game_type = %s AND shape = %s AND player_id = ANY(%s)"
        " ORDER BY player_id FOR UPDATE",
        (job.game_type, job.shape.name, players),
    )
    standings = {p: _standing(mu, sg, g) for p, mu, sg, g in await cur2.fetchall()}
    rated = _outcome_of(job, standings)
    await _record_postgres(conn, job, RATED if isinstance(rated, Rated) else rated.reason, at)
    if isinstance(rated, Rated):
        async with conn.cursor() as cur:
            await cur.executemany(
                "UPDATE tabletop_ratings SET player_name = %s, mu = %s, sigma = %s,"
                " ordinal = %s, games = %s, updated_at = %s"
                " WHERE game_type = %s AND shape = %s AND player_id = %s",
                [
                    (job.name_of(u.player), u.after.rating.mu, u.after.rating.sigma,
                     u.after.rating.ordinal, u.after.games, at, job.game_type,
                     job.shape.name, u.player)
                    for u in rated.updates
                ],
            )  # fmt: skip
    return rated


async def _record_postgres(
    conn: psycopg.AsyncConnection[Any], job: RatingJob, verdict: str, at: float
) -> None:
    from psycopg.types.json import Jsonb

    ok = verdict == RATED
    await conn.execute(
        "INSERT INTO tabletop_rated_games (game_type, game_id, result, rated, reason, rated_at)"
        " VALUES (%s, %s, %s, %s, %s, %s)",
        (job.game_type, job.game_id, Jsonb(result_dict(job)), ok, None if ok else verdict, at),
    )


class PostgresRatings:
    """The reads and the rebuild's write, for the PostgreSQL store."""

    _connection: Callable[..., Any]

    async def standings(
        self, game_type: str, shape: str, players: Sequence[str]
    ) -> dict[str, Standing]:
        if not players:
            return {}
        async with self._connection() as conn:
            cur = await conn.execute(
                "SELECT player_id, mu, sigma, games FROM tabletop_ratings"
                " WHERE game_type = %s AND shape = %s AND player_id = ANY(%s)",
                (game_type, shape, sorted(set(players))),
            )
            return {p: _standing(mu, sg, g) for p, mu, sg, g in await cur.fetchall()}

    async def ratings_of(self, game_type: str, player: str) -> list[Entry]:
        async with self._connection() as conn:
            cur = await conn.execute(
                "SELECT player_id, player_name, shape, mu, sigma, games FROM tabletop_ratings"
                " WHERE game_type = %s AND player_id = %s AND games > 0 ORDER BY shape",
                (game_type, player),
            )
            rows = await cur.fetchall()
        return [Entry(p, n, s, _standing(mu, sg, g)) for p, n, s, mu, sg, g in rows]

    async def leaderboard(
        self,
        game_type: str,
        shape: str,
        *,
        after: tuple[float, str] | None = None,
        limit: int = 50,
    ) -> list[Entry]:
        query = (
            "SELECT player_id, player_name, shape, mu, sigma, games FROM tabletop_ratings"
            " WHERE game_type = %s AND shape = %s AND games >= 10"
        )
        args: list[Any] = [game_type, shape]
        if after is not None:
            query += " AND (ordinal < %s OR (ordinal = %s AND player_id > %s))"
            args += [after[0], after[0], after[1]]
        query += " ORDER BY ordinal DESC, player_id LIMIT %s"
        args.append(max(limit, 0))
        async with self._connection() as conn:
            cur = await conn.execute(query, args)
            rows = await cur.fetchall()
        return [Entry(p, n, s, _standing(mu, sg, g)) for p, n, s, mu, sg, g in rows]

    async def all_ratings(self, game_type: str) -> list[Entry]:
        async with self._connection() as conn:
            cur = await conn.execute(
                "SELECT player_id, player_name, shape, mu, sigma, games FROM tabletop_ratings"
                " WHERE game_type = %s AND games > 0 ORDER BY shape, player_id",
                (game_type,),
            )
            rows = await cur.fetchall()
        return [Entry(p, n, s, _standing(mu, sg, g)) for p, n, s, mu, sg, g in rows]

    async def rated_games(self, game_type: str) -> list[StoredResult]:
        async with self._connection() as conn:
            cur = await conn.execute(
                "SELECT seq, game_id, result, rated, reason FROM tabletop_rated_games"
                " WHERE game_type = %s ORDER BY seq",
                (game_type,),
            )
            rows = await cur.fetchall()
        return [StoredResult(s, g, r, bool(ok), why) for s, g, r, ok, why in rows]

    async def replace_ratings(self, game_type: str, entries: Sequence[Entry], at: float) -> None:
        """The rebuild's write: finishing games wait on the table's lock meanwhile."""
        async with self._connection() as conn, conn.transaction():
            await conn.execute("LOCK TABLE tabletop_ratings IN EXCLUSIVE MODE")
            await conn.execute("DELETE FROM tabletop_ratings WHERE game_type = %s", (game_type,))
            async with conn.cursor() as cur:
                await cur.executemany(
                    "INSERT INTO tabletop_ratings VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s)",
                    [_entry_row(game_type, e, at) for e in entries],
                )


# --- memory -------------------------------------------------------------------------


class MemoryRatings:
    """The same, in dicts (the memory store; lost on exit)."""

    def __init__(self) -> None:
        self._ratings: dict[tuple[str, str, str], tuple[str, Standing]] = {}
        self._rated: list[tuple[str, StoredResult]] = []
        self._rated_ids: set[str] = set()

    def check_new(self, job: RatingJob) -> None:
        """Refuse a second rating of one game (the SQL backends' unique game id)."""
        if job.game_id in self._rated_ids:
            raise ValueError(f"game {job.game_id} is rated already")

    def rate_memory(self, job: RatingJob, at: float) -> Rated | NotRated:
        self.check_new(job)
        standings = {
            p: self._ratings[job.game_type, job.shape.name, p][1]
            for p in _players(job)
            if (job.game_type, job.shape.name, p) in self._ratings
        }
        rated = _outcome_of(job, standings)
        ok = isinstance(rated, Rated)
        seq = len(self._rated) + 1
        stored = StoredResult(
            seq,
            job.game_id,
            json.loads(json.dumps(result_dict(job))),
            ok,
            None if ok else rated.reason,  # type: ignore[union-attr]
        )
        self._rated.append((job.game_type, stored))
        self._rated_ids.add(job.game_id)
        if isinstance(rated, Rated):
            for u in rated.updates:
                self._ratings[job.game_type, job.shape.name, u.player] = (
                    job.name_of(u.player),
                    u.after,
                )
        return rated

    async def standings(
        self, game_type: str, shape: str, players: Sequence[str]
    ) -> dict[str, Standing]:
        found = {p: self._ratings.get((game_type, shape, p)) for p in set(players)}
        return {p: held[1] for p, held in found.items() if held is not None}

    def _entries(self, game_type: str) -> list[Entry]:
        return [
            Entry(p, name, s, standing)
            for (g, s, p), (name, standing) in self._ratings.items()
            if g == game_type
        ]

    async def ratings_of(self, game_type: str, player: str) -> list[Entry]:
        return sorted((e for e in self._entries(game_type) if e.player_id == player),
                      key=lambda e: e.shape)  # fmt: skip

    async def leaderboard(
        self,
        game_type: str,
        shape: str,
        *,
        after: tuple[float, str] | None = None,
        limit: int = 50,
    ) -> list[Entry]:
        board = sorted(
            (
                e
                for e in self._entries(game_type)
                if e.shape == shape and e.standing.games >= ESTABLISHED
            ),
            key=lambda e: (-e.standing.rating.ordinal, e.player_id),
        )
        if after is not None:
            board = [
                e
                for e in board
                if (-e.standing.rating.ordinal, e.player_id) > (-after[0], after[1])
            ]
        return board[: max(limit, 0)]

    async def all_ratings(self, game_type: str) -> list[Entry]:
        return sorted(self._entries(game_type), key=lambda e: (e.shape, e.player_id))

    async def rated_games(self, game_type: str) -> list[StoredResult]:
        return [r for g, r in self._rated if g == game_type]

    async def replace_ratings(self, game_type: str, entries: Sequence[Entry], at: float) -> None:
        for key in [k for k in self._ratings if k[0] == game_type]:
            del self._ratings[key]
        for e in entries:
            self._ratings[game_type, e.shape, e.player_id] = (e.player_name, e.standing)
