"""The move-log contract, for every backend: the same tests for memory, SQLite and
(when TABLETOP_TEST_POSTGRES_URL is set) PostgreSQL."""

from __future__ import annotations

import asyncio
import os
import uuid

import pytest

from services.kit.store import (
    DuplicateRequest,
    GameExists,
    GameRecord,
    MoveRecord,
    QuotaExceeded,
    VersionConflict,
    open_store,
)

POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL")


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def store(request, tmp_path):
    if request.param == "memory":
        url = "memory://"
    elif request.param == "sqlite":
        url = f"sqlite:///{tmp_path}/store.db"
    else:
        if not POSTGRES:
            pytest.skip("TABLETOP_TEST_POSTGRES_URL is not set (make test-postgres sets it)")
        url = POSTGRES
    backend = open_store(url)
    yield backend
    await backend.close()


def game(game_id: str | None = None, **overrides) -> GameRecord:
    fields = dict(
        game_id=game_id or uuid.uuid4().hex,
        game_type="channeling",
        players=2,
        options={"a": 1, "b": [1, 2]},
        seed=2**64 - 1,
        token_hashes=("aa" * 32, "bb" * 32),
        created_at=1000.0,
        updated_at=1000.0,
    )
    fields.update(overrides)
    return GameRecord(**fields)


def move(version: int, request_id: str | None = None, finished: bool = False) -> MoveRecord:
    return MoveRecord(
        version=version,
        seat=version % 2,
        move=f"glyph {version}",
        events=[{"kind": "k", "text": f"event {version}", "data": {"n": version}, "to": [0]}],
        request_id=request_id,
        applied_at=1000.0 + version,
        finished=finished,
    )


async def test_a_created_game_loads_back_as_written(store):
    record = game()
    await store.create(record)
    loaded = await store.load(record.game_id)
    assert loaded.game_id == record.game_id
    assert loaded.seed == 2**64 - 1  # the full unsigned range survives
    assert loaded.options == {"a": 1, "b": [1, 2]}
    assert loaded.token_hashes == record.token_hashes
    assert loaded.version == 0 and loaded.finished_at is None
    assert await store.load("no-such-game") is None


async def test_an_id_cannot_be_created_twice(store):
    record = game()
    await store.create(record)
    with pytest.raises(GameExists):
        await store.create(record)


async def test_moves_append_in_order_and_read_back_with_events(store):
    record = game()
    await store.create(record)
    for v in range(1, 6):
        await store.append(record.game_id, move(v, request_id=f"r{v}"))
    moves = await store.moves(record.game_id)
    assert [m.version for m in moves] == [1, 2, 3, 4, 5]
    assert moves[2].events == [{"kind": "k", "text": "event 3", "data": {"n": 3}, "to": [0]}]
    assert moves[2].request_id == "r3" and moves[2].move == "glyph 3"
    assert [m.version for m in await store.moves(record.game_id, after=3)] == [4, 5]
    assert [m.version for m in await store.moves(record.game_id, after=1, limit=2)] == [2, 3]
    assert (await store.load(record.game_id)).version == 5


async def test_append_checks_the_version(store):
    record = game()
    await store.create(record)
    await store.append(record.game_id, move(1))
    with pytest.raises(VersionConflict) as stale:
        await store.append(record.game_id, move(1))
    assert stale.value.current == 1
    with pytest.raises(VersionConflict):
        await store.append(record.game_id, move(3))
    assert [m.version for m in await store.moves(record.game_id)] == [1]


async def test_a_request_id_is_applied_once_per_game(store):
    record, other = game(), game()
    await store.create(record)
    await store.create(other)
    await store.append(record.game_id, move(1, request_id="same"))
    with pytest.raises(DuplicateRequest) as dup:
        await store.append(record.game_id, move(2, request_id="same"))
    assert dup.value.version == 1
    await store.append(other.game_id, move(1, request_id="same"))  # another game: fine
    assert (await store.load(record.game_id)).version == 1


async def test_concurrent_appends_on_one_version_have_exactly_one_winner(store):
    record = game()
    await store.create(record)
    results = await asyncio.gather(
        *(store.append(record.game_id, move(1, request_id=f"r{i}")) for i in range(8)),
        return_exceptions=True,
    )
    assert sum(r is None for r in results) == 1
    assert all(isinstance(r, VersionConflict) for r in results if r is not None)


async def test_many_games_append_concurrently(store):
    records = [game() for _ in range(20)]
    await asyncio.gather(*(store.create(r) for r in records))
    for v in range(1, 4):
        await asyncio.gather(*(store.append(r.game_id, move(v)) for r in records))
    for r in records:
        assert (await store.load(r.game_id)).version == 3


async def test_finished_games_are_removed_after_retention_and_live_ones_stay(store):
    kind, other_kind = f"t{uuid.uuid4().hex[:8]}", f"u{uuid.uuid4().hex[:8]}"
    done, live = game(game_type=kind), game(game_type=kind)
    other = game(game_type=other_kind)
    for record in (done, live, other):
        await store.create(record)
    await store.append(done.game_id, move(1, finished=True))
    await store.append(live.game_id, move(1))
    await store.append(other.game_id, move(1, finished=True))
    assert (await store.load(done.game_id)).finished_at == 1001.0
    assert await store.count_active(kind) == 1
    assert await store.delete_finished_before(1000.5, kind) == []
    assert await store.delete_finished_before(2000.0, kind) == [done.game_id]
    assert await store.load(done.game_id) is None
    assert await store.moves(done.game_id) == []
    assert (await store.load(live.game_id)).version == 1
    # Another game type's finished game in the same store is not this service's to remove.
    assert (await store.load(other.game_id)).finished_at == 1001.0
    assert await store.count_active(other_kind) == 0


async def test_sqlite_keeps_everything_across_a_reopen(tmp_path):
    url = f"sqlite:///{tmp_path}/again.db"
    first = open_store(url)
    record = game()
    await first.create(record)
    await first.append(record.game_id, move(1, request_id="x"))
    await first.close()
    second = open_store(url)
    try:
        assert (await second.load(record.game_id)).version == 1
        assert (await second.moves(record.game_id))[0].request_id == "x"
        with pytest.raises(DuplicateRequest):
            await second.append(record.game_id, move(2, request_id="x"))
    finally:
        await second.close()


async def test_sqlite_absolute_and_relative_urls(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    relative = open_store("sqlite:///rel/one.db")
    absolute = open_store(f"sqlite:///{tmp_path}/abs/two.db")
    try:
        assert (tmp_path / "rel" / "one.db").exists()
        assert (tmp_path / "abs" / "two.db").exists()
    finally:
        await relative.close()
        await absolute.close()


def test_unknown_scheme_is_refused():
    from services.kit.store import StoreError

    with pytest.raises(StoreError):
        open_store("redis://localhost")


async def test_an_owner_quota_counts_games_in_progress_of_that_owner_and_type(store):
    owner = f"addr:{uuid.uuid4().hex}"
    first = game(owner=owner)
    await store.create(first, owner_limit=2)
    await store.create(game(owner=owner), owner_limit=2)
    with pytest.raises(QuotaExceeded) as caught:
        await store.create(game(owner=owner), owner_limit=2)
    assert caught.value.limit == 2 and caught.value.owner == owner
    await store.create(game(owner=f"addr:{uuid.uuid4().hex}"), owner_limit=2)  # others
    await store.create(game(owner=owner, game_type="glow"), owner_limit=2)  # other games
    await store.create(game(owner=owner))  # no limit asked: not counted against
    await store.append(first.game_id, move(1, finished=True))  # a finished game frees one
    await store.create(game(owner=owner), owner_limit=3)
    assert (await store.load(first.game_id)).owner == owner


async def test_concurrent_creates_of_one_owner_never_pass_the_quota(store):
    owner = f"key:{uuid.uuid4().hex[:8]}"
    results = await asyncio.gather(
        *(store.create(game(owner=owner), owner_limit=3) for _ in range(10)),
        return_exceptions=True,
    )
    assert sum(r is None for r in results) == 3
    assert all(isinstance(r, QuotaExceeded) for r in results if r is not None)


async def test_a_quarantined_game_is_listed_and_its_rows_exported_as_stored(store):
    record = game()
    await store.create(record)
    await store.append(record.game_id, move(1))
    assert (await store.load(record.game_id)).quarantined is None
    await store.quarantine(record.game_id, "move 1 cannot be replayed (MalformedMove)", 5.0)
    await store.quarantine(record.game_id, "a second reason is not recorded", 6.0)
    assert (await store.load(record.game_id)).quarantined == (
        "move 1 cannot be replayed (MalformedMove)"
    )
    listed = [q for q in await store.quarantined() if q.game_id == record.game_id]
    assert [(q.game_type, q.reason, q.at) for q in listed] == [
        ("channeling", "move 1 cannot be replayed (MalformedMove)", 5.0)
    ]
    assert await store.release(record.game_id) is True
    assert await store.release(record.game_id) is False
    assert (await store.load(record.game_id)).quarantined is None
    assert all(q.game_id != record.game_id for q in await store.quarantined())
    await store.quarantine(record.game_id, "move 1 cannot be replayed (MalformedMove)", 5.0)
    raw = await store.raw(record.game_id)
    assert raw["game"]["game_id"] == record.game_id
    assert [m["move"] for m in raw["moves"]] == ["glyph 1"]
    assert await store.raw("no-such-game") is None
    await store.quarantine("no-such-game", "x", 1.0)  # nothing to mark: no row appears
    assert all(q.game_id != "no-such-game" for q in await store.quarantined())
