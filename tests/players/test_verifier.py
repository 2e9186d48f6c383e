"""A player's token, checked as a game service checks it (services.kit.players).

Every forged token of issue 26's list is refused UNAUTHENTICATED with its own reason,
nothing from the token in the answer, and no fetch of the issuer's keys beyond what an
unknown kid allows; the three algorithms we take are accepted from a JWKS and a PEM file.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time

import grpc
import jwt
import pytest
from google.rpc import error_details_pb2, status_pb2

from services.kit import config, errors, status
from services.kit.players import (
    JwksKeys,
    StaticKey,
    TokenExpired,
    TokenInvalid,
    TokenNotYetValid,
    TokenRefused,
    TokenUnknownKey,
    TokenWrongAudience,
    TokenWrongIssuer,
    Verifier,
    looks_like_jwt,
    name_from_id,
    pem_key,
    settings,
    status_of,
    verifier_from,
)
from services.kit.players import keys as keys_module
from tests.players.support import AUDIENCE, ISSUER, JwksServer, Signer

ALGS = ("RS256", "ES256", "EdDSA")


@pytest.fixture(scope="module")
def signers() -> dict[str, Signer]:
    return {alg: Signer.new(alg, f"key-{alg}") for alg in ALGS}


@pytest.fixture
def provider(signers):
    with JwksServer(keys=[s.jwk() for s in signers.values()]) as server:
        yield server


def verifier_for(url: str, **options) -> Verifier:
    refresh = options.pop("refresh_seconds", 60.0)
    cache = options.pop("cache_seconds", 300.0)
    timeout = options.pop("timeout", 5.0)
    keys = JwksKeys(url, refresh_seconds=refresh, cache_seconds=cache, timeout=timeout)
    return Verifier(keys, issuer=ISSUER, audience=AUDIENCE, **options)


def unsigned(header: dict, claims: dict, signature: bytes = b"") -> str:
    def part(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    return ".".join(
        [part(json.dumps(header).encode()), part(json.dumps(claims).encode()), part(signature)]
    )


def claims(**extra) -> dict:
    now = int(time.time())
    return {"iss": ISSUER, "aud": AUDIENCE, "sub": "user-1", "iat": now, "exp": now + 600, **extra}


# --- accepted ----------------------------------------------------------------------


@pytest.mark.parametrize("alg", ALGS)
async def test_each_algorithm_we_take_is_accepted_from_a_jwks(signers, provider, alg):
    verifier = verifier_for(provider.url)
    player = await verifier.verify(signers[alg].token(sub=f"p-{alg}", name="Ada"))
    assert (player.id, player.name, player.issuer) == (f"p-{alg}", "Ada", ISSUER)
    verifier.close()


@pytest.mark.parametrize("alg", ALGS)
async def test_each_algorithm_we_take_is_accepted_from_a_pem_file(signers, tmp_path, alg):
    path = tmp_path / "key.pem"
    path.write_bytes(signers[alg].public_pem())
    verifier = Verifier(StaticKey(pem_key(path)), issuer=ISSUER, audience=AUDIENCE)
    # A PEM key has no kid: whatever kid the token names is not read.
    player = await verifier.verify(signers[alg].token(kid="anything"))
    assert player.id == "user-1"
    # Another key of the same kind is not this one.
    other = Signer.new(alg, "other")
    with pytest.raises(TokenInvalid):
        await verifier.verify(other.token())


async def test_an_audience_list_holding_ours_is_accepted_and_the_leeway_applies(signers, provider):
    verifier = verifier_for(provider.url, leeway=30)
    signer = signers["ES256"]
    assert await verifier.verify(signer.token(aud=["account", AUDIENCE]))
    now = int(time.time())
    # Expired 5 s ago, or valid from 5 s ahead: within the 30 s leeway.
    assert await verifier.verify(signer.token(exp=now - 5, iat=now - 60))
    assert await verifier.verify(signer.token(nbf=now + 5))


# --- refused, each with its reason -------------------------------------------------


def forgeries(signers: dict[str, Signer]) -> list[tuple[str, str, type[TokenRefused]]]:
    rs, es = signers["RS256"], signers["ES256"]
    now = int(time.time())
    stranger = Signer.new("ES256", "key-ES256")  # another provider's key, with our kid
    public_pem = rs.public_pem()
    return [
        ("other issuer", es.token(iss="https://evil.example.test"), TokenWrongIssuer),
        ("no issuer", es.token(iss=None), TokenWrongIssuer),
        ("other audience", es.token(aud="another-app"), TokenWrongAudience),
        ("no audience", es.token(aud=None), TokenWrongAudience),
        ("expired", es.token(exp=now - 120, iat=now - 900), TokenExpired),
        ("not yet valid", es.token(nbf=now + 600), TokenNotYetValid),
        ("issued in the future", es.token(iat=now + 600, exp=now + 1200), TokenNotYetValid),
        ("alg none", unsigned({"alg": "none", "kid": rs.kid}, claims()), TokenInvalid),
        ("alg None", unsigned({"alg": "None", "kid": rs.kid}, claims()), TokenInvalid),
        ("no alg", unsigned({"kid": rs.kid}, claims(), b"x"), TokenInvalid),
        (
            "HS256 with the public key as the secret",
            _hmac(public_pem, {"alg": "HS256", "kid": rs.kid, "typ": "JWT"}, claims()),
            TokenInvalid,
        ),
        (
            "HS256 with the JWK's modulus as the secret",
            _hmac(rs.jwk()["n"].encode(), {"alg": "HS256", "kid": rs.kid}, claims()),
            TokenInvalid,
        ),
        ("ES256 header on the RSA key", _swap_alg(rs, "ES256"), TokenInvalid),
        ("RS512", _rs512(rs), TokenInvalid),
        ("unknown kid", es.token(kid="not-a-key-of-theirs"), TokenUnknownKey),
        ("no kid", es.token(kid=None), TokenUnknownKey),
        ("another provider's key under our kid", stranger.token(), TokenInvalid),
        ("tampered payload", _tamper(es.token(sub="user-1"), sub="admin"), TokenInvalid),
        ("no sub", es.token(sub=None), TokenInvalid),
        ("empty sub", es.token(sub=""), TokenInvalid),
        ("sub over 255 characters", es.token(sub="u" * 256), TokenInvalid),
        ("sub with a control character", es.token(sub="user\n1"), TokenInvalid),
        ("no exp", es.token(exp=None), TokenInvalid),
        ("a guest's refresh token", es.token(token_use="refresh"), TokenInvalid),
        ("not a JWT", "a.b", TokenInvalid),
        ("a header that is not JSON", "bm90IGpzb24.e30.c2ln", TokenInvalid),
    ]


def _hmac(secret: bytes, header: dict, body: dict) -> str:
    import hashlib
    import hmac

    head = base64.urlsafe_b64encode(json.dumps(header).encode()).rstrip(b"=")
    payload = base64.urlsafe_b64encode(json.dumps(body).encode()).rstrip(b"=")
    signing_input = head + b"." + payload
    mac = hmac.new(secret, signing_input, hashlib.sha256).digest()
    return (signing_input + b"." + base64.urlsafe_b64encode(mac).rstrip(b"=")).decode()


def _swap_alg(signer: Signer, alg: str) -> str:
    head, body, sig = signer.token().split(".")
    header = json.loads(base64.urlsafe_b64decode(head + "=="))
    header["alg"] = alg
    new_head = base64.urlsafe_b64encode(json.dumps(header).encode()).rstrip(b"=").decode()
    return f"{new_head}.{body}.{sig}"


def _rs512(signer: Signer) -> str:
    return jwt.encode(claims(), signer.private, algorithm="RS512", headers={"kid": signer.kid})


def _tamper(token: str, **changes) -> str:
    head, body, sig = token.split(".")
    payload = json.loads(base64.urlsafe_b64decode(body + "=="))
    payload.update(changes)
    new_body = base64.urlsafe_b64encode(json.dumps(payload).encode()).rstrip(b"=").decode()
    return f"{head}.{new_body}.{sig}"


async def test_every_forged_token_is_refused_with_its_reason_and_nothing_else(signers, provider):
    clock = [1000.0]
    keys = JwksKeys(provider.url, refresh_seconds=3600, clock=lambda: clock[0])
    verifier = Verifier(keys, issuer=ISSUER, audience=AUDIENCE)
    # The keys are fetched once, by a good token; an hour later they may be fetched again.
    await verifier.verify(signers["EdDSA"].token())
    assert provider.requests == 1
    clock[0] += 3600
    seen: dict[str, str] = {}
    for case, token, refusal in forgeries(signers):
        with pytest.raises(TokenRefused) as caught:
            await verifier.verify(token)
        exc = caught.value
        assert type(exc) is refusal, case
        seen[case] = exc.reason
        # UNAUTHENTICATED with that reason; nothing of the token in what the caller reads.
        st = status_of(exc)
        assert st.code is grpc.StatusCode.UNAUTHENTICATED
        info = _error_info(st)
        assert (info.reason, info.domain) == (refusal.reason, "tabletop"), case
        said = st.details + json.dumps(dict(info.metadata))
        for piece in (token, *token.split(".")):
            assert len(piece) < 8 or piece not in said, case
        # The kit's own mapping answers it UNAUTHENTICATED too (a failed authentication).
        assert status.classify(exc)[0] is grpc.StatusCode.UNAUTHENTICATED
    # One refetch for all the forgeries together: the unknown kid's (the interval is an hour).
    assert provider.requests == 2
    assert set(seen.values()) == {
        "TOKEN_WRONG_ISSUER",
        "TOKEN_WRONG_AUDIENCE",
        "TOKEN_EXPIRED",
        "TOKEN_NOT_YET_VALID",
        "TOKEN_INVALID",
        "TOKEN_UNKNOWN_KEY",
    }
    verifier.close()


def _error_info(st: grpc.Status) -> error_details_pb2.ErrorInfo:
    """The ErrorInfo a client decodes from the status' trailing metadata."""
    parsed = status_pb2.Status.FromString(dict(st.trailing_metadata)["grpc-status-details-bin"])
    assert parsed.code == st.code.value[0]
    info = error_details_pb2.ErrorInfo()
    parsed.details[0].Unpack(info)
    return info


async def test_a_refused_alg_none_or_hmac_token_fetches_no_keys(signers, provider):
    verifier = verifier_for(provider.url, refresh_seconds=0)
    rs = signers["RS256"]
    for token in (
        unsigned({"alg": "none", "kid": "x"}, claims()),
        _hmac(rs.public_pem(), {"alg": "HS256", "kid": "y"}, claims()),
    ):
        with pytest.raises(TokenInvalid):
            await verifier.verify(token)
    assert provider.requests == 0


@pytest.mark.parametrize("pyjwt_guard", [True, False], ids=["as-shipped", "pem-guard-off"])
async def test_hs256_signed_with_the_public_key_is_refused_by_our_algorithm_list(
    signers, provider, monkeypatch, pyjwt_guard
):
    """PyJWT also refuses a PEM key as an HMAC secret (since 2.4); our list holds alone."""
    if not pyjwt_guard:
        monkeypatch.setattr(jwt.algorithms.HMACAlgorithm, "prepare_key", _raw_bytes)
    rs = signers["RS256"]
    forged = _hmac(rs.public_pem(), {"alg": "HS256", "kid": rs.kid}, claims(sub="admin"))
    verifier = verifier_for(provider.url)
    with pytest.raises(TokenInvalid):
        await verifier.verify(forged)


def _raw_bytes(self, key):
    return key if isinstance(key, bytes) else key.encode()


def test_control_a_verifier_taking_the_algorithm_from_the_token_accepts_the_forgery(
    signers, monkeypatch
):
    """The forgery the test above refuses is a real one: a verifier that lets the token
    name its algorithm (PyJWT before 2.4 with every algorithm allowed) accepts it."""
    monkeypatch.setattr(jwt.algorithms.HMACAlgorithm, "prepare_key", _raw_bytes)
    rs = signers["RS256"]
    public_pem = rs.public_pem()
    forged = _hmac(public_pem, {"alg": "HS256", "kid": rs.kid}, claims(sub="admin"))
    naive = jwt.decode(
        forged,
        public_pem,
        algorithms=[jwt.get_unverified_header(forged)["alg"]],
        audience=AUDIENCE,
        issuer=ISSUER,
    )
    assert naive["sub"] == "admin"


async def test_an_rsa_key_under_2048_bits_is_not_used(provider):
    weak = Signer.new("RS256", "weak", rsa_bits=1024)
    provider.keys.append(weak.jwk())
    verifier = verifier_for(provider.url)
    with pytest.warns(jwt.warnings.InsecureKeyLengthWarning):
        token = weak.token()
    with pytest.raises(TokenUnknownKey):
        await verifier.verify(token)


# --- the JWKS: fetched off the loop, once at a time, refreshed on a new kid ---------


async def test_an_unknown_kid_refetches_at_most_once_per_interval(signers, provider):
    clock = [1000.0]
    keys = JwksKeys(provider.url, refresh_seconds=30, clock=lambda: clock[0])
    verifier = Verifier(keys, issuer=ISSUER, audience=AUDIENCE)
    es = signers["ES256"]
    await verifier.verify(es.token())
    assert provider.requests == 1
    # A flood of tokens naming random kids, at once and one after another.
    forged = [es.token(kid=f"random-{i}") for i in range(40)]
    results = await asyncio.gather(
        *(verifier.verify(t) for t in forged[:20]), return_exceptions=True
    )
    assert all(isinstance(r, TokenUnknownKey) for r in results)
    for token in forged[20:]:
        with pytest.raises(TokenUnknownKey):
            await verifier.verify(token)
    assert provider.requests == 1, "within 30 s of the last fetch: no refetch"
    clock[0] += 31
    results = await asyncio.gather(*(verifier.verify(t) for t in forged), return_exceptions=True)
    assert all(isinstance(r, TokenUnknownKey) for r in results)
    assert provider.requests == 2, "one refetch for the whole flood once the interval passed"
    verifier.close()


async def test_control_without_the_interval_every_unknown_kid_refetches(signers, provider):
    keys = JwksKeys(provider.url, refresh_seconds=0)
    verifier = Verifier(keys, issuer=ISSUER, audience=AUDIENCE)
    es = signers["ES256"]
    await verifier.verify(es.token())
    for i in range(10):
        with pytest.raises(TokenUnknownKey):
            await verifier.verify(es.token(kid=f"random-{i}"))
    assert provider.requests == 11
    verifier.close()


async def test_a_rotated_key_is_accepted_after_the_refetch(signers, provider):
    clock = [1000.0]
    keys = JwksKeys(provider.url, refresh_seconds=10, clock=lambda: clock[0])
    verifier = Verifier(keys, issuer=ISSUER, audience=AUDIENCE)
    old = signers["RS256"]
    assert await verifier.verify(old.token())
    # The provider publishes a new key and signs with it.
    new = Signer.new("EdDSA", "rotated-2")
    provider.keys = [old.jwk(), new.jwk()]
    fresh = new.token(sub="after-rotation")
    with pytest.raises(TokenUnknownKey):
        await verifier.verify(fresh)  # fetched a moment ago: the interval holds
    clock[0] += 11
    assert (await verifier.verify(fresh)).id == "after-rotation"
    assert provider.requests == 2
    # Then the old key is withdrawn: once refetched, its tokens are refused.
    provider.keys = [new.jwk()]
    clock[0] += 400  # past the cache: the held keys answer, and are fetched in the background
    assert await verifier.verify(new.token(sub="starts-the-refetch"))
    await _settled(keys)
    assert provider.requests == 3
    with pytest.raises(TokenUnknownKey):
        await verifier.verify(old.token(sub="someone-else"))
    verifier.close()


async def _settled(keys: JwksKeys) -> None:
    for _ in range(500):
        if keys._fetch is None:
            return
        await asyncio.sleep(0.01)
    raise AssertionError("the background fetch did not end")


async def test_one_fetch_serves_every_token_that_arrives_meanwhile(signers, provider):
    provider.delay = 0.3
    verifier = verifier_for(provider.url)
    tokens = [signers[alg].token(sub=f"p{i}") for i in range(10) for alg in ALGS]
    players = await asyncio.gather(*(verifier.verify(t) for t in tokens))
    assert len({p.id for p in players}) == 10
    assert provider.requests == 1
    verifier.close()


async def test_the_event_loop_runs_while_the_keys_are_fetched(signers, provider):
    provider.delay = 1.0
    verifier = verifier_for(provider.url)
    ticks = await _ticks_during(verifier.verify(signers["ES256"].token()))
    assert ticks >= 20, f"the loop ticked {ticks} times in a 1 s fetch"
    verifier.close()


async def test_control_a_fetch_on_the_loop_stops_it(signers, provider, monkeypatch):
    async def on_the_loop(self):
        try:
            self._keys = self._download()
            self._fetched = self._clock()
        finally:
            self._fetch = None

    monkeypatch.setattr(JwksKeys, "_fetch_keys", on_the_loop)
    provider.delay = 1.0
    verifier = verifier_for(provider.url)
    ticks = await _ticks_during(verifier.verify(signers["ES256"].token()))
    assert ticks < 5
    verifier.close()


async def _ticks_during(work) -> int:
    ticks = 0
    done = False

    async def ticker() -> None:
        nonlocal ticks
        while not done:
            await asyncio.sleep(0.01)
            ticks += 1

    task = asyncio.ensure_future(ticker())
    await asyncio.sleep(0)
    try:
        await work
    finally:
        done = True
        await task
    return ticks


async def test_a_silent_jwks_is_unavailable_within_the_timeout_and_held_keys_outlive_it(
    signers, provider
):
    es = signers["ES256"]
    provider.delay = 30
    verifier = verifier_for(provider.url, timeout=0.3)
    started = time.monotonic()
    with pytest.raises(errors.Unavailable):
        await verifier.verify(es.token())
    assert time.monotonic() - started < 10
    assert status.classify(errors.Unavailable("x"))[0] is grpc.StatusCode.UNAVAILABLE
    # Keys once held keep answering while the JWKS is unreachable past its cache time.
    provider.delay = 0
    clock = [0.0]
    keys = JwksKeys(provider.url, cache_seconds=5, refresh_seconds=1, timeout=0.3)
    keys._clock = lambda: clock[0]
    held = Verifier(keys, issuer=ISSUER, audience=AUDIENCE, remember=0)
    await held.verify(es.token())
    provider.delay = 30
    clock[0] += 60
    for i in range(3):
        assert (await held.verify(es.token(sub=f"while-down-{i}"))).id == f"while-down-{i}"
    await _settled(keys)
    assert (await held.verify(es.token(sub="after"))).id == "after"
    verifier.close()
    held.close()


async def test_no_key_source_trusts_no_token(signers):
    verifier = Verifier(None, issuer=ISSUER, audience=AUDIENCE)
    assert not verifier.enabled
    with pytest.raises(TokenUnknownKey):
        await verifier.verify(signers["ES256"].token())


# --- who the player is --------------------------------------------------------------


async def test_the_display_name_comes_from_the_claims_or_the_id(signers, provider):
    es = signers["ES256"]
    verifier = verifier_for(provider.url)
    assert (await verifier.verify(es.token(name="Ada", preferred_username="ada"))).name == "Ada"
    assert (await verifier.verify(es.token(sub="u2", preferred_username="ada"))).name == "ada"
    long = "Jonathan Christopher Alexander Montgomery-Smith"
    assert (await verifier.verify(es.token(sub="u3", name=long))).name == long[:40].strip()
    # A name with control characters is not shown; the next claim, else one from the id.
    player = await verifier.verify(es.token(sub="u4", name="bad\u202ename"))
    assert player.name == name_from_id("u4") and "u4" not in player.name
    assert (await verifier.verify(es.token(sub="u5@example.com"))).name.startswith("Player ")
    assert "example" not in (await verifier.verify(es.token(sub="u5@example.com"))).name
    custom = verifier_for(provider.url, name_claims=("nickname",))
    assert (await custom.verify(es.token(sub="u6", name="Ada", nickname="Lovelace"))).name == (
        "Lovelace"
    )


async def test_a_remembered_token_still_expires(signers, provider):
    verifier = verifier_for(provider.url, leeway=0)
    es = signers["ES256"]
    # At least 3 s ahead (exp is whole seconds: now + 1 could be 10 ms away, and a loaded
    # machine's first verify, which fetches the keys, then met an expired token).
    expires = int(time.time()) + 4
    token = es.token(exp=expires)
    await verifier.verify(token)
    assert verifier._verified, "remembered"
    await verifier.verify(token)
    await asyncio.sleep(expires + 1.1 - time.time())
    with pytest.raises(TokenExpired):
        await verifier.verify(token)


def test_a_jwt_and_a_seat_token_never_look_alike(signers):
    from services.kit import auth

    for _ in range(200):
        assert not looks_like_jwt(auth.new_token())
    assert looks_like_jwt(signers["EdDSA"].token())
    assert looks_like_jwt(unsigned({"alg": "none"}, claims()))  # refused later, as a JWT
    assert not looks_like_jwt("a.b")
    assert not looks_like_jwt("a.b.c.d")
    assert not looks_like_jwt("a b.c.d")
    assert not looks_like_jwt("x" * 9000 + ".a.b")


# --- settings -----------------------------------------------------------------------


def load(**env) -> config.Config:
    return config.load(settings(), {f"TABLETOP_JWT_{k.upper()}": v for k, v in env.items()})


async def test_settings_make_the_verifier(signers, provider, tmp_path):
    off = verifier_from(load())
    assert not off.enabled
    on = verifier_from(load(jwks_url=provider.url, issuer=ISSUER, leeway_seconds="5"))
    assert on.enabled and on.audience == "tabletop" and on.leeway == 5
    assert (await on.verify(signers["EdDSA"].token(preferred_username="pu"))).name == "pu"
    path = tmp_path / "k.pem"
    path.write_bytes(signers["RS256"].public_pem())
    pem = verifier_from(load(public_key_file=str(path), issuer=ISSUER, name_claim="nick"))
    assert (await pem.verify(signers["RS256"].token(nick="N"))).name == "N"
    on.close()


@pytest.mark.parametrize(
    ("env", "says"),
    [
        ({"jwks_url": "http://x/j", "public_key_file": "/k.pem", "issuer": "i"}, "not both"),
        ({"jwks_url": "http://x/j"}, "TABLETOP_JWT_ISSUER is required"),
        ({"jwks_url": "file:///etc/passwd", "issuer": "i"}, "http or https"),
        ({"public_key_file": "/no/such/key.pem", "issuer": "i"}, "PUBLIC_KEY_FILE"),
        ({"jwks_url": "http://x/j", "issuer": "i", "audience": ""}, "TABLETOP_JWT_AUDIENCE"),
    ],
)
def test_bad_settings_fail_fast_naming_the_variable(env, says):
    with pytest.raises(config.ConfigError, match=says):
        verifier_from(load(**env))


def test_a_pem_that_cannot_check_our_algorithms_is_refused_at_start(tmp_path):
    for signer in (Signer.new("RS256", "w", rsa_bits=1024), Signer.new("ES384", "p")):
        path = tmp_path / f"{signer.kid}.pem"
        path.write_bytes(signer.public_pem())
        with pytest.raises(config.ConfigError, match="usable"):
            pem_key(path)


def test_only_our_algorithms_are_kept():
    assert keys_module.ALGORITHMS == ("RS256", "ES256", "EdDSA")
