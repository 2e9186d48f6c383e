"""Two replicas on PostgreSQL, one SIGKILLed while rated games are played through both:
every finished game is rated exactly once (none twice, none skipped), and a rebuild from
the stored results equals the standings. The players' tokens are verified by the
replicas themselves (a key file), as in production."""

from __future__ import annotations

import asyncio
import os
import random
import signal

import grpc
import pytest

from client.api import FINISHED, GameClient
from services import registry
from services.kit.ratings.rebuilding import rebuild_store
from services.kit.store import open_store
from tests.matchmaking.test_find_match import FORFEIT, SIGNER, token
from tests.players.support import AUDIENCE, ISSUER
from tests.ratings.test_rated_tables import MINE, OPEN
from tests.ratings.test_store import schema_url
from tests.support import start_process

NAME = "channeling"
POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL")
GAMES = 8
RETRIED = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
}

needs_postgres = pytest.mark.skipif(
    not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL is not set (make test-postgres sets it)"
)


def check_rated_once(rated: list, finished: set[str], standings: dict) -> list[str]:
    """What is wrong with the store's rated games: twice, skipped, or counted off."""
    ids = [r.game_id for r in rated]
    problems = [f"{g} rated twice" for g in {g for g in ids if ids.count(g) > 1}]
    problems += [f"{g} finished, not rated" for g in finished - set(ids)]
    problems += [f"{g} rated, not finished" for g in set(ids) - finished]
    if sum(s.games for s in standings.values()) != 2 * len(ids):
        problems.append("the standings count another number of games")
    return problems


def test_control_the_check_sees_a_game_rated_twice_or_skipped():
    class R:
        def __init__(self, game_id: str) -> None:
            self.game_id = game_id

    class S:
        games = 1

    assert (
        check_rated_once([R("a"), R("b")], {"a", "b"}, {"p": S(), "q": S(), "r": S(), "s": S()})
        == []
    )
    assert "a rated twice" in check_rated_once([R("a"), R("a")], {"a"}, {})
    assert "b finished, not rated" in check_rated_once([R("a")], {"a", "b"}, {})


@needs_postgres
async def test_a_replica_killed_mid_games_never_rates_twice_or_skips(tmp_path):
    url = schema_url(POSTGRES or "")
    key = tmp_path / "players.pem"
    key.write_bytes(SIGNER.public_pem())
    env = {
        "TABLETOP_STORE_URL": url,
        "TABLETOP_ALLOW_SEED": "true",
        "TABLETOP_JWT_PUBLIC_KEY_FILE": str(key),
        "TABLETOP_JWT_ISSUER": ISSUER,
        "TABLETOP_JWT_AUDIENCE": AUDIENCE,
        "TABLETOP_BOT_WARM": "false",
    }
    replicas = [start_process(f"services.{NAME}", env, tmp_path / f"{r}.log") for r in "ab"]
    rng = random.Random(7)
    channels = [grpc.aio.insecure_channel(r.address) for r in replicas]
    clients = [GameClient(NAME, c) for c in channels]
    alive = [True, True]

    async def call(method: str, player: str, **fields):
        """On a replica at random, again on another while one is down."""
        for attempt in range(60):
            live = [i for i in range(2) if alive[i]]
            client = clients[rng.choice(live)]
            try:
                return await client.call(method, token(player), **fields)
            except grpc.aio.AioRpcError as error:
                if error.code() not in RETRIED:
                    raise
                await asyncio.sleep(0.1 * (attempt + 1))
        raise AssertionError(f"{method} found no replica")

    async def play(n: int) -> str:
        players = [f"r{n}-a", f"r{n}-b"] if n % 2 else [f"r{n % 3}-x", f"r{(n + 1) % 3}-x"]
        created = await call(
            "CreateGame", players[0], players=2, seats=[MINE, OPEN], time_control=FORFEIT,
            rated=True, seed=n,
        )  # fmt: skip
        game_id = created.game.game_id
        try:
            await call("JoinGame", players[1], game_id=game_id)
        except grpc.aio.AioRpcError as error:
            # A retry of a join the killed replica made before its answer was lost.
            if "already holds" not in (error.details() or ""):
                raise
        while True:
            state = await call("GetGame", players[0], game_id=game_id)
            if state.game.status == FINISHED:
                return str(game_id)
            if not state.game.to_act:  # a replica not yet told of the last entry
                await asyncio.sleep(0.05)
                continue
            seat = state.game.to_act[0]
            listed = await call("ListMoves", players[seat], game_id=game_id)
            if listed.game.status == FINISHED or not listed.moves:
                continue
            move = rng.choice(list(listed.moves))
            version = listed.game.version
            try:
                await call(
                    "SubmitMove", players[seat], game_id=game_id, move=move,
                    expected_version=version, request_id=f"{seat}-{version}-{rng.randrange(10**9)}",
                    omit_view=True,
                )  # fmt: skip
            except grpc.aio.AioRpcError as error:
                if error.code() not in (
                    grpc.StatusCode.ABORTED,
                    grpc.StatusCode.FAILED_PRECONDITION,
                ):
                    raise

    async def kill_a_replica() -> None:
        await asyncio.sleep(1.5)
        replicas[0].popen.send_signal(signal.SIGKILL)
        alive[0] = False
        replicas[0].popen.wait(30)

    try:
        results = await asyncio.wait_for(
            asyncio.gather(*(play(n) for n in range(GAMES)), kill_a_replica()), 300
        )
        finished = set(results[:GAMES])
        store = open_store(url)
        try:
            rated = await store.rated_games(NAME)  # type: ignore[attr-defined]
            standings = {
                e.player_id: e.standing
                for e in await store.all_ratings(NAME)  # type: ignore[attr-defined]
            }
            assert check_rated_once(rated, finished, standings) == []
            engine = registry.by_name(NAME).engine()
            assert await rebuild_store(store, engine.GAME, check=True) == []
        finally:
            await store.close()
        assert replicas[0].popen.returncode == -signal.SIGKILL
    finally:
        for channel in channels:
            await channel.close()
        for replica in replicas:
            if replica.popen.poll() is None:
                replica.stop()
