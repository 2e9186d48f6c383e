"""Why a player's token is refused: one class per ErrorInfo reason, all UNAUTHENTICATED.

Each subclasses :class:`services.kit.auth.BadToken`, so the kit's status mapping answers
it UNAUTHENTICATED and counts it as a failed authentication (the per-client lockout
applies). Messages are written here, never copied from PyJWT or from the token: a
refusal names what is wrong, not what the token holds.
"""

from __future__ import annotations

import grpc

from services.kit import auth, status


class TokenRefused(auth.BadToken):
    """A player's token this service does not accept."""

    reason = "TOKEN_INVALID"

    def __init__(self, message: str, **metadata: object) -> None:
        super().__init__(message)
        self.message = message
        self.metadata = {k: str(v) for k, v in metadata.items()}


class TokenExpired(TokenRefused):
    reason = "TOKEN_EXPIRED"


class TokenNotYetValid(TokenRefused):
    reason = "TOKEN_NOT_YET_VALID"


class TokenInvalid(TokenRefused):
    reason = "TOKEN_INVALID"


class TokenWrongIssuer(TokenRefused):
    reason = "TOKEN_WRONG_ISSUER"


class TokenWrongAudience(TokenRefused):
    reason = "TOKEN_WRONG_AUDIENCE"


class TokenUnknownKey(TokenRefused):
    reason = "TOKEN_UNKNOWN_KEY"


def status_of(exc: TokenRefused) -> grpc.Status:
    """UNAUTHENTICATED with the refusal's own reason and metadata."""
    return status.status_for(grpc.StatusCode.UNAUTHENTICATED, exc.message, exc.reason, exc.metadata)
