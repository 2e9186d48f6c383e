"""Replicas under faults, Jepsen-style: two, then three replicas of one game service on
one PostgreSQL, a gateway routing to all of them, clients playing many games with a
watcher each, and a nemesis that SIGKILLs and SIGSTOPs (then SIGCONTs) replicas and
restarts PostgreSQL itself (a fast shutdown, a crash by SIGQUIT, and a crash while a
replica is paused) during the load.

Clients call through the gateway or straight to a replica, picked at random per call;
a retry (same request id, same expected version) may land on another replica, and now
and then two moves race for one version through two connections. Afterwards every game
is played on to its end, and the checker verifies, per game: every acknowledged move is
in the log once, at its version, in order (test_faults' history check, per seat); the
log's versions strictly increase from 1 and every replica serves the same log; no two
acknowledgements of one version differ (request, seat or move); every replica reaches
the game's last version; every watcher's stream (through the gateway or a replica,
resumed from its last version after each failure) equals the log; callers saw only
UNAVAILABLE, DEADLINE_EXCEEDED and ABORTED; no process logged an unexpected error.

PostgreSQL: the test runs when TABLETOP_TEST_POSTGRES_URL is set (a server is at hand),
but restarts only a private one it starts on another port with scripts/postgres.sh:
other tests share the server at that URL, and must not see it go down. ``make test``
runs one round of faults on two replicas (about 40 s), ``make soak`` on three as well;
``make faults`` with TABLETOP_FAULT_SECONDS runs random faults for that long, split
between the two.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import time

import grpc
import psycopg
import pytest

from client.api import GameClient
from services.kit.store.postgres import PostgresStore
from tests.reliability.replicas import (
    NAME,
    PLAYERS,
    Acked,
    Cluster,
    Nemesis,
    Played,
    Players,
    Postgres,
    caught_up,
    check_log,
    check_watched,
    divergences,
    log_of,
    postgres_installed,
)
from tests.reliability.test_faults import (
    ALLOWED,
    CLIENT_OPTIONS,
    Game,
    check_history,
    patiently,
)
from tests.support import service_in_process

FAULT_SECONDS = float(os.environ.get("TABLETOP_FAULT_SECONDS", "0") or 0)
SLOTS = 10  # games played at once

NEEDS_POSTGRES = [
    pytest.mark.postgres,
    pytest.mark.skipif(
        not os.environ.get("TABLETOP_TEST_POSTGRES_URL"),
        reason="TABLETOP_TEST_POSTGRES_URL is not set: no PostgreSQL for the replicas "
        '(eval "$(bash scripts/postgres.sh start)" starts one; .ci/run always does)',
    ),
    pytest.mark.skipif(
        not postgres_installed(),
        reason="no PostgreSQL server installed here: the nemesis needs one of its own",
    ),
]


def needs_postgres(test):
    for mark in NEEDS_POSTGRES:
        test = mark(test)
    return test


@pytest.fixture(scope="module")
def postgres():
    server = Postgres()
    try:
        server.start()
        yield server
    finally:
        server.destroy()


@needs_postgres
# Two replicas in make test (every fault kind, the races, the checker); three, the same
# round again with one more replica, in make soak.
@pytest.mark.parametrize("replicas", [2, pytest.param(3, marks=pytest.mark.soak)])
async def test_replicas_agree_and_lose_nothing_under_kills_pauses_and_postgres_restarts(
    replicas, postgres, tmp_path, record_property
):
    started = time.monotonic()
    cluster = Cluster(tmp_path, replicas, postgres.url)
    try:
        results = await asyncio.gather(
            *map(cluster.start, cluster.replicas), return_exceptions=True
        )
        for failed in (r for r in results if isinstance(r, BaseException)):
            raise failed
        await cluster.start("gateway")
        await cluster.serving()
        labels = ["gateway", *cluster.replicas]
        channels = {
            label: grpc.aio.insecure_channel(cluster.address(label), options=CLIENT_OPTIONS)
            for label in labels
        }
        try:
            players = Players(channels, seed=20261201 + replicas)
            drivers = [asyncio.create_task(players.drive()) for _ in range(SLOTS)]
            nemesis = Nemesis(cluster, players, postgres=postgres, slots=SLOTS)  # type: ignore[arg-type]
            await nemesis.progress(SLOTS)
            if FAULT_SECONDS > 0:
                stop = time.monotonic() + FAULT_SECONDS / 2
                await nemesis.random_until(stop, random.Random(replicas))
            else:
                await nemesis.one_round()
            faulted_at = time.monotonic()

            # No more faults: every game is played on to its end, the watchers catch up.
            players.stopping = True
            await asyncio.wait_for(asyncio.gather(*drivers), 300)
            await asyncio.wait_for(asyncio.gather(*players.watchers), 120)

            tally = players.tally
            clients = {label: GameClient(NAME, channels[label], timeout=30) for label in labels}
            lost = 0
            problems: list[str] = []
            diverged: list[str] = []
            for played in players.played:
                game = played.game
                game.acks.sort(key=lambda a: a.version)
                missing, found = await check_history(clients["gateway"], game, tally)
                lost += missing
                problems += found
                diverged += divergences(played)
                logs = {}
                for label in labels:
                    turns = await patiently(
                        tally,
                        "GetHistory",
                        lambda c=clients[label], g=game.game_id: c.history(g),
                    )
                    logs[label] = log_of(turns)
                    if label != "gateway":
                        problems += await caught_up(clients[label], game, label)
                log_problems = check_log(played, logs)
                diverged += [p for p in log_problems if "another log" in p]
                problems += log_problems + check_watched(played, logs["gateway"])
        finally:
            for channel in channels.values():
                await channel.close()
        fleet_errors = cluster.unexpected_errors()
        excerpts = cluster.excerpts()
    finally:
        cluster.close()

    figures = {
        "mode": f"{replicas} replicas",
        "faults injected": nemesis.count(),
        "moves acknowledged": tally.acknowledged,
        "lost": lost,
        "divergences": len(diverged),
        "games": len(players.played),
        "games played to their end": sum(p.game.final is not None for p in players.played),
        "watchers checked": sum(bool(p.watched_via) for p in players.played),
        "turns watched": sum(len(p.watched) for p in players.played),
        "races": players.races,
        "calls made": tally.calls,
        "retries": dict(tally.retried),
        "aborted": tally.aborted,
        "moves whose answer was lost and came on a retry": tally.answers_lost,
        "seconds": round(time.monotonic() - started, 1),
        "seconds after the faults": round(time.monotonic() - faulted_at, 1),
        "faults": dict(nemesis.injected),
        "acknowledged via": dict(
            sorted(
                {
                    label: sum(a.via == label for p in players.played for a in p.acks)
                    for label in labels
                }.items()
            )
        ),
        "codes seen by callers": dict(tally.codes),
        "codes seen by watchers": dict(tally.watch_codes),
    }
    record_property("reliability_faults", figures)
    print(json.dumps(figures))
    assert not tally.unexpected, tally.unexpected
    assert set(tally.codes) <= {c.name for c in ALLOWED}, tally.codes
    assert set(tally.watch_codes) <= {c.name for c in ALLOWED}, tally.watch_codes
    assert lost == 0, "\n".join(problems)
    assert not diverged, "\n".join(diverged[:20])
    assert not problems, "\n".join(problems[:20])
    assert not fleet_errors, "\n".join(excerpts[:5])
    assert all(p.game.final is not None for p in players.played)
    assert tally.acknowledged == sum(len(p.acks) for p in players.played)
    assert postgres.running(), "PostgreSQL is not running again after the faults"


@needs_postgres
async def test_a_replica_starting_while_a_move_is_being_written_does_not_wait_for_it(postgres):
    """A store opening on a database whose schema is complete runs no DDL: its table locks
    (taken by CREATE INDEX and ALTER TABLE even when IF NOT EXISTS finds the object)
    deadlocked with the appends of the replicas already serving, so a replica restarted
    under load failed to start, or failed an append. Here a write holds its row lock (as
    an append does between its UPDATE and its commit) while another store opens."""
    first = PostgresStore(postgres.url)
    await first.count_active(NAME)  # the schema is made
    writer = await psycopg.AsyncConnection.connect(postgres.url)
    try:
        async with writer.transaction():
            await writer.execute(
                "UPDATE tabletop_games SET updated_at = updated_at WHERE game_type = %s", (NAME,)
            )
            second = PostgresStore(postgres.url)
            try:
                await asyncio.wait_for(second.count_active(NAME), 10)
            finally:
                await second.close()
    finally:
        await writer.close()
        await first.close()


# --- the checker catches what it is there to catch ----------------------------------------


def played_with(acks: list[Acked], final: int) -> Played:
    played = Played(Game(NAME, "g", ["t0", "t1"]))
    played.acks = acks
    played.game.final = final
    return played


def test_the_checker_finds_two_replicas_acknowledging_different_moves_for_one_version():
    agreed = [
        Acked("g", 1, 0, "a", "g/1/0", "replica-1", 0),
        Acked("g", 1, 0, "a", "g/1/0", "replica-2", 0),  # one request, answered twice
    ]
    assert divergences(played_with(agreed, 1)) == []
    split = [
        Acked("g", 1, 0, "a", "g/1/0", "replica-1", 0),
        Acked("g", 1, 0, "b", "g/1/1", "replica-2", 0),
    ]
    assert len(divergences(played_with(split, 1))) == 1
    same_move_twice = [
        Acked("g", 1, 0, "a", "g/1/0", "replica-1", 0),
        Acked("g", 1, 0, "a", "g/1/1", "gateway", 0),
    ]
    assert len(divergences(played_with(same_move_twice, 1))) == 1
    elsewhere = [Acked("g", 3, 0, "a", "g/1/0", "replica-1", 0)]
    assert len(divergences(played_with(elsewhere, 3))) == 1


def test_the_checker_finds_replicas_serving_different_logs_gaps_and_short_logs():
    played = played_with([], 2)
    log = [(1, 0, "a"), (2, 1, "b")]
    assert check_log(played, {"gateway": log, "replica-1": list(log)}) == []
    other = [(1, 0, "a"), (2, 1, "c")]
    assert any("another log" in p for p in check_log(played, {"gateway": log, "r": other}))
    gap = [(1, 0, "a"), (3, 1, "b")]
    assert check_log(played, {"gateway": gap})
    assert check_log(played_with([], 3), {"gateway": log})  # the game ended further on


def test_the_checker_finds_a_watcher_stream_that_is_not_the_log():
    log = [(1, 0, "a"), (2, 1, "b"), (3, 0, "c")]
    played = played_with([], 3)
    played.watched, played.game.seen = log[1:], [1, 2, 3]  # the view at 1, then turns
    assert check_watched(played, log) == []
    played.watched = [(2, 1, "b"), (3, 0, "x")]
    assert check_watched(played, log)
    played.watched, played.game.seen = [(3, 0, "c")], [1, 3]  # turn 2 missed
    assert check_watched(played, log)


@needs_postgres
async def test_a_watcher_resuming_on_a_replica_that_has_not_heard_of_its_version_yet(postgres):
    """A watcher that saw version 3 on one replica resumes on another that has not heard
    of those moves yet (its notification on the way: these in-process replicas run no
    listener at all). The version is in the log: the stream goes on from there."""
    async with (
        service_in_process(NAME, postgres.url) as first,
        service_in_process(NAME, postgres.url) as second,
        grpc.aio.insecure_channel(first.address) as ca,
        grpc.aio.insecure_channel(second.address) as cb,
    ):
        a, b = GameClient(NAME, ca), GameClient(NAME, cb)
        game = await a.create(PLAYERS, seed=408)
        assert (await b.get(game.game_id)).game.version == 0  # live on b at version 0
        rng = random.Random(16)
        for version in range(4):
            state = await a.get(game.game_id)
            seat = rng.choice(list(state.game.to_act))
            listed = await a.moves(game.game_id, game.tokens[seat])
            move = rng.choice(list(listed.moves))
            await a.submit(game.game_id, game.tokens[seat], move, expected_version=version)
        stream = b.watch(game.game_id, from_version=3, timeout=10)
        update = await stream.read()
        stream.cancel()
        assert update.turn.version == 4
        history = await b.call("GetHistory", game_id=game.game_id, from_version=3)
        assert [t.version for t in history.turns] == [4]
