"""The six RPCs every game service has, written once for all games.

A game brings its engine, its codec (engine <-> its own protobuf messages) and its
generated module; this module turns requests into calls on the game manager and the
results into responses, and every refusal into a status with a reason. The handlers are
registered by name (a generic handler), so no game needs a servicer class of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import grpc
import structlog
from tabletop.common.v1 import matchmaking_pb2

from client import render
from services.kit import auth, encoding, limits, lobby, outbox, session, status, wire
from services.kit import rematch as rematches
from services.kit.errors import BadRequest, SeedNotAllowed, WatcherTooSlow
from services.kit.games import GameManager, Snapshot
from services.kit.matchmaking import rpc as match_rpc
from services.kit.matchmaking.settings import MatchSettings
from services.kit.matchmaking.shared import matchmaker_for
from services.kit.metrics import GameMetrics
from services.kit.players.seats import Caller, PlayerTokenRequired
from services.kit.players.verifier import Player, looks_like_jwt
from services.kit.ratings import headers as rated_headers
from services.kit.ratings import metrics as rated_metrics
from services.kit.ratings import rpcs as ratings_rpcs
from services.registry import ServiceEntry

_log = structlog.get_logger("service")

MAX_ID_LENGTH = 128
HISTORY_PAGE = 100
HISTORY_PAGE_MAX = 1000


@dataclass(frozen=True)
class GameService:
    """Everything the kit needs to serve one game."""

    entry: ServiceEntry
    engine: ModuleType
    codec: ModuleType
    pb2: ModuleType

    @classmethod
    def load(cls, entry: ServiceEntry) -> GameService:
        import importlib

        return cls(
            entry=entry,
            engine=entry.engine(),
            codec=importlib.import_module(f"{entry.package}.codec"),
            pb2=entry.pb2(),
        )

    @property
    def name(self) -> str:
        return self.entry.service_name


Handler = Callable[[Any, grpc.aio.ServicerContext[Any, Any]], Awaitable[Any]]


def _refuse_with_status(metrics: GameMetrics) -> Callable[[Handler], Handler]:
    """Turn a client's error into its status; log and hide anything unexpected."""

    def decorate(fn: Handler) -> Handler:
        @functools.wraps(fn)
        async def wrapper(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            try:
                return await fn(request, context)
            except status.KNOWN as exc:
                await _abort(context, exc, metrics)
            except Exception:
                _log.exception("unexpected error")
                await context.abort(grpc.StatusCode.INTERNAL, "internal error; it has been logged")

        return wrapper

    return decorate


async def _abort(
    context: grpc.aio.ServicerContext[Any, Any], exc: BaseException, metrics: GameMetrics
) -> None:
    st = status.status_of(exc)
    code, reason, _ = status.classify(exc)
    _count(exc, metrics)
    if code is grpc.StatusCode.UNAUTHENTICATED:
        # A client locked out of failing authentication gets the lockout, not the answer.
        st = limits.auth_refusal() or st
    structlog.contextvars.bind_contextvars(reason=reason)
    await status.abort(context, st)


def _count(exc: BaseException, metrics: GameMetrics) -> None:
    """Count a refusal in the game's families: a failed authentication, a game limit (a
    per-client limit, which Play's moves meet as refusals too, ClientLimits counts)."""
    code, reason, meta = status.classify(exc)
    if code is grpc.StatusCode.UNAUTHENTICATED:
        metrics.auth_failed(reason)
    elif code is grpc.StatusCode.RESOURCE_EXHAUSTED:
        limit = meta.get("limit", reason)
        if limit not in limits.CLIENT_LIMITS:
            metrics.limit_hit(limit)


async def _written_within(write: asyncio.Future[Any], seconds: float) -> bool:
    """Whether ``write`` completed within ``seconds`` (0: wait as long as it takes)."""
    try:
        done, _ = await asyncio.wait({write}, timeout=seconds or None)
    except asyncio.CancelledError:
        write.cancel()
        raise
    if write in done:
        write.result()
        return True
    return False


def _game_id(request: Any) -> str:
    game_id: str = request.game_id
    if not game_id:
        raise BadRequest("game_id is required")
    if len(game_id) > MAX_ID_LENGTH:
        raise BadRequest(f"game_id is at most {MAX_ID_LENGTH} characters")
    structlog.contextvars.bind_contextvars(game_id=game_id)
    return game_id


def _token(context: grpc.aio.ServicerContext[Any, Any]) -> str | None:
    return auth.bearer(context.invocation_metadata())


async def _caller(context: grpc.aio.ServicerContext[Any, Any], manager: GameManager) -> Caller:
    """Who the call comes from: a seat token, or a player its verified token names."""
    return await manager.players.caller(_token(context))


async def _player(
    context: grpc.aio.ServicerContext[Any, Any], manager: GameManager
) -> Player | None:
    """The player a call's JWT names (verified: a forged one is refused), for the calls
    that take seats; any other authorization is ignored there, as it always was."""
    try:
        token = _token(context)
    except auth.BadToken:
        return None
    if token is None or not looks_like_jwt(token):
        return None
    found = await manager.players.caller(token)
    return found if isinstance(found, Player) else None


def _bind_seat(seat: int | None) -> None:
    if seat is not None:
        structlog.contextvars.bind_contextvars(seat=seat)


def _player_of(manager: GameManager) -> Callable[[Any], Awaitable[Player | None]]:
    """The ratings' and matchmaking's caller: the player its verified JWT names, or None."""

    async def of(context: grpc.aio.ServicerContext[Any, Any]) -> Player | None:
        return await _player(context, manager)

    return of


def handlers(spec: GameService, manager: GameManager) -> grpc.GenericRpcHandler:
    pb2, codec, engine = spec.pb2, spec.codec, spec.engine
    info = engine.GAME
    metrics = (
        manager.metrics if isinstance(manager.metrics, GameMetrics) else GameMetrics(info.name)
    )
    guard = _refuse_with_status(metrics)
    seat_ratings = rated_headers.SeatRatings(manager.store, info)
    rated_metrics.start(info)
    matchmaker = matchmaker_for(manager, MatchSettings.from_environment())

    async def spectator_header(game_id: str) -> Any:
        snap, _ = await manager.read(game_id, None)
        return await header(snap)

    async def refuse(context: grpc.aio.ServicerContext[Any, Any], exc: BaseException) -> None:
        await _abort(context, exc, metrics)

    async def header(snap: Snapshot) -> Any:
        """The header, with a rated table's seat ratings (docs/ratings.md)."""
        return await seat_ratings.fill(wire.header(snap), snap.rated_shape)

    converted: dict[int, tuple[Any, Any]] = {}

    def view(snap: Snapshot) -> Any:
        # The manager shares one view object per (game version, seat); convert it once.
        key = id(snap.view)
        found = converted.get(key)
        if found is not None and found[0] is snap.view:
            return found[1]
        message = codec.view_to_proto(snap.view)
        if len(converted) >= 256:
            converted.clear()
        converted[key] = (snap.view, message)
        return message

    # Each version's header per seat and each view serialized once, shared by SubmitMove's
    # answer, ListMoves' and the watch updates (services/kit/encoding.py).
    def serialized_move(move: Any) -> bytes:
        data: bytes = codec.move_to_proto(move).SerializeToString()
        return data

    # A codec may keep its moves' bytes by value (codec.move_bytes).
    move_bytes: Callable[[Any], bytes] = getattr(codec, "move_bytes", serialized_move)
    encoder = encoding.Encoder(
        view, encoding.header_key, getattr(codec, "view_bytes", None), move_bytes
    )
    updates = wire.WatchUpdates(
        pb2.WatchGameResponse, info.name, view, codec.move_to_proto, encoder
    )

    async def header_bytes(snap: Snapshot) -> bytes:
        if snap.rated_shape:  # its seats' ratings, read from the store
            data: bytes = (await header(snap)).SerializeToString()
            return data
        return encoder.header(snap)

    async def create_game(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        players = lobby.players_of(request, info)  # 0: one per listed seat, or the fewest
        options = codec.options_from_proto(request.options)
        seed = None
        if request.HasField("seed"):
            if not manager.allow_seed:
                raise SeedNotAllowed("this service does not accept chosen seeds")
            seed = request.seed
        owner = None
        player = None
        if manager.creators is not None:
            owner = manager.creators.owner(context.invocation_metadata(), context.peer())
        if manager.creators is None or not manager.creators.keys:
            # With application keys the bearer token is the key; without, it may be a
            # player's token: the reserved seats are then the player's.
            player = await _player(context, manager)
        plan = lobby.plan_from_request(request, players, info)
        game, tokens = await manager.create(
            players,
            options,
            seed,
            owner=owner.owner if owner else None,
            owner_limit=owner.limit if owner else 0,
            quota=owner.quota if owner else "",
            plan=plan,
            rated=request.rated,
            player=player,
            several_seats=request.several_seats_per_player,
        )
        structlog.contextvars.bind_contextvars(game_id=game.record.game_id)
        async with manager.locked(game.record.game_id) as live:
            snap = manager.snapshot(live, None)
        return pb2.CreateGameResponse(
            game=await header(snap),
            seat_tokens=wire.seat_tokens(snap.seat_names, tokens),
            view=view(snap),
        )

    async def get_game(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        game_id = _game_id(request)
        snap, seat = await manager.read(game_id, await _caller(context, manager))
        _bind_seat(seat)
        response = pb2.GetGameResponse(game=await header(snap), view=view(snap))
        if request.board_text:
            # Drawn from the response's own view and header, so it shows what they show
            # and nothing more. A renderer fault is ours: it ends the call INTERNAL and
            # logged, like any other (tests/service/test_move_labels.py draws every
            # seat's view of random games of each to keep that from happening).
            response.board_text = render.plain_board(info.name, response.view, response.game)
        return response

    async def list_moves(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        game_id = _game_id(request)
        snap, moves, seat = await manager.legal_moves(game_id, await _caller(context, manager))
        _bind_seat(seat)
        return encoding.listed(  # a ListMovesResponse's bytes
            await header_bytes(snap),
            [move_bytes(m) for m in moves],
            [str(m) for m in moves],  # the text form the move log stores
        )

    async def submitted(request: Any, caller: Callable[[], Awaitable[Caller]]) -> bytes:
        """SubmitMove's answer, as bytes: the call's, and a move's on Play (session.py)."""
        game_id = _game_id(request)
        if len(request.request_id) > MAX_ID_LENGTH:
            raise BadRequest(f"request_id is at most {MAX_ID_LENGTH} characters")
        if request.request_id:
            structlog.contextvars.bind_contextvars(request_id=request.request_id)
        if not request.HasField("move"):
            raise BadRequest("move is required")
        expected = request.expected_version if request.HasField("expected_version") else None
        snap, turn = await manager.submit(
            game_id,
            await caller(),
            lambda: codec.move_from_proto(request.move),
            expected,
            request.request_id or None,
            with_view=not request.omit_view,
        )
        _bind_seat(snap.viewer)
        # A SubmitMoveResponse's bytes: the seat's header and view as its watchers get them.
        return encoder.answer(await header_bytes(snap), encoder.turn(turn), snap)

    async def submit_move(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        return await submitted(request, functools.partial(_caller, context, manager))

    async def follow(
        request: Any,
        caller: Callable[[], Awaitable[Caller]],
        write: Callable[[bytes], Awaitable[Any]],
    ) -> None:
        """WatchGame's stream, each message's bytes handed to ``write``: the call's, and
        Play's updates (session.py).

        Each write is awaited: gRPC completes a write only once HTTP/2 flow control lets
        it through, so a watcher that stops reading (a window of 0) holds up its own
        stream only. Once one write has waited manager.watch_stall_seconds, the stream
        stops following the game (what was pending for it is freed), and it ends with
        WATCHER_TOO_SLOW as soon as that one message is through: gRPC sends no status
        while a write is pending."""
        game_id = _game_id(request)
        resume = request.from_version if request.HasField("from_version") else None
        following = await manager.watch(game_id, await caller(), resume, request.with_moves)
        stream = metrics.watching(following)
        async with contextlib.aclosing(following), contextlib.aclosing(stream):
            async for item in stream:
                # A rated table's header carries its seats' ratings (read from the store).
                rated = None
                snap = item.snapshot
                if snap is not None and item.encoded is None and snap.rated_shape:
                    rated = await header(snap)
                # The bytes are shared by every stream of the seat (built once).
                response = updates.encode(item, game_id, request.with_moves, rated)
                write_one = asyncio.ensure_future(write(response))
                if await _written_within(write_one, manager.watch_stall_seconds):
                    continue
                # Stop following the game: what was pending for this watcher is freed.
                await stream.aclose()
                await following.aclose()
                try:
                    await write_one
                except Exception:
                    return  # the call ended (the connection closed) before it read again
                stalled = manager.watch_stall_seconds
                raise WatcherTooSlow(
                    f"this watcher did not read for over {stalled:g} s; resume from "
                    f"version {item.version}",
                    version=item.version,
                    limit="watch_stall",
                )

    async def watch_game(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        try:
            await follow(
                wire.parse(pb2.WatchGameRequest, request),
                functools.partial(_caller, context, manager),
                context.write,
            )
        except status.KNOWN as exc:
            await _abort(context, exc, metrics)
        except Exception:
            _log.exception("unexpected error")
            await context.abort(grpc.StatusCode.INTERNAL, "internal error; it has been logged")

    async def get_history(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        game_id = _game_id(request)
        size = request.page_size or HISTORY_PAGE
        if not 0 < size <= HISTORY_PAGE_MAX:
            raise BadRequest(f"page_size must be 1..{HISTORY_PAGE_MAX}")
        caller = await _caller(context, manager)
        snap, turns = await manager.history(game_id, caller, request.from_version, size)
        return pb2.GetHistoryResponse(game=await header(snap), turns=[wire.turn(t) for t in turns])

    async def join_game(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        game_id = _game_id(request)
        seat = request.seat if request.HasField("seat") else None
        player = await _player(context, manager)
        snap, seat, token = await manager.join(game_id, seat, request.player_name, player)
        _bind_seat(seat)
        return pb2.JoinGameResponse(
            game=await header(snap),
            seat_token=wire.seat_tokens(snap.seat_names, {seat: token})[0],
            view=view(snap),
        )

    async def leave_game(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        snap = await manager.leave(_game_id(request), await _caller(context, manager))
        return pb2.LeaveGameResponse(game=await header(snap))

    async def resign(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        snap, turn = await manager.resign(_game_id(request), await _caller(context, manager))
        _bind_seat(snap.viewer)
        return pb2.ResignResponse(game=await header(snap), turn=wire.turn(turn))

    async def offer_rematch(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        caller = await _caller(context, manager)
        snap = await rematches.offer(manager, _game_id(request), caller)
        _bind_seat(snap.viewer)
        return pb2.OfferRematchResponse(game=await header(snap))

    seat_names = info.seat_names

    async def list_games(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
        player = None
        if request.mine:
            caller = await _caller(context, manager)
            if not isinstance(caller, Player):
                raise PlayerTokenRequired(
                    "mine lists a player's games: authorization: Bearer <player token>"
                )
            player = caller
        query = lobby.query_from_request(request, info, player.id if player else None)
        records, waiting = await manager.list_games(**query.filters(), limit=query.size + 1)
        page = records[: query.size]
        games = []
        for record in page:
            if player is not None:
                # As the player's seat sees it, to_act and deadlines included.
                snap, _ = await manager.read(record.game_id, player)
                games.append(await header(snap))
                continue
            options = info.options_type.from_dict(record.options).to_dict()
            card = wire.lobby_header(record, seat_names(record.players), options)
            games.append(await seat_ratings.fill(card, rated_headers.rated_shape(info, record)))
        token = lobby.page_token(query, page[-1]) if len(records) > query.size else ""
        pools = [
            matchmaking_pb2.PoolSize(shape=shape, rated=rated, players_waiting=n)
            for (shape, rated), n in sorted(matchmaker.pool_sizes().items())
        ]
        return pb2.ListGamesResponse(
            games=games, next_page_token=token, waiting_tables=waiting, pools=pools
        )

    async def watch_player_events(data: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        try:  # services/kit/outbox/service.py
            await outbox.watch_player_events(
                wire.parse(pb2.WatchPlayerEventsRequest, data),
                context,
                manager=manager,
                response_type=pb2.WatchPlayerEventsResponse,
                written_within=_written_within,
            )
        except status.KNOWN as exc:
            await _abort(context, exc, metrics)
        except Exception:
            _log.exception("unexpected error")
            await context.abort(grpc.StatusCode.INTERNAL, "internal error; it has been logged")

    def unary(fn: Handler, name: str) -> grpc.RpcMethodHandler[Any, Any]:
        # Requests arrive as bytes and are parsed inside the guard, so bytes that are not
        # a message get INVALID_ARGUMENT rather than grpc's own INTERNAL.
        request_type = getattr(pb2, f"{name}Request")

        @guard
        async def parsed(data: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
            return await fn(wire.parse(request_type, data), context)

        # A handler may answer with its response's bytes (encoding.py): passed through.
        return grpc.unary_unary_rpc_method_handler(parsed, response_serializer=wire.serialized)

    return grpc.method_handlers_generic_handler(
        spec.name,
        {
            "CreateGame": unary(create_game, "CreateGame"),
            "GetGame": unary(get_game, "GetGame"),
            "ListMoves": unary(list_moves, "ListMoves"),
            "SubmitMove": unary(submit_move, "SubmitMove"),
            "GetHistory": unary(get_history, "GetHistory"),
            "JoinGame": unary(join_game, "JoinGame"),
            "LeaveGame": unary(leave_game, "LeaveGame"),
            "Resign": unary(resign, "Resign"),
            "ListGames": unary(list_games, "ListGames"),
            "OfferRematch": unary(offer_rematch, "OfferRematch"),
            "WatchGame": grpc.unary_stream_rpc_method_handler(  # a writer: see watch_game
                watch_game, response_serializer=wire.serialized
            ),
            "Play": session.handler(
                pb2.PlayRequest,
                follow,
                submitted,
                manager.players.caller,
                functools.partial(_abort, metrics=metrics),
                functools.partial(_count, metrics=metrics),
            ),
            "WatchPlayerEvents": grpc.unary_stream_rpc_method_handler(
                watch_player_events,
                response_serializer=pb2.WatchPlayerEventsResponse.SerializeToString,
            ),
            **ratings_rpcs.handlers(info, pb2, manager.store, unary, _player_of(manager)),
            "FindMatch": match_rpc.handler(
                info,
                pb2,
                codec,
                matchmaker,
                _player_of(manager),
                spectator_header,
                refuse,
                status.KNOWN,
            ),
        },
    )
