"""The ratings tables of every backend: a finishing append of a rated table rates it in
the same transaction, exactly once (memory, SQLite and, when
TABLETOP_TEST_POSTGRES_URL is set, PostgreSQL in a schema of its own)."""

from __future__ import annotations

import asyncio
import os
import random
import sqlite3
import subprocess
import sys
import uuid

import pytest

from services.channeling.engine import GAME as CHANNELING
from services.glow.engine import GAME as GLOW
from services.kit import ratings
from services.kit.engine import Outcome
from services.kit.ratings.__main__ import main as ratings_command
from services.kit.ratings.job import RatingJob
from services.kit.ratings.rebuilding import rebuild_store
from services.kit.store import (
    DuplicateRequest,
    GameRecord,
    MoveRecord,
    StoreError,
    VersionConflict,
    open_store,
)

POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL")
TWO = ratings.parse_shape(CHANNELING, "2p")
GLOW3 = ratings.parse_shape(GLOW, "3p")


def schema_url(base: str) -> str:
    """A fresh PostgreSQL schema, so these tests see only their own ratings."""
    import psycopg

    name = "ratings_" + uuid.uuid4().hex[:12]
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{name}"


def url_for(kind: str, tmp_path) -> str:
    if kind == "memory":
        return "memory://"
    if kind == "sqlite":
        return f"sqlite:///{tmp_path}/store.db?synchronous=normal"
    if not POSTGRES:
        pytest.skip("TABLETOP_TEST_POSTGRES_URL is not set (make test-postgres sets it)")
    return schema_url(POSTGRES)


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request, tmp_path):
    backend = open_store(url_for(request.param, tmp_path))
    yield backend
    await backend.close()


def record(game_id: str, game_type: str = "channeling", players: int = 2) -> GameRecord:
    return GameRecord(
        game_id=game_id,
        game_type=game_type,
        players=players,
        options={},
        seed=1,
        token_hashes=("",) * players,
        created_at=1000.0,
        updated_at=1000.0,
    )


def finish(version: int, job: RatingJob | None, request_id: str | None = None) -> MoveRecord:
    return MoveRecord(
        version=version,
        seat=0,
        move="@resign",
        request_id=request_id,
        applied_at=2000.0 + version,
        finished=True,
        rating=job,
    )


def job(game_id: str, players, winner: int = 0, shape=TWO, **kw) -> RatingJob:
    n = shape.players
    return RatingJob(
        game_id,
        shape,
        tuple(players),
        tuple(f"name {p}" for p in players),
        Outcome(tuple(1 if s == winner else 0 for s in range(n)), (winner,), "RULES"),
        **kw,
    )


async def play(store, players, winner=0, shape=TWO, **kw) -> str:
    """A game created and finished by one entry carrying its rating."""
    gid = uuid.uuid4().hex
    await store.create(record(gid, shape.game, shape.players))
    await store.append(gid, finish(1, job(gid, players, winner, shape, **kw), "end"))
    return gid


async def test_a_finishing_append_rates_every_seat_once(store):
    a, b = "p-" + uuid.uuid4().hex, "p-" + uuid.uuid4().hex
    gid = await play(store, [a, b], winner=1)
    got = await store.standings("channeling", "2p", [a, b])
    expected = ratings.rate_game(
        TWO, [ratings.SeatPlayer(a), ratings.SeatPlayer(b)], job(gid, [a, b], 1).outcome
    )
    assert got == {u.player: u.after for u in expected.updates}  # bit for bit
    assert got[b].rating.mu > got[a].rating.mu and got[a].games == got[b].games == 1
    (stored,) = await store.rated_games("channeling")
    assert stored.game_id == gid and stored.rated and stored.reason is None
    assert stored.result["players"] == [a, b] and stored.result["names"] == [
        f"name {a}",
        f"name {b}",
    ]


async def test_a_retried_or_stale_finishing_append_rates_nothing_more(store):
    a, b = "p-" + uuid.uuid4().hex, "p-" + uuid.uuid4().hex
    gid = await play(store, [a, b])
    once = await store.standings("channeling", "2p", [a, b])
    with pytest.raises(DuplicateRequest):  # the client's retry of the finishing move
        await store.append(gid, finish(1, job(gid, [a, b]), "end"))
    with pytest.raises(VersionConflict):  # another replica's append of the same finish
        await store.append(gid, finish(1, job(gid, [a, b]), "other"))
    assert await store.standings("channeling", "2p", [a, b]) == once
    assert len(await store.rated_games("channeling")) == 1


async def test_control_the_unique_game_id_is_the_last_guard(store):
    """Control: an append that passes the version check (a later version) with the same
    game's rating again is refused, and leaves the standings as they were."""
    a, b = "p-" + uuid.uuid4().hex, "p-" + uuid.uuid4().hex
    gid = await play(store, [a, b])
    once = await store.standings("channeling", "2p", [a, b])
    with pytest.raises((StoreError, ValueError, sqlite3.Error)):
        await store.append(gid, finish(2, job(gid, [a, b]), "again"))
    assert await store.standings("channeling", "2p", [a, b]) == once
    game = await store.load(gid)
    assert game.version == 1  # the whole entry was refused with its rating


async def test_a_game_that_is_not_rated_is_recorded_with_its_reason(store):
    a = "p-" + uuid.uuid4().hex
    await play(store, [a, None])
    await play(store, [a, a])
    assert await store.standings("channeling", "2p", [a]) == {}
    reasons = [r.reason for r in await store.rated_games("channeling")]
    assert reasons == ["NOT_ALL_PLAYERS", "PLAYER_HOLDS_TWO_SEATS"]
    assert await store.ratings_of("channeling", a) == []


async def test_the_leaderboard_leaves_provisional_players_out_and_pages(store):
    rng = random.Random(5)
    people = [f"p{i:02d}-{uuid.uuid4().hex[:6]}" for i in range(7)]
    skill = {p: i for i, p in enumerate(people)}
    for _ in range(40):
        pair = rng.sample(people, 2)
        await play(store, pair, winner=0 if skill[pair[0]] > skill[pair[1]] else 1)
    newcomer = "new-" + uuid.uuid4().hex
    await play(store, [newcomer, people[0]])
    board, after = [], None
    while True:
        page = await store.leaderboard("channeling", "2p", after=after, limit=2)
        board += page
        if len(page) < 2:
            break
        last = page[-1]
        after = (last.standing.rating.ordinal, last.player_id)
    everyone = {e.player_id: e for e in await store.all_ratings("channeling")}
    established = sorted(
        (e for e in everyone.values() if e.standing.games >= 10),
        key=lambda e: (-e.standing.rating.ordinal, e.player_id),
    )
    assert [e.player_id for e in board] == [e.player_id for e in established]
    assert newcomer in everyone and newcomer not in {e.player_id for e in board}
    assert len(board) >= 3  # enough established players for several pages
    ordinals = [e.standing.rating.ordinal for e in board]
    assert ordinals == sorted(ordinals, reverse=True)


async def test_the_rebuild_comes_out_equal_and_repairs_a_changed_standing(store):
    rng = random.Random(9)
    people = [f"r{i}-{uuid.uuid4().hex[:6]}" for i in range(6)]
    for n in range(30):
        shape = GLOW3 if n % 3 == 0 else TWO
        seats = rng.sample(people, shape.players)
        given = frozenset({1}) if n % 7 == 0 else frozenset()
        await play(store, seats, winner=0, shape=shape, given_up=given)
    for info in (CHANNELING, GLOW):
        assert await rebuild_store(store, info, check=True) == []
    # Control: a standing changed behind the store's back is found, then repaired.
    entries = await store.all_ratings("channeling")
    bad = entries[0]
    changed = ratings.Standing(ratings.Rating(bad.standing.rating.mu + 1e-9, 1.0), 3)
    await store.replace_ratings(
        "channeling", [*entries[1:], type(bad)(bad.player_id, "x", bad.shape, changed)], 1.0
    )
    found = await rebuild_store(store, CHANNELING, check=True)
    assert [(d.player, d.stored) for d in found] == [(bad.player_id, changed)]
    await rebuild_store(store, CHANNELING, check=False)
    assert await rebuild_store(store, CHANNELING, check=True) == []


async def test_two_replicas_finishing_the_same_game_rate_it_once(tmp_path):
    """PostgreSQL: two stores (two replicas' pools) append the same finishing entry at
    once, many times over; each game is rated once, and games sharing players, finished
    at once, never deadlock."""
    url = url_for("postgres", tmp_path)
    one, two = open_store(url), open_store(url)
    try:
        people = [f"q{i}-{uuid.uuid4().hex[:6]}" for i in range(4)]
        gids = []
        for _ in range(20):
            gid = uuid.uuid4().hex
            await one.create(record(gid))
            gids.append(gid)
        rng = random.Random(3)
        pairs = [rng.sample(people, 2) for _ in gids]

        async def both(gid, pair):
            return await asyncio.gather(
                one.append(gid, finish(1, job(gid, pair), "a")),
                two.append(gid, finish(1, job(gid, pair), "b")),
                return_exceptions=True,
            )

        results = await asyncio.gather(*(both(g, p) for g, p in zip(gids, pairs, strict=True)))
        for pair_result in results:
            assert sorted(r is None for r in pair_result) == [False, True]
            assert any(isinstance(r, VersionConflict) for r in pair_result)
        rated = await one.rated_games("channeling")
        assert sorted(r.game_id for r in rated) == sorted(gids)
        games = {e.player_id: e.standing.games for e in await one.all_ratings("channeling")}
        assert sum(games.values()) == 2 * len(gids)
        assert await rebuild_store(one, CHANNELING, check=True) == []
    finally:
        await one.close()
        await two.close()


async def test_an_sqlite_file_from_before_ratings_gets_the_tables(tmp_path):
    path = tmp_path / "old.db"
    old = open_store(f"sqlite:///{path}")
    await old.create(record("g1"))
    await old.close()
    with sqlite3.connect(path) as conn:  # as a file written before issue 28
        conn.executescript("DROP TABLE ratings; DROP TABLE rated_games;")
    store = open_store(f"sqlite:///{path}")
    try:
        a, b = "a-" + uuid.uuid4().hex, "b-" + uuid.uuid4().hex
        await store.append("g1", finish(1, job("g1", [a, b])))
        assert len(await store.standings("channeling", "2p", [a, b])) == 2
    finally:
        await store.close()


def test_the_rebuild_command_checks_and_repairs(tmp_path, capsys):
    path = tmp_path / "cmd.db"
    url = f"sqlite:///{path}"

    async def setup() -> None:
        store = open_store(url)
        for n in range(6):
            await play(store, ["x", "y"], winner=n % 2)
        await store.close()

    asyncio.run(setup())
    rebuild = ["rebuild", "--store-url", url, "--game", "channeling"]
    assert ratings_command([*rebuild, "--check"]) == 0
    assert "channeling: equal" in capsys.readouterr().out
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE ratings SET mu = mu + 1 WHERE player_id = 'x'")
    # As an operator runs it: a process, exit 1 on a difference.
    cmd = [sys.executable, "-m", "services.kit.ratings", *rebuild, "--check"]
    bad = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1 and "channeling/2p x" in bad.stdout, bad.stderr
    assert ratings_command(rebuild) == 0
    assert "1 standings replaced" in capsys.readouterr().out
    assert ratings_command([*rebuild, "--check"]) == 0
