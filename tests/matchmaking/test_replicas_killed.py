"""Two service processes on one PostgreSQL schema, one SIGKILLed while its player waits
in FindMatch: that player's pool row goes stale and is dropped, nobody is matched with
the dead stream, and the live replica's players are still matched. Control: with a
heartbeat timeout longer than the test, the live player is held up by the dead one
(proposed with it and never accepted).
The players' tokens are verified by the processes themselves (a key file)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

import grpc
import psycopg
import pytest
from google.protobuf import duration_pb2
from tabletop.common.v1 import table_pb2

from tests.matchmaking.test_find_match import SIGNER, find, first_waiting, found
from tests.players.support import AUDIENCE, ISSUER
from tests.ratings.test_store import schema_url
from tests.support import start_process

POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL")
OTHER_POOL = table_pb2.TimeControl(per_decision=duration_pb2.Duration(seconds=77))


async def rows(url: str, player: str) -> int:
    async with await psycopg.AsyncConnection.connect(url) as conn:
        cur = await conn.execute(
            "SELECT count(*) FROM tabletop_pool WHERE player_id = %s", (player,)
        )
        row = await cur.fetchone()
        return int(row[0]) if row else 0


def replica_env(tmp_path, url: str, **settings: str) -> dict[str, str]:
    """A Channeling process on ``url`` that verifies the test's players' tokens itself
    (a key file), with ``settings`` added."""
    key = tmp_path / "players.pem"
    key.write_bytes(SIGNER.public_pem())
    return {
        "TABLETOP_STORE_URL": url,
        "TABLETOP_JWT_PUBLIC_KEY_FILE": str(key),
        "TABLETOP_JWT_ISSUER": ISSUER,
        "TABLETOP_JWT_AUDIENCE": AUDIENCE,
        **settings,
    }


@pytest.mark.skipif(not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL is not set")
@pytest.mark.parametrize("heartbeat", [0.5, 1000.0], ids=["stale-dropped", "control-never-stale"])
async def test_a_killed_replicas_player_is_dropped_and_the_others_still_meet(tmp_path, heartbeat):
    url = schema_url(POSTGRES or "")
    env = replica_env(
        tmp_path,
        url,
        TABLETOP_POOL_HEARTBEAT_SECONDS=str(heartbeat),
        TABLETOP_MATCH_TICK_SECONDS="0.1",
    )
    doomed = start_process("services.channeling", env, tmp_path / "a.log")
    live = start_process("services.channeling", env, tmp_path / "b.log")
    try:
        async with (
            grpc.aio.insecure_channel(doomed.address) as to_doomed,
            grpc.aio.insecure_channel(live.address) as to_live,
        ):
            ghost = find(to_doomed, "player-ghost")
            await first_waiting(ghost)
            assert await rows(url, "player-ghost") == 1  # in the shared pool
            # Another pool's player keeps the live replica's rounds going meanwhile.
            other = find(to_live, "player-other", time_control=OTHER_POOL)
            await first_waiting(other)
            doomed.stop(signal.SIGKILL)
            ghost.cancel()
            if heartbeat < 10:
                for _ in range(600):  # 3 heartbeats, and a generous margin for a slow machine
                    if not await rows(url, "player-ghost"):
                        break
                    await asyncio.sleep(0.05)
                assert await rows(url, "player-ghost") == 0
            alive = find(to_live, "player-alive")
            if heartbeat >= 10:
                # The ghost's row is kept: the live player is proposed with it, never
                # accepted by the dead replica, and gets no table (the accept step).
                with pytest.raises(TimeoutError):
                    await asyncio.wait_for(found(alive), 3)
                return
            assert (await first_waiting(alive)).players_waiting == 1
            late = find(to_live, "player-late")
            got_alive, got_late = await asyncio.wait_for(
                asyncio.gather(found(alive), found(late)), 30
            )
            assert got_alive.game_id == got_late.game_id
            seated = {s.player_id for s in got_alive.game.seats}
            assert seated == {"player-alive", "player-late"}
            other.cancel()
    finally:
        for process in (doomed, live):
            with contextlib.suppress(Exception):
                process.stop(signal.SIGKILL, timeout=10)
