"""Watchers that stop reading (an HTTP/2 window that stays shut) cost a bounded amount of
memory, and each is ended with WATCHER_TOO_SLOW and the version to resume from.

gRPC completes a write only once flow control lets it through, so a stalled watcher's
handler waits on its write while the game goes on; what piled up was the updates queued
for it. The clients here speak HTTP/2 by hand (tests/security/h2raw.py): each lets a few
KiB through, then never opens its window again, while a game of some 1,300 moves is
played; the service (and the gateway, when in front) runs as its own process, so the
resident memory measured is theirs alone.

Through the gateway the same holds only if the gateway's calls to the service do not
buffer for a stalled client: their HTTP/2 windows must stay small (no BDP probing), so
that back-pressure reaches the service, whose stall limit then ends the stream and the
gateway relays that status.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import time
from collections.abc import Iterator

import grpc
import psutil
import pytest
from google.protobuf import any_pb2
from google.rpc import error_details_pb2, status_pb2

from client.api import GameClient
from services import registry
from tests.security.h2raw import RawCall, wait_all
from tests.support import running, service_in_process

NAME = "shen"  # the longest games (about 1,300 moves from the seed chosen below)
ENTRY = registry.by_name(NAME)
WATCHERS = 30
STALL_SECONDS = 2.0
MIB = 1024 * 1024


def rss(pids: list[int]) -> int:
    return sum(psutil.Process(pid).memory_info().rss for pid in pids)


async def wait_ready(host: str, port: int) -> None:
    """Until the service answers through this port (the gateway finds it up)."""
    deadline = time.monotonic() + 20
    async with grpc.aio.insecure_channel(f"{host}:{port}") as channel:
        client = GameClient(NAME, channel)
        while True:
            try:
                await client.get("no-such-game")
            except grpc.aio.AioRpcError as error:
                if error.code() == grpc.StatusCode.NOT_FOUND:
                    return
                if time.monotonic() > deadline:
                    raise
            await asyncio.sleep(0.1)


@functools.cache
def longest_seed(players: int, seeds: range = range(10)) -> int:
    """The seed whose game, played as :func:`play` plays it, is the longest (of ten: each
    seed costs a game in the engine, about 0.35 s, in every worker that runs a test here;
    the longest of ten is over 1,200 moves, of thirty 1,393)."""
    engine = ENTRY.engine()

    def length(seed: int) -> int:
        state = engine.new_game(seed, players, engine.GAME.options_type())
        rng, moves = random.Random(seed), 0
        while to_act := list(engine.to_act(state)):
            seat = rng.choice(to_act)
            engine.apply(state, seat, rng.choice(engine.legal_moves(state, seat)))
            moves += 1
        return moves

    return max(seeds, key=length)


async def play(client: GameClient, game, seed: int) -> int:
    """Random legal moves to the end, as fast as the service answers; the move count."""
    rng = random.Random(seed)
    moves = 0
    state = await client.get(game.game_id)
    while list(state.game.to_act):
        seat = rng.choice(list(state.game.to_act))
        listed = await client.moves(game.game_id, game.tokens[seat])
        reply = await client.submit(game.game_id, game.tokens[seat], rng.choice(list(listed.moves)))
        moves += 1
        state = reply
    return moves


def ended_with(call: RawCall) -> tuple[int, error_details_pb2.ErrorInfo | None]:
    """The grpc-status and ErrorInfo in a finished call's trailers."""
    code = int(call.trailer("grpc-status") or b"-1")
    details = call.trailer("grpc-status-details-bin")
    if not details:
        return code, None
    status = status_pb2.Status.FromString(details[1:] if details[:1] == b"\x00" else details)
    for detail in status.details:
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            any_pb2.Any.Unpack(detail, info)
            return code, info
    return code, None


@contextlib.contextmanager
def serving(tmp_path, env: dict[str, str], gateway: bool) -> Iterator[tuple[str, int, list[int]]]:
    """The service as a process, and the gateway in front of it if asked: (host, port the
    clients call, pids whose memory counts)."""
    with running(f"services.{NAME}", env, tmp_path / "service.log") as service:
        if not gateway:
            yield "127.0.0.1", service.port, [service.popen.pid]
            return
        routes = {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES}
        routes[f"TABLETOP_ROUTE_{NAME.upper()}"] = service.address
        gateway_env = {**routes, "TABLETOP_RATE_PER_CLIENT": "0", "TABLETOP_ACCESS_LOG": "false"}
        with running("gateway", gateway_env, tmp_path / "gateway.log") as gw:
            yield "127.0.0.1", gw.port, [service.popen.pid, gw.popen.pid]


async def stalled_round(tmp_path, stall_seconds: float, gateway: bool = False) -> dict:
    """The service (behind the gateway, if asked); a game played without watchers, then
    the same game with WATCHERS stalled raw clients. Returns the figures the tests check."""
    env = {
        "TABLETOP_STORE_URL": "memory://",
        "TABLETOP_ALLOW_SEED": "true",
        "TABLETOP_ACCESS_LOG": "false",
        "TABLETOP_WATCH_STALL_SECONDS": str(stall_seconds),
    }
    players = ENTRY.engine().GAME.min_players
    seed = longest_seed(players)
    with serving(tmp_path, env, gateway) as (host, port, pids):
        await wait_ready(host, port)
        async with grpc.aio.insecure_channel(f"{host}:{port}") as channel:
            client = GameClient(NAME, channel)
            # The noise floor: the same game, nobody watching.
            before_plain = rss(pids)
            plain = await client.create(players, seed=seed)
            moves = await play(client, plain, seed=seed)
            plain_growth = rss(pids) - before_plain

            game = await client.create(players, seed=seed)
            request = client.pb2.WatchGameRequest(game_id=game.game_id).SerializeToString()
            path = f"/{ENTRY.service_name}/WatchGame"
            calls = [
                RawCall(host, port, path, request, window=8192).start() for _ in range(WATCHERS)
            ]
            deadline = time.monotonic() + 10
            while not all(call.headers for call in calls) and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            before = rss(pids)
            started = time.monotonic()
            assert await play(client, game, seed=seed) == moves
            played_seconds = time.monotonic() - started
            await asyncio.sleep(stall_seconds + 1.0)
            growth = rss(pids) - before
            for call in calls:
                call.resume()
            all_ended = wait_all(calls, 10.0)
            for call in calls:
                call.close()
    return {
        "moves": moves,
        "plain_growth": plain_growth,
        "growth": growth,
        "played_seconds": played_seconds,
        "calls": calls,
        "all_ended": all_ended,
    }


@pytest.mark.parametrize("gateway", [False, True], ids=["service", "through-the-gateway"])
async def test_stalled_watchers_are_ended_with_a_resume_version_and_memory_stays_bounded(
    tmp_path, gateway
):
    figures = await stalled_round(tmp_path, STALL_SECONDS, gateway)
    moves, calls = figures["moves"], figures["calls"]
    assert moves > 1000
    assert figures["played_seconds"] > STALL_SECONDS, "the stall limit passed mid-game"
    assert figures["all_ended"], "every stalled watcher was ended once it read again"
    pb2 = ENTRY.pb2()
    for call in calls:
        assert call.reset is None
        code, info = ended_with(call)
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
        assert info is not None and info.reason == "WATCHER_TOO_SLOW"
        assert info.metadata["limit"] == "watch_stall"
        received = [pb2.WatchGameResponse.FromString(m) for m in call.messages()]
        # The view first, then each turn in order, up to the version the status names.
        assert received[0].HasField("view") and received[0].game.version == 0
        versions = [r.game.version for r in received]
        assert versions == list(range(len(received)))
        assert int(info.metadata["version"]) == versions[-1] < moves
    # Thirty streams stalled over a 1,276-move game cost no more than the same game played
    # with nobody watching, give or take the allocator's noise. Before, every stalled
    # watcher held every update it missed (a view each): the same round on that code grew
    # 6.7 MiB more than the game alone over 669 moves, and no stream was ever ended.
    extra = figures["growth"] - figures["plain_growth"]
    assert extra < 5 * MIB, f"{extra / MIB:.1f} MiB more than the game alone"


@contextlib.asynccontextmanager
async def three_stalled_watchers_and_20_moves(stall_seconds: float):
    """In process, to look inside: three raw watchers that never read past the view, and
    20 moves made while every first write waits. Yields the calls and the live game."""
    players = ENTRY.engine().GAME.min_players
    async with service_in_process(NAME, watch_stall_seconds=stall_seconds) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient(NAME, channel)
            game = await client.create(players, seed=3)
            request = client.pb2.WatchGameRequest(game_id=game.game_id).SerializeToString()
            path = f"/{ENTRY.service_name}/WatchGame"
            calls = [RawCall("127.0.0.1", svc.port, path, request).start() for _ in range(3)]
            try:
                live = svc.manager._live[game.game_id]
                deadline = time.monotonic() + 5
                while len(live.watchers) < 3 and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
                assert len(live.watchers) == 3
                rng = random.Random(3)
                for _ in range(20):  # moves arrive while every first write (the view) waits
                    state = await client.get(game.game_id)
                    seat = state.game.to_act[0]
                    listed = await client.moves(game.game_id, game.tokens[seat])
                    move = rng.choice(list(listed.moves))
                    await client.submit(game.game_id, game.tokens[seat], move)
                assert all(len(w.pending) == 20 for w in live.watchers)
                yield calls, live
            finally:
                for call in calls:
                    call.close()


async def test_a_stalled_watcher_stops_holding_updates_once_the_stall_limit_passes():
    """The game forgets a stalled watcher (and what was pending for it) once its write
    has waited the stall limit, while the game goes on."""
    async with three_stalled_watchers_and_20_moves(0.5) as (calls, live):
        deadline = time.monotonic() + 5
        while live.watchers and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert live.watchers == []
        for call in calls:
            call.resume()
        # In another thread: the service runs on this event loop.
        assert await asyncio.to_thread(wait_all, calls, 5.0)
        for call in calls:
            code, info = ended_with(call)
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
            assert info.metadata["version"] == "0" and len(call.messages()) == 1


async def test_control_without_the_stall_limit_stalled_watchers_hold_every_update():
    """The control: with the limit off (0) the same stalled watchers are never let go and
    hold every update they missed, so the test above fails on a bound that is broken."""
    async with three_stalled_watchers_and_20_moves(0) as (_calls, live):
        await asyncio.sleep(1.5)  # three times the limit the test above sets
        assert len(live.watchers) == 3
        assert all(len(w.pending) == 20 for w in live.watchers)
