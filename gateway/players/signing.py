"""The key the gateway signs guests' tokens with: made at first start, kept in a file.

The file is a PKCS#8 PEM private key: Ed25519 (EdDSA) when the gateway makes it, or an
EC P-256 key (ES256) an operator provides. It is written once, mode 0600, atomically
(written aside, then linked into place, which fails if the file appeared meanwhile: two
gateways starting at once on one volume end up with the same key, the first one's).
Several replicas must share it: in Kubernetes it is a Secret mounted at the path
(``python -m gateway.players keygen`` prints a new one).

The key's id (``kid``) is its RFC 7638 thumbprint: the same key has the same id in every
replica and after every restart, and a new key a new id.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
import structlog
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    load_pem_private_key,
)
from jwt.algorithms import ECAlgorithm, OKPAlgorithm

from services.kit import config

_log = structlog.get_logger("players")

# RFC 7638: the members of each key type that its thumbprint hashes.
_THUMBPRINT_MEMBERS = {"OKP": ("crv", "kty", "x"), "EC": ("crv", "kty", "x", "y")}


def new_pem() -> bytes:
    """A new Ed25519 private key, PKCS#8 PEM."""
    return ed25519.Ed25519PrivateKey.generate().private_bytes(
        Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()
    )


def thumbprint(jwk: dict[str, Any]) -> str:
    """RFC 7638 JWK thumbprint (SHA-256, base64url without padding)."""
    members = {name: jwk[name] for name in _THUMBPRINT_MEMBERS[jwk["kty"]]}
    canonical = json.dumps(members, separators=(",", ":"), sort_keys=True).encode()
    return base64.urlsafe_b64encode(hashlib.sha256(canonical).digest()).rstrip(b"=").decode()


@dataclass(frozen=True)
class SigningKey:
    private: ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey
    algorithm: str  # EdDSA or ES256
    public: dict[str, Any]  # the public half as a JWK (kty, crv, x[, y])
    kid: str
    path: Path
    created: bool  # made by this start

    @classmethod
    def from_pem(cls, data: bytes, path: Path, created: bool = False) -> SigningKey:
        where = f"TABLETOP_GUEST_SIGNING_KEY_FILE={str(path)!r}"
        try:
            key = load_pem_private_key(data, password=None)
        except (ValueError, TypeError) as exc:
            raise config.ConfigError(
                f"{where}: not an unencrypted PEM private key ({exc})"
            ) from None
        if isinstance(key, ed25519.Ed25519PrivateKey):
            algorithm = "EdDSA"
            public = OKPAlgorithm.to_jwk(key.public_key(), as_dict=True)
        elif isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1":
            algorithm = "ES256"
            public = ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
        else:
            raise config.ConfigError(f"{where}: an Ed25519 or EC P-256 private key is needed")
        return cls(key, algorithm, public, thumbprint(public), path, created)

    def public_jwk(self) -> dict[str, Any]:
        """The public half as a JWK, with its kid, algorithm and use."""
        return {**self.public, "kid": self.kid, "alg": self.algorithm, "use": "sig"}

    def verifying_key(self) -> jwt.PyJWK:
        return jwt.PyJWK(self.public_jwk(), self.algorithm)

    def jwks(self) -> bytes:
        """The JWKS document the gateway serves: this key's public half."""
        return json.dumps({"keys": [self.public_jwk()]}, sort_keys=True).encode()

    def sign(self, claims: dict[str, Any]) -> str:
        return jwt.encode(claims, self.private, algorithm=self.algorithm, headers={"kid": self.kid})


def load_or_create(path: str | Path) -> SigningKey:
    """The key in ``path``, made there first if there is none; ConfigError if unusable."""
    path = Path(path)
    try:
        data, created = path.read_bytes(), False
    except FileNotFoundError:
        data, created = _create(path), True
    except OSError as exc:
        raise config.ConfigError(
            f"TABLETOP_GUEST_SIGNING_KEY_FILE={str(path)!r}: {exc.strerror}"
        ) from None
    key = SigningKey.from_pem(data, path, created)
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o007:  # others than its user and group (a Secret's fsGroup) can read it
        _log.warning("guest_signing_key_readable", path=str(path), mode=oct(mode))
    _log.info("guest_signing_key", path=str(path), kid=key.kid, created=created)
    return key


def _create(path: Path) -> bytes:
    pem = new_pem()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, aside = tempfile.mkstemp(dir=path.parent, prefix=".guest-signing-key.")  # 0600
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(pem)
                out.flush()
                os.fsync(out.fileno())
            try:
                os.link(aside, path)
            except FileExistsError:
                return path.read_bytes()  # another gateway made it first: theirs is the key
        finally:
            os.unlink(aside)
        directory = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
    except OSError as exc:
        raise config.ConfigError(
            f"TABLETOP_GUEST_SIGNING_KEY_FILE={str(path)!r}: cannot make the key there "
            f"({exc.strerror}): mount one (python -m gateway.players keygen prints one) or "
            "set TABLETOP_GUEST_SIGNIN=false"
        ) from None
    return pem
