"""PlayersService.SignIn on an in-process gateway: guests, refresh tokens, limits, the key.

The same through a real ``python -m gateway`` process: tests/players/test_gateway_process.py.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
import subprocess
import sys
import threading
import time

import grpc
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)
from tabletop.gateway.v1 import players_pb2, players_pb2_grpc

from gateway.players import Guests, Players, load_or_create, signing
from gateway.players.signing import SigningKey
from services.kit import config, status
from services.kit.limits import ADDRESS_FACTOR, Limits
from services.kit.players import (
    StaticKey,
    TokenInvalid,
    TokenUnknownKey,
    TokenWrongAudience,
    Verifier,
)
from tests.support import ROOT, gateway_in_process

ISSUER, AUDIENCE = "tabletop-guests", "tabletop"


def guests_in(path, **options) -> Guests:
    return Guests(load_or_create(path), issuer=ISSUER, audience=AUDIENCE, **options)


@contextlib.asynccontextmanager
async def signin(players: Players, **options):
    async with gateway_in_process({}, players=players, **options) as (port, gateway):
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            yield players_pb2_grpc.PlayersServiceStub(channel), gateway


async def refused(call) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    info = status.error_info(caught.value)
    assert info is not None, caught.value
    return caught.value.code(), info.reason, dict(info.metadata)


async def test_guests_get_distinct_ids_and_a_refresh_keeps_the_id(tmp_path):
    guests = guests_in(tmp_path / "key.pem")
    verifier = guests.verifier()
    async with signin(Players(guests)) as (stub, gateway):
        ada = await stub.SignIn(players_pb2.SignInRequest(player_name="  Ada "))
        bob = await stub.SignIn(players_pb2.SignInRequest(player_name="Bob"))
        assert ada.player_id != bob.player_id
        assert ada.player_id.startswith("guest-") and ada.player_name == "Ada"
        now = time.time()
        assert now + 3500 < ada.expires_at.seconds <= now + 3601
        assert ada.refresh_expires_at.seconds > now + 89 * 86400
        player = await verifier.verify(ada.token)
        assert (player.id, player.name, player.issuer) == (ada.player_id, "Ada", ISSUER)

        back = await stub.SignIn(players_pb2.SignInRequest(refresh_token=ada.refresh_token))
        assert (back.player_id, back.player_name) == (ada.player_id, "Ada")
        assert back.refresh_token and back.token
        renamed = await stub.SignIn(
            players_pb2.SignInRequest(refresh_token=back.refresh_token, player_name="Ada L.")
        )
        assert (renamed.player_id, renamed.player_name) == (ada.player_id, "Ada L.")
        assert (await verifier.verify(renamed.token)).name == "Ada L."
        signins = gateway.registry.get_sample_value
        assert signins("tabletop_gateway_guest_signins_total", {"kind": "new"}) == 2
        assert signins("tabletop_gateway_guest_signins_total", {"kind": "returning"}) == 2


async def test_a_refresh_token_is_no_players_token_and_a_players_token_no_refresh(tmp_path):
    guests = guests_in(tmp_path / "key.pem")
    async with signin(Players(guests)) as (stub, _):
        ada = await stub.SignIn(players_pb2.SignInRequest(player_name="Ada"))
        # A service refuses it: its audience is the gateway's, not the games'...
        with pytest.raises(TokenWrongAudience):
            await guests.verifier().verify(ada.refresh_token)
        # ...and, were the audiences configured alike, by its token_use.
        careless = Verifier(StaticKey(guests.key.verifying_key()), issuer=ISSUER, audience=ISSUER)
        with pytest.raises(TokenInvalid):
            await careless.verify(ada.refresh_token)
        code, reason, _ = await refused(
            stub.SignIn(players_pb2.SignInRequest(refresh_token=ada.token))
        )
        assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED, "TOKEN_WRONG_AUDIENCE")


async def test_forged_and_foreign_refresh_tokens_are_refused_with_their_reason(tmp_path):
    guests = guests_in(tmp_path / "a.pem")
    other = guests_in(tmp_path / "b.pem")
    expired = Guests(guests.key, issuer=ISSUER, audience=AUDIENCE, refresh_seconds=1)
    expired._clock = lambda: time.time() - 3600
    async with signin(Players(guests)) as (stub, _):
        theirs = other.sign_in("Eve").refresh_token
        ours = guests.sign_in("Ada").refresh_token
        head, body, sig = ours.split(".")
        cases = {
            "another gateway's": (theirs, "TOKEN_UNKNOWN_KEY"),
            "expired": (expired.sign_in("Old").refresh_token, "TOKEN_EXPIRED"),
            "tampered": (f"{head}.{body[:-4]}AAAA.{sig}", "TOKEN_INVALID"),
            "garbage": ("not-a-token", "TOKEN_INVALID"),
        }
        for case, (token, reason) in cases.items():
            code, got, _ = await refused(
                stub.SignIn(players_pb2.SignInRequest(refresh_token=token))
            )
            assert (code, got) == (grpc.StatusCode.UNAUTHENTICATED, reason), case


async def test_a_bad_name_is_invalid_argument(tmp_path):
    async with signin(Players(guests_in(tmp_path / "k.pem"))) as (stub, _):
        for name in ("", "   ", "x" * 41, "bad\u0007name"):
            request = players_pb2.SignInRequest(player_name=name)
            code, reason, _ = await refused(stub.SignIn(request))
            assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST"), name


@pytest.mark.parametrize("limit", [3, 0], ids=["limited", "control-no-limit"])
async def test_new_guests_per_address_are_limited_returning_ones_are_not(tmp_path, limit):
    players = Players(guests_in(tmp_path / "k.pem"), signins_per_client=limit, signin_window=600)
    async with signin(players) as (stub, gateway):

        def limited() -> float | None:
            return gateway.registry.get_sample_value(
                "tabletop_gateway_limited_total", {"limit": "guest_signins"}
            )

        first = await stub.SignIn(players_pb2.SignInRequest(player_name="G0"))
        for i in range(1, 3):
            await stub.SignIn(players_pb2.SignInRequest(player_name=f"G{i}"))
        if limit:
            code, reason, meta = await refused(
                stub.SignIn(players_pb2.SignInRequest(player_name="G3"))
            )
            assert (code, reason, meta["limit"]) == (
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "RATE_LIMITED",
                "guest_signins",
            )
            # 3 per 600 s: the next one in 200 s.
            assert 190_000 <= int(meta["retry_after_ms"]) <= 200_000
            assert limited() == 1
        else:
            assert await stub.SignIn(players_pb2.SignInRequest(player_name="G3"))
            assert limited() == 0
        back = await stub.SignIn(players_pb2.SignInRequest(refresh_token=first.refresh_token))
        assert back.player_id == first.player_id


async def test_failed_refresh_tokens_count_towards_the_lockout(tmp_path):
    """SignIn names no game: the address-wide count applies (ADDRESS_FACTOR times the
    per-game limit, as for failures spread over many games)."""
    players = Players(guests_in(tmp_path / "k.pem"))
    async with signin(players, limits=Limits(auth_failures_per_client=1)) as (stub, _):
        good = await stub.SignIn(players_pb2.SignInRequest(player_name="Ada"))
        forged = good.refresh_token[:-6] + "AAAAAA"
        for _ in range(ADDRESS_FACTOR):
            code, _, _ = await refused(stub.SignIn(players_pb2.SignInRequest(refresh_token=forged)))
            assert code is grpc.StatusCode.UNAUTHENTICATED
        code, reason, meta = await refused(
            stub.SignIn(players_pb2.SignInRequest(refresh_token=forged))
        )
        assert (code, reason, meta["limit"]) == (
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "RATE_LIMITED",
            "auth_failures",
        )
        # A valid refresh token still goes through.
        back = await stub.SignIn(players_pb2.SignInRequest(refresh_token=good.refresh_token))
        assert back.player_id == good.player_id


async def test_sign_in_off_refuses_with_a_reason():
    async with signin(Players(None)) as (stub, _):
        code, reason, _ = await refused(stub.SignIn(players_pb2.SignInRequest(player_name="A")))
        assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "GUEST_SIGNIN_OFF")
    assert Players(None).jwks() is None


# --- the key ------------------------------------------------------------------------


def test_the_key_is_made_once_private_and_kept(tmp_path):
    path = tmp_path / "data" / "guest-signing-key.pem"
    made = load_or_create(path)
    assert made.created and made.algorithm == "EdDSA"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    again = load_or_create(path)
    assert (again.created, again.kid) == (False, made.kid)
    assert load_or_create(tmp_path / "elsewhere.pem").kid != made.kid
    assert [p.name for p in path.parent.iterdir()] == [path.name], "nothing left aside"


def test_gateways_starting_at_once_on_one_volume_share_one_key(tmp_path):
    path = tmp_path / "shared" / "key.pem"
    kids: list[str] = []
    start = threading.Barrier(8)

    def replica() -> None:
        start.wait()
        kids.append(load_or_create(path).kid)

    threads = [threading.Thread(target=replica) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(kids) == 8 and len(set(kids)) == 1
    assert SigningKey.from_pem(path.read_bytes(), path).kid == kids[0]


async def test_an_operators_es256_key_signs_and_verifies(tmp_path):
    path = tmp_path / "es.pem"
    private = ec.generate_private_key(ec.SECP256R1())
    path.write_bytes(private.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    guests = guests_in(path)
    assert guests.key.algorithm == "ES256"
    grant = guests.sign_in("Ada")
    assert jwt.get_unverified_header(grant.token)["alg"] == "ES256"
    assert (await guests.verifier().verify(grant.token)).id == grant.player_id
    assert (await guests.resume(grant.refresh_token)).player_id == grant.player_id


@pytest.mark.parametrize("kind", ["garbage", "ec-p384", "read-only"])
def test_an_unusable_key_file_fails_fast(tmp_path, monkeypatch, kind):
    path = tmp_path / "key.pem"
    if kind == "garbage":
        path.write_bytes(b"-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n")
        says = "not an unencrypted PEM private key"
    elif kind == "ec-p384":
        key = ec.generate_private_key(ec.SECP384R1())
        path.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
        says = "Ed25519 or EC P-256"
    else:
        # A read-only volume (root writes anywhere else): the key cannot be made there.
        monkeypatch.setattr(
            signing.tempfile,
            "mkstemp",
            lambda **_: (_ for _ in ()).throw(OSError(errno.EROFS, "Read-only file system")),
        )
        says = "Read-only file system.*keygen.*TABLETOP_GUEST_SIGNIN=false"
    with pytest.raises(config.ConfigError, match=says):
        load_or_create(path)


def test_keygen_prints_a_key_the_gateway_takes(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "gateway.players", "keygen"],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": f"{ROOT}:{ROOT / 'gen'}"},
        capture_output=True,
        check=True,
        timeout=60,
    )
    assert load_pem_private_key(result.stdout, None)
    path = tmp_path / "k.pem"
    path.write_bytes(result.stdout)
    assert load_or_create(path).algorithm == "EdDSA"


async def test_sign_in_answers_while_many_guests_arrive(tmp_path):
    guests = guests_in(tmp_path / "k.pem")
    async with signin(Players(guests, signins_per_client=0)) as (stub, _):
        replies = await asyncio.gather(
            *(stub.SignIn(players_pb2.SignInRequest(player_name=f"G{i}")) for i in range(200))
        )
    assert len({r.player_id for r in replies}) == 200
    with pytest.raises(TokenUnknownKey):
        await guests_in(tmp_path / "other.pem").verifier().verify(replies[0].token)
