"""Guests: players the gateway signs in itself, when no identity provider does.

A guest gets two tokens, both JWTs signed with the gateway's key (gateway.players.signing):

- its **token**, for the game services: ``iss`` this gateway's issuer, ``aud`` the
  services' audience, ``sub`` the player id, ``name``, ``iat``, ``nbf``, ``exp`` (an hour
  by default). The services check it as they would a provider's, with the JWKS the
  gateway serves;
- its **refresh token**, for SignIn only: ``aud`` the issuer itself (no service accepts
  it: their audience is another) and ``token_use: refresh`` (which the services'
  verifier refuses whatever the audience), valid for 90 days by default. SignIn with it
  returns the same player id, and a new refresh token: a guest who comes back within the
  period keeps its id for ever.

Refresh tokens are stateless: the gateway stores nothing, so every replica answers every
guest, and nothing is lost when a gateway restarts. The price: one cannot be revoked
before it expires, except by changing the key (which signs every guest out). See
docs/players.md.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass

from gateway.players.signing import SigningKey
from services.kit.players import Player, StaticKey, Verifier
from services.kit.players.verifier import REFRESH


def new_player_id() -> str:
    """128 random bits: unique without a store to ask."""
    return f"guest-{secrets.token_hex(16)}"


@dataclass(frozen=True)
class Grant:
    """What a sign-in returns."""

    token: str
    expires_at: int  # seconds since the epoch
    player_id: str
    player_name: str
    refresh_token: str
    refresh_expires_at: int


class Guests:
    def __init__(
        self,
        key: SigningKey,
        *,
        issuer: str,
        audience: str,
        token_seconds: float = 3600,
        refresh_seconds: float = 90 * 86400,
        leeway: float = 30,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if issuer == audience:
            raise ValueError("the guests' issuer and audience must differ")
        self.key = key
        self.issuer = issuer
        self.audience = audience
        self.token_seconds = token_seconds
        self.refresh_seconds = refresh_seconds
        self._clock = clock
        self._refresh = Verifier(
            StaticKey(key.verifying_key(), kid=key.kid),
            issuer=issuer,
            audience=issuer,
            leeway=leeway,
            name_claims=("name",),
            refresh=True,
            remember=0,
        )

    def verifier(self, leeway: float = 30) -> Verifier:
        """A verifier of the guests' tokens as a service would hold (tests, tools)."""
        return Verifier(
            StaticKey(self.key.verifying_key(), kid=self.key.kid),
            issuer=self.issuer,
            audience=self.audience,
            leeway=leeway,
        )

    def sign_in(self, name: str) -> Grant:
        """A new guest named ``name`` (already checked)."""
        return self._grant(new_player_id(), name)

    async def resume(self, refresh_token: str, name: str = "") -> Grant:
        """The guest ``refresh_token`` names, under ``name`` if given (else its own);
        raises services.kit.players.TokenRefused."""
        player: Player = (await self._refresh.claims(refresh_token))[0]
        return self._grant(player.id, name or player.name)

    def _grant(self, player_id: str, name: str) -> Grant:
        now = int(self._clock())
        expires = now + int(self.token_seconds)
        refresh_expires = now + int(self.refresh_seconds)
        token = self.key.sign(
            {
                "iss": self.issuer,
                "aud": self.audience,
                "sub": player_id,
                "name": name,
                "iat": now,
                "nbf": now,
                "exp": expires,
            }
        )
        refresh = self.key.sign(
            {
                "iss": self.issuer,
                "aud": self.issuer,
                "sub": player_id,
                "name": name,
                "iat": now,
                "exp": refresh_expires,
                "token_use": REFRESH,
            }
        )
        return Grant(token, expires, player_id, name, refresh, refresh_expires)
