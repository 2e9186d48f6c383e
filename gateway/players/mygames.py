"""ListMyGames and WatchMyGames: a player's games and events across every game service.

Both go to every routed game service at once with the caller's own authorization (a
player's token): the services verify it and answer for that player only, so the
gateway holds no key and decides nothing about who the caller is. It reads the token's
``sub`` (unverified) only to pick the caller's seat out of headers a service returned
for that very token, and to count its streams once a service has accepted it.

- ListMyGames: each service's ``ListGames`` with ``mine``; a service that does not
  answer within ``timeout`` is named in ``unavailable_services``. Sorted: the caller's
  turn first (soonest deadline first, then those without a clock), then tables
  waiting for players, then the rest by last change, newest first.
- WatchMyGames: each service's ``WatchPlayerEvents`` fanned in. The cursor is each
  service's outbox position (base64url JSON), so any gateway replica resumes any stream;
  a service whose stream ends (a restart, a deploy) is reconnected from its position,
  with a capped backoff. The first message carries no event: its cursor marks the
  moment every service had sent what it keeps after the cursor (empty cursor: from now
  on, nothing before is sent).
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
from collections import Counter as Tally
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
import jwt
import structlog
from grpc_status import rpc_status
from tabletop.common.v1 import game_pb2
from tabletop.gateway.v1 import players_pb2, players_pb2_grpc

from gateway.backends import Backends
from gateway.metrics import GatewayMetrics
from gateway.players.service import PlayersServicer
from services import registry
from services.kit import config, status
from services.kit.players import looks_like_jwt

_log = structlog.get_logger("mygames")

CURSOR_MAX = 4096
RECONNECT = (0.2, 0.5, 1.0, 2.0, 5.0)
PAGE_DEFAULT, PAGE_MAX = 50, 200
# A service's stream refusing the caller with one of these ends the caller's stream.
_CALLER_FAULTS = (
    grpc.StatusCode.UNAUTHENTICATED,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.PERMISSION_DENIED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
)


class Refused(Exception):
    """The caller's call is refused with ``status``."""

    def __init__(self, refusal: grpc.Status) -> None:
        super().__init__(refusal.details)
        self.status = refusal


def _refuse(code: grpc.StatusCode, message: str, reason: str, **meta: str) -> Refused:
    return Refused(status.status_for(code, message, reason, meta))


def _relayed(error: grpc.aio.AioRpcError) -> Refused:
    """A service's refusal of the caller, passed on as it is (its ErrorInfo included)."""
    found = rpc_status.from_call(error)  # type: ignore[arg-type]  # an AioRpcError is a Call
    if found is not None:
        return Refused(rpc_status.to_status(found))
    return Refused(status.status_for(error.code(), error.details() or "", "UPSTREAM_ERROR"))


def authorization(context: grpc.aio.ServicerContext[Any, Any]) -> tuple[tuple[str, str], str]:
    """The caller's authorization header, to forward, and the player id its token names
    (unverified: the services verify it). Refused without a player's token."""
    for key, value in context.invocation_metadata() or ():
        if key.lower() != "authorization":
            continue
        text = value.decode("latin-1") if isinstance(value, bytes) else value
        scheme, _, token = text.strip().partition(" ")
        token = token.strip()
        if scheme.lower() == "bearer" and looks_like_jwt(token):
            try:
                claims = jwt.decode(token, options={"verify_signature": False})
            except jwt.PyJWTError:
                claims = {}
            sub = claims.get("sub") if isinstance(claims, dict) else None
            return ("authorization", f"Bearer {token}"), sub if isinstance(sub, str) else ""
        break
    raise _refuse(
        grpc.StatusCode.UNAUTHENTICATED,
        "this call is a player's: send authorization: Bearer <a player's token (a JWT)>",
        "PLAYER_TOKEN_REQUIRED",
    )


def encode_cursor(positions: dict[str, int]) -> str:
    raw = json.dumps(positions, sort_keys=True, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(cursor: str) -> dict[str, int] | None:
    """The positions a cursor holds; None for an empty cursor (from now on)."""
    if not cursor:
        return None
    bad = _refuse(
        grpc.StatusCode.INVALID_ARGUMENT,
        "cursor is not one WatchMyGames gave",
        "BAD_REQUEST",
        field="cursor",
    )
    if len(cursor) > CURSOR_MAX:
        raise bad
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (binascii.Error, ValueError):
        raise bad from None
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
        for k, v in data.items()
    ):
        raise bad
    return data


def _timestamp_key(ts: Any) -> float:
    return float(ts.seconds) + float(ts.nanos) / 1e9


def sort_games(games: list[players_pb2.MyGame]) -> list[players_pb2.MyGame]:
    """Your turn first (soonest deadline, then no clock), then waiting tables, then the
    rest by last change, newest first."""

    def key(g: players_pb2.MyGame) -> tuple[int, float, str]:
        if g.your_turn:
            deadline = _timestamp_key(g.deadline) if g.HasField("deadline") else float("inf")
            return (0, deadline, g.header.game_id)
        if g.header.status == game_pb2.GAME_STATUS_WAITING:
            return (1, -_timestamp_key(g.header.updated_at), g.header.game_id)
        return (2, -_timestamp_key(g.header.updated_at), g.header.game_id)

    return sorted(games, key=key)


def my_game(
    service: str, game_type: str, header: game_pb2.GameHeader, player_id: str
) -> players_pb2.MyGame:
    mine = [s.index for s in header.seats if player_id and s.player_id == player_id]
    if not mine and header.HasField("viewer"):
        mine = [header.viewer]
    seat = mine[0] if mine else -1
    acting = [s for s in mine if s in set(header.to_act)]
    game = players_pb2.MyGame(
        game_type=game_type, service=service, header=header, seat=seat, your_turn=bool(acting)
    )
    if acting:
        seat_info = next((s for s in header.seats if s.index == acting[0]), None)
        if seat_info is not None and seat_info.HasField("deadline"):
            game.deadline.CopyFrom(seat_info.deadline)
    return game


@dataclass(frozen=True)
class Routed:
    """A routed game service: its name (channeling), service and messages."""

    name: str
    service: str
    pb2: Any


class MyGames:
    """The two calls, over the gateway's backends."""

    def __init__(
        self,
        backends: Backends,
        *,
        entries: Sequence[registry.ServiceEntry] = registry.SERVICES,
        timeout: float = 5.0,
        streams_per_player: int = 8,
        limited: Any = None,
        client: Callable[[grpc.aio.ServicerContext[Any, Any]], str] | None = None,
    ) -> None:
        self.backends = backends
        # The caller's address, sent on as x-forwarded-for (as the router does): the
        # services' per-address limits then count the player's address, not the gateway's.
        self.client = client
        self.routed = [
            Routed(e.name, e.service_name, e.pb2())
            for e in entries
            if backends.get(e.service_name) is not None
        ]
        self.timeout = timeout
        self.streams_per_player = streams_per_player
        self.limited = limited
        self.open: Tally[str] = Tally()

    # --- ListMyGames ---------------------------------------------------------------------

    async def list_games(
        self, request: players_pb2.ListMyGamesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> players_pb2.ListMyGamesResponse:
        header, player_id = authorization(context)
        metadata = self._metadata(header, context)
        size = request.page_size or PAGE_DEFAULT
        if not 0 < size <= PAGE_MAX:
            raise _refuse(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"page_size must be 0..{PAGE_MAX}",
                "BAD_REQUEST",
                field="page_size",
            )
        statuses = (
            [game_pb2.GAME_STATUS_UNSPECIFIED]
            if request.include_finished
            else [game_pb2.GAME_STATUS_IN_PROGRESS, game_pb2.GAME_STATUS_WAITING]
        )
        asks = [(r, s) for r in self.routed for s in statuses]
        answers = await asyncio.gather(
            *(self._list_one(r, s, size, metadata) for r, s in asks), return_exceptions=True
        )
        games: list[players_pb2.MyGame] = []
        unavailable: list[str] = []
        for (routed, _), answer in zip(asks, answers, strict=True):
            if isinstance(answer, Refused):
                raise answer
            if isinstance(answer, BaseException):
                failed = answer if isinstance(answer, grpc.aio.AioRpcError) else None
                _log.warning(
                    "my_games_service_unavailable",
                    service=routed.service,
                    error=failed.code().name if failed else type(answer).__name__,
                    detail=((failed.details() or "") if failed else str(answer))[:200],
                )
                if routed.service not in unavailable:
                    unavailable.append(routed.service)
                continue
            games += [my_game(routed.service, routed.name, h, player_id) for h in answer]
        return players_pb2.ListMyGamesResponse(
            games=sort_games(games)[:size], unavailable_services=unavailable
        )

    def _metadata(
        self, header: tuple[str, str], context: grpc.aio.ServicerContext[Any, Any]
    ) -> tuple[tuple[str, str], ...]:
        if self.client is None:
            return (header,)
        return (header, ("x-forwarded-for", self.client(context)))

    async def _list_one(
        self, routed: Routed, game_status: int, size: int, metadata: tuple[tuple[str, str], ...]
    ) -> list[game_pb2.GameHeader]:
        backend = self.backends.get(routed.service)
        assert backend is not None
        call = backend.method("unary_unary", f"/{routed.service}/ListGames")
        request = routed.pb2.ListGamesRequest(mine=True, status=game_status, page_size=size)
        try:
            # Waits for a channel reconnecting to a restarted service, within the timeout.
            data = await call(
                request.SerializeToString(),
                metadata=metadata,
                timeout=self.timeout,
                wait_for_ready=True,
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() in _CALLER_FAULTS:
                raise _relayed(exc) from None
            raise
        return list(routed.pb2.ListGamesResponse.FromString(data).games)

    # --- WatchMyGames --------------------------------------------------------------------

    async def watch(
        self,
        request: players_pb2.WatchMyGamesRequest,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[players_pb2.WatchMyGamesResponse]:
        header, player_id = authorization(context)
        metadata = self._metadata(header, context)
        resumed = decode_cursor(request.cursor)
        positions = dict(resumed or {})
        queue: asyncio.Queue[tuple[str, Any]] = asyncio.Queue(maxsize=1000)
        tasks = [
            asyncio.ensure_future(self._follow(r, positions.get(r.name, 0), metadata, queue))
            for r in self.routed
        ]
        caught_up: set[str] = set()
        counted = False
        try:
            while True:
                name, item = await queue.get()
                if isinstance(item, Refused):
                    raise item
                if item is None:  # this service's backlog is sent
                    if not counted:
                        counted = True  # a service accepted the token: count the stream
                        self._count(player_id)
                    before = len(caught_up)
                    caught_up.add(name)
                    if len(caught_up) == len(self.routed) and before < len(caught_up):
                        yield players_pb2.WatchMyGamesResponse(cursor=encode_cursor(positions))
                    continue
                event: game_pb2.PlayerEvent = item
                if event.sequence <= positions.get(name, 0):
                    continue  # a reconnect sent it again
                positions[name] = event.sequence
                if resumed is None and name not in caught_up:
                    continue  # from now on: what was kept before is not sent
                yield players_pb2.WatchMyGamesResponse(cursor=encode_cursor(positions), event=event)
        finally:
            for task in tasks:
                task.cancel()
            if counted:
                self.open[player_id] -= 1
                if self.open[player_id] <= 0:
                    del self.open[player_id]

    def _count(self, player_id: str) -> None:
        if self.streams_per_player and self.open[player_id] >= self.streams_per_player:
            if self.limited is not None:
                self.limited.labels("streams_per_player").inc()
            raise _refuse(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"at most {self.streams_per_player} WatchMyGames streams per player at once "
                "(on this gateway); close one first",
                "RATE_LIMITED",
                limit="streams_per_player",
            )
        self.open[player_id] += 1

    async def _follow(
        self,
        routed: Routed,
        after: int,
        metadata: tuple[tuple[str, str], ...],
        queue: asyncio.Queue[tuple[str, Any]],
    ) -> None:
        """One service's events into ``queue``, reconnecting from the last one."""
        attempt = 0
        told_caught_up = False
        while True:
            backend = self.backends.get(routed.service)
            assert backend is not None
            call = backend.method("unary_stream", f"/{routed.service}/WatchPlayerEvents")
            request = routed.pb2.WatchPlayerEventsRequest(after=after)
            stream = call(request.SerializeToString(), metadata=metadata, wait_for_ready=True)
            try:
                async for data in stream:
                    attempt = 0
                    message = routed.pb2.WatchPlayerEventsResponse.FromString(data)
                    if not message.HasField("event"):
                        if not told_caught_up:
                            told_caught_up = True
                            await queue.put((routed.name, None))
                        continue
                    after = max(after, message.event.sequence)
                    await queue.put((routed.name, message.event))
            except grpc.aio.AioRpcError as exc:
                if exc.code() in _CALLER_FAULTS:
                    await queue.put((routed.name, _relayed(exc)))
                    return
                _log.info("player_events_reconnect", service=routed.service, code=exc.code().name)
            finally:
                stream.cancel()
            await asyncio.sleep(RECONNECT[min(attempt, len(RECONNECT) - 1)])
            attempt += 1


class PlayersWithMyGames(PlayersServicer):
    """PlayersService: SignIn (gateway.players.service) and the two calls of my games."""

    def __init__(self, mygames: MyGames, **kw: Any) -> None:
        super().__init__(**kw)
        self.mygames = mygames

    async def ListMyGames(
        self,
        request: players_pb2.ListMyGamesRequest,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> players_pb2.ListMyGamesResponse:
        try:
            return await self.mygames.list_games(request, context)
        except Refused as exc:
            await status.abort(context, exc.status)
            raise AssertionError("unreachable") from None

    async def WatchMyGames(
        self,
        request: players_pb2.WatchMyGamesRequest,
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[players_pb2.WatchMyGamesResponse]:
        try:
            async for response in self.mygames.watch(request, context):
                yield response
        except Refused as exc:
            await status.abort(context, exc.status)


def settings() -> list[config.Setting]:
    S = config.Setting
    return [
        S("my_games_timeout", "TABLETOP_MY_GAMES_TIMEOUT_SECONDS", "5", "float",
          "ListMyGames: how long each game service may take; one slower is named in "
          "unavailable_services and its games are missing"),
        S("streams_per_player", "TABLETOP_STREAMS_PER_PLAYER", "8", "int",
          "WatchMyGames streams one player may hold open at once on one gateway (0: no "
          "limit)"),
    ]  # fmt: skip


def add_to(
    server: grpc.aio.Server,
    players: Any,
    backends: Backends,
    client: Callable[[grpc.aio.ServicerContext[Any, Any]], str],
    metrics: GatewayMetrics,
    *,
    entries: Sequence[registry.ServiceEntry] = registry.SERVICES,
    streams_per_player: int = 8,
    timeout: float = 5.0,
) -> tuple[str, ...]:
    """Register PlayersService (SignIn and my games) on ``server``; its name, for reflection."""
    from gateway.players.service import SERVICE

    servicer = PlayersWithMyGames(
        MyGames(
            backends,
            entries=entries,
            timeout=timeout,
            streams_per_player=streams_per_player,
            limited=metrics.limited,
            client=client,
        ),
        guests=players.guests,
        client=client,
        signins_per_client=players.signins_per_client,
        signin_window=players.signin_window,
        limited=metrics.limited,
        registry=metrics.registry,
    )
    players_pb2_grpc.add_PlayersServiceServicer_to_server(servicer, server)
    with contextlib.suppress(Exception):
        metrics.limited.labels("streams_per_player")
    return (SERVICE,)
