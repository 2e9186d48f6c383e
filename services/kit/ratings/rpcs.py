"""GetRatings and ListLeaderboard, the same for every game (docs/ratings.md).

The service's generic handler takes these by name (a hook in services/kit/service.py);
they read the store's ratings tables and never write.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

from services.kit.engine import GameInfo
from services.kit.errors import BadPageToken, BadRequest
from services.kit.ratings.errors import RatingsPlayerRequired, UnknownShapeName
from services.kit.ratings.scale import Standing
from services.kit.ratings.shapes import Shape, UnknownShape, parse_shape, shapes
from services.kit.store.ratings import Entry

PAGE_SIZE = 20
PAGE_MAX = 100
PLAYER_ID_MAX = 256
TOKEN_MAX = 512

# Who a call's bearer token names as a player: its id, or None (no player's token).
PlayerOf = Callable[[Any], Awaitable[str | None]]


def shape_named(info: GameInfo, name: str) -> Shape:
    """The game's shape called ``name`` ("" for the game's first), or UNKNOWN_SHAPE."""
    if not name:
        return shapes(info)[0]
    try:
        return parse_shape(info, name[:64])
    except UnknownShape as exc:
        known = ",".join(s.name for s in shapes(info))
        raise UnknownShapeName(str(exc), shapes=known) from None


def shape_rating(pb: Any, shape: str, standing: Standing) -> Any:
    r = standing.rating
    return pb.ShapeRating(
        shape=shape,
        shown=standing.shown,
        provisional=standing.provisional,
        games=standing.games,
        mu=r.mu,
        sigma=r.sigma,
    )


async def get_ratings(
    store: Any, info: GameInfo, common_pb2: Any, pb2: Any, request: Any, player: str | None
) -> Any:
    """Every shape of the game, the player's standing in each (a newcomer's where it has
    played none rated)."""
    wanted = request.player_id or player
    if not wanted:
        raise RatingsPlayerRequired(
            "GetRatings of oneself needs a player's token; or name a player_id"
        )
    if len(wanted) > PLAYER_ID_MAX:
        raise BadRequest(f"player_id is at most {PLAYER_ID_MAX} characters")
    held = {e.shape: e.standing for e in await store.ratings_of(info.name, wanted)}
    return pb2.GetRatingsResponse(
        player_id=wanted,
        ratings=[
            shape_rating(common_pb2, s.name, held.get(s.name, Standing())) for s in shapes(info)
        ],
    )


def _mac(payload: str, game: str, shape: str) -> str:
    return hashlib.sha256(f"leaderboard|{game}|{shape}|{payload}".encode()).hexdigest()[:16]


def page_token(game: str, shape: str, last: Entry, rank: int) -> str:
    """The page after ``last`` (the ``rank``-th): an (ordinal, player id) keyset cursor,
    tied to this game and shape."""
    body = json.dumps([last.standing.rating.ordinal, last.player_id, rank])
    payload = base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")
    return f"{payload}.{_mac(payload, game, shape)}"


def cursor(token: str, game: str, shape: str) -> tuple[tuple[float, str], int]:
    refused = BadPageToken("page_token was not made by ListLeaderboard for this shape")
    payload, _, mac = token.partition(".")
    if len(token) > TOKEN_MAX or mac != _mac(payload, game, shape):
        raise refused
    try:
        padded = payload + "=" * (-len(payload) % 4)
        ordinal, player, rank = json.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, binascii.Error, TypeError):
        raise refused from None
    if not isinstance(ordinal, (int, float)) or not isinstance(player, str):
        raise refused
    if not isinstance(rank, int) or rank < 0:
        raise refused
    return (float(ordinal), player), rank


async def list_leaderboard(
    store: Any, info: GameInfo, common_pb2: Any, pb2: Any, request: Any
) -> Any:
    shape = shape_named(info, request.shape)
    size = request.page_size or PAGE_SIZE
    if not 0 < size <= PAGE_MAX:
        raise BadRequest(f"page_size must be 0..{PAGE_MAX}")
    after, rank = None, 0
    if request.page_token:
        after, rank = cursor(request.page_token, info.name, shape.name)
    found = await store.leaderboard(info.name, shape.name, after=after, limit=size + 1)
    page = found[:size]
    entries = [
        common_pb2.LeaderboardEntry(
            rank=rank + i + 1,
            player_id=e.player_id,
            player_name=e.player_name,
            shown=e.standing.shown,
            games=e.standing.games,
        )
        for i, e in enumerate(page)
    ]
    token = page_token(info.name, shape.name, page[-1], rank + size) if len(found) > size else ""
    return pb2.ListLeaderboardResponse(shape=shape.name, entries=entries, next_page_token=token)


Unary = Callable[[Callable[[Any, Any], Awaitable[Any]], str], Any]


def handlers(
    info: GameInfo,
    pb2: Any,
    store: Any,
    unary: Unary,
    player_of: Callable[[Any], Awaitable[Any]],
) -> dict[str, Any]:
    """The two calls, by name, for the game service's generic handler; ``unary`` wraps
    each as the service's other calls are (parsing, refusals); ``player_of(context)`` is
    the caller's player (its ``id``; None without a player's token)."""
    from tabletop.common.v1 import ratings_pb2

    async def get(request: Any, context: Any) -> Any:
        found = None if request.player_id else await player_of(context)
        player = None if found is None else str(found.id)
        return await get_ratings(store, info, ratings_pb2, pb2, request, player)

    async def board(request: Any, context: Any) -> Any:
        return await list_leaderboard(store, info, ratings_pb2, pb2, request)

    return {
        "GetRatings": unary(get, "GetRatings"),
        "ListLeaderboard": unary(board, "ListLeaderboard"),
    }
