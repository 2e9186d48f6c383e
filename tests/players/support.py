"""Keys, tokens and a JWKS server on loopback, for the players' tests."""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat
from jwt.algorithms import ECAlgorithm, OKPAlgorithm, RSAAlgorithm

ISSUER = "https://id.example.test/realms/games"
AUDIENCE = "tabletop"


@dataclass
class Signer:
    """A provider's signing key: signs tokens, publishes its public half."""

    alg: str
    private: Any
    kid: str

    @classmethod
    def new(cls, alg: str, kid: str, *, rsa_bits: int = 2048) -> Signer:
        if alg.startswith("RS"):
            private: Any = rsa.generate_private_key(public_exponent=65537, key_size=rsa_bits)
        elif alg == "ES256":
            private = ec.generate_private_key(ec.SECP256R1())
        elif alg == "ES384":
            private = ec.generate_private_key(ec.SECP384R1())
        elif alg == "EdDSA":
            private = ed25519.Ed25519PrivateKey.generate()
        else:
            raise ValueError(alg)
        return cls(alg, private, kid)

    def jwk(self) -> dict[str, Any]:
        public = self.private.public_key()
        if isinstance(public, rsa.RSAPublicKey):
            data = RSAAlgorithm.to_jwk(public, as_dict=True)
        elif isinstance(public, ec.EllipticCurvePublicKey):
            data = ECAlgorithm.to_jwk(public, as_dict=True)
        else:
            data = OKPAlgorithm.to_jwk(public, as_dict=True)
        return {**data, "kid": self.kid, "alg": self.alg, "use": "sig"}

    def public_pem(self) -> bytes:
        return self.private.public_key().public_bytes(
            Encoding.PEM, PublicFormat.SubjectPublicKeyInfo
        )

    def token(self, *, kid: str | None = "", headers: dict | None = None, **claims: Any) -> str:
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "user-1", "iat": now, "exp": now + 600}
        body.update(claims)
        body = {k: v for k, v in body.items() if v is not None}
        head = dict(headers or {})
        if kid is not None:
            head["kid"] = kid or self.kid
        return jwt.encode(body, self.private, algorithm=self.alg, headers=head)


@dataclass
class JwksServer:
    """An identity provider's JWKS endpoint on loopback: its keys can change, it can be
    slow or silent, and it counts the fetches it answers."""

    keys: list[dict[str, Any]] = field(default_factory=list)
    delay: float = 0.0
    requests: int = 0
    _server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_port}/jwks.json"

    def __enter__(self) -> JwksServer:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.requests += 1
                if owner.delay:
                    time.sleep(owner.delay)
                body = json.dumps({"keys": owner.keys}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()
