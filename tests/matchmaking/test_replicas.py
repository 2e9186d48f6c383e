"""FindMatch with two service replicas on one PostgreSQL database (the pool in
``tabletop_pool``, services/kit/store/pool.py): players on both meet, each matched
once; a second FindMatch on the other replica replaces the first; a replica that dies
drops only its own players. Controls: without ``FOR UPDATE SKIP LOCKED``, the
proposal's guard and the accept step, two replicas' overlapping rounds seat a player
twice; without dropping stale rows a live player
is held up by a dead replica's (proposed with it, never accepted: tests/matchmaking/
test_accept.py has the accept step's own tests).

Each test has a PostgreSQL schema of its own, so tests sharing the database, even at
once, never meet each other's players, and leave no rows behind in anyone's way.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import random
import uuid

import grpc
import psycopg
import pytest
from google.protobuf import duration_pb2
from tabletop.common.v1 import table_pb2

from services import registry
from services.kit import players
from services.kit.matchmaking import shared
from services.kit.players.seats import PlayerPolicy
from services.kit.status import error_info
from services.kit.store import pool as store_pool
from tests.matchmaking.test_find_match import SIGNER, find, first_waiting, found
from tests.players.support import AUDIENCE, ISSUER
from tests.ratings.test_store import schema_url
from tests.support import service_in_process

POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL")
HEARTBEAT = 0.3  # seconds: rows go stale after 3 of them


URL: list[str] = []  # this test's schema


@pytest.fixture(autouse=True)
def _needs_postgres(monkeypatch):
    if not POSTGRES:
        pytest.skip("TABLETOP_TEST_POSTGRES_URL is not set (.ci/run always sets it)")
    monkeypatch.setenv("TABLETOP_POOL_HEARTBEAT_SECONDS", str(HEARTBEAT))
    monkeypatch.setenv("TABLETOP_MATCH_TICK_SECONDS", "0.1")
    URL[:] = [schema_url(POSTGRES)]


def own_pool() -> table_pb2.TimeControl:
    """A time control of this test alone: its players wait in a pool of their own."""
    seconds = random.randrange(100_000, 2_500_000)
    return table_pb2.TimeControl(per_decision=duration_pb2.Duration(seconds=seconds))


def ids(n: int) -> list[str]:
    run = uuid.uuid4().hex[:8]
    return [f"player-{run}-{i:03d}" for i in range(n)]


@contextlib.asynccontextmanager
async def replica():
    async with service_in_process("channeling", URL[0]) as running:
        key = players.StaticKey(players.public_jwk(SIGNER.private.public_key()), "k1")
        verifier = players.Verifier(key, issuer=ISSUER, audience=AUDIENCE)
        running.manager.players = PlayerPolicy(verifier)
        async with grpc.aio.insecure_channel(running.address) as channel:
            yield running, channel


async def games_held(player_ids: list[str]) -> dict[str, int]:
    """How many tables seat each player, as the database says."""
    async with await psycopg.AsyncConnection.connect(URL[0]) as conn:
        cur = await conn.execute(
            "SELECT player_id, count(DISTINCT game_id) FROM tabletop_game_players"
            " WHERE player_id = ANY(%s) GROUP BY player_id",
            (player_ids,),
        )
        return {p: int(n) for p, n in await cur.fetchall()}


async def pool_rows(player_ids: list[str]) -> list[str]:
    async with await psycopg.AsyncConnection.connect(URL[0]) as conn:
        cur = await conn.execute(
            "SELECT player_id FROM tabletop_pool WHERE player_id = ANY(%s)", (player_ids,)
        )
        return [p for (p,) in await cur.fetchall()]


async def drop_rows(player_ids: list[str]) -> None:
    async with await psycopg.AsyncConnection.connect(URL[0], autocommit=True) as conn:
        await conn.execute("DELETE FROM tabletop_pool WHERE player_id = ANY(%s)", (player_ids,))


def slow_tables(monkeypatch, running, delay: float) -> None:
    """Each table takes ``delay`` to make: two replicas' rounds overlap."""
    create = running.manager.create

    async def slow(*args, **kwargs):
        await asyncio.sleep(delay)
        return await create(*args, **kwargs)

    monkeypatch.setattr(running.manager, "create", slow)


async def test_the_service_uses_the_shared_pool_on_postgresql():
    async with replica() as (running, _channel):
        from tests.matchmaking.test_find_match import running_matcher

        assert isinstance(running_matcher(running), shared.SharedMatchmaker)


def overlapping_rounds(monkeypatch, replicas) -> None:
    """Each replica's first proposal waits until every replica has read its rows: the
    rounds overlap, as two replicas' rounds do at some moment on a busy day. (Left to
    chance, a loaded machine could run one replica's first round to the end before
    the other's began, and the control saw nothing: CI, 2026-12-03.)"""
    from tests.matchmaking.test_find_match import running_matcher

    read = asyncio.Event()
    waiting: set[int] = set()
    for i, running in enumerate(replicas):
        matcher = running_matcher(running)
        propose = matcher._propose

        async def after_both_read(rows, i=i, propose=propose):
            if not read.is_set():
                waiting.add(i)
                if len(waiting) == len(replicas):
                    read.set()
                await asyncio.wait_for(read.wait(), 30)
            return await propose(rows)

        monkeypatch.setattr(matcher, "_propose", after_both_read)


@pytest.mark.parametrize("claimed", [True, False], ids=["skip-locked", "control-unclaimed"])
async def test_players_split_across_two_replicas_are_all_paired_once(claimed, monkeypatch):
    n = 100 if claimed else 20
    if not claimed:
        monkeypatch.setattr(store_pool, "CLAIM", "")
        monkeypatch.setattr(store_pool, "GUARDED", False)
        monkeypatch.setattr(shared, "ACCEPT", False)
    pool = own_pool()
    names = ids(n)
    async with replica() as (one, channel_one), replica() as (two, channel_two):
        slow_tables(monkeypatch, one, 0.05)
        slow_tables(monkeypatch, two, 0.05)
        if not claimed:
            overlapping_rounds(monkeypatch, [one, two])
        channels = itertools.cycle([channel_one, channel_two])
        streams = [find(next(channels), p, time_control=pool) for p in names]
        try:
            if not claimed:
                # Both replicas read the same rows: some player gets seats at two tables.
                async def seated_twice() -> bool:
                    return any(c > 1 for c in (await games_held(names)).values())

                for _ in range(300):
                    if await seated_twice():
                        return
                    await asyncio.sleep(0.1)
                raise AssertionError("the control saw no player seated twice")
            results = await asyncio.wait_for(asyncio.gather(*(found(s) for s in streams)), 120)
        finally:
            for s in streams:
                s.cancel()
        # Each row leaves with its stream, while its replica runs (a replica's stop
        # leaves its rows to go stale: the store closes under the leaving).
        for _ in range(100):
            if not await pool_rows(names):
                break
            await asyncio.sleep(0.05)
        assert await pool_rows(names) == []
    tables: dict[str, list[int]] = {}
    for got in results:
        tables.setdefault(got.game_id, []).append(got.seat)
    assert len(tables) == n // 2
    assert all(sorted(seats) == [0, 1] for seats in tables.values())
    held = await games_held(names)
    assert held == dict.fromkeys(names, 1)  # every player at one table, none at two


async def test_a_second_find_match_on_the_other_replica_replaces_the_first():
    pool = own_pool()
    me, other = ids(2)
    async with replica() as (_one, channel_one), replica() as (_two, channel_two):
        first = find(channel_one, me, time_control=pool)
        await first_waiting(first)
        second = find(channel_two, me, time_control=pool)
        await first_waiting(second)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            async for _ in first:
                pass
        assert caught.value.code() == grpc.StatusCode.ABORTED
        assert error_info(caught.value).reason == "MATCH_REPLACED"
        assert await pool_rows([me]) == [me]  # one entry, not two
        later = find(channel_one, other, time_control=pool)
        got, got_other = await asyncio.wait_for(asyncio.gather(found(second), found(later)), 30)
        assert got.game_id == got_other.game_id
        assert await games_held([me, other]) == {me: 1, other: 1}


def die(running, monkeypatch) -> None:
    """The replica stops as a SIGKILLed process does: no more heartbeats, no rows
    deleted when its streams end."""
    from tests.matchmaking.test_find_match import running_matcher

    matcher = running_matcher(running)

    async def nothing(*args, **kwargs) -> None:
        return None

    monkeypatch.setattr(matcher, "_leave", nothing)
    monkeypatch.setattr(matcher, "_round", nothing)


@pytest.mark.parametrize("dropped", [True, False], ids=["stale-dropped", "control-kept"])
async def test_a_dead_replicas_players_vanish_and_the_others_are_still_matched(
    dropped, monkeypatch
):
    pool = own_pool()
    ghost, alive, late = ids(3)
    if not dropped:
        monkeypatch.setattr(shared, "STALE_BEATS", 10**9)
    async with replica() as (_two, channel_two):
        async with replica() as (one, channel_one):
            held = find(channel_one, ghost, time_control=pool)
            await first_waiting(held)
            assert await pool_rows([ghost]) == [ghost]
            die(one, monkeypatch)
            held.cancel()
        await asyncio.sleep(3 * HEARTBEAT * 2)  # past the heartbeat timeout, with a margin
        a = find(channel_two, alive, time_control=pool)
        if not dropped:
            try:
                # The dead stream's row is kept: the live player is proposed with it again
                # and again (its dead replica never accepts) and gets no table.
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(found(a), 3)
                assert await games_held([ghost, alive]) == {}
            finally:
                await drop_rows([ghost])
            return
        waiting = await first_waiting(a)
        assert waiting.players_waiting == 1  # the dead replica's player is not counted
        assert await pool_rows([ghost]) == []  # and its row was dropped
        b = find(channel_two, late, time_control=pool)
        got_a, got_b = await asyncio.wait_for(asyncio.gather(found(a), found(b)), 30)
        assert got_a.game_id == got_b.game_id
        assert await games_held([ghost, alive, late]) == {alive: 1, late: 1}


@pytest.mark.parametrize("kind", ["memory", "sqlite", "postgres"])
async def test_only_a_postgresql_store_gets_the_shared_pool(kind, tmp_path):
    """A process wraps its store (CountedStore): the choice sees through it."""
    from services.kit.matchmaking.matcher import Matchmaker
    from services.kit.metrics import CountedStore, GameMetrics
    from services.kit.store import open_store

    url = {"memory": "memory://", "sqlite": f"sqlite:///{tmp_path}/s.db", "postgres": URL[0]}
    store = CountedStore(open_store(url[kind]), GameMetrics("channeling"))

    class Manager:
        engine = registry.by_name("channeling").engine()

    manager = Manager()
    manager.store = store
    try:
        chosen = shared.matchmaker_for(manager)
    finally:
        await store.close()
    assert isinstance(chosen, Matchmaker)
    assert isinstance(chosen, shared.SharedMatchmaker) == (kind == "postgres")


@pytest.mark.parametrize("limit", [1, 0], ids=["limited", "control-unlimited"])
async def test_a_replica_holds_at_most_its_limit_of_waiting_players(limit, monkeypatch):
    monkeypatch.setenv("TABLETOP_POOL_MAX_PLAYERS", str(limit))
    first, second = ids(2)
    pool = own_pool()
    async with replica() as (_running, channel):
        waiting = find(channel, first, time_control=pool)
        await first_waiting(waiting)
        # Another pool: the two would not meet, and the second would wait.
        other = table_pb2.TimeControl(per_decision=duration_pb2.Duration(seconds=61))
        refused = find(channel, second, time_control=other)
        try:
            if not limit:
                assert (await first_waiting(refused)).players_waiting == 1
                return
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await first_waiting(refused)
            assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert error_info(caught.value).reason == "POOL_FULL"
        finally:
            waiting.cancel()
            refused.cancel()
