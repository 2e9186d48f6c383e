"""Rematch: a finished game's seats offer and accept; once every person has (bots at
once) one new table starts with the same options and clock, sides rotated, each seat
held by the same player, seat token or bot; watchers that saw the end are told its id.
Kept in the log: a restart keeps the offers, and two replicas accepting at once on one
PostgreSQL store make exactly one rematch."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets

import grpc
import pytest
from google.protobuf import duration_pb2
from tabletop.common.v1 import game_pb2, table_pb2

from client.api import FINISHED, IN_PROGRESS, GameClient
from services.kit import rematch as rematches
from services.kit import table as tables
from services.kit.games import GameManager
from services.kit.store import open_store
from tests.players.test_seats import (
    ADA,
    ADA_ID,
    BEN,
    BEN_ID,
    BOT,
    CYD,
    MINE,
    OPEN,
    policy,
    refused,
    served,
    table_of_two,
)

POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL", "")
CLOCK = table_pb2.TimeControl(
    per_decision=duration_pb2.Duration(seconds=600),
    on_timeout=table_pb2.TIMEOUT_ACTION_BOT_MOVES,
)


async def finished_table(client: GameClient, **fields) -> str:
    """Ada and Ben's table, over: Ben resigns."""
    created = await client.call("CreateGame", ADA, players=2, seats=[MINE, OPEN], **fields)
    game_id = created.game.game_id
    await client.join(game_id, "", token=BEN)
    await client.resign(game_id, BEN)
    assert (await client.get(game_id)).game.status == FINISHED
    return game_id


async def read_until_end(stream, timeout: float = 20.0) -> list:
    got = []
    async with asyncio.timeout(timeout):
        async for message in stream:
            got.append(message)
    return got


async def test_a_rematch_starts_once_both_accept_with_sides_rotated():
    async with served() as (_, client):
        game_id = await finished_table(client, time_control=CLOCK)
        final = (await client.get(game_id)).game
        # Ben saw the end; resuming from it, his stream follows the rematch.
        stream = client.watch(game_id, BEN, from_version=final.version, timeout=30)
        following = asyncio.create_task(read_until_end(stream))
        offered = await client.call("OfferRematch", ADA, game_id=game_id)
        assert list(offered.game.rematch_offers) == [0] and not offered.game.rematch_game_id
        again = await client.call("OfferRematch", ADA, game_id=game_id)  # offered already
        assert list(again.game.rematch_offers) == [0] and again.game.version == offered.game.version
        accepted = await client.call("OfferRematch", BEN, game_id=game_id)
        rematch_id = accepted.game.rematch_game_id
        assert rematch_id and list(accepted.game.rematch_offers) == [0, 1]
        got = await following
        assert await stream.code() == grpc.StatusCode.OK
        assert [list(m.game.rematch_offers) for m in got] == [[], [0], [0, 1]]
        assert got[-1].game.rematch_game_id == rematch_id
        assert got[1].turn.events[0].kind == "rematch_offered"
        # The new table: sides rotated, the same holders, options and clock.
        new = (await client.get(rematch_id, ADA)).game
        assert new.status == IN_PROGRESS and new.viewer == 1
        assert [s.player_id for s in new.seats] == [BEN_ID, ADA_ID]
        assert [s.player_name for s in new.seats] == ["Ben", "Ada"]
        assert new.options == final.options and new.time_control == final.time_control
        # The old game says where, to everyone; it is still over.
        old = (await client.get(game_id)).game
        assert old.rematch_game_id == rematch_id and old.status == FINISHED
        assert (await client.lobby(status=game_pb2.GAME_STATUS_FINISHED)).games
        info = await refused(
            client.call("OfferRematch", ADA, game_id=game_id),
            grpc.StatusCode.FAILED_PRECONDITION,
            "NO_REMATCH",
        )
        assert info.metadata["rematch_game_id"] == rematch_id


async def test_seat_tokens_carry_over_and_bots_accept_at_once():
    async with served() as (_, client):
        created = await client.create(2, seats=[MINE, BOT])
        await client.resign(created.game_id, created.tokens[0])
        offered = await client.call("OfferRematch", created.tokens[0], game_id=created.game_id)
        rematch_id = offered.game.rematch_game_id
        assert rematch_id  # the bot accepted at once
        new = (await client.get(rematch_id, created.tokens[0])).game
        assert new.viewer == 1  # the same seat token, one seat on
        assert [s.state for s in new.seats] == [
            table_pb2.SEAT_STATE_BOT,
            table_pb2.SEAT_STATE_TAKEN,
        ]
        assert new.seats[0].bot_level == table_pb2.BOT_LEVEL_EASY


async def test_who_may_not_offer_a_rematch_and_when():
    async with served() as (_, client):
        game_id = await table_of_two(client)
        before = (await client.get(game_id)).game
        await refused(
            client.call("OfferRematch", ADA, game_id=game_id),
            grpc.StatusCode.FAILED_PRECONDITION,
            "NO_REMATCH",
        )
        await client.resign(game_id, BEN)
        await refused(
            client.call("OfferRematch", CYD, game_id=game_id),
            grpc.StatusCode.FAILED_PRECONDITION,
            "NO_REMATCH",
        )
        await refused(
            client.call("OfferRematch", None, game_id=game_id),
            grpc.StatusCode.UNAUTHENTICATED,
            "MISSING_TOKEN",
        )
        after = (await client.get(game_id)).game
        assert after.version == before.version + 1 and not after.rematch_offers


class Now:
    def __init__(self) -> None:
        self.at = 1_000_000.0

    def __call__(self) -> float:
        return self.at


@pytest.mark.parametrize("ending", ["ABANDONED", "EXPIRED"])
async def test_games_nobody_played_have_no_rematch(ending):
    now = Now()
    m = GameManager(
        __import__("services.channeling.engine", fromlist=["x"]),
        open_store("memory://"),
        clock=now,
        idle_seconds=60.0,
        waiting_ttl=60.0,
    )
    second = tables.SeatPlan(tables.OPEN if ending == "EXPIRED" else tables.RESERVED)
    plan = tables.Plan((tables.SeatPlan(tables.RESERVED), second))
    game, tokens = await m.create(2, m.engine.GAME.options_type(), plan=plan)
    now.at += 61.0
    with pytest.raises(rematches.NoRematch):
        await rematches.offer(m, game.record.game_id, tokens[0])
    snap, _ = await m.read(game.record.game_id, None)
    assert snap.outcome.reason == ending and not snap.rematch_open


async def test_offers_outlive_a_restart(tmp_path):
    url = f"sqlite:///{tmp_path}/rematch.db"
    async with served(store_url=url) as (_, client):
        game_id = await finished_table(client)
        await client.call("OfferRematch", BEN, game_id=game_id)
    async with served(store_url=url) as (_, client):
        old = (await client.get(game_id)).game
        assert list(old.rematch_offers) == [1] and old.status == FINISHED
        accepted = await client.call("OfferRematch", ADA, game_id=game_id)
        rematch_id = accepted.game.rematch_game_id
    async with served(store_url=url) as (_, client):
        assert (await client.get(game_id)).game.rematch_game_id == rematch_id
        assert (await client.get(rematch_id, ADA)).game.viewer == 1
        # The finished game stays finished in the lobby's row.
        finished = await client.lobby(status=game_pb2.GAME_STATUS_FINISHED)
        assert game_id in [g.game_id for g in finished.games]


@contextlib.asynccontextmanager
async def two_replicas():
    """Two services on one PostgreSQL store, each with its own connection."""
    async with served(store_url=POSTGRES) as (one, first):
        async with served(store_url=POSTGRES) as (two, second):
            listener = asyncio.create_task(two.store.listen(two.manager.catch_up))
            listener_one = asyncio.create_task(one.store.listen(one.manager.catch_up))
            try:
                yield (one, first), (two, second)
            finally:
                listener.cancel()
                listener_one.cancel()


def players(n: int) -> list[str]:
    from tests.players.test_seats import token

    run = secrets.token_hex(4)
    return [token(f"p{i}-{run}", f"P{i}") for i in range(n)]


async def accept_at_once(
    first: GameClient, second: GameClient, retried: bool
) -> tuple[str, list[str], str]:
    """A finished table of two players, whose rematch is accepted on both replicas at
    once: by both seats, or (``retried``) by the second seat on each replica (a client's
    retry racing its first call) once the first seat offered."""
    ann, bob = players(2)
    created = await first.call("CreateGame", ann, players=2, seats=[MINE, OPEN])
    game_id = created.game.game_id
    await first.join(game_id, "", token=bob)
    await first.resign(game_id, bob)
    if retried:
        await first.call("OfferRematch", ann, game_id=game_id)
    await second.get(game_id)  # the second replica holds it too
    answers = await asyncio.gather(
        first.call("OfferRematch", bob if retried else ann, game_id=game_id),
        second.call("OfferRematch", bob, game_id=game_id),
        return_exceptions=True,
    )
    ids = []
    for answer in answers:
        if isinstance(answer, grpc.aio.AioRpcError):
            # The retry that lost the race finds the rematch started: refused, naming it.
            assert answer.code() == grpc.StatusCode.FAILED_PRECONDITION, answer.details()
            continue
        assert not isinstance(answer, BaseException), answer
        ids.append(answer.game.rematch_game_id)
    final = (await first.get(game_id)).game.rematch_game_id
    return game_id, [i for i in [*ids, final] if i], ann


@pytest.mark.skipif(not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL is not set")
async def test_two_replicas_accepting_at_once_make_one_rematch():
    async with two_replicas() as ((_, first), (_, second)):
        for retried in (False, True, False, True):
            game_id, ids, ann = await accept_at_once(first, second, retried)
            assert ids and len(set(ids)) == 1
            mine = await first.call("ListGames", ann, mine=True)
            assert sorted(g.game_id for g in mine.games) == sorted([game_id, ids[0]])
            history = await first.history(game_id)
            started = [e for t in history for e in t.events if e.kind == "rematch_started"]
            assert len(started) == 1


@pytest.mark.skipif(not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL is not set")
async def test_control_a_rematch_id_of_each_replicas_own_makes_two(monkeypatch):
    """The guard switched off (each creation picks its own id), with both replicas made to
    create before either appends: two tables for one finished game."""
    monkeypatch.setattr(rematches, "rematch_id", lambda game_id: secrets.token_urlsafe(12))
    both = asyncio.Barrier(2)
    start = rematches._start

    async def in_step(manager, game):
        found = await start(manager, game)
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                await both.wait()
        return found

    monkeypatch.setattr(rematches, "_start", in_step)
    async with two_replicas() as ((_, first), (_, second)):
        _, _, ann = await accept_at_once(first, second, retried=True)
        mine = await first.call("ListGames", ann, mine=True)
        assert len(mine.games) == 3  # the finished game and two rematches


async def test_a_stream_of_a_game_with_no_rematch_to_come_ends_at_once():
    async with served(players=policy()) as (_, client):
        game_id = await finished_table(client)
        await client.call("OfferRematch", ADA, game_id=game_id)
        accepted = await client.call("OfferRematch", BEN, game_id=game_id)
        version = accepted.game.version
        got = await read_until_end(client.watch(game_id, BEN, from_version=version), 10)
        assert len(got) == 1 and got[0].game.rematch_game_id


@pytest.mark.parametrize("follows", [True, False], ids=["follows", "control"])
async def test_a_watcher_resuming_from_the_end_is_told_the_rematch(follows, monkeypatch):
    """Control: with the following switched off the resumed stream ends at once, and the
    watcher never hears of the rematch."""
    from services.kit import watchers

    if not follows:
        monkeypatch.setattr(watchers, "_ends", lambda item, watcher: watchers._final(item))
    async with served() as (_, client):
        game_id = await finished_table(client)
        version = (await client.get(game_id)).game.version
        stream = client.watch(game_id, None, from_version=version, timeout=30)
        following = asyncio.create_task(read_until_end(stream))
        await asyncio.sleep(0.3)
        await client.call("OfferRematch", ADA, game_id=game_id)
        await client.call("OfferRematch", BEN, game_id=game_id)
        got = await following
        told = [m.game.rematch_game_id for m in got if m.game.rematch_game_id]
        assert bool(told) == follows
