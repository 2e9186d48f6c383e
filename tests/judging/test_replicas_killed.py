"""Issue 28 as it is judged, with two replicas: both serve Channeling on one PostgreSQL
database behind ONE gateway route (two addresses, balanced per call, health-checked);
guests signed in by the gateway play rated games through it by reflection, and one
replica is SIGKILLed mid-games. The client retries UNAVAILABLE calls as the API allows
(SubmitMove with the same expected version and request id). After: every finished game
is rated exactly once (the store's rated games, the players' counts through GetRatings)
and the rebuild command finds the standings equal."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from services.kit.store import open_store
from tests.judging.checks import games_counted, rebuild_equal
from tests.judging.gateway import (
    CHANNELING,
    RETRIES,
    Reflected,
    judged_stack,
    rebuild_check,
    sign_in,
)
from tests.judging.play import play_rated
from tests.ratings.test_replicas import check_rated_once
from tests.ratings.test_store import schema_url

POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL")
GAMES = 8
TABLES_AT_ONCE = 8

pytestmark = pytest.mark.skipif(
    not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL is not set (make test-postgres sets it)"
)


async def stored(url: str) -> tuple[list, dict]:
    """The store's rated games and standings of Channeling."""
    store = open_store(url)
    try:
        rated = await store.rated_games("channeling")  # type: ignore[attr-defined]
        entries = await store.all_ratings("channeling")  # type: ignore[attr-defined]
        return rated, {e.player_id: e.standing for e in entries}
    finally:
        await store.close()


def test_a_replica_killed_mid_games_behind_the_gateway_rates_each_game_once(tmp_path):
    url = schema_url(POSTGRES or "")
    RETRIES.clear()
    with judged_stack(tmp_path, url, replicas=2) as stack:
        guests = sign_in(stack.address, [f"Player {i}" for i in range(8)])
        client = Reflected(stack.address, CHANNELING)
        killed_with_games_open: list[int] = []
        try:
            with ThreadPoolExecutor(TABLES_AT_ONCE) as pool:
                futures = [
                    pool.submit(
                        play_rated,
                        client,
                        2000 + n,
                        [guests[n % 8], guests[(n + 3) % 8]],
                        set(),
                        random.Random(n),
                    )
                    for n in range(GAMES)
                ]
                killed = stack.replicas[0]
                # Mid-games: after a while of play, with games still going.
                time.sleep(2.0)
                killed_with_games_open.append(sum(not f.done() for f in futures))
                killed.popen.send_signal(signal.SIGKILL)
                killed.popen.wait(30)
                game_ids = [f.result(timeout=240) for f in futures]
            assert killed.popen.returncode == -signal.SIGKILL
            assert killed_with_games_open[0] > 0  # the kill came while games were played
            assert RETRIES["UNAVAILABLE"] > 0  # and the clients felt it
            for game_id in game_ids:
                header = client.call("GetGame", {"gameId": game_id})["game"]
                assert header["status"] == "GAME_STATUS_FINISHED" and header["rated"] is True
            counted = {}
            for guest in guests:
                ratings = client.call("GetRatings", {"playerId": guest.player_id}, guest.token)
                (two,) = [r for r in ratings["ratings"] if r["shape"] == "2p"]
                counted[guest.player_id] = two.get("games", 0)
        finally:
            client.close()
        rated, standings = asyncio.run(stored(url))
        assert check_rated_once(rated, set(game_ids), standings) == []
        assert games_counted(counted, GAMES) == []
        done = rebuild_check(url)
        assert rebuild_equal(done.returncode, done.stdout + done.stderr) == []
        # The killed replica's address is still on the route: the survivor served alone.
        assert stack.replicas[1].popen.poll() is None
