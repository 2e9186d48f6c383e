"""Guests through a real ``python -m gateway``, and its JWKS checked as a service checks it.

The services' side is services.kit.players configured by the same settings a service
reads (TABLETOP_JWT_JWKS_URL pointing at the gateway's metrics port, the issuer), so a
token the gateway signs is accepted exactly as a provider's would be.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import urllib.error
import urllib.request

import grpc
import pytest
from tabletop.gateway.v1 import players_pb2, players_pb2_grpc

from services import registry
from services.kit import config, players, status
from services.kit.players import TokenUnknownKey
from tests.support import ROOT, running

SERVICE = "tabletop.gateway.v1.PlayersService"
NO_FIXED_PORTS = {"TABLETOP_PORT": "0", "TABLETOP_METRICS_PORT": "0"}


def gateway_env(key_file, **extra: str) -> dict[str, str]:
    # No game routed: nothing here needs one, and no default port is dialled.
    env = {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES}
    env["TABLETOP_GUEST_SIGNING_KEY_FILE"] = str(key_file)
    env.update(extra)
    return env


def jwks_url(gw) -> str:
    return f"http://127.0.0.1:{gw.metrics_port}/.well-known/jwks.json"


def services_verifier(gw) -> players.Verifier:
    """A verifier as a game service makes it from its environment."""
    cfg = config.load(
        players.settings(),
        {"TABLETOP_JWT_JWKS_URL": jwks_url(gw), "TABLETOP_JWT_ISSUER": "tabletop-guests"},
    )
    return players.verifier_from(cfg)


def kids(gw) -> list[str]:
    with urllib.request.urlopen(jwks_url(gw), timeout=10) as reply:
        assert reply.headers["Content-Type"] == "application/json"
        return [key["kid"] for key in json.load(reply)["keys"]]


def sign_in(gw, **request: str) -> players_pb2.SignInResponse:
    with grpc.insecure_channel(gw.address) as channel:
        stub = players_pb2_grpc.PlayersServiceStub(channel)
        reply: players_pb2.SignInResponse = stub.SignIn(
            players_pb2.SignInRequest(**request), timeout=20, wait_for_ready=True
        )
        return reply


def refusal(gw, **request: str) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    with pytest.raises(grpc.RpcError) as caught:
        sign_in(gw, **request)
    info = status.error_info(caught.value)
    assert info is not None
    return caught.value.code(), info.reason, dict(info.metadata)


async def test_two_guests_sign_in_through_the_gateway_and_the_services_trust_them(tmp_path):
    key_file = tmp_path / "data" / "guest-signing-key.pem"
    env = gateway_env(key_file, TABLETOP_GUEST_SIGNINS_PER_CLIENT="3")
    with running("gateway", env, tmp_path / "gw.log") as gw:  # Envoy in front, as deployed
        ada = sign_in(gw, player_name="Ada")
        bob = sign_in(gw, player_name="Bob")
        assert ada.player_id != bob.player_id
        back = sign_in(gw, refresh_token=ada.refresh_token)
        assert (back.player_id, back.player_name) == (ada.player_id, "Ada")

        verifier = services_verifier(gw)
        for reply, name in ((ada, "Ada"), (bob, "Bob"), (back, "Ada")):
            player = await verifier.verify(reply.token)
            assert (player.id, player.name) == (reply.player_id, name)
        with pytest.raises(players.TokenRefused):
            await verifier.verify(ada.refresh_token)
        verifier.close()

        # New guests per address, behind Envoy (keyed on the address it forwards).
        assert sign_in(gw, player_name="Cy")
        code, reason, meta = refusal(gw, player_name="Dee")
        assert (code, reason, meta["limit"]) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "RATE_LIMITED",
            "guest_signins",
        )
        assert sign_in(gw, refresh_token=bob.refresh_token).player_id == bob.player_id

        # The key was made at first start, private to the gateway's user.
        assert oct(key_file.stat().st_mode & 0o777) == "0o600"
        assert kids(gw) == [_kid_of(ada.token)]

        # Found and called with reflection alone, as a new user would.
        buf = shutil.which("buf", path=os.path.dirname(sys.executable))
        assert buf
        common = [buf, "curl", "--protocol", "grpc", "--http2-prior-knowledge"]
        url = f"http://{gw.address}"
        listed = subprocess.run(
            [*common, "--list-services", url], capture_output=True, text=True, check=True
        ).stdout.split()
        assert SERVICE in listed
        called = subprocess.run(
            [*common, "-d", json.dumps({"refreshToken": bob.refresh_token}),
             f"{url}/{SERVICE}/SignIn"],
            capture_output=True, text=True, check=True,
        )  # fmt: skip
        assert json.loads(called.stdout)["playerId"] == bob.player_id


def _kid_of(token: str) -> str:
    import jwt

    kid: str = jwt.get_unverified_header(token)["kid"]
    return kid


async def test_the_key_outlives_a_restart_and_a_fresh_data_dir_makes_a_new_one(tmp_path):
    key_file = tmp_path / "data" / "guest-signing-key.pem"
    env = gateway_env(key_file, TABLETOP_GATEWAY_DATA_PATH="python", TABLETOP_DRAIN_SECONDS="1")
    with running("gateway", env, tmp_path / "gw1.log") as gw:
        ada = sign_in(gw, player_name="Ada")
        first = kids(gw)
        assert gw.stop(signal.SIGTERM) == 0

    with running("gateway", env, tmp_path / "gw2.log") as gw:
        assert kids(gw) == first
        verifier = services_verifier(gw)
        assert (await verifier.verify(ada.token)).id == ada.player_id
        assert sign_in(gw, refresh_token=ada.refresh_token).player_id == ada.player_id
        verifier.close()
        gw.stop(signal.SIGTERM)

    fresh = gateway_env(tmp_path / "fresh" / "key.pem", TABLETOP_GATEWAY_DATA_PATH="python")
    with running("gateway", fresh, tmp_path / "gw3.log") as gw:
        assert kids(gw) != first
        verifier = services_verifier(gw)
        with pytest.raises(TokenUnknownKey):
            await verifier.verify(ada.token)
        code, reason, _ = refusal(gw, refresh_token=ada.refresh_token)
        assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_UNKNOWN_KEY")
        verifier.close()


def test_sign_in_off_refuses_serves_no_jwks_and_makes_no_key(tmp_path):
    key_file = tmp_path / "data" / "key.pem"
    env = gateway_env(key_file, TABLETOP_GUEST_SIGNIN="false", TABLETOP_GATEWAY_DATA_PATH="python")
    with running("gateway", env, tmp_path / "gw.log") as gw:
        code, reason, _ = refusal(gw, player_name="Ada")
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "GUEST_SIGNIN_OFF")
        with pytest.raises(urllib.error.HTTPError) as caught:
            kids(gw)
        assert caught.value.code == 404
        # The metrics stay where they were.
        with urllib.request.urlopen(f"http://127.0.0.1:{gw.metrics_port}/metrics") as reply:
            assert b"# TYPE tabletop_gateway_backend_up gauge" in reply.read()
    assert not key_file.exists()


def test_an_unusable_key_file_stops_the_gateway_at_start(tmp_path):
    key_file = tmp_path / "key.pem"
    key_file.write_text("not a key")
    result = subprocess.run(
        [sys.executable, "-m", "gateway"],
        cwd=ROOT,
        env={**os.environ, **gateway_env(key_file), **NO_FIXED_PORTS},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "configuration error: TABLETOP_GUEST_SIGNING_KEY_FILE=" in result.stderr
    assert "Traceback" not in result.stderr
