"""TLS on the gateway (optionally requiring client certificates) and to the services."""

from __future__ import annotations

import random
from pathlib import Path

import grpc
import pytest

from client.api import FINISHED, GameClient
from services import registry
from services.kit.tls import ClientTls, ServerTls
from tests.security.certs import Authority
from tests.support import gateway_in_process, service_in_process

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
