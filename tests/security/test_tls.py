"""TLS on the gateway (optionally requiring client certificates) and to the services."""

from __future__ import annotations

import asyncio
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from client.api import FINISHED, GameClient
from services import registry
from services.kit.tls import ClientTls, ServerTls
from tests.security.certs import Authority
from tests.support import (
    ROOT,
    free_port,
    gateway_in_process,
    running,
    service_in_process,
    wait_serving,
)

NAME = registry.names()[0]
PLAYERS = registry.by_name(NAME).engine().GAME.min_players


def credentials(ca: str, cert: str = "", key: str = "") -> grpc.ChannelCredentials:
    return ClientTls(ca, cert, key).credentials()


@pytest.fixture
def authority(tmp_path) -> Authority:
    return Authority(tmp_path)


async def test_the_gateway_serves_tls_and_refuses_plaintext(authority):
    cert, key = authority.issue("gateway", server=True)
    async with service_in_process(NAME) as svc:
        async with gateway_in_process({NAME: [svc.address]}, tls=ServerTls(cert, key)) as (port, _):
            address = f"127.0.0.1:{port}"
            async with grpc.aio.secure_channel(address, credentials(authority.path)) as channel:
                client = GameClient(NAME, channel)
                game = await client.create(PLAYERS, seed=3)
                result = await client.play_random(game, random.Random(3))
                assert result.final.game.status == FINISHED
            async with grpc.aio.insecure_channel(address) as channel:
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await GameClient(NAME, channel, timeout=5).get(game.game_id)
                assert caught.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_the_gateway_can_require_client_certificates(authority, tmp_path):
    cert, key = authority.issue("gateway", server=True)
    client_cert, client_key = authority.issue("player", server=False)
    stranger = Authority(tmp_path, "stranger CA")
    bad_cert, bad_key = stranger.issue("intruder", server=False)
    tls = ServerTls(cert, key, client_ca=authority.path)
    async with service_in_process(NAME) as svc:
        async with gateway_in_process({NAME: [svc.address]}, tls=tls) as (port, _):
            address = f"127.0.0.1:{port}"
            good = credentials(authority.path, client_cert, client_key)
            async with grpc.aio.secure_channel(address, good) as channel:
                assert (await GameClient(NAME, channel).create(PLAYERS)).game_id
            for creds in (
                credentials(authority.path),
                credentials(authority.path, bad_cert, bad_key),
            ):
                async with grpc.aio.secure_channel(address, creds) as channel:
                    with pytest.raises(grpc.aio.AioRpcError) as caught:
                        await GameClient(NAME, channel, timeout=5).create(PLAYERS)
                    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_gateway_to_service_traffic_can_use_tls(authority, tmp_path):
    service_cert, service_key = authority.issue("tabletop-service", server=True)
    async with service_in_process(NAME, tls=ServerTls(service_cert, service_key)) as svc:
        upstream = ClientTls(ca=authority.path)
        async with gateway_in_process({NAME: [svc.address]}, upstream_tls=upstream) as (port, gw):
            assert (await gw.check_backends()) == {registry.by_name(NAME).service_name: True}
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(NAME, channel)
                game = await client.create(PLAYERS, seed=5)
                assert (
                    await client.play_random(game, random.Random(5))
                ).final.game.status == FINISHED
        # A gateway that does not trust the service's CA cannot reach it.
        other = Authority(Path(tmp_path), "unrelated CA")
        async with gateway_in_process(
            {NAME: [svc.address]}, upstream_tls=ClientTls(ca=other.path)
        ) as (port, gw):
            assert (await gw.check_backends()) == {registry.by_name(NAME).service_name: False}
        # Nor can a plaintext one.
        async with gateway_in_process({NAME: [svc.address]}) as (port, gw):
            assert (await gw.check_backends()) == {registry.by_name(NAME).service_name: False}


def _health_port(process) -> int:
    """The plaintext health listener's port, from the process's "serving" log line."""
    for line in process.lines():
        if '"serving"' in line:
            return json.loads(line)["health_port"]
    raise AssertionError("no serving line")


def test_mutual_tls_everywhere_with_plaintext_health_ports_as_the_prod_overlay_sets_it(tmp_path):
    """The processes configured by environment alone, as the Kubernetes TLS component does:
    the gateway serves TLS, calls the service with its own client certificate, the service
    accepts only that, and probes (kubelet's, the image's) use the plaintext health port."""
    authority = Authority(tmp_path)
    service_cert, service_key = authority.issue("tabletop-service", server=True)
    gateway_cert, gateway_key = authority.issue("tabletop-gateway", server=True)
    upstream_cert, upstream_key = authority.issue("tabletop-gateway-upstream", server=False)
    entry = registry.by_name(NAME)
    service_env = {
        "TABLETOP_STORE_URL": "memory://",
        "TABLETOP_TLS_CERT": service_cert,
        "TABLETOP_TLS_KEY": service_key,
        "TABLETOP_TLS_CLIENT_CA": authority.path,
        "TABLETOP_HEALTH_PORT": str(free_port()),
    }
    with running(f"services.{NAME}", service_env, tmp_path / "svc.log") as svc:
        gateway_env = {
            f"TABLETOP_ROUTE_{NAME.upper()}": svc.address,
            "TABLETOP_TLS_CERT": gateway_cert,
            "TABLETOP_TLS_KEY": gateway_key,
            "TABLETOP_UPSTREAM_TLS_CA": authority.path,
            "TABLETOP_UPSTREAM_TLS_CERT": upstream_cert,
            "TABLETOP_UPSTREAM_TLS_KEY": upstream_key,
            "TABLETOP_HEALTH_PORT": str(free_port()),
        }
        with running("gateway", gateway_env, tmp_path / "gw.log") as gw:
            gw_health = f"127.0.0.1:{_health_port(gw)}"
            svc_health = f"127.0.0.1:{_health_port(svc)}"
            # The gateway's readiness (its catalog) needs the service, reached over mTLS.
            wait_serving(gw_health, entry.service_name, timeout=20)
            wait_serving(svc_health, entry.service_name)
            for port, name in ((_health_port(gw), "gateway"), (_health_port(svc), NAME)):
                check = subprocess.run(
                    [sys.executable, str(ROOT / "deploy" / "healthcheck.py")],
                    env={**os.environ, "TABLETOP_PORT": "1", "TABLETOP_HEALTH_PORT": str(port)},
                    capture_output=True,
                    text=True,
                    timeout=30,
                )
                assert (check.returncode, check.stdout.strip()) == (0, "SERVING"), name
            asyncio.run(_play_over_tls(gw.address, authority.path))
            asyncio.run(_refused_without_the_gateway_certificate(svc.address, authority.path))
            asyncio.run(_the_health_port_serves_nothing_else(svc_health))


async def _play_over_tls(address: str, ca: str) -> None:
    async with grpc.aio.secure_channel(address, credentials(ca)) as channel:
        client = GameClient(NAME, channel)
        game = await client.create(PLAYERS)
        result = await client.play_random(game, random.Random(11))
        assert result.final.game.status == FINISHED


async def _refused_without_the_gateway_certificate(address: str, ca: str) -> None:
    for channel in (grpc.aio.secure_channel(address, credentials(ca)),
                    grpc.aio.insecure_channel(address)):  # fmt: skip
        async with channel:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await GameClient(NAME, channel, timeout=5).create(PLAYERS)
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE


async def _the_health_port_serves_nothing_else(address: str) -> None:
    async with grpc.aio.insecure_channel(address) as channel:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await GameClient(NAME, channel, timeout=5).create(PLAYERS)
        assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
