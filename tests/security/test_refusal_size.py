"""Refusals are small, and metadata up to the documented limit is always taken (issue
25, findings 3 and 7).

The outside attack: ListGames with 200 unknown option keys of 400 characters was refused
with every key echoed (about 82 KB of trailers); through the gateway Envoy reset the
connection and other clients' calls failed, and directly the caller got
RESOURCE_EXHAUSTED "metadata size exceeds hard limit" with no reason. An 8 KB
authorization header was refused in 2 of 5 calls (gRPC's soft limit, 8 KiB, refuses at
random up to its hard one, 16 KiB), and 200 custom headers got RESOURCE_EXHAUSTED without
a reason. Now: the refusal names a few keys, cut short, and its trailers stay within a
few KB; metadata up to 16 KiB and 100 entries is always taken, and beyond is refused
RESOURCE_EXHAUSTED LIMIT_REACHED naming metadata_bytes or metadata_entries. Controls:
the old echo sends the 82 KB refusal, and gRPC at its own limits refuses the big header.
"""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import struct_pb2
from prometheus_client import REGISTRY

from client.api import GameClient
from services.kit import limits, lobby, server, status
from services.kit.status import error_info
from tests.support import service_in_process

GAME = "channeling"
TRAILERS_MAX = 4096  # bytes of trailing metadata a refusal may take, at most


def options_with(keys: int, length: int) -> struct_pb2.Struct:
    options = struct_pb2.Struct()
    for i in range(keys):
        options[f"{i:03d}" + "k" * (length - 3)] = 1
    return options


def trailer_bytes(error: grpc.aio.AioRpcError) -> int:
    return sum(len(k) + len(v) for k, v in error.trailing_metadata() or ())


async def list_games(channel, metadata=None, **fields):
    client = GameClient(GAME, channel)
    request = client.pb2.ListGamesRequest(**fields)
    return await client._method("ListGames")(request, metadata=metadata, timeout=30)


async def test_a_refusal_of_200_long_option_keys_is_small_and_says_why():
    async with service_in_process(GAME) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await list_games(channel, options=options_with(200, 400))
    error = caught.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    assert error_info(error).reason == "BAD_REQUEST"
    assert "unknown options" in error.details() and "and 197 more" in error.details()
    assert len(error.details()) <= status.MESSAGE_MAX
    size = trailer_bytes(error) + len(error.details().encode())
    assert size < TRAILERS_MAX, size
    print(f"the refusal: {size} bytes of trailers and message")


async def test_control_echoing_every_key_makes_an_82_kb_refusal(monkeypatch):
    monkeypatch.setattr(lobby, "named", lambda names: ", ".join(names))
    monkeypatch.setattr(status, "MESSAGE_MAX", 10**9)
    async with service_in_process(GAME) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await list_games(channel, options=options_with(200, 400))
    error = caught.value
    # What the caller sees of it: the whole 82 KB, or gRPC's own refusal without a reason.
    assert trailer_bytes(error) > 80_000 or error_info(error) is None


def limited(name: str) -> float:
    return REGISTRY.get_sample_value("tabletop_limited_total", {"limit": name}) or 0.0


async def test_metadata_up_to_the_documented_limits_is_always_taken_and_beyond_refused():
    big = [("x-big", "b" * (limits.MAX_METADATA_BYTES - 200))]  # 16 KiB less the rest
    authorization = [("authorization", "Bearer " + "a" * 8000)]
    many = [(f"x-h{i}", "v") for i in range(limits.MAX_METADATA_ENTRIES - 2)]
    async with service_in_process(GAME) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            for metadata in (authorization, big, many):
                for _ in range(20):
                    await list_games(channel, metadata)  # every time
            before = limited("metadata_entries"), limited("metadata_bytes")
            refusals = {}
            for name, metadata in (
                ("metadata_entries", [(f"x-h{i}", "v" * 10) for i in range(200)]),
                ("metadata_bytes", [("x-big", "b" * (limits.MAX_METADATA_BYTES + 1))]),
            ):
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await list_games(channel, metadata)
                refusals[name] = caught.value
    for name, error in refusals.items():
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error.details()
        info = error_info(error)
        assert info.reason == "LIMIT_REACHED" and info.metadata["limit"] == name
    assert (limited("metadata_entries"), limited("metadata_bytes")) == (
        before[0] + 1,
        before[1] + 1,
    )


async def test_control_at_grpcs_own_metadata_limits_big_headers_are_refused_without_a_reason(
    monkeypatch,
):
    ours = server.server_options

    def grpcs_own(*args):
        return [o for o in ours(*args) if "metadata_size" not in o[0]]

    monkeypatch.setattr(server, "server_options", grpcs_own)
    big = [("x-big", "b" * (limits.MAX_METADATA_BYTES - 200))]
    failed = []
    async with service_in_process(GAME) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            for _ in range(20):
                try:
                    await list_games(channel, big)
                except grpc.aio.AioRpcError as error:
                    failed.append(error)
    assert failed and all(error_info(e) is None for e in failed)
