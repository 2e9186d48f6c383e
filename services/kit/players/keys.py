"""The keys players' tokens are checked with: an issuer's JWKS URL, or one PEM public key.

A key is a :class:`jwt.PyJWK`, bound to its algorithm: PyJWT refuses a token whose
``alg`` is not the key's, so an RSA key never checks an HMAC or an EC signature. Only
the algorithms in :data:`ALGORITHMS` are kept, each with a key of its own kind (RSA of
2048 bits or more; EC on P-256; Ed25519 or Ed448), public halves only.

:class:`JwksKeys` fetches with PyJWT's :class:`jwt.PyJWKClient` (http and https only, no
redirects, the JWKS parsed and its unusable keys skipped), on a thread of its own so the
event loop never waits on the network. What it holds answers every call at once; a
token naming a key it does not hold fetches the set again, and at most one fetch runs
at a time and starts at most once per ``refresh_seconds``, however many tokens with
made-up ``kid`` values arrive (tokens that arrive meanwhile share that fetch). Held
keys older than ``cache_seconds`` are fetched again in the background, and are kept
while the issuer cannot be reached.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

import jwt
import structlog
from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
from cryptography.hazmat.primitives.serialization import load_pem_public_key
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

from services.kit import config, errors
from services.kit.players.errors import TokenUnknownKey

# The signatures players' tokens may carry. Ours, never the token's: `none` and the
# HMAC family (whose secret would be a public key anybody can read) are not in it.
ALGORITHMS = ("RS256", "ES256", "EdDSA")
MIN_RSA_BITS = 2048
MAX_KID_CHARS = 256

_log = structlog.get_logger("players")


def fits(algorithm: str, key: Any) -> bool:
    """Whether ``key`` is a public key of the kind ``algorithm`` verifies with."""
    if algorithm == "RS256":
        return isinstance(key, rsa.RSAPublicKey) and key.key_size >= MIN_RSA_BITS
    if algorithm == "ES256":
        return isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == "secp256r1"
    if algorithm == "EdDSA":
        return isinstance(key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey)
    return False


def usable(key: jwt.PyJWK) -> bool:
    return key.algorithm_name in ALGORITHMS and fits(key.algorithm_name, key.key)


class KeySource(Protocol):
    async def key(self, kid: str | None) -> jwt.PyJWK:
        """The key a token naming ``kid`` is checked with; raises TokenUnknownKey."""
        ...

    def close(self) -> None: ...


class StaticKey:
    """One key (a PEM file's, or the gateway's own). With ``kid`` set, a token naming
    another key is refused as unknown; without it, a token's ``kid`` is not read."""

    def __init__(self, key: jwt.PyJWK, kid: str | None = None) -> None:
        if not usable(key):
            raise ValueError(f"a {key.algorithm_name} key cannot check players' tokens")
        self._key = key
        self.kid = kid

    async def key(self, kid: str | None) -> jwt.PyJWK:
        if self.kid is not None and kid != self.kid:
            raise TokenUnknownKey("the token is not signed by this issuer's current key")
        return self._key

    def close(self) -> None:
        pass


def public_jwk(public_key: Any) -> jwt.PyJWK:
    """A PyJWK for a cryptography public key, bound to the algorithm of its kind."""
    if isinstance(public_key, rsa.RSAPublicKey):
        algorithm, data = "RS256", RSAAlgorithm.to_jwk(public_key, as_dict=True)
    elif isinstance(public_key, ec.EllipticCurvePublicKey):
        algorithm, data = "ES256", ECAlgorithm.to_jwk(public_key, as_dict=True)
    elif isinstance(public_key, ed25519.Ed25519PublicKey | ed448.Ed448PublicKey):
        algorithm, data = "EdDSA", OKPAlgorithm.to_jwk(public_key, as_dict=True)
    else:
        raise ValueError(f"{type(public_key).__name__} keys cannot check players' tokens")
    if not fits(algorithm, public_key):
        raise ValueError(
            f"an {algorithm} key must be RSA of {MIN_RSA_BITS} bits or more, EC on P-256, "
            "or Ed25519/Ed448"
        )
    return jwt.PyJWK(data, algorithm)


def pem_key(path: str | Path) -> jwt.PyJWK:
    """The public key in a PEM file (``PUBLIC KEY`` or a ``CERTIFICATE``'s); ConfigError."""
    where = f"TABLETOP_JWT_PUBLIC_KEY_FILE={str(path)!r}"
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise config.ConfigError(f"{where}: {exc.strerror}") from None
    try:
        if b"-----BEGIN CERTIFICATE-----" in data:
            public_key: Any = x509.load_pem_x509_certificate(data).public_key()
        else:
            public_key = load_pem_public_key(data)
        return public_jwk(public_key)
    except ValueError as exc:
        raise config.ConfigError(f"{where}: not a usable PEM public key: {exc}") from None


class JwksKeys:
    """The keys a JWKS URL publishes, fetched off the event loop and held (module doc)."""

    def __init__(
        self,
        url: str,
        *,
        cache_seconds: float = 300.0,
        refresh_seconds: float = 10.0,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        try:
            self._client = jwt.PyJWKClient(url, cache_jwk_set=False, timeout=timeout)
        except jwt.PyJWKClientError as exc:
            raise config.ConfigError(f"TABLETOP_JWT_JWKS_URL={url!r}: {exc}") from None
        self.url = url
        self.cache_seconds = cache_seconds
        self.refresh_seconds = refresh_seconds
        self.timeout = timeout
        self._clock = clock
        self._keys: dict[str, jwt.PyJWK] = {}
        self._fetched: float | None = None  # when the held keys were fetched
        self._started: float | None = None  # when the last fetch started
        self._fetch: asyncio.Future[None] | None = None
        self._executor: ThreadPoolExecutor | None = None
        self.fetches = 0  # fetches started (tests and logs read it)

    async def key(self, kid: str | None) -> jwt.PyJWK:
        if kid is None:
            raise TokenUnknownKey("the token names no signing key (kid)")
        if self._fetched is None or kid not in self._keys:
            fetch = self._start_fetch()
            if fetch is not None:
                # Shielded: a caller that gives up does not cancel the others' fetch.
                await asyncio.shield(fetch)
            if self._fetched is None:
                raise errors.Unavailable(
                    "the identity provider's keys could not be fetched; retry later"
                )
        elif self._clock() - self._fetched >= self.cache_seconds:
            self._start_fetch()  # in the background: the held keys answer meanwhile
        found = self._keys.get(kid)
        if found is None:
            raise TokenUnknownKey("the token's signing key is not one of the issuer's keys")
        return found

    def _start_fetch(self) -> asyncio.Future[None] | None:
        """The fetch under way, else a new one if the last started long enough ago."""
        if self._fetch is None:
            now = self._clock()
            if self._started is not None and now - self._started < self.refresh_seconds:
                return None
            self._started = now
            self.fetches += 1
            self._fetch = asyncio.ensure_future(self._fetch_keys())
        return self._fetch

    async def _fetch_keys(self) -> None:
        if self._executor is None:
            self._executor = ThreadPoolExecutor(1, thread_name_prefix="jwks")
        loop = asyncio.get_running_loop()
        try:
            # urllib's timeout bounds each socket wait; this bounds the whole fetch.
            keys = await asyncio.wait_for(
                loop.run_in_executor(self._executor, self._download), self.timeout * 2
            )
        except Exception as exc:
            _log.warning(
                "jwks_fetch_failed", url=self.url, error=type(exc).__name__, held=len(self._keys)
            )
        else:
            if self._fetched is None or set(keys) != set(self._keys):
                _log.info("jwks_fetched", url=self.url, kids=sorted(keys))
            self._keys = keys
            self._fetched = self._clock()
        finally:
            self._fetch = None

    def _download(self) -> dict[str, jwt.PyJWK]:
        found = self._client.get_signing_keys(refresh=True)
        keys = {k.key_id: k for k in found if k.key_id and usable(k)}
        if not keys:
            raise jwt.PyJWKClientError("the JWKS holds no RS256, ES256 or EdDSA signing key")
        return keys

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
