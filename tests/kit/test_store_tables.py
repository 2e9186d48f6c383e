"""What the store keeps for tables and lobbies, for every backend (memory, SQLite and,
when TABLETOP_TEST_POSTGRES_URL is set, PostgreSQL): the table, lobby, waiting, due_at,
bot_turn, human_at and bot_seats columns, the waiting-table and bot-table quotas, lobby
pages, the due games and bot turns, and files and databases written before these
columns existed."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import uuid

import pytest

from services.kit.store import GameRecord, MoveRecord, QuotaExceeded, Quotas, open_store
from tests.kit.test_store import POSTGRES, game
from tests.kit.test_store import store as store  # the fixture: every backend

TABLE = {"seats": [{"kind": "open"}, {"kind": "bot", "level": 1}], "clock": {"per_move": 30}}


def lobby(status: str, *names: str) -> dict:
    return {
        "status": status,
        "seats": [{"state": "taken" if n else "open", "name": n} for n in names],
    }


def kind() -> str:
    """A game type of the test's own: a shared PostgreSQL holds other tests' games."""
    return f"t{uuid.uuid4().hex[:10]}"


def table(game_type: str, **overrides) -> GameRecord:
    """A waiting table of ``game_type`` with one open seat."""
    fields = dict(game_type=game_type, table=TABLE, lobby=lobby("waiting", "ann", ""))
    fields.update(waiting=True)
    fields.update(overrides)
    return game(**fields)


def step(version: int, **fields) -> MoveRecord:
    return MoveRecord(
        version=version,
        seat=0,
        move=f"m{version}",
        applied_at=fields.pop("applied_at", 1000.0 + version),
        **fields,
    )


# --- the new columns ---------------------------------------------------------------------


async def test_table_lobby_waiting_and_due_at_load_back_as_created(store):
    record = table(kind(), due_at=1234.5)
    await store.create(record)
    loaded = await store.load(record.game_id)
    assert loaded.table == TABLE
    assert loaded.lobby == lobby("waiting", "ann", "")
    assert loaded.waiting is True
    assert loaded.due_at == 1234.5
    plain = game()
    await store.create(plain)
    loaded = await store.load(plain.game_id)
    assert (loaded.table, loaded.lobby, loaded.waiting, loaded.due_at) == (None, None, False, None)


async def test_the_store_keeps_its_own_copy_of_table_and_lobby(store):
    config = json.loads(json.dumps(TABLE))
    record = table(kind(), table=config)
    await store.create(record)
    config["clock"]["per_move"] = 1  # the caller's dict changes after create
    assert (await store.load(record.game_id)).table == TABLE


async def test_an_append_with_a_lobby_replaces_it_and_sets_waiting_from_its_status(store):
    record = table(kind())
    await store.create(record)
    await store.append(record.game_id, step(1, lobby=lobby("in_progress", "ann", "bob")))
    loaded = await store.load(record.game_id)
    assert loaded.lobby == lobby("in_progress", "ann", "bob")
    assert loaded.waiting is False
    assert loaded.table == TABLE  # the table never changes
    # A seat opening again (a leave) makes the table wait again.
    await store.append(record.game_id, step(2, lobby=lobby("waiting", "ann", "")))
    loaded = await store.load(record.game_id)
    assert loaded.waiting is True and loaded.lobby == lobby("waiting", "ann", "")


async def test_an_append_without_a_lobby_leaves_lobby_and_waiting_alone(store):
    record = table(kind())
    await store.create(record)
    await store.append(record.game_id, step(1))
    loaded = await store.load(record.game_id)
    assert loaded.lobby == lobby("waiting", "ann", "") and loaded.waiting is True
    assert loaded.version == 1


async def test_every_append_writes_due_at_and_none_clears_it(store):
    record = game(game_type=kind(), due_at=1500.0)
    await store.create(record)
    await store.append(record.game_id, step(1, due_at=2000.0))
    assert (await store.load(record.game_id)).due_at == 2000.0
    await store.append(record.game_id, step(2))
    assert (await store.load(record.game_id)).due_at is None
    await store.append(record.game_id, step(3, due_at=2100.25))
    assert (await store.load(record.game_id)).due_at == 2100.25


async def test_lobby_and_due_at_are_not_kept_with_the_move(store):
    record = table(kind())
    await store.create(record)
    await store.append(record.game_id, step(1, lobby=lobby("in_progress", "a", "b"), due_at=5.0))
    (kept,) = await store.moves(record.game_id)
    assert kept.lobby is None and kept.due_at is None
    assert kept.move == "m1" and kept.version == 1


async def test_a_refused_append_changes_neither_lobby_nor_due_at(store):
    record = table(kind(), due_at=1500.0)
    await store.create(record)
    await store.append(record.game_id, step(1, due_at=1600.0))
    with contextlib.suppress(Exception):
        await store.append(record.game_id, step(1, lobby=lobby("in_progress", "a", "b")))
    loaded = await store.load(record.game_id)
    assert loaded.version == 1 and loaded.due_at == 1600.0
    assert loaded.waiting is True and loaded.lobby == lobby("waiting", "ann", "")


async def test_a_finishing_move_clears_waiting(store):
    quiet, loud = table(kind()), table(kind())
    await store.create(quiet)
    await store.create(loud)
    await store.append(quiet.game_id, step(1, finished=True))
    # Even a lobby that still says "waiting" does not keep a finished game waiting.
    await store.append(loud.game_id, step(1, finished=True, lobby=lobby("waiting", "a", "")))
    for record in (quiet, loud):
        loaded = await store.load(record.game_id)
        assert loaded.waiting is False and loaded.finished_at == 1001.0
    assert (await store.load(loud.game_id)).lobby == lobby("waiting", "a", "")


# --- the waiting-table quota -------------------------------------------------------------


async def test_the_waiting_quota_counts_an_owners_unfinished_waiting_tables(store):
    gtype, owner = kind(), f"addr:{uuid.uuid4().hex}"
    first = table(gtype, owner=owner)
    await store.create(first, waiting_limit=2)
    second = table(gtype, owner=owner)
    await store.create(second, waiting_limit=2)
    with pytest.raises(QuotaExceeded) as caught:
        await store.create(table(gtype, owner=owner), waiting_limit=2)
    assert (caught.value.owner, caught.value.limit, caught.value.quota) == (owner, 2, "waiting")
    assert "waiting" in str(caught.value)
    # Not counted: a game that is not a waiting table, another owner, another game type.
    await store.create(game(game_type=gtype, owner=owner), waiting_limit=2)
    await store.create(table(gtype, owner=f"addr:{uuid.uuid4().hex}"), waiting_limit=2)
    await store.create(table(kind(), owner=owner), waiting_limit=2)
    # A table that starts, and one that finishes, each free a place.
    await store.append(first.game_id, step(1, lobby=lobby("in_progress", "a", "b")))
    await store.create(table(gtype, owner=owner), waiting_limit=2)
    with pytest.raises(QuotaExceeded):
        await store.create(table(gtype, owner=owner), waiting_limit=2)
    await store.append(second.game_id, step(1, finished=True))
    await store.create(table(gtype, owner=owner), waiting_limit=2)


async def test_the_games_quota_still_says_which_quota_refused(store):
    gtype, owner = kind(), f"key:{uuid.uuid4().hex[:8]}"
    await store.create(table(gtype, owner=owner), owner_limit=1, waiting_limit=5)
    with pytest.raises(QuotaExceeded) as caught:
        await store.create(table(gtype, owner=owner), owner_limit=1, waiting_limit=5)
    assert (caught.value.limit, caught.value.quota) == (1, "games")


@contextlib.asynccontextmanager
async def racing(store):
    """The store, or for PostgreSQL one with a connection open for each of 20 racers
    (a pool that opens them one by one would let the creates take turns anyway)."""
    if not store.url.startswith("postgres"):
        yield store
        return
    joiner = "&" if "?" in store.url else "?"
    wide = open_store(f"{store.url}{joiner}pool_min=20&pool_max=20")
    try:
        await asyncio.gather(*(wide.load("warm-up") for _ in range(40)))
        yield wide
    finally:
        await wide.close()


async def test_twenty_concurrent_waiting_tables_of_one_owner_make_exactly_the_limit(store):
    async with racing(store) as racer:
        for _ in range(3):
            gtype, owner = kind(), f"addr:{uuid.uuid4().hex}"
            results = await asyncio.gather(
                *(racer.create(table(gtype, owner=owner), waiting_limit=3) for _ in range(20)),
                return_exceptions=True,
            )
            assert sum(r is None for r in results) == 3
            refused = [r for r in results if r is not None]
            assert len(refused) == 17
            assert all(isinstance(r, QuotaExceeded) and r.quota == "waiting" for r in refused)
            assert await racer.count_waiting(gtype) == 3


# --- the lobby list ----------------------------------------------------------------------


async def lobby_fixture(store, gtype: str) -> list[tuple[GameRecord, str]]:
    """Ten games of ``gtype`` in every status, with options of every JSON scalar type;
    each paired with the status the test expects for it."""
    specs = [
        # created_at, players, options, status
        (1001.0, 2, {"fast": True, "size": 2}, "waiting"),
        (1002.0, 3, {"fast": 1, "size": 2.0}, "waiting"),
        (1003.0, 2, {"fast": "1", "size": 3}, "in_progress"),
        (1004.0, 4, {"fast": False, "mode": "team"}, "finished"),
        (1005.0, 2, {"fast": True, "mode": "team", "size": 2}, "in_progress"),
        (1005.0, 2, {"fast": True, "mode": "solo"}, "waiting"),  # same time: id breaks it
        (1005.0, 3, {"mode": None}, "finished"),
        (1006.0, 2, {"fast": True, "size": 2.5}, "waiting"),
        (1007.0, 3, {"fast": True, "size": 2}, "in_progress"),
        (1008.0, 2, {}, "waiting"),
    ]
    made = []
    for n, (created, players, options, status) in enumerate(specs):
        record = table(
            gtype,
            game_id=f"{n:02d}-{uuid.uuid4().hex[:6]}",
            created_at=created,
            updated_at=created,
            players=players,
            options=options,
        )
        await store.create(record)
        if status == "in_progress":
            await store.append(record.game_id, step(1, lobby=lobby("in_progress", "a", "b")))
        elif status == "finished":
            await store.append(record.game_id, step(1, lobby=lobby("in_progress", "a", "b")))
            await store.append(record.game_id, step(2, finished=True))
        made.append((record, status))
    return made


def newest_first(records) -> list[str]:
    ordered = sorted(records, key=lambda r: (r.created_at, r.game_id), reverse=True)
    return [r.game_id for r in ordered]


async def test_list_games_filters_by_status_players_and_options(store):
    gtype = kind()
    made = await lobby_fixture(store, gtype)
    await store.create(table(kind()))  # another game type is never listed

    async def ids(**filters) -> list[str]:
        return [g.game_id for g in await store.list_games(gtype, **filters)]

    assert await ids() == newest_first(r for r, _ in made)
    for status in ("waiting", "in_progress", "finished"):
        assert await ids(status=status) == newest_first(r for r, s in made if s == status)
        assert await ids(status=status), status  # the fixture has some of each
    assert await ids(players=3) == newest_first(r for r, _ in made if r.players == 3)
    assert await ids(status="waiting", players=2) == newest_first(
        r for r, s in made if s == "waiting" and r.players == 2
    )
    # JSON equality: true is neither 1 nor "1"; 2 equals 2.0; null matches only a null.
    assert await ids(options={"fast": True}) == newest_first(
        r for r, _ in made if r.options.get("fast") is True
    )
    assert await ids(options={"fast": 1}) == [made[1][0].game_id]
    assert await ids(options={"fast": "1"}) == [made[2][0].game_id]
    assert await ids(options={"fast": False}) == [made[3][0].game_id]
    assert await ids(options={"size": 2}) == newest_first(
        r for r, _ in made if r.options.get("size") == 2
    )
    assert len(await ids(options={"size": 2})) == 4
    assert await ids(options={"size": 2.5}) == [made[7][0].game_id]
    assert await ids(options={"mode": None}) == [made[6][0].game_id]
    assert await ids(options={"mode": "team", "fast": True}) == [made[4][0].game_id]
    assert await ids(options={"mode": "team", "fast": True}, status="waiting") == []
    assert await ids(options={"absent": 1}) == []
    assert await ids(options={}) == await ids()


async def test_list_games_returns_the_lobby_fields(store):
    gtype = kind()
    made = await lobby_fixture(store, gtype)
    listed = {g.game_id: g for g in await store.list_games(gtype)}
    for record, status in made:
        got = listed[record.game_id]
        assert got.table == TABLE
        assert got.waiting is (status == "waiting")
        assert got.lobby["status"] == ("waiting" if status == "waiting" else "in_progress")
        assert (got.finished_at is not None) is (status == "finished")
        assert got.options == record.options and got.players == record.players


async def test_list_games_refuses_an_unknown_status_and_a_container_option(store):
    with pytest.raises(ValueError):
        await store.list_games(kind(), status="open")
    with pytest.raises(TypeError):
        await store.list_games(kind(), options={"seats": [1, 2]})


async def test_pages_are_stable_while_newer_games_are_created(store):
    gtype = kind()
    made = await lobby_fixture(store, gtype)
    expected = newest_first(r for r, _ in made)
    seen: list[str] = []
    after = None
    newer = 0
    while True:
        page = await store.list_games(gtype, after=after, limit=3)
        assert len(page) <= 3
        if not page:
            break
        seen += [g.game_id for g in page]
        after = (page[-1].created_at, page[-1].game_id)
        # Newer games between pages, one at the same time as the page's last game but
        # with a greater id: none of them belong to the pages still to come.
        newer += 1
        await store.create(table(gtype, created_at=2000.0 + newer))
        same_time = "zz" + uuid.uuid4().hex
        await store.create(table(gtype, created_at=after[0], game_id=same_time))
    assert seen == expected
    assert len(await store.list_games(gtype, limit=100)) == len(made) + 2 * newer
    assert await store.list_games(gtype, limit=0) == []


async def test_quarantined_games_are_never_listed_counted_or_due(store):
    gtype = kind()
    sound, bad = table(gtype), table(gtype, due_at=1.0)
    await store.create(sound)
    await store.create(bad)
    assert await store.count_waiting(gtype) == 2
    assert bad.game_id in await store.due(gtype, 10.0, waiting_ttl=0, idle_seconds=0)
    await store.quarantine(bad.game_id, "move 1 cannot be replayed", 5.0)
    assert [g.game_id for g in await store.list_games(gtype)] == [sound.game_id]
    assert [g.game_id for g in await store.list_games(gtype, status="waiting")] == [sound.game_id]
    assert await store.count_waiting(gtype) == 1
    assert await store.due(gtype, 10.0, waiting_ttl=0, idle_seconds=0) == []
    await store.release(bad.game_id)
    assert await store.count_waiting(gtype) == 2


async def test_count_waiting_counts_open_tables_of_the_type_only(store):
    gtype = kind()
    made = await lobby_fixture(store, gtype)
    await store.create(table(kind()))
    assert await store.count_waiting(gtype) == sum(s == "waiting" for _, s in made)
    assert await store.count_waiting(gtype) == 5
    first_waiting = next(r for r, s in made if s == "waiting")
    await store.append(first_waiting.game_id, step(1, lobby=lobby("in_progress", "a", "b")))
    assert await store.count_waiting(gtype) == 4
    assert await store.count_waiting(kind()) == 0


# --- due games ---------------------------------------------------------------------------


async def test_a_waiting_table_is_due_once_older_than_the_ttl(store):
    gtype = kind()
    record = table(gtype, created_at=1000.0, updated_at=1000.0)
    await store.create(record)

    async def due(now, ttl):
        return await store.due(gtype, now, waiting_ttl=ttl, idle_seconds=10.0)

    assert await due(1100.0, 100.0) == [record.game_id]
    assert await due(1099.5, 100.0) == []  # control: not old enough
    assert await due(5000.0, 0) == []  # control: no TTL, never due (and never idle: waiting)
    await store.append(record.game_id, step(1, applied_at=1001.0, lobby=lobby("in_progress")))
    assert await due(1100.0, 100.0) == [record.game_id]  # now idle for 99 s > 10 s
    assert await store.due(gtype, 1100.0, waiting_ttl=100.0, idle_seconds=0) == []


async def test_a_game_in_progress_is_due_once_no_person_made_an_entry_for_the_idle_time(store):
    gtype = kind()
    record = game(game_type=gtype, created_at=900.0, updated_at=900.0)
    await store.create(record)
    assert (await store.load(record.game_id)).human_at == 900.0  # its creation
    await store.append(record.game_id, step(1, applied_at=1000.0))  # a person's entry

    async def due(now, idle):
        return await store.due(gtype, now, waiting_ttl=1.0, idle_seconds=idle)

    assert await due(1050.0, 50.0) == [record.game_id]
    assert await due(1049.0, 50.0) == []  # control: a move 49 s ago
    assert await due(9999.0, 0) == []  # control: no idle limit
    # A bot's entry (human_at kept at the person's last) does not make the game played;
    # a deadline does not keep it from being idle either.
    await store.append(record.game_id, step(2, applied_at=1040.0, human_at=1000.0, due_at=3000.0))
    assert await due(1050.0, 50.0) == [record.game_id]
    await store.append(record.game_id, step(3, applied_at=1045.0, due_at=3000.0))
    assert await due(1050.0, 50.0) == []  # control: that one was a person's


async def test_bot_turns_are_listed_apart_from_deadlines_longest_waiting_first(store):
    gtype = kind()
    turns = [game(game_type=gtype, game_id=f"b{n}-{uuid.uuid4().hex[:6]}") for n in range(3)]
    for n, record in enumerate(turns):
        await store.create(record)
        await store.append(record.game_id, step(1, applied_at=100.0 - n, bot_turn=True))
    deadline = game(game_type=gtype, due_at=150.0)
    await store.create(deadline)
    # However many bot turns wait, they never crowd a deadline out of the due list.
    assert await store.due(gtype, 200.0, waiting_ttl=0, idle_seconds=0, limit=1) == [
        deadline.game_id
    ]
    expected = [r.game_id for r in reversed(turns)]
    assert await store.bot_turns(gtype, 100.0) == expected
    assert await store.bot_turns(gtype, 98.0) == expected[:1]  # only the longest waiting
    assert await store.bot_turns(gtype, 100.0, limit=2) == expected[:2]
    assert await store.bot_turns(kind(), 100.0) == []  # another type's
    await store.append(turns[0].game_id, step(2, applied_at=101.0))  # the bot moved
    await store.append(turns[1].game_id, step(2, applied_at=101.0, bot_turn=True, finished=True))
    await store.quarantine(turns[2].game_id, "cannot be replayed", 1.0)
    assert await store.bot_turns(gtype, 200.0) == []


async def test_an_owners_bot_tables_and_tables_of_bots_alone_are_capped_at_create(store):
    gtype = kind()
    quotas = Quotas(games=10, waiting=10, bot_tables=3, all_bot_tables=1)

    def bots(seats: int, owner: str = "addr:1.2.3.4") -> GameRecord:
        return game(game_type=gtype, owner=owner, bot_seats=seats)

    all_bots = bots(2)
    await store.create(all_bots, quotas=quotas)
    with pytest.raises(QuotaExceeded) as refused:
        await store.create(bots(2), quotas=quotas)
    assert (refused.value.quota, refused.value.limit) == ("all_bot_tables", 1)
    await store.create(bots(1), quotas=quotas)
    await store.create(bots(1), quotas=quotas)
    with pytest.raises(QuotaExceeded) as refused:
        await store.create(bots(1), quotas=quotas)
    assert (refused.value.quota, refused.value.limit) == ("bot_tables", 3)
    # Tables without a bot, another owner, and a place freed by a finished game.
    await store.create(bots(0), quotas=quotas)
    await store.create(bots(2, owner="addr:5.6.7.8"), quotas=quotas)
    await store.append(all_bots.game_id, step(1, finished=True))
    await store.create(bots(2), quotas=quotas)
    loaded = await store.load(all_bots.game_id)
    assert loaded.bot_seats == 2


async def test_a_game_is_due_when_its_due_at_comes(store):
    gtype = kind()
    record = game(game_type=gtype, due_at=1500.0)
    await store.create(record)

    async def due(now):
        return await store.due(gtype, now, waiting_ttl=0, idle_seconds=0)

    assert await due(1500.0) == [record.game_id]
    assert await due(1499.9) == []  # control: not yet
    assert await store.due(kind(), 1500.0, waiting_ttl=0, idle_seconds=0) == []  # other type
    # A waiting table with a deadline is due by the deadline before its TTL.
    tbl = table(gtype, created_at=1000.0, due_at=1200.0)
    await store.create(tbl)
    assert await store.due(gtype, 1300.0, waiting_ttl=3600.0, idle_seconds=0) == [tbl.game_id]
    # A finished game is never due.
    await store.append(record.game_id, step(1, finished=True, due_at=1500.0))
    assert await due(1600.0) == [tbl.game_id]


async def test_due_games_come_earliest_deadline_first_up_to_the_limit(store):
    gtype = kind()
    waiting = table(gtype, game_id="w" + uuid.uuid4().hex, created_at=100.0)  # due at 160
    idle = game(game_type=gtype, game_id="i" + uuid.uuid4().hex, created_at=50.0)
    deadline = game(game_type=gtype, game_id="d" + uuid.uuid4().hex, due_at=140.0)
    twice = table(gtype, game_id="t" + uuid.uuid4().hex, created_at=10.0, due_at=190.0)
    for record in (waiting, idle, deadline, twice):
        await store.create(record)
    await store.append(idle.game_id, step(1, applied_at=100.0))  # idle from 100: due at 130
    found = await store.due(gtype, 200.0, waiting_ttl=60.0, idle_seconds=30.0)
    # ``twice`` is due twice (TTL at 70, deadline at 190): listed once, at its earliest.
    assert found == [twice.game_id, idle.game_id, deadline.game_id, waiting.game_id]
    assert await store.due(gtype, 200.0, waiting_ttl=60.0, idle_seconds=30.0, limit=2) == [
        twice.game_id,
        idle.game_id,
    ]


async def test_quarantined_games_cannot_crowd_the_due_list(store):
    gtype = kind()
    stuck = [game(game_type=gtype, due_at=100.0 + n) for n in range(3)]
    sound = game(game_type=gtype, due_at=200.0)
    for record in [*stuck, sound]:
        await store.create(record)
        if record is not sound:
            await store.quarantine(record.game_id, "cannot be replayed", 1.0)
    assert await store.due(gtype, 300.0, waiting_ttl=0, idle_seconds=0, limit=2) == [sound.game_id]


# --- indexes (SQLite: the query plans) ---------------------------------------------------


async def test_sqlite_lobby_and_due_queries_use_their_indexes(tmp_path, monkeypatch):
    from services.kit.store.sqlite import SqliteStore

    path = tmp_path / "plans.db"
    backend = open_store(f"sqlite:///{path}")
    statements: list[str] = []
    connect = SqliteStore._connect

    def traced(self):
        conn = connect(self)
        conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(SqliteStore, "_connect", traced)
    try:
        gtype = kind()
        await lobby_fixture(backend, gtype)
        calls = {
            "all": backend.list_games(gtype, after=(1005.0, "zz"), limit=3),
            "waiting": backend.list_games(gtype, status="waiting", players=2),
            "options": backend.list_games(gtype, status="in_progress", options={"fast": True}),
            "count": backend.count_waiting(gtype),
            "due": backend.due(gtype, 2000.0, waiting_ttl=60.0, idle_seconds=60.0),
            "bot_turns": backend.bot_turns(gtype, 2000.0),
        }
        plans = {}
        plain = sqlite3.connect(path)
        for name, call in calls.items():
            statements.clear()
            await call
            (query,) = [s for s in statements if s.lstrip().upper().startswith("SELECT")]
            rows = plain.execute("EXPLAIN QUERY PLAN " + query).fetchall()
            plans[name] = " | ".join(row[-1] for row in rows)
        plain.close()
    finally:
        await backend.close()
    for name, plan in plans.items():
        assert "SCAN g" not in plan.replace("SCAN g USING", ""), (name, plan)
        assert "SCAN games" not in plan.replace("SCAN games USING", ""), (name, plan)
    assert "games_lobby" in plans["all"] and "TEMP B-TREE" not in plans["all"], plans["all"]
    assert "games_waiting" in plans["waiting"] and "TEMP B-TREE" not in plans["waiting"]
    assert "games_waiting" in plans["count"], plans["count"]
    for index in ("games_waiting", "games_human", "games_due"):
        assert index in plans["due"], plans["due"]
    assert "games_bot_turn" in plans["bot_turns"], plans["bot_turns"]


# --- files and databases written before these columns ------------------------------------

# The SQLite schema as the store wrote it before tables and lobbies (its SCHEMA, then the
# owner column and its index, added on open).
OLD_SQLITE = """
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
ALTER TABLE games ADD COLUMN owner TEXT;
CREATE INDEX IF NOT EXISTS games_owner ON games (game_type, owner)
    WHERE finished_at IS NULL AND owner IS NOT NULL;
"""

OLD_POSTGRES = """
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
"""

# Two games as the old store wrote them: one in progress since 1001, one waiting for
# nothing (the old code had no waiting tables) and finished.
OLD_ROWS = [
    ("old-live", "channeling", 2, '{"a": 1}', "42", '["aa", "bb"]', 1, 1000.0, 1001.0, None),
    ("old-done", "channeling", 2, "{}", "7", '["cc", "dd"]', 1, 1000.0, 1002.0, 1002.0),
]


async def check_old_rows_after_migration(backend) -> None:
    live = await backend.load("old-live")
    assert (live.table, live.lobby, live.waiting, live.due_at) == (None, None, False, None)
    assert live.version == 1 and live.options == {"a": 1} and live.seed == 42
    # A person's last entry is taken to be the game's last; no bot seat, no bot's turn.
    assert (live.human_at, live.bot_seats, live.bot_turn) == (1001.0, 0, False)
    assert [m.move for m in await backend.moves("old-live")] == ["glyph 1"]
    done = await backend.load("old-done")
    assert (done.table, done.lobby, done.waiting, done.due_at) == (None, None, False, None)
    assert [g.game_id for g in await backend.list_games("channeling")] == ["old-live", "old-done"]
    assert [g.game_id for g in await backend.list_games("channeling", status="in_progress")] == [
        "old-live"
    ]
    assert await backend.count_waiting("channeling") == 0
    # An old game in progress is idle by its last move; nothing else is due.
    assert await backend.due("channeling", 1061.0, waiting_ttl=10, idle_seconds=60) == ["old-live"]
    assert await backend.due("channeling", 1060.0, waiting_ttl=10, idle_seconds=60) == []
    # The new columns take writes on an old row.
    await backend.append("old-live", step(2, due_at=1100.0, lobby=lobby("in_progress", "a", "b")))
    live = await backend.load("old-live")
    assert live.due_at == 1100.0 and live.lobby == lobby("in_progress", "a", "b")
    fresh = table("channeling")
    await backend.create(fresh)
    assert (await backend.load(fresh.game_id)).table == TABLE


async def test_a_sqlite_file_written_before_tables_opens_and_gains_the_columns(tmp_path):
    path = tmp_path / "old.db"
    old = sqlite3.connect(path)
    old.executescript(OLD_SQLITE)
    old.executemany(
        "INSERT INTO games (game_id, game_type, players, options, seed, token_hashes, version,"
        " created_at, updated_at, finished_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        OLD_ROWS,
    )
    old.executemany(
        "INSERT INTO moves VALUES (?, 1, 0, 'glyph 1', '[]', NULL, ?)",
        [("old-live", 1001.0), ("old-done", 1002.0)],
    )
    old.commit()
    columns_before = {row[1] for row in old.execute("PRAGMA table_info(games)")}
    old.close()
    assert "waiting" not in columns_before  # the control: the file really is the old one
    backend = open_store(f"sqlite:///{path}")
    try:
        await check_old_rows_after_migration(backend)
    finally:
        await backend.close()
    after = sqlite3.connect(path)
    columns = {row[1] for row in after.execute("PRAGMA table_info(games)")}
    indexes = {row[0] for row in after.execute("SELECT name FROM sqlite_master WHERE type='index'")}
    after.close()
    assert {"table_config", "lobby", "waiting", "due_at"} <= columns
    assert {"games_lobby", "games_waiting", "games_due", "games_human", "games_bot_turn"} <= indexes
    assert "games_idle" not in indexes  # replaced by games_human
    # Opening it again (now migrated) changes nothing and loses nothing.
    again = open_store(f"sqlite:///{path}")
    try:
        assert (await again.load("old-live")).due_at == 1100.0
    finally:
        await again.close()


@pytest.mark.skipif(not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL is not set")
async def test_a_postgres_database_written_before_tables_opens_and_gains_the_columns():
    import psycopg

    schema = f"old_{uuid.uuid4().hex[:10]}"
    admin = await psycopg.AsyncConnection.connect(POSTGRES, autocommit=True)
    backend = None
    try:
        await admin.execute(f"CREATE SCHEMA {schema}")
        await admin.execute(f"SET search_path TO {schema}")
        await admin.execute(OLD_POSTGRES)
        for row in OLD_ROWS:
            await admin.execute(
                "INSERT INTO tabletop_games (game_id, game_type, players, options, seed,"
                " token_hashes, version, created_at, updated_at, finished_at)"
                " VALUES (%s, %s, %s, %s::jsonb, %s, %s::jsonb, %s, %s, %s, %s)",
                row,
            )
            await admin.execute(
                "INSERT INTO tabletop_moves VALUES (%s, 1, 0, 'glyph 1', '[]', NULL, %s)",
                (row[0], row[8]),
            )
        cur = await admin.execute(
            "SELECT count(*) FROM information_schema.columns WHERE table_schema = %s"
            " AND table_name = 'tabletop_games' AND column_name = 'waiting'",
            (schema,),
        )
        assert (await cur.fetchone())[0] == 0  # the control: the database really is old
        joiner = "&" if "?" in POSTGRES else "?"
        backend = open_store(f"{POSTGRES}{joiner}options=-csearch_path%3D{schema}")
        await check_old_rows_after_migration(backend)
        cur = await admin.execute(
            "SELECT indexname FROM pg_indexes WHERE schemaname = %s", (schema,)
        )
        indexes = {row[0] for row in await cur.fetchall()}
        assert {
            "tabletop_games_lobby",
            "tabletop_games_waiting",
            "tabletop_games_due",
            "tabletop_games_human",
            "tabletop_games_bot_turn",
        } <= indexes
        assert "tabletop_games_idle" not in indexes  # replaced by tabletop_games_human
    finally:
        if backend is not None:
            await backend.close()
        await admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        await admin.close()


@pytest.mark.skipif(not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL is not set")
async def test_postgres_lobby_and_due_queries_use_their_indexes(monkeypatch):
    """On 20,000 analyzed games, no lobby or due query reads the whole games table."""
    import psycopg

    schema = f"plans_{uuid.uuid4().hex[:10]}"
    admin = await psycopg.AsyncConnection.connect(POSTGRES, autocommit=True)
    backend = None
    try:
        await admin.execute(f"CREATE SCHEMA {schema}")
        await admin.execute(f"SET search_path TO {schema}")
        joiner = "&" if "?" in POSTGRES else "?"
        backend = open_store(f"{POSTGRES}{joiner}options=-csearch_path%3D{schema}")
        assert await backend.load("none") is None  # makes the schema
        # Every third game finished, every seventh other one waiting, some with deadlines;
        # a fifth of them of another game type.
        await admin.execute(
            "INSERT INTO tabletop_games (game_id, game_type, players, options, seed,"
            " token_hashes, version, created_at, updated_at, finished_at, waiting, due_at,"
            " human_at, bot_turn)"
            " SELECT 'g' || i, CASE WHEN i % 5 = 0 THEN 'other' ELSE 'lobby' END, 2 + i % 3,"
            " jsonb_build_object('fast', i % 2 = 0), '1', '[]', 1, 1000 + i, 1000 + i,"
            " CASE WHEN i % 3 = 0 THEN 30000 + i END, i % 3 <> 0 AND i % 7 = 0,"
            " CASE WHEN i % 3 <> 0 AND i % 7 <> 0 AND i % 11 = 0 THEN 40000 + i END,"
            " 1000 + i, i % 3 <> 0 AND i % 7 <> 0 AND i % 13 = 0"
            " FROM generate_series(1, 20000) AS i"
        )
        await admin.execute("ANALYZE tabletop_games")
        seen: list[tuple[str, object]] = []
        execute = psycopg.AsyncConnection.execute

        async def traced(self, query, params=None, **kwargs):
            if isinstance(query, str) and "tabletop_games" in query and "SELECT" in query:
                seen.append((query, params))
            return await execute(self, query, params, **kwargs)

        monkeypatch.setattr(psycopg.AsyncConnection, "execute", traced)
        calls = {
            "all": lambda: backend.list_games("lobby", after=(15000.0, "g14000")),
            "waiting": lambda: backend.list_games("lobby", status="waiting", players=3),
            "options": lambda: backend.list_games(
                "lobby", status="finished", options={"fast": True}
            ),
            "count": lambda: backend.count_waiting("lobby"),
            "due": lambda: backend.due("lobby", 2500.0, waiting_ttl=1000.0, idle_seconds=1400.0),
            "bot_turns": lambda: backend.bot_turns("lobby", 2500.0),
        }
        plans = {}
        for name, call in calls.items():
            seen.clear()
            found = await call()
            assert found, name  # each query has something to find
            ((query, params),) = seen
            cur = await execute(admin, "EXPLAIN " + query, params)
            plans[name] = " | ".join(row[0].strip() for row in await cur.fetchall())
        monkeypatch.undo()
    finally:
        if backend is not None:
            await backend.close()
        await admin.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")
        await admin.close()
    for name, plan in plans.items():
        assert "Seq Scan on tabletop_games" not in plan, (name, plan)
    assert "tabletop_games_lobby" in plans["all"], plans["all"]
    assert "tabletop_games_waiting" in plans["waiting"], plans["waiting"]
    assert "tabletop_games_waiting" in plans["count"], plans["count"]
    assert "tabletop_games_waiting" in plans["due"], plans["due"]
    assert "tabletop_games_due" in plans["due"], plans["due"]
    # The idle branch and bot_turns: their partial indexes, or the one on updated_at when
    # the planner finds few games that old.
    assert "tabletop_games_human" in plans["due"] or "tabletop_games_updated" in plans["due"]
    bot_turns = plans["bot_turns"]
    assert "tabletop_games_bot_turn" in bot_turns or "tabletop_games_updated" in bot_turns
