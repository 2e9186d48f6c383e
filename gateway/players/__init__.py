"""The gateway's players: PlayersService (SignIn) and the guests' JWKS (docs/players.md).

``python -m gateway`` builds :class:`Players` from its settings (:func:`settings`),
registers it on its server (``create_gateway(..., players=...)``) and serves the JWKS
on its metrics port (:func:`serve_http`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
from tabletop.gateway.v1 import players_pb2_grpc

from gateway.metrics import GatewayMetrics
from gateway.players.guests import Grant, Guests
from gateway.players.http import JWKS_PATH, serve_http
from gateway.players.service import SERVICE, PlayersServicer
from gateway.players.signing import SigningKey, load_or_create
from services.kit import config

__all__ = [
    "JWKS_PATH",
    "SERVICE",
    "Grant",
    "Guests",
    "Players",
    "SigningKey",
    "load_or_create",
    "serve_http",
    "settings",
]


def settings() -> list[config.Setting]:
    S = config.Setting
    return [
        S("guest_signin", "TABLETOP_GUEST_SIGNIN", "true", "bool",
          "sign guests in (PlayersService.SignIn) and serve their key's JWKS on the metrics "
          "port; false where players sign in with the deployment's own identity provider"),
        S("guest_key_file", "TABLETOP_GUEST_SIGNING_KEY_FILE", "data/guest-signing-key.pem",
          "str", "the key guests' tokens are signed with (Ed25519 or EC P-256, PEM), made "
          "at first start if absent; every replica must share it (a Kubernetes Secret)"),
        S("guest_issuer", "TABLETOP_GUEST_ISSUER", "tabletop-guests", "str",
          "the iss of guests' tokens (the services' TABLETOP_JWT_ISSUER)"),
        S("guest_audience", "TABLETOP_GUEST_AUDIENCE", "tabletop", "str",
          "the aud of guests' tokens (the services' TABLETOP_JWT_AUDIENCE)"),
        S("guest_token_seconds", "TABLETOP_GUEST_TOKEN_SECONDS", "3600", "float",
          "how long a guest's token is valid"),
        S("guest_refresh_seconds", "TABLETOP_GUEST_REFRESH_SECONDS", "7776000", "float",
          "how long a guest's refresh token is valid (90 days); each SignIn gives a new one"),
        S("guest_signins_per_client", "TABLETOP_GUEST_SIGNINS_PER_CLIENT", "30", "float",
          "new guests one client address may sign in per TABLETOP_GUEST_SIGNIN_WINDOW_SECONDS "
          "(0: no limit)"),
        S("guest_signin_window", "TABLETOP_GUEST_SIGNIN_WINDOW_SECONDS", "600", "float",
          "the window of TABLETOP_GUEST_SIGNINS_PER_CLIENT"),
    ]  # fmt: skip


class Players:
    """What the gateway serves for players: SignIn, and the guests' JWKS."""

    def __init__(
        self,
        guests: Guests | None,
        *,
        signins_per_client: float = 30,
        signin_window: float = 600,
    ) -> None:
        self.guests = guests
        self.signins_per_client = signins_per_client
        self.signin_window = signin_window

    @classmethod
    def from_config(cls, cfg: config.Config) -> Players:
        """From the gateway's settings; the key is read, or made. SystemExit when unusable."""
        guests = None
        try:
            if cfg.guest_signin:
                if cfg.guest_token_seconds <= 0 or cfg.guest_refresh_seconds <= 0:
                    raise config.ConfigError(
                        "TABLETOP_GUEST_TOKEN_SECONDS and TABLETOP_GUEST_REFRESH_SECONDS "
                        "must be above 0"
                    )
                issuer, audience = cfg.guest_issuer.strip(), cfg.guest_audience.strip()
                if not issuer or not audience or issuer == audience:
                    raise config.ConfigError(
                        "TABLETOP_GUEST_ISSUER and TABLETOP_GUEST_AUDIENCE: both set, and "
                        "different (a refresh token's audience is the issuer)"
                    )
                guests = Guests(
                    load_or_create(cfg.guest_key_file),
                    issuer=issuer,
                    audience=audience,
                    token_seconds=cfg.guest_token_seconds,
                    refresh_seconds=cfg.guest_refresh_seconds,
                )
        except config.ConfigError as exc:
            raise SystemExit(f"configuration error: {exc}") from None
        return cls(
            guests,
            signins_per_client=cfg.guest_signins_per_client,
            signin_window=cfg.guest_signin_window,
        )

    def jwks(self) -> bytes | None:
        return self.guests.key.jwks() if self.guests else None

    def add_to(
        self,
        server: grpc.aio.Server,
        client: Callable[[grpc.aio.ServicerContext[Any, Any]], str],
        metrics: GatewayMetrics,
    ) -> tuple[str, ...]:
        """Register PlayersService on ``server``; returns its name, for reflection.
        ``client`` gives a call's client address (the gateway's ClientLimits.client)."""
        servicer = PlayersServicer(
            self.guests,
            client=client,
            signins_per_client=self.signins_per_client,
            signin_window=self.signin_window,
            limited=metrics.limited,
            registry=metrics.registry,
        )
        players_pb2_grpc.add_PlayersServiceServicer_to_server(servicer, server)
        return (SERVICE,)
