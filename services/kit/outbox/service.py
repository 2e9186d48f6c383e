"""WatchPlayerEvents, the RPC every game service has for players' events.

The caller is a player (its token, a JWT, verified as every player's call is); the
stream sends that player's events of this service after ``after``, then a message with
no event (the backlog is sent: what follows is live), then each event as it is written.
A stream whose reader lets nothing through for the service's watch stall time ends with
WATCHER_TOO_SLOW, as WatchGame does; the per-client stream cap applies as to any stream.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable
from typing import Any

import grpc
import structlog

from services.kit.errors import BadRequest, WatcherTooSlow
from services.kit.outbox.events import PlayerEvent
from services.kit.outbox.feed import follow
from services.kit.players import MAX_TOKEN_CHARS, Player, Verifier, looks_like_jwt
from services.kit.players.seats import PlayerTokenRequired

_log = structlog.get_logger("outbox")


def player_token(metadata: Iterable[tuple[str, str | bytes]] | None) -> str:
    """The caller's player token; PlayerTokenRequired without one (or with a seat token)."""
    for key, value in metadata or ():
        if key.lower() != "authorization":
            continue
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        scheme, _, token = text.strip().partition(" ")
        token = token.strip()
        if scheme.lower() == "bearer" and token and looks_like_jwt(token):
            return token
        break
    raise PlayerTokenRequired(
        "this call is a player's: send authorization: Bearer <a player's token (a JWT), "
        f"at most {MAX_TOKEN_CHARS} characters>"
    )


async def caller(verifier: Verifier, metadata: Any) -> Player:
    player = await verifier.verify(player_token(metadata))
    structlog.contextvars.bind_contextvars(player_id=player.id)
    return player


async def watch_player_events(
    request: Any,
    context: grpc.aio.ServicerContext[Any, Any],
    *,
    manager: Any,
    response_type: Any,
    written_within: Any,
) -> None:
    """Stream the caller's events (the handler's body; the caller maps errors to statuses)."""
    if request.after < 0:
        raise BadRequest("after must be 0 or more")
    events = manager.player_events
    player = await caller(manager.players.verifier, context.invocation_metadata())
    stream = follow(manager.store, events, player.id, request.after, events.poll_seconds)
    async with contextlib.aclosing(stream):
        async for row in stream:
            response = response_type()
            if row is not None:
                event = PlayerEvent.from_json(row.event.body)
                response.event.CopyFrom(event.to_proto(row.sequence))
            write = asyncio.ensure_future(context.write(response))
            if await written_within(write, manager.watch_stall_seconds):
                continue
            await stream.aclose()
            try:
                await write
            except Exception:
                return
            stalled = manager.watch_stall_seconds
            raise WatcherTooSlow(
                f"this stream did not read for over {stalled:g} s; resume from its last "
                "event's sequence",
                limit="watch_stall",
            )
