"""How watch streams through the gateway end when a process under them dies (issue 25,
finding 6): UNAVAILABLE, a code clients retry, never INTERNAL, one they do not.

- The gateway's own process killed alone (an OOM kill of it, not of its container):
  Envoy, its child, dies by its death signal; the gateway's sockets, which Envoy relays the
  watch streams to, are held until then (gateway.proxy.hold_sockets_until_envoy_dies), so
  Envoy never sees them close and resets nothing. Before, the kernel closed them first in
  about one kill in four (2 of 10 in the ten-kill case here, 2 of 3 in the attack) and
  every watcher relayed there read INTERNAL. The control shows what clients read when
  Envoy does outlive the Python side's sockets.
- A game service killed under its watchers: the gateway ends their streams UNAVAILABLE
  with a reason, and they resume on another replica.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from client.api import FINISHED, GameClient
from gateway import envoy
from gateway.proxy import Envoy, binary
from services import registry
from services.kit.status import error_info
from tests.gateway.test_envoy_data_path import alive, envoy_child
from tests.support import Process, free_port, running, start_process, wait_serving

GAME = registry.by_name("channeling")
WATCHERS = 8
# Kills of the gateway's Python process alone: the race lost about one kill in four before
# the fix; make test kills three times, make soak (the case marked soak) ten.
KILLS = [pytest.param(3, id="3-kills"), pytest.param(10, id="10-kills", marks=pytest.mark.soak)]
needs_envoy = pytest.mark.skipif(binary() is None, reason="no Envoy binary")
DATA_PATHS = [pytest.param("envoy", marks=needs_envoy), pytest.param("python")]


def routes(*addresses: str) -> dict[str, str]:
    return {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES} | {
        f"TABLETOP_ROUTE_{GAME.name.upper()}": ",".join(addresses)
    }


def children(pid: int) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry))
    return found


def holder_of(gw: Process) -> int:
    """The process holding the gateway's sockets (named gateway-sockets)."""
    for pid in children(gw.popen.pid):
        with contextlib.suppress(OSError):
            if Path(f"/proc/{pid}/comm").read_text().strip() == "gateway-sockets":
                return pid
    raise AssertionError("the gateway has no process holding its sockets")


def open_files(pid: int) -> dict[str, str]:
    fds = Path(f"/proc/{pid}/fd")
    found = {}
    for fd in os.listdir(fds):
        with contextlib.suppress(OSError):
            found[fd] = os.readlink(fds / fd)
    return found


async def watch_then(address: str, kill) -> collections.Counter:
    """WATCHERS streams on one game through ``address``, each past its first update; then
    ``kill()``; then how each stream ended."""
    ended: collections.Counter = collections.Counter()
    async with grpc.aio.insecure_channel(address) as channel:
        client = GameClient(GAME.name, channel, timeout=30)
        game = await client.create(2)
        streams = [client.watch(game.game_id, timeout=60) for _ in range(WATCHERS)]
        for stream in streams:
            await stream.read()
        kill()
        for stream in streams:
            try:
                message = await asyncio.wait_for(stream.read(), 30)
                ended["EOF" if message is grpc.aio.EOF else "a message"] += 1
            except grpc.aio.AioRpcError as error:
                ended[error.code().name] += 1
    return ended


@needs_envoy
@pytest.mark.parametrize("kills", KILLS)
async def test_a_gateway_process_killed_alone_ends_its_watch_streams_unavailable(tmp_path, kills):
    total: collections.Counter = collections.Counter()
    with running(GAME.package, {"TABLETOP_STORE_URL": "memory://"}, tmp_path / "svc.log") as svc:
        wait_serving(svc.address, GAME.service_name)
        for kill in range(kills):
            gw = start_process("gateway", routes(svc.address), tmp_path / f"gw-{kill}.log")
            try:
                wait_serving(gw.address, GAME.service_name, 30)
                front, holder = envoy_child(gw), holder_of(gw)
                if kill == 0:  # one file table: the sockets opened since are the holder's too
                    for _ in range(50):  # two listings alike, not a file opened between
                        if open_files(holder) == open_files(gw.popen.pid):
                            break
                    assert open_files(holder) == open_files(gw.popen.pid)
                    assert any(f.startswith("socket:") for f in open_files(holder).values())
                total += await watch_then(gw.address, gw.popen.kill)  # the Python process alone
                gw.popen.wait(10)
                deadline = time.monotonic() + 10
                while (alive(front) or alive(holder)) and time.monotonic() < deadline:
                    await asyncio.sleep(0.05)
                assert not alive(front) and not alive(holder), "Envoy or the holder outlived it"
            finally:
                if gw.popen.poll() is None:
                    gw.popen.kill()
                    gw.popen.wait(10)
    assert total == {"UNAVAILABLE": kills * WATCHERS}, total


@needs_envoy
async def test_control_envoy_outliving_the_python_side_resets_its_streams_internal(tmp_path):
    # The defect, made to happen every time: an Envoy that is not the Python side's child
    # (so nothing kills it with it) in front of the Python router, which is then killed.
    with running(GAME.package, {"TABLETOP_STORE_URL": "memory://"}, tmp_path / "svc.log") as svc:
        wait_serving(svc.address, GAME.service_name)
        env = {**routes(svc.address), "TABLETOP_GATEWAY_DATA_PATH": "python"}
        with running("gateway", env, tmp_path / "python.log") as side:
            wait_serving(side.address, GAME.service_name)
            plan = envoy.Plan(
                host="127.0.0.1", port=free_port(), admin_port=free_port(),
                control_port=side.port, routes={GAME.name: [svc.address]}, access_log=False,
            )  # fmt: skip
            front = Envoy(str(binary()), envoy.bootstrap(plan), concurrency=1, drain_seconds=1)
            await front.start()
            try:
                address = f"127.0.0.1:{plan.port}"
                await asyncio.to_thread(wait_serving, address, GAME.service_name, 30)
                ended = await watch_then(address, side.popen.kill)
            finally:
                await front.stop()
    assert ended == {"INTERNAL": WATCHERS}, ended


@contextlib.contextmanager
def replicas(tmp_path: Path) -> Iterator[tuple[Process, Process]]:
    """Two replicas of the game on one SQLite file."""
    env = {"TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/games.db"}
    with running(GAME.package, env, tmp_path / "a.log") as a:
        with running(GAME.package, env, tmp_path / "b.log") as b:
            for replica in (a, b):
                wait_serving(replica.address, GAME.service_name)
            yield a, b


@pytest.mark.parametrize("data_path", DATA_PATHS)
async def test_watchers_of_a_killed_backend_end_unavailable_and_resume_on_another(
    tmp_path, data_path
):
    with replicas(tmp_path) as (a, b):
        env = {
            **routes(a.address, b.address),
            "TABLETOP_GATEWAY_DATA_PATH": data_path,
            "TABLETOP_HEALTH_INTERVAL_SECONDS": "0.2",
        }
        with running("gateway", env, tmp_path / "gw.log") as gw:
            wait_serving(gw.address, GAME.service_name)
            async with (
                grpc.aio.insecure_channel(a.address) as on_a,
                grpc.aio.insecure_channel(gw.address) as channel,
            ):
                # The game is made on A (so B has not loaded it: nothing to catch up on).
                game = await GameClient(GAME.name, on_a).create(2)
                client = GameClient(GAME.name, channel, timeout=30)
                streams = [client.watch(game.game_id, timeout=60) for _ in range(WATCHERS)]
                for stream in streams:
                    await stream.read()  # the router takes the replicas in turn: 4 and 4
                reads = [asyncio.ensure_future(stream.read()) for stream in streams]
                a.popen.kill()
                # The router took the replicas in turn: A's four streams end at once.
                pending = set(reads)
                deadline = time.monotonic() + 30
                while len(pending) > WATCHERS // 2 and time.monotonic() < deadline:
                    _, pending = await asyncio.wait(
                        pending, timeout=1, return_when=asyncio.FIRST_COMPLETED
                    )
                await asyncio.sleep(0.5)  # and no other ends
                ended: collections.Counter = collections.Counter()
                following = []
                for read in reads:
                    if not read.done():
                        following.append(read)  # a watcher on B: nothing to tell it yet
                        continue
                    error = read.exception()
                    assert isinstance(error, grpc.aio.AioRpcError), read.result()
                    ended[error.code().name] += 1
                    info = error_info(error)
                    assert info is not None and info.reason == "BACKEND_UNAVAILABLE"
                    again = await resume(client, game.game_id)
                    following.append(asyncio.ensure_future(again.read()))
                assert ended == {"UNAVAILABLE": WATCHERS // 2}, ended
                # A move, through the gateway (now only B answers): every watcher has it.
                seat = 0
                listed = await until_answered(lambda: client.moves(game.game_id, game.tokens[seat]))
                await until_answered(
                    lambda: client.submit(game.game_id, game.tokens[seat], listed.moves[0], 0, "m1")
                )
                for read in following:
                    message = await asyncio.wait_for(read, 30)
                    assert message.turn.version == 1


async def until_answered(call, seconds: float = 30):
    """``call()`` until it is not UNAVAILABLE (a replica known down only after a check)."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            return await call()
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


async def resume(client: GameClient, game_id: str):
    """A new watch stream from the version seen (0), retried while UNAVAILABLE."""

    async def first():
        stream = client.watch(game_id, timeout=60)
        await stream.read()
        return stream

    return await until_answered(first)


@pytest.mark.parametrize("data_path", DATA_PATHS)
async def test_watch_streams_through_the_gateway_end_ok_with_their_game(tmp_path, data_path):
    # The service closes WatchGame with OK after a game's last update (and at once for a
    # game already over): the gateway passes that end on as it is, on both data paths.
    with running(GAME.package, {"TABLETOP_STORE_URL": "memory://"}, tmp_path / "svc.log") as svc:
        wait_serving(svc.address, GAME.service_name)
        env = {**routes(svc.address), "TABLETOP_GATEWAY_DATA_PATH": data_path}
        with running("gateway", env, tmp_path / "gw.log") as gw:
            wait_serving(gw.address, GAME.service_name)
            async with grpc.aio.insecure_channel(gw.address) as channel:
                client = GameClient(GAME.name, channel, timeout=30)
                game = await client.create(2)
                streams = [client.watch(game.game_id, timeout=60) for _ in range(WATCHERS)]
                for stream in streams:
                    await stream.read()
                await client.resign(game.game_id, game.tokens[0])
                for stream in (*streams, client.watch(game.game_id, timeout=60)):
                    last = None
                    while (message := await asyncio.wait_for(stream.read(), 10)) is not (
                        grpc.aio.EOF
                    ):
                        last = message
                    assert await stream.code() == grpc.StatusCode.OK
                    assert last is not None and last.game.status == FINISHED
