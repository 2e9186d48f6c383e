"""Players: who a call comes from, as a verified token says (docs/players.md).

A call may carry ``authorization: Bearer <token>``. A JWT there (:func:`looks_like_jwt`)
is a player's token, checked by a :class:`Verifier` (made from the service's settings by
:func:`verifier_from`); anything else is a seat token (:mod:`services.kit.auth`).

    from services.kit import players
    verifier = players.verifier_from(cfg)        # cfg loaded with players.settings()
    if players.looks_like_jwt(token):
        player = await verifier.verify(token)    # Player(id, name, issuer), or a refusal
"""

from services.kit.players.errors import (
    TokenExpired,
    TokenInvalid,
    TokenNotYetValid,
    TokenRefused,
    TokenUnknownKey,
    TokenWrongAudience,
    TokenWrongIssuer,
    status_of,
)
from services.kit.players.keys import ALGORITHMS, JwksKeys, StaticKey, pem_key, public_jwk
from services.kit.players.settings import settings, verifier_from
from services.kit.players.verifier import (
    MAX_TOKEN_CHARS,
    Player,
    Verifier,
    looks_like_jwt,
    name_from_id,
)

__all__ = [
    "ALGORITHMS",
    "MAX_TOKEN_CHARS",
    "JwksKeys",
    "Player",
    "StaticKey",
    "TokenExpired",
    "TokenInvalid",
    "TokenNotYetValid",
    "TokenRefused",
    "TokenUnknownKey",
    "TokenWrongAudience",
    "TokenWrongIssuer",
    "Verifier",
    "looks_like_jwt",
    "name_from_id",
    "pem_key",
    "public_jwk",
    "settings",
    "status_of",
    "verifier_from",
]
