"""Who a player is: the ``sub`` of a JWT whose signature, issuer, audience and times hold.

    verifier = Verifier(JwksKeys(url), issuer="https://id.example", audience="tabletop")
    player = await verifier.verify(token)   # Player(id=..., name=..., issuer=...)

The token's header is read first, unverified, for two things only: its ``alg`` must be
one of :data:`~services.kit.players.keys.ALGORITHMS` (else it is refused before any key
is looked up or fetched), and its ``kid`` picks the key. PyJWT then checks the
signature with that key and the key's own algorithm, and the claims: ``exp``, ``nbf``
and ``iat`` within the leeway, ``iss`` and ``aud`` exactly ours, ``sub`` present.

A token once verified is remembered (the last few thousand, each at most a minute and
never past its ``exp``), so a player's every move is not a signature check.
"""

from __future__ import annotations

import hashlib
import re
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jwt

from services.kit.errors import BadRequest
from services.kit.players.errors import (
    TokenExpired,
    TokenInvalid,
    TokenNotYetValid,
    TokenRefused,
    TokenUnknownKey,
    TokenWrongAudience,
    TokenWrongIssuer,
)
from services.kit.players.keys import ALGORITHMS, MAX_KID_CHARS, KeySource
from services.kit.table import NAME_MAX, player_name

MAX_TOKEN_CHARS = 8192
MAX_SUBJECT_CHARS = 255
NAME_CLAIMS = ("name", "preferred_username")
# A JWT in compact form: three base64url segments (the third empty for `alg: none`,
# which is then refused as such). A seat token (services.kit.auth) is one base64url
# segment, without dots, so the two never look alike.
_COMPACT = re.compile(r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
REFRESH = "refresh"  # the token_use claim of a guest's refresh token (gateway.players)


def looks_like_jwt(token: str) -> bool:
    """Whether a bearer token is a player's (a JWT) rather than a seat token."""
    return len(token) <= MAX_TOKEN_CHARS and _COMPACT.fullmatch(token) is not None


@dataclass(frozen=True)
class Player:
    id: str  # the token's sub
    name: str  # its display name claim, checked, or one made from the id
    issuer: str  # its iss


def name_from_id(player_id: str) -> str:
    """A display name for a player whose token has none: short, stable, and not the id
    itself (some providers' ids are e-mail addresses)."""
    return f"Player {hashlib.sha256(player_id.encode()).hexdigest()[:6]}"


def display_name(claims: dict[str, Any], names: Sequence[str], player_id: str) -> str:
    """The first of the ``names`` claims that holds a usable name (cut to 40 characters),
    else one made from the id."""
    for claim in names:
        value = claims.get(claim)
        if isinstance(value, str):
            try:
                return player_name(value.strip()[:NAME_MAX])
            except BadRequest:
                continue
    return name_from_id(player_id)


def _subject(claims: dict[str, Any]) -> str:
    sub = claims.get("sub")
    if not isinstance(sub, str) or not sub:
        raise TokenInvalid("the token has no subject (sub)", claim="sub")
    if len(sub) > MAX_SUBJECT_CHARS:
        raise TokenInvalid(f"the token's sub is over {MAX_SUBJECT_CHARS} characters", claim="sub")
    if any(unicodedata.category(c)[0] == "C" for c in sub):
        raise TokenInvalid("the token's sub has control characters", claim="sub")
    return sub


class Verifier:
    """Checks players' tokens against one issuer, audience and key source.

    ``keys=None``: this service trusts no player tokens (every one is refused with
    TOKEN_UNKNOWN_KEY). ``refresh=True`` accepts only a guest's refresh tokens (claim
    ``token_use: refresh``); otherwise those are refused, whatever their audience.
    """

    def __init__(
        self,
        keys: KeySource | None,
        *,
        issuer: str,
        audience: str,
        leeway: float = 30.0,
        name_claims: Sequence[str] = NAME_CLAIMS,
        refresh: bool = False,
        remember: int = 4096,
        remember_seconds: float = 60.0,
    ) -> None:
        self.keys = keys
        self.issuer = issuer
        self.audience = audience
        self.leeway = leeway
        self.name_claims = tuple(name_claims)
        self.refresh = refresh
        self.remember = remember
        self.remember_seconds = remember_seconds
        self._verified: OrderedDict[str, tuple[Player, float]] = OrderedDict()

    @property
    def enabled(self) -> bool:
        return self.keys is not None

    async def verify(self, token: str) -> Player:
        """The player ``token`` names; raises a TokenRefused (UNAUTHENTICATED with its
        reason), or errors.Unavailable when the issuer's keys cannot be fetched."""
        remembered = self._verified.get(token)
        if remembered is not None:
            player, until = remembered
            if time.time() < until:
                self._verified.move_to_end(token)
                return player
            del self._verified[token]
        player, claims = await self.claims(token)
        if self.remember:
            until = min(float(claims["exp"]) + self.leeway, time.time() + self.remember_seconds)
            self._verified[token] = (player, until)
            if len(self._verified) > self.remember:
                self._verified.popitem(last=False)
        return player

    async def claims(self, token: str) -> tuple[Player, dict[str, Any]]:
        """The player and the token's verified claims, checked every time (no memory)."""
        if self.keys is None:
            raise TokenUnknownKey("this service trusts no player tokens")
        kid = self._header(token)
        key = await self.keys.key(kid)
        claims = self._decode(token, key)
        return self._player(claims), claims

    def _header(self, token: str) -> str | None:
        """The token's kid, once its form and algorithm pass."""
        if not looks_like_jwt(token):
            raise TokenInvalid("the token is not a JWT")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise TokenInvalid("the token's header cannot be read") from None
        if header.get("alg") not in ALGORITHMS:
            raise TokenInvalid(f"the token's algorithm is not one of {', '.join(ALGORITHMS)}")
        kid = header.get("kid")
        if kid is not None and (not isinstance(kid, str) or len(kid) > MAX_KID_CHARS):
            raise TokenInvalid("the token's kid is not a short string")
        return kid

    def _decode(self, token: str, key: jwt.PyJWK) -> dict[str, Any]:
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key,
                algorithms=list(ALGORITHMS),
                audience=self.audience,
                issuer=self.issuer,
                leeway=self.leeway,
                options={
                    "require": ["exp", "iss", "aud", "sub"],
                    "enforce_minimum_key_length": True,
                },
            )
        except jwt.ExpiredSignatureError:
            raise TokenExpired("the token has expired; sign in again") from None
        except jwt.ImmatureSignatureError:
            raise TokenNotYetValid("the token is not valid yet (nbf or iat ahead)") from None
        except jwt.MissingRequiredClaimError as exc:
            raise _missing(exc.claim) from None
        except jwt.InvalidIssuerError:
            raise TokenWrongIssuer("the token is from another issuer") from None
        except jwt.InvalidAudienceError:
            raise TokenWrongAudience("the token is meant for another audience") from None
        except jwt.InvalidSignatureError:
            raise TokenInvalid("the token's signature does not match its key") from None
        except jwt.InvalidAlgorithmError:
            raise TokenInvalid("the token's algorithm is not its key's") from None
        except jwt.PyJWTError:
            raise TokenInvalid("the token is not valid") from None
        if (claims.get("token_use") == REFRESH) != self.refresh:
            raise TokenInvalid(
                "a refresh token is not a player's token"
                if not self.refresh
                else "not a refresh token",
                claim="token_use",
            )
        return claims

    def _player(self, claims: dict[str, Any]) -> Player:
        sub = _subject(claims)
        return Player(sub, display_name(claims, self.name_claims, sub), str(claims["iss"]))

    def close(self) -> None:
        if self.keys is not None:
            self.keys.close()


def _missing(claim: str) -> TokenRefused:
    if claim == "iss":
        return TokenWrongIssuer("the token names no issuer (iss)", claim=claim)
    if claim == "aud":
        return TokenWrongAudience("the token names no audience (aud)", claim=claim)
    return TokenInvalid(f"the token has no {claim} claim", claim=claim)
