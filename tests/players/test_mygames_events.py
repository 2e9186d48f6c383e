"""Players' events (services/kit/outbox): what each write makes, and the outbox rows
written in the write's own transaction, in every backend."""

from __future__ import annotations

import asyncio
import os
import random

import pytest

from services.channeling import engine as channeling
from services.kit import table as tables
from services.kit.games import GameManager
from services.kit.outbox import Header, derive
from services.kit.outbox.events import (
    GAME_OVER,
    GAME_STARTED,
    REMATCH_OFFERED,
    REMATCH_STARTED,
    YOUR_TURN,
    PlayerEvent,
)
from services.kit.players import Player
from services.kit.store import (
    DuplicateRequest,
    GameRecord,
    MoveRecord,
    OutboxEvent,
    VersionConflict,
    open_store,
)


def header(version: int = 1, **kw) -> Header:
    base = dict(
        game_type="channeling",
        game_id="g1",
        version=version,
        players=("alice", "bob"),
        to_act=frozenset(),
        deadlines=(None, None),
        started=True,
        finished=False,
    )
    base.update(kw)
    return Header(**base)


def kinds(events) -> list[tuple[str, int]]:
    return [(e.kind, e.seat) for e in events]


# --- what a write makes --------------------------------------------------------------


def test_a_table_full_at_creation_starts_and_tells_the_one_to_act():
    after = header(0, to_act=frozenset({0}), deadlines=(1030.0, None))
    events = derive(None, after, 1000.0)
    assert kinds(events) == [(GAME_STARTED, 0), (GAME_STARTED, 1), (YOUR_TURN, 0)]
    turn = events[-1]
    assert turn.player_id == "alice" and turn.deadline == 1030.0
    assert turn.event_id == "channeling:g1:0:your_turn:0"


def test_a_waiting_table_tells_nobody_and_the_last_join_starts_it():
    waiting = header(0, started=False)
    assert derive(None, waiting, 1.0) == []
    started = header(2, to_act=frozenset({1}))
    assert kinds(derive(waiting, started, 2.0)) == [
        (GAME_STARTED, 0),
        (GAME_STARTED, 1),
        (YOUR_TURN, 1),
    ]


def test_your_turn_only_for_a_seat_newly_to_act():
    before = header(4, to_act=frozenset({0}))
    # The same seat still to act (a turn of several decisions): nothing new.
    assert derive(before, header(5, to_act=frozenset({0})), 1.0) == []
    # The turn passes: the other seat is told, once.
    assert kinds(derive(before, header(5, to_act=frozenset({1})), 1.0)) == [(YOUR_TURN, 1)]
    # Simultaneous decisions: only the seat that was not to act yet.
    both = header(5, to_act=frozenset({0, 1}))
    assert kinds(derive(before, both, 1.0)) == [(YOUR_TURN, 1)]


def test_seats_without_a_player_get_nothing():
    before = header(1, players=("", "bob"), to_act=frozenset({1}))
    after = header(2, players=("", "bob"), to_act=frozenset({0}))
    assert derive(before, after, 1.0) == []
    over = header(3, players=("", "bob"), finished=True)
    assert kinds(derive(after, over, 1.0)) == [(GAME_OVER, 1)]


def test_game_over_once_and_no_turn_after_it():
    before = header(7, to_act=frozenset({1}))
    over = header(8, finished=True, to_act=frozenset({0}))
    assert kinds(derive(before, over, 1.0)) == [(GAME_OVER, 0), (GAME_OVER, 1)]
    assert derive(over, header(9, finished=True), 1.0) == []


def test_rematch_offered_to_the_others_then_started_for_all():
    over = header(8, finished=True)
    offered = header(9, finished=True, rematch_offers=(0,))
    events = derive(over, offered, 1.0)
    assert kinds(events) == [(REMATCH_OFFERED, 1)]
    assert events[0].by_seat == 0 and events[0].player_id == "bob"
    accepted = header(10, finished=True, rematch_offers=(0, 1), rematch_game_id="g2")
    events = derive(offered, accepted, 2.0)
    assert kinds(events) == [(REMATCH_STARTED, 0), (REMATCH_STARTED, 1)]
    assert {e.rematch_game_id for e in events} == {"g2"}


def test_an_event_carries_nothing_but_which_game_and_what():
    event = derive(None, header(0, to_act=frozenset({0}), deadlines=(5.0, None)), 1.0)[-1]
    assert set(PlayerEvent.from_json(event.to_json()).__dict__) <= {
        "event_id",
        "kind",
        "player_id",
        "game_type",
        "game_id",
        "version",
        "seat",
        "happened_at",
        "deadline",
        "by_seat",
        "rematch_game_id",
    }
    proto = event.to_proto(12)
    assert proto.sequence == 12 and proto.deadline.seconds == 5
    assert PlayerEvent.from_json(event.to_json()) == event


# --- the outbox in the store's transaction -------------------------------------------

STORES = ["memory://", "sqlite"]
if os.environ.get("TABLETOP_TEST_POSTGRES_URL"):
    STORES.append(os.environ["TABLETOP_TEST_POSTGRES_URL"])


@pytest.fixture(params=STORES)
async def store(request, tmp_path):
    url = request.param
    if url == "sqlite":
        url = f"sqlite:///{tmp_path}/events.db"
    opened = open_store(url)
    yield opened
    await opened.close()


def outbox_event(game_id: str, n: int, player: str = "alice", webhook: bool = True):
    return OutboxEvent(f"t:{game_id}:{n}", player, game_id, YOUR_TURN, "{}", 100.0 + n, webhook)


def game_record(game_id: str, **kw) -> GameRecord:
    return GameRecord(
        game_id=game_id,
        game_type=game_id,  # a type of its own: a shared database holds other tests' rows
        players=2,
        options={},
        seed=1,
        token_hashes=("", ""),
        created_at=100.0,
        **kw,
    )


async def test_events_are_written_with_the_game_and_with_the_move(store):
    gid = f"g{random.randrange(10**9)}"
    await store.create(game_record(gid, outbox=(outbox_event(gid, 0),)))
    await store.append(gid, MoveRecord(1, 0, "m", applied_at=101.0, outbox=(outbox_event(gid, 1),)))
    rows = await store.player_events(gid, "alice", 0)
    assert [r.event.event_id for r in rows] == [f"t:{gid}:0", f"t:{gid}:1"]
    assert rows[0].sequence < rows[1].sequence
    assert await store.player_events(gid, "alice", rows[0].sequence) == rows[1:]
    assert await store.player_events(gid, "bob", 0) == []
    assert await store.last_event(gid) >= rows[1].sequence
    # The same event id again (a write retried) is kept once.
    await store.append(gid, MoveRecord(2, 1, "n", applied_at=102.0, outbox=(outbox_event(gid, 1),)))
    assert len(await store.player_events(gid, "alice", 0)) == 2


async def test_a_refused_write_makes_no_event(store):
    gid = f"g{random.randrange(10**9)}"
    await store.create(game_record(gid))
    await store.append(gid, MoveRecord(1, 0, "m", request_id="r1", applied_at=101.0))
    with pytest.raises(VersionConflict):
        await store.append(
            gid, MoveRecord(1, 0, "x", applied_at=101.0, outbox=(outbox_event(gid, 5),))
        )
    with pytest.raises(DuplicateRequest):
        await store.append(
            gid, MoveRecord(2, 0, "m", request_id="r1", outbox=(outbox_event(gid, 6),))
        )
    assert await store.player_events(gid, "alice", 0) == []


async def test_webhook_claims_results_and_retention(store):
    gid = f"g{random.randrange(10**9)}"
    events = (outbox_event(gid, 0), outbox_event(gid, 1), outbox_event(gid, 2, webhook=False))
    await store.create(game_record(gid, outbox=events))
    assert await store.webhooks_pending(gid) == 2
    first = await store.claim_webhooks(gid, "a", now=200.0, lease=30.0, limit=1)
    assert [r.event.event_id for r in first] == [f"t:{gid}:0"]
    # Another claimant meanwhile takes the other; nothing is left for a third.
    second = await store.claim_webhooks(gid, "b", now=200.0, lease=30.0)
    assert [r.event.event_id for r in second] == [f"t:{gid}:1"]
    assert await store.claim_webhooks(gid, "c", now=201.0, lease=30.0) == []
    # a delivers; b's claim runs out (b died): c takes it after the lease.
    await store.webhook_result(first[0].sequence, "a", True, 202.0, 202.0)
    assert await store.claim_webhooks(gid, "c", now=229.0, lease=30.0) == []
    again = await store.claim_webhooks(gid, "c", now=231.0, lease=30.0)
    assert [r.event.event_id for r in again] == [f"t:{gid}:1"]
    # b's late answer is ignored: the claim is c's.
    await store.webhook_result(second[0].sequence, "b", True, 232.0, 232.0)
    assert await store.webhooks_pending(gid) == 1
    # c fails: retried no earlier than it said, with the attempt counted.
    await store.webhook_result(again[0].sequence, "c", False, 233.0, 300.0)
    assert await store.claim_webhooks(gid, "c", now=299.0, lease=30.0) == []
    retried = await store.claim_webhooks(gid, "c", now=300.0, lease=30.0)
    assert retried[0].attempts == 1
    assert await store.delete_events_before(gid, 101.5) == 2
    assert [r.event.event_id for r in await store.player_events(gid, "alice", 0)] == [f"t:{gid}:2"]


# --- the manager's hook ----------------------------------------------------------------


@pytest.mark.parametrize("url", ["memory://", "sqlite"])
async def test_each_move_tells_the_next_player_and_the_end_tells_both(url, tmp_path):
    if url == "sqlite":
        url = f"sqlite:///{tmp_path}/m.db"
    store = open_store(url)
    m = GameManager(channeling, store)
    game, tokens = await m.create(2, channeling.Options(), plan=tables.Plan(
        (tables.SeatPlan("reserved", "", "medium"), tables.SeatPlan("open", "", "medium")), None
    ), player=Player("alice", "Alice", "iss"))  # fmt: skip
    gid = game.record.game_id
    _, seat, token = await m.join(gid, None, "", Player("bob", "Bob", "iss"))
    tokens[seat] = token
    rng = random.Random(3)
    expected: list[tuple[str, int]] = [(GAME_STARTED, 0), (GAME_STARTED, 1)]
    snap, _ = await m.read(gid, None)
    expected += [(YOUR_TURN, s) for s in sorted(snap.to_act)]
    moves_made = 0
    while snap.outcome is None:
        before = set(snap.to_act)
        seat = rng.choice(sorted(snap.to_act))
        _, moves, _ = await m.legal_moves(gid, tokens[seat])
        move = rng.choice(moves)
        snap, _ = await m.submit(gid, tokens[seat], lambda mv=move: mv, None, None)
        moves_made += 1
        if snap.outcome is None:  # computed here from the headers the moves answered
            expected += [(YOUR_TURN, s) for s in sorted(set(snap.to_act) - before)]
    expected += [(GAME_OVER, 0), (GAME_OVER, 1)]
    rows = [
        *await store.player_events("channeling", "alice", 0),
        *await store.player_events("channeling", "bob", 0),
    ]
    rows.sort(key=lambda r: r.sequence)
    got = [(r.event.kind, PlayerEvent.from_json(r.event.body).seat) for r in rows]
    assert moves_made > 10
    assert got == expected
    assert len({r.event.event_id for r in rows}) == len(rows)
    await store.close()


async def test_posters_claiming_at_once_never_share_an_event(store):
    """Replicas claiming together (on PostgreSQL: connections of their own, FOR UPDATE
    SKIP LOCKED) take disjoint events, and every event is taken."""
    gid = f"g{random.randrange(10**9)}"
    events = tuple(outbox_event(gid, n) for n in range(60))
    await store.create(game_record(gid, outbox=events))
    claims = await asyncio.gather(
        *(store.claim_webhooks(gid, f"replica{i}", 200.0, 30.0, limit=7) for i in range(8))
    )
    taken = [r.event.event_id for rows in claims for r in rows]
    assert len(taken) == len(set(taken)) == 56
    rest = await store.claim_webhooks(gid, "late", 200.0, 30.0, limit=100)
    assert {r.event.event_id for r in rest} | set(taken) == {e.event_id for e in events}


async def test_a_rematch_offered_tells_the_other_and_its_start_tells_both():
    from tests.players.test_rematch import finished_table
    from tests.players.test_seats import ADA, ADA_ID, BEN, BEN_ID, served

    async with served() as (svc, client):
        game_id = await finished_table(client)
        await client.call("OfferRematch", ADA, game_id=game_id)
        accepted = await client.call("OfferRematch", BEN, game_id=game_id)
        rematch_id = accepted.game.rematch_game_id
        store = svc.store

        async def kinds_of(player: str) -> list[tuple[str, str, int]]:
            rows = await store.player_events("channeling", player, 0)
            return [
                (r.event.kind, r.event.game_id, PlayerEvent.from_json(r.event.body).seat)
                for r in rows
            ]

        ada, ben = await kinds_of(ADA_ID), await kinds_of(BEN_ID)
        # Ada offered: Ben is told (by seat 0); Ben's acceptance starts it: both told,
        # and the new table (seats rotated) starts with its own events.
        assert (REMATCH_OFFERED, game_id, 1) in ben
        assert not [k for k in ada if k[0] == REMATCH_OFFERED]
        assert (REMATCH_STARTED, game_id, 0) in ada and (REMATCH_STARTED, game_id, 1) in ben
        assert (GAME_OVER, game_id, 0) in ada and (GAME_OVER, game_id, 1) in ben
        assert (GAME_STARTED, rematch_id, 1) in ada and (GAME_STARTED, rematch_id, 0) in ben
        offered = next(
            PlayerEvent.from_json(r.event.body)
            for r in await store.player_events("channeling", BEN_ID, 0)
            if r.event.kind == REMATCH_OFFERED
        )
        assert offered.by_seat == 0
        started = [
            PlayerEvent.from_json(r.event.body)
            for r in await store.player_events("channeling", ADA_ID, 0)
            if r.event.kind == REMATCH_STARTED
        ]
        assert [e.rematch_game_id for e in started] == [rematch_id]


async def test_a_store_written_before_the_outbox_gets_it_on_open(tmp_path):
    """A SQLite file (and a PostgreSQL database) made before players' events: opened by
    this release, it has the outbox, and its games take events."""
    import sqlite3

    url = f"sqlite:///{tmp_path}/old.db"
    old = open_store(url)
    await old.create(game_record("g-old"))
    await old.close()
    conn = sqlite3.connect(tmp_path / "old.db")
    conn.execute("DROP TABLE player_events")  # as a file written before
    conn.commit()
    conn.close()
    urls = [url]
    if os.environ.get("TABLETOP_TEST_POSTGRES_URL"):
        import psycopg

        pg = os.environ["TABLETOP_TEST_POSTGRES_URL"]
        opened = open_store(pg)
        await opened.count_active("x")
        await opened.close()
        with psycopg.connect(pg, autocommit=True) as pgconn:
            pgconn.execute("DROP TABLE tabletop_player_events")
        urls.append(pg)
    for each in urls:
        store = open_store(each)
        gid = f"g{random.randrange(10**9)}"
        await store.create(game_record(gid, outbox=(outbox_event(gid, 0),)))
        await store.append(
            gid, MoveRecord(1, 0, "m", applied_at=101.0, outbox=(outbox_event(gid, 1),))
        )
        rows = await store.player_events(gid, "alice", 0)
        assert [r.event.event_id for r in rows] == [f"t:{gid}:0", f"t:{gid}:1"]
        if each == url:
            assert await store.load("g-old") is not None  # the old game is still there
        await store.close()
