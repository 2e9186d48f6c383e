"""Seat tokens: 256 random bits each, shown once, stored only as a SHA-256 hash.

A call acts for a seat by carrying ``authorization: Bearer <token>``. The token is
hashed and compared with every seat's hash of that game in constant time (all of them,
with no early exit), so a token names a seat of one game only and timing tells nothing.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Iterable, Sequence

TOKEN_BYTES = 32  # 256 bits
SEAT_TOKEN_MAX = 256  # a seat token is 43 characters; a player's JWT may be longer


class MissingToken(Exception):
    """The call needs a seat and carries no token."""


class BadToken(Exception):
    """The token is malformed or is not a seat of this game."""


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def bearer(metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
    """The bearer token in call metadata; None when there is no authorization header.

    Raises BadToken for an authorization header that is not ``Bearer <token>``. A token
    up to 256 characters, or a player's JWT up to ``players.MAX_TOKEN_CHARS``.
    """
    for key, value in metadata or ():
        if key.lower() != "authorization":
            continue
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        scheme, _, token = text.strip().partition(" ")
        token = token.strip()
        if (
            scheme.lower() != "bearer"
            or not token
            or (len(token) > SEAT_TOKEN_MAX and len(token) > _longest(token))
        ):
            raise BadToken("authorization must be 'Bearer <seat token or player token>'")
        return token
    return None


def _longest(token: str) -> int:
    """The longest bearer token accepted like this one: a player's JWT may be long."""
    from services.kit.players.seats import bearer_limit  # players builds on this module

    return bearer_limit(token)


def seat_of(token: str | None, hashes: Sequence[str]) -> int | None:
    """The seat whose hash matches ``token``; None for no token. Raises BadToken."""
    if token is None:
        return None
    digest = token_hash(token).encode("ascii")
    found = -1
    for seat, stored in enumerate(hashes):
        # Every seat is compared, whatever matched, so the time does not depend on which.
        if hmac.compare_digest(digest, stored.encode("ascii")):
            found = seat
    if found < 0:
        raise BadToken("this token is not a seat of this game")
    return found
