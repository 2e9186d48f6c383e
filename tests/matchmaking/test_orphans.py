"""No orphaned table (PostgreSQL; docs/ratings.md, "The accept step"): a replica
SIGKILLed between making a matched group's table and marking its players' rows (a
test-only fault point, ``TABLETOP_TEST_MATCH_FAULT=after_table``) leaves the match
accepted and unseated; another replica's round seats it under the same id, so the
players, asking again there, get the table that was made, and no second one. Control:
with the stuck match dissolved instead, they are matched again at a new table and the
first keeps seats nobody takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import uuid

import grpc
import pytest
from google.protobuf import duration_pb2
from tabletop.common.v1 import table_pb2

from services.kit import players
from services.kit.matchmaking import shared
from services.kit.players.seats import PlayerPolicy
from services.kit.store import pool as store_pool
from tests.matchmaking.test_find_match import SIGNER, find, first_waiting, found
from tests.matchmaking.test_replicas import URL, games_held
from tests.matchmaking.test_replicas_killed import replica_env
from tests.players.support import AUDIENCE, ISSUER
from tests.ratings.test_store import schema_url
from tests.support import service_in_process, start_process

POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL")
SETTINGS = {
    "TABLETOP_POOL_HEARTBEAT_SECONDS": "0.3",
    "TABLETOP_MATCH_TICK_SECONDS": "0.1",
    "TABLETOP_MATCH_ACCEPT_SECONDS": "1",
}
OTHER_POOL = table_pb2.TimeControl(per_decision=duration_pb2.Duration(seconds=58))


@pytest.mark.skipif(not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL is not set")
@pytest.mark.parametrize("recover", [True, False], ids=["same-table", "control-dissolved"])
async def test_a_replica_killed_between_the_table_and_the_marks_leaves_no_orphan(
    tmp_path, monkeypatch, recover
):
    if not recover:
        monkeypatch.setattr(store_pool, "RECOVER", False)
    for name, value in SETTINGS.items():
        monkeypatch.setenv(name, value)
    url = schema_url(POSTGRES or "")
    URL[:] = [url]
    # This process alone dies at the fault point.
    env = replica_env(tmp_path, url, **SETTINGS, **{shared.FAULT_ENV: "after_table"})
    run = uuid.uuid4().hex[:8]
    one, two, keeper = (f"player-{run}-{n}" for n in ("one", "two", "keeper"))
    pool = table_pb2.TimeControl(per_decision=duration_pb2.Duration(seconds=61))
    doomed = start_process("services.channeling", env, tmp_path / "doomed.log")
    try:
        async with service_in_process("channeling", url) as survivor:
            verifier = players.Verifier(
                players.StaticKey(players.public_jwk(SIGNER.private.public_key()), "k1"),
                issuer=ISSUER,
                audience=AUDIENCE,
            )
            survivor.manager.players = PlayerPolicy(verifier)
            async with (
                grpc.aio.insecure_channel(doomed.address) as to_doomed,
                grpc.aio.insecure_channel(survivor.address) as to_survivor,
            ):
                keep = find(to_survivor, keeper, time_control=OTHER_POOL)  # its rounds go on
                await first_waiting(keep)
                first = find(to_doomed, one, time_control=pool)
                await first_waiting(first)
                second = find(to_doomed, two, time_control=pool)  # matched: the table, death
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await asyncio.wait_for(found(second), 30)
                for _ in range(300):
                    if doomed.popen.poll() is not None:
                        break
                    await asyncio.sleep(0.05)
                assert doomed.popen.poll() == -signal.SIGKILL
                # The table was made, its players' rows never marked: the moment.
                assert await games_held([one, two]) == {one: 1, two: 1}
                # Their clients ask again, on the replica that lives.
                again = [find(to_survivor, p, time_control=pool) for p in (one, two)]
                got = await asyncio.wait_for(asyncio.gather(*(found(s) for s in again)), 30)
                keep.cancel()
                assert got[0].game_id == got[1].game_id
                held = await games_held([one, two])
                if not recover:
                    assert held == {one: 2, two: 2}  # the first table: seats nobody takes
                    return
                assert held == {one: 1, two: 1}  # the table the dead replica made
                assert sorted(g.seat for g in got) == [0, 1]
    finally:
        with contextlib.suppress(Exception):
            doomed.stop(signal.SIGKILL, timeout=10)
