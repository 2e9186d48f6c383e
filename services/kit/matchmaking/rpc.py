"""FindMatch, the same for every game: the request checked into a pool, then the
matcher's stream as FindMatchResponse messages (docs/ratings.md)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import structlog

from services.kit import lobby
from services.kit.engine import GameInfo
from services.kit.matchmaking.matcher import Ask, Found, Matchmaker
from services.kit.matchmaking.pool import BOT_LEVELS, BotFill
from services.kit.matchmaking.pools import PoolKey
from services.kit.ratings.errors import RatedNeedsClock, RatingsPlayerRequired, UnknownShapeName
from services.kit.ratings.rpcs import shape_named
from services.kit.ratings.shapes import Shape, options_for, shape_of, shapes

_log = structlog.get_logger("matchmaking")
_LEVELS = {1: "easy", 2: "medium", 3: "hard"}  # tabletop.common.v1.BotLevel


def _agreeing_options(info: GameInfo, shape: Shape, options: Any) -> Any:
    """The options with the shape's own (teams) filled in where left at their default;
    UNKNOWN_SHAPE when they say otherwise."""
    default = info.options_type()
    for name, value in options_for(info, shape).items():
        given = getattr(options, name)
        if given == getattr(default, name):
            options = dataclasses.replace(options, **{name: value})
    if shape_of(info, shape.players, options) != shape:
        known = ",".join(s.name for s in shapes(info))
        raise UnknownShapeName(f"these options do not make a table of {shape.name}", shapes=known)
    return options


def ask_from(request: Any, info: GameInfo, codec: Any) -> Ask:
    shape = shape_named(info, request.shape)
    options = _agreeing_options(info, shape, codec.options_from_proto(request.options))
    clock = lobby.clock_from(request.time_control) if request.HasField("time_control") else None
    if request.rated and (clock is None or not clock.forfeit):
        raise RatedNeedsClock("a rated pool needs a time control that forfeits on timeout")
    bots = None
    if request.HasField("bots_after"):
        level = _LEVELS.get(request.bot_level, "medium")
        seconds = request.bots_after.seconds + request.bots_after.nanos / 1e9
        bots = BotFill(max(0.0, seconds), level if level in BOT_LEVELS else "medium")
    key = PoolKey.of(
        shape, None if clock is None else clock.to_dict(), options.to_dict(), request.rated
    )
    return Ask(key, options, clock, bots)


def handler(
    info: GameInfo,
    pb2: Any,
    codec: Any,
    matchmaker: Matchmaker,
    player_of: Callable[[Any], Awaitable[Any]],
    header_of: Callable[[str], Awaitable[Any]],
    refuse: Callable[[Any, BaseException], Awaitable[None]],
    known: tuple[type[BaseException], ...],
) -> grpc.RpcMethodHandler[Any, Any]:
    """The server-streaming FindMatch handler; ``refuse(context, exc)`` ends the call
    with a known refusal's status."""
    from google.protobuf import duration_pb2
    from tabletop.common.v1 import matchmaking_pb2

    async def find_match(data: bytes, context: Any) -> Any:
        try:
            request = pb2.FindMatchRequest.FromString(data)
            player = await player_of(context)
            if player is None:
                raise RatingsPlayerRequired("FindMatch needs a player's token")
            ask = ask_from(request, info, codec)
            stream = matchmaker.find(player.id, player.name, ask)
            async with contextlib.aclosing(stream):
                async for event in stream:
                    if isinstance(event, Found):
                        found = matchmaking_pb2.MatchFound(
                            game_id=event.game_id, seat=event.seat, rated=event.rated
                        )
                        found.game.CopyFrom(await header_of(event.game_id))
                        yield pb2.FindMatchResponse(found=found)
                        return
                    waited = duration_pb2.Duration()
                    waited.FromNanoseconds(int(event.waited * 1e9))
                    yield pb2.FindMatchResponse(
                        waiting=matchmaking_pb2.MatchWaiting(
                            players_waiting=event.players_waiting,
                            waited=waited,
                            window_points=round(min(event.window_points, 2**31 - 1)),
                        )
                    )
        except known as exc:
            await refuse(context, exc)
        except Exception:  # as the kit's guard does for unary calls
            _log.exception("unexpected error")
            await context.abort(grpc.StatusCode.INTERNAL, "internal error; it has been logged")

    return grpc.unary_stream_rpc_method_handler(
        find_match, response_serializer=pb2.FindMatchResponse.SerializeToString
    )
