"""A call's metadata through the gateway is judged as it is directly (issue 25, Deliver 4
and finding 7): up to the documented limits (16 KiB in all, 100 entries) it always reaches
the game service; beyond, the caller gets RESOURCE_EXHAUSTED with ErrorInfo LIMIT_REACHED
naming the limit (metadata_bytes, metadata_entries), as directly, and no other client is
touched. Before, Envoy's own limits (60 KiB, 100 headers counting the ones gRPC adds)
reset a call of 99 custom headers (INTERNAL), and the services' gRPC refused 8 KiB of
metadata at random (its soft limit).

Both data paths: on Envoy the unary calls reach the service through Envoy and the watch
streams through the Python side behind it, which must take whatever Envoy passes on.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import grpc
import pytest

from client.api import GameClient
from gateway import envoy
from gateway.proxy import Envoy, binary
from services import registry
from services.kit import limits
from services.kit.status import error_info
from tests.security.h2raw import RawCall
from tests.support import (
    Process,
    free_port,
    gateway_in_process,
    running,
    service_in_process,
    wait_serving,
)

GAME = registry.by_name("channeling")
# The documented limits (services.kit.limits); the gateway applies no other below them.
MAX_BYTES = getattr(limits, "MAX_METADATA_BYTES", 16 * 1024)
MAX_ENTRIES = getattr(limits, "MAX_METADATA_ENTRIES", 100)
needs_envoy = pytest.mark.skipif(binary() is None, reason="no Envoy binary")
DATA_PATHS = [pytest.param("envoy", marks=needs_envoy), pytest.param("python")]


def spread(total: int, entries: int) -> list[tuple[str, str]]:
    """``entries`` custom headers of ``total`` bytes in all (names and values)."""
    names = [f"x-m-{i:03d}" for i in range(entries)]
    room = total - sum(len(n) for n in names)
    return [(n, "v" * (room // entries + (i < room % entries))) for i, n in enumerate(names)]


# Within the limits, with room for what gRPC adds (user-agent and the like).
WITHIN = {
    "16 KiB less 1 KiB in 90 entries": spread(MAX_BYTES - 1024, MAX_ENTRIES - 10),
    "8 KiB authorization": [("authorization", "Bearer " + "t" * 8 * 1024)],
    "15 KiB authorization": [("authorization", "Bearer " + "t" * 15 * 1024)],
}
# Beyond: (metadata, the limit the refusal names).
BEYOND = {
    "16 KiB and 1 KiB in 10 entries": (spread(MAX_BYTES + 1024, 10), "metadata_bytes"),
    "40 KiB in 20 entries": (spread(40 * 1024, 20), "metadata_bytes"),
    "one header of 60 KiB": ([("x-big", "v" * 60 * 1024)], "metadata_bytes"),
    "150 small entries": (spread(1500, 150), "metadata_entries"),
    f"{MAX_ENTRIES + 1} small entries": (spread(1010, MAX_ENTRIES + 1), "metadata_entries"),
}


def routes(address: str) -> dict[str, str]:
    return {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES} | {
        f"TABLETOP_ROUTE_{GAME.name.upper()}": address
    }


@contextlib.contextmanager
def stack(tmp_path: Path, data_path: str) -> Iterator[tuple[Process, Process]]:
    with running(GAME.package, {"TABLETOP_STORE_URL": "memory://"}, tmp_path / "s.log") as svc:
        wait_serving(svc.address, GAME.service_name)
        env = {**routes(svc.address), "TABLETOP_GATEWAY_DATA_PATH": data_path}
        with running("gateway", env, tmp_path / "gw.log") as gw:
            wait_serving(gw.address, GAME.service_name)
            yield svc, gw


@contextlib.asynccontextmanager
async def client(address: str) -> AsyncIterator[GameClient]:
    # A connection of its own: a call that ends its connection ends only this client's.
    options = [("grpc.use_local_subchannel_pool", 1)]
    async with grpc.aio.insecure_channel(address, options=options) as channel:
        yield GameClient(GAME.name, channel, timeout=30)


async def outcome(call) -> tuple[str, str | None, str | None]:
    """(code, ErrorInfo reason, its limit) of ``call()``."""
    try:
        await call()
    except grpc.aio.AioRpcError as error:
        info = error_info(error)
        return (
            error.code().name,
            info.reason if info else None,
            info.metadata.get("limit") if info else None,
        )
    return ("OK", None, None)


def get_game(c: GameClient, game_id: str, metadata):
    request = c.pb2.GetGameRequest(game_id=game_id)
    return lambda: c._method("GetGame")(request, metadata=metadata, timeout=30)


def first_update(c: GameClient, game_id: str, metadata):
    request = c.pb2.WatchGameRequest(game_id=game_id)

    async def watch():
        stream = c._method("WatchGame", streaming=True)(request, metadata=metadata, timeout=30)
        try:
            await stream.read()
        finally:
            stream.cancel()

    return watch


def other_client_answered(port: int, game_id: str, request: bytes) -> bool:
    """A GetGame from another address, on a connection of its own, answered OK."""
    call = RawCall(
        "127.0.0.1", port, f"/{GAME.service_name}/GetGame", request, window=65_535,
        source="127.0.0.9",
    ).start()  # fmt: skip
    try:
        return call.wait(10) and call.trailer("grpc-status") == b"0"
    finally:
        call.close()


@pytest.mark.parametrize("data_path", DATA_PATHS)
async def test_metadata_within_the_limits_always_reaches_the_service(tmp_path, data_path):
    with stack(tmp_path, data_path) as (svc, gw):
        async with client(svc.address) as direct, client(gw.address) as via:
            game = await direct.create(2)
            for name, metadata in WITHIN.items():
                for attempt in range(5):  # gRPC's soft limit refused some, at random
                    for c in (direct, via):
                        code = await outcome(get_game(c, game.game_id, metadata))
                        bad_token = ("UNAUTHENTICATED", "BAD_TOKEN", None)
                        assert code in (("OK", None, None), bad_token), (name, attempt, code)
                    assert await outcome(first_update(via, game.game_id, metadata)) in (
                        ("OK", None, None),
                        ("UNAUTHENTICATED", "BAD_TOKEN", None),
                    ), name


@pytest.mark.parametrize("data_path", DATA_PATHS)
async def test_metadata_beyond_the_limits_is_refused_with_a_reason_as_directly(tmp_path, data_path):
    with stack(tmp_path, data_path) as (svc, gw):
        async with client(svc.address) as direct, client(gw.address) as via:
            game = await direct.create(2)
            request = direct.pb2.GetGameRequest(game_id=game.game_id).SerializeToString()
            for name, (metadata, limit) in BEYOND.items():
                expected = ("RESOURCE_EXHAUSTED", "LIMIT_REACHED", limit)
                assert await outcome(get_game(direct, game.game_id, metadata)) == expected, name
                assert await outcome(get_game(via, game.game_id, metadata)) == expected, name
                assert await outcome(first_update(via, game.game_id, metadata)) == expected, name
                # Nobody else is touched: another address, and this client's next call.
                assert await asyncio.to_thread(other_client_answered, gw.port, game.game_id,
                                               request), name  # fmt: skip
                assert await outcome(get_game(via, game.game_id, None)) == ("OK", None, None)


@needs_envoy
async def test_one_header_beyond_what_grpc_takes_is_refused_as_directly(tmp_path):
    # 70 KiB, over what the services' gRPC takes (64 KiB) and under what Envoy reads (256
    # KiB): RESOURCE_EXHAUSTED both ways (directly gRPC's own refusal, with no reason;
    # through Envoy, which passes it on in a form gRPC takes, the service's, with one).
    # Over 256 KiB no setting of Envoy's reads it: it ends the connection it came on
    # (UNAVAILABLE to its calls), which is the sender's alone.
    with stack(tmp_path, "envoy") as (svc, gw):
        async with client(svc.address) as direct, client(gw.address) as via:
            game = await direct.create(2)
            request = direct.pb2.GetGameRequest(game_id=game.game_id).SerializeToString()
            for kib, through in (
                (70, "RESOURCE_EXHAUSTED"),
                (envoy.HEADER_FIELD_KB + 8, "UNAVAILABLE"),
            ):
                metadata = [("x-big", "v" * kib * 1024)]
                assert (await outcome(get_game(direct, game.game_id, metadata)))[0] == (
                    "RESOURCE_EXHAUSTED"
                )
                assert (await outcome(get_game(via, game.game_id, metadata)))[0] == through, kib
                assert await asyncio.to_thread(
                    other_client_answered, gw.port, game.game_id, request
                )
                assert await outcome(get_game(via, game.game_id, None)) == ("OK", None, None)


@needs_envoy
async def test_control_envoy_at_its_own_header_limits_resets_such_calls(tmp_path):
    # Envoy's defaults (60 KiB, 100 headers counting gRPC's own): a call of 99 custom
    # headers is reset, INTERNAL to the client, before any service could judge it; one
    # header of 70 KiB ends the client's connection.
    with running(GAME.package, {"TABLETOP_STORE_URL": "memory://"}, tmp_path / "s.log") as svc:
        wait_serving(svc.address, GAME.service_name)
        plan = envoy.Plan(
            host="127.0.0.1", port=free_port(), admin_port=free_port(),
            control_port=free_port(), routes={GAME.name: [svc.address]}, access_log=False,
        )  # fmt: skip
        config = envoy.bootstrap(plan)
        manager = config["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]
        manager["typed_config"].pop("max_request_headers_kb")
        manager["typed_config"]["common_http_protocol_options"].pop("max_headers_count")
        manager["typed_config"]["http2_protocol_options"].pop("max_header_field_size_kb")
        front = Envoy(str(binary()), config, concurrency=1, drain_seconds=1)
        await front.start()
        try:
            address = f"127.0.0.1:{plan.port}"
            async with client(svc.address) as direct, client(address) as via:
                game = await direct.create(2)
                while (await outcome(get_game(via, game.game_id, None)))[0] == "UNAVAILABLE":
                    await asyncio.sleep(0.1)  # until Envoy's first health check passed
                metadata = spread(990, 99)
                assert await outcome(get_game(direct, game.game_id, metadata)) == (
                    "OK", None, None,
                )  # fmt: skip
                assert (await outcome(get_game(via, game.game_id, metadata)))[0] == "INTERNAL"
                big = [("x-big", "v" * 70 * 1024)]
                assert (await outcome(get_game(via, game.game_id, big)))[0] == "UNAVAILABLE"
        finally:
            await front.stop()


@pytest.mark.parametrize("behind_envoy", [True, False], ids=["behind-envoy", "control"])
async def test_the_python_side_behind_envoy_judges_every_block_envoy_passes(behind_envoy):
    # Envoy passes header blocks of up to envoy.HEADERS_KB on; the Python side behind it
    # (the watch streams, the catalog) takes them all and refuses with a reason. At the
    # services' gRPC figure (the control: not behind Envoy), gRPC refuses the larger ones
    # itself, with none.
    async with service_in_process(GAME.name) as svc:
        routes = {GAME.name: [svc.address]}
        async with gateway_in_process(routes, behind_envoy=behind_envoy) as (port, _):
            async with client(svc.address) as direct, client(f"127.0.0.1:{port}") as python:
                game = await direct.create(2)
                for kib in (70, 200):
                    metadata = [("x-big", "v" * kib * 1024)]
                    code = await outcome(first_update(python, game.game_id, metadata))
                    if behind_envoy:
                        assert code == ("RESOURCE_EXHAUSTED", "LIMIT_REACHED", "metadata_bytes")
                    else:
                        assert code == ("RESOURCE_EXHAUSTED", None, None), code
