"""Past 1,024 streams through one gateway (issue 29): every watch stream gets its first
message.

Envoy 1.36 lowered HTTP/2's default ``max_concurrent_streams`` to 1,024 a connection, and
every client's watch streams reach the gateway's Python side on one upstream connection:
the gateway stalled at about 1,024 streams in all. gateway/envoy.py sets the limits
(CLIENT_STREAMS, CONTROL_STREAMS). ``python -m gateway`` as deployed, a real service
behind it, 1,100 WatchGame streams over several client connections (the per-client caps
raised: every stream comes from one address). Control: the same gateway with Envoy's
defaults (this module run as the gateway, the two settings taken out) leaves the streams
beyond 1,024 without a first message.
"""

from __future__ import annotations

import asyncio
import runpy
import time
from pathlib import Path

import grpc
import pytest

from client.api import GameClient
from gateway.proxy import binary
from tests.gateway.test_envoy_data_path import GAME, _routes
from tests.support import running, wait_serving

pytestmark = pytest.mark.skipif(binary() is None, reason="no Envoy binary")

STREAMS = 1_100
# Two client connections, the first carrying all but these: a client that multiplexes
# more than 1,024 streams on one connection (a spectators' front end, or gRPC's own
# habit of sharing one connection between channels to the same address).
ON_THE_SECOND = 60
GAMES = 10  # spectators, STREAMS // GAMES a game
ENVOY_DEFAULT = 1_024
OPEN_AT_ONCE = 100
UNLIMITED = {
    "TABLETOP_STREAMS_PER_CLIENT": "0",
    "TABLETOP_RATE_PER_CLIENT": "0",
    "TABLETOP_WATCH_QUEUE_LIMIT": "100000",
}


def _connections(address: str) -> list[grpc.aio.Channel]:
    # A channel argument of its own each: gRPC would otherwise share one connection.
    return [
        grpc.aio.insecure_channel(address, options=[("tabletop.test.connection", n)])
        for n in range(2)
    ]


async def _first_messages(address: str, settle: float) -> tuple[list[int], int]:
    """Open STREAMS watch streams; how many got their first message on each connection
    once they stopped coming in for ``settle`` seconds (or all came), and how many
    failed."""
    channels = _connections(address)
    clients = [GameClient(GAME.name, c, timeout=120.0) for c in channels]
    first = [0, 0]
    failed = 0
    last = time.monotonic()
    calls: list[grpc.aio.UnaryStreamCall] = []
    tasks: list[asyncio.Future[None]] = []

    async def watch(n: int, game_id: str) -> None:
        nonlocal failed, last
        connection = 1 if n < ON_THE_SECOND else 0
        client = clients[connection]
        call = client._method("WatchGame", streaming=True)(
            client.pb2.WatchGameRequest(game_id=game_id)
        )
        calls.append(call)
        try:
            await call.read()
            first[connection] += 1
            last = time.monotonic()
        except grpc.aio.AioRpcError:
            failed += 1

    try:
        games = [(await clients[0].create(2)).game_id for _ in range(GAMES)]
        for n in range(STREAMS):
            tasks.append(asyncio.ensure_future(watch(n, games[n % GAMES])))
            if n % OPEN_AT_ONCE == OPEN_AT_ONCE - 1:
                await asyncio.sleep(0.05)  # a client opening streams, not one burst
        while sum(first) + failed < STREAMS and time.monotonic() - last < settle:
            await asyncio.sleep(0.2)
        return first, failed
    finally:
        for call in calls:
            call.cancel()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for channel in channels:
            await channel.close()


@pytest.mark.parametrize("limits", ["ours", "envoy_default"])
async def test_more_than_1024_watch_streams_through_one_gateway_all_get_their_first_message(
    tmp_path: Path, limits: str
):
    ours = limits == "ours"
    service_env = {"TABLETOP_STORE_URL": "memory://", **UNLIMITED}
    with running(f"services.{GAME.name}", service_env, tmp_path / "svc.log") as svc:
        wait_serving(svc.address, GAME.service_name)
        env = {**_routes(svc.address), **UNLIMITED}
        module = "gateway" if ours else __name__
        with running(module, env, tmp_path / "gw.log") as gw:
            wait_serving(gw.address, GAME.service_name)
            # Generous: on a loaded machine 1,100 streams take a while to open. The
            # control's stall is seen once no first message came for 10 s.
            first, failed = await _first_messages(gw.address, 60.0 if ours else 10.0)
    print(f"{limits}: first messages by connection {first} of {STREAMS}, {failed} failed")
    assert failed == 0
    assert first[1] == ON_THE_SECOND  # the second connection is never near any limit
    if ours:
        assert first[0] == STREAMS - ON_THE_SECOND
    else:  # the first connection stops at Envoy's default; the others wait in its queue
        assert first[0] == ENVOY_DEFAULT


if __name__ == "__main__":  # the control: the gateway with Envoy's default stream limits
    from gateway import envoy

    envoy.CLIENT_STREAMS = envoy.CONTROL_STREAMS = None
    runpy.run_module("gateway", run_name="__main__", alter_sys=True)
