"""PlayersService: SignIn, the guests' door (protos/tabletop/gateway/v1/players.proto).

SignIn needs no credential, so what it gives is limited per client address beyond the
gateway's per-client call rate: at most ``signins_per_client`` *new* guests per
``signin_window`` seconds (a token bucket; a returning guest's refresh mints no id and
is not counted). A refresh token that fails is a failed authentication like any other:
counted per address by the gateway's lockout (TABLETOP_AUTH_FAILURES_PER_CLIENT).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc
from google.protobuf.timestamp_pb2 import Timestamp
from prometheus_client import CollectorRegistry, Counter
from tabletop.gateway.v1 import players_pb2, players_pb2_grpc

from gateway.players.guests import Grant, Guests
from services.kit import limits, status
from services.kit.errors import BadRequest
from services.kit.players import TokenRefused
from services.kit.players import status_of as refusal
from services.kit.table import player_name

SERVICE = players_pb2.DESCRIPTOR.services_by_name["PlayersService"].full_name
Context = grpc.aio.ServicerContext[players_pb2.SignInRequest, players_pb2.SignInResponse]


class PlayersServicer(players_pb2_grpc.PlayersServiceServicer):
    def __init__(
        self,
        guests: Guests | None,
        *,
        client: Callable[[grpc.aio.ServicerContext[Any, Any]], str],
        signins_per_client: float,
        signin_window: float,
        limited: Counter,
        registry: CollectorRegistry,
    ) -> None:
        self.guests = guests
        self.client = client
        self.new_guests = limits.RateLimiter(
            signins_per_client / signin_window if signins_per_client and signin_window else 0,
            signins_per_client,
        )
        self.limited = limited
        limited.labels("guest_signins")  # a series at 0 from the start, as the others
        self.signins = Counter(
            "tabletop_gateway_guest_signins",
            "Guests signed in by the gateway: new ones, and returning ones (refresh token)",
            ["kind"],
            registry=registry,
        )
        for kind in ("new", "returning"):
            self.signins.labels(kind)

    async def SignIn(
        self, request: players_pb2.SignInRequest, context: Context
    ) -> players_pb2.SignInResponse:
        if self.guests is None:
            await status.abort(
                context,
                status.status_for(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    "this gateway does not sign guests in: sign in with the deployment's "
                    "identity provider",
                    "GUEST_SIGNIN_OFF",
                ),
            )
            raise AssertionError("unreachable")  # abort raises
        try:
            name = player_name(request.player_name, required=not request.refresh_token)
        except BadRequest as exc:
            await status.abort(context, status.status_of(exc))
            raise
        if request.refresh_token:
            try:
                grant = await self.guests.resume(request.refresh_token, name)
            except TokenRefused as exc:
                # A client locked out of failing authentication gets the lockout instead.
                await status.abort(context, limits.auth_refusal() or refusal(exc))
                raise
            self.signins.labels("returning").inc()
            return _response(grant)
        wait = self.new_guests.acquire(self.client(context))
        if wait:
            self.limited.labels("guest_signins").inc()
            await status.abort(
                context,
                status.status_for(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    "too many new guests from this address; wait, or sign in again with a "
                    "refresh token",
                    "RATE_LIMITED",
                    {"limit": "guest_signins", "retry_after_ms": str(max(1, int(wait * 1000)))},
                ),
            )
        grant = self.guests.sign_in(name)
        self.signins.labels("new").inc()
        return _response(grant)


def _timestamp(seconds: int) -> Timestamp:
    return Timestamp(seconds=seconds)


def _response(grant: Grant) -> players_pb2.SignInResponse:
    return players_pb2.SignInResponse(
        token=grant.token,
        expires_at=_timestamp(grant.expires_at),
        player_id=grant.player_id,
        player_name=grant.player_name,
        refresh_token=grant.refresh_token,
        refresh_expires_at=_timestamp(grant.refresh_expires_at),
    )
