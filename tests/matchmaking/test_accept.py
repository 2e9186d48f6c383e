"""The accept step across replicas (PostgreSQL; docs/ratings.md, "The accept step"): a
group is proposed, each member's replica accepts for its open stream, and the table is
made only for a group whose every member's stream was open when accepted, then seated
only while the match stands. A stream that closed on replica two the moment replica
one's round matched it sends the other back to waiting with its join time (control:
without the step, a table nobody joins is made); one that closes while the table is
being made has the table cancelled (control: without the seating's check, the other is
seated with the gone player).
"""

from __future__ import annotations

import asyncio
import contextlib

import psycopg
import pytest
from google.protobuf import duration_pb2
from tabletop.common.v1 import table_pb2

from services.kit.matchmaking import shared
from services.kit.store import pool as store_pool
from tests.matchmaking.test_find_match import find, first_waiting, found, running_matcher
from tests.matchmaking.test_replicas import (
    URL,
    _needs_postgres,  # noqa: F401 (the fixture: this test's schema and settings)
    games_held,
    ids,
    own_pool,
    pool_rows,
    replica,
)

OTHER_POOL = table_pb2.TimeControl(per_decision=duration_pb2.Duration(seconds=59))


async def row_of(player: str) -> tuple[float, str | None, str | None] | None:
    """A player's pool row: its join time, its match and its table."""
    async with await psycopg.AsyncConnection.connect(URL[0]) as conn:
        cur = await conn.execute(
            "SELECT joined_at, match_id, game_id FROM tabletop_pool WHERE player_id = %s",
            (player,),
        )
        row = await cur.fetchone()
        return None if row is None else (row[0], row[1], row[2])


async def until(check, seconds: float = 30.0) -> None:
    for _ in range(int(seconds / 0.05)):
        if await check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the condition was never met")


async def nothing(*args, **kwargs) -> None:
    return None


@pytest.mark.parametrize("accept", [True, False], ids=["accept-step", "control-no-accept"])
async def test_a_stream_closed_on_another_replica_as_it_is_matched_is_not_seated(
    accept, monkeypatch
):
    if not accept:
        monkeypatch.setattr(shared, "ACCEPT", False)
    pool = own_pool()
    gone, staying, late, keeper = ids(4)
    async with replica() as (_one, channel_one), replica() as (two, channel_two):
        matcher_two = running_matcher(two)
        keep = find(channel_two, keeper, time_control=OTHER_POOL)  # keeps two's rounds going
        await first_waiting(keep)
        leaving = find(channel_two, gone, time_control=pool)
        await first_waiting(leaving)
        # The moment: the stream closed, its row not deleted yet (the leave's write late).
        monkeypatch.setattr(matcher_two, "_leave", nothing)
        leaving.cancel()

        async def closed() -> bool:
            return all(w.player != gone for w in matcher_two._streams.values())

        await until(closed)
        assert await pool_rows([gone]) == [gone]
        other = find(channel_one, staying, time_control=pool)  # one's round proposes both
        try:
            if not accept:
                got = await asyncio.wait_for(found(other), 30)
                # A table nobody joins: the gone player holds a seat at it.
                assert gone in {s.player_id for s in got.game.seats}
                return
            await first_waiting(other)
            joined = await row_of(staying)
            assert joined is not None

            async def dissolved() -> bool:
                row = await row_of(staying)
                return not await pool_rows([gone]) and row is not None and row[1] is None

            await until(dissolved)
            after = await row_of(staying)
            assert after is not None and after[0] == joined[0]  # its wait kept
            assert after[2] is None
            assert await games_held([gone, staying]) == {}  # no table was made
            third = find(channel_one, late, time_control=pool)
            got, got_late = await asyncio.wait_for(asyncio.gather(found(other), found(third)), 30)
            assert got.game_id == got_late.game_id
            assert {s.player_id for s in got.game.seats} == {staying, late}
        finally:
            other.cancel()
            keep.cancel()


@pytest.mark.parametrize("check", [True, False], ids=["cancelled", "control-seated"])
async def test_a_player_gone_while_the_table_is_made_has_it_cancelled(check, monkeypatch):
    if not check:
        monkeypatch.setattr(store_pool, "SEAT_ONLY_STANDING", False)
    pool = own_pool()
    gone, staying, late = ids(3)
    entered = asyncio.Event()
    release = asyncio.Event()
    made: list[str] = []
    async with replica() as (one, channel_one), replica() as (two, channel_two):
        for running in (one, two):
            create = running.manager.create

            async def held(*args, create=create, **kwargs):
                made.append(kwargs["game_id"])
                entered.set()
                await release.wait()
                return await create(*args, **kwargs)

            monkeypatch.setattr(running.manager, "create", held)
        leaving = find(channel_two, gone, time_control=pool)
        await first_waiting(leaving)
        other = find(channel_one, staying, time_control=pool)
        try:
            await first_waiting(other)
            await asyncio.wait_for(entered.wait(), 30)  # accepted by both: being made
            leaving.cancel()  # gone while its table is being made

            async def left() -> bool:
                return not await pool_rows([gone])

            await until(left)
            release.set()
            if not check:
                got = await asyncio.wait_for(found(other), 30)
                assert gone in {s.player_id for s in got.game.seats}  # nobody takes it
                return

            async def waiting_again() -> bool:
                row = await row_of(staying)
                return row is not None and row[1] is None and row[2] is None

            async def cancelled() -> bool:
                table = await one.manager.store.load(made[0])
                return table is not None and table.finished_at is not None

            await until(cancelled)  # made, then ended at once: nobody is left at it
            await until(waiting_again)
            third = find(channel_one, late, time_control=pool)
            got, got_late = await asyncio.wait_for(asyncio.gather(found(other), found(third)), 30)
            assert got.game_id == got_late.game_id != made[0]
            assert {s.player_id for s in got.game.seats} == {staying, late}
        finally:
            release.set()
            with contextlib.suppress(Exception):
                other.cancel()
