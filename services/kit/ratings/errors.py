"""Refusals of rated tables and the ratings' calls (docs/ratings.md, "Bad input")."""

from __future__ import annotations

from services.kit import auth
from services.kit.errors import BadRequest, LimitReached, PlatformError, StaleVersion


class RatedNeedsPlayers(BadRequest):
    """INVALID_ARGUMENT: a rated table with a seat no signed-in player may hold (a bot
    seat, or the creator's seat without a player's token)."""

    reason = "RATED_NEEDS_PLAYERS"


class RatedJoinNeedsPlayer(auth.MissingToken):
    """UNAUTHENTICATED: joining a rated table takes a player's token."""

    reason = "RATED_NEEDS_PLAYERS"


class RatedNeedsClock(BadRequest):
    """INVALID_ARGUMENT: a rated table needs a clock that forfeits on timeout."""

    reason = "RATED_NEEDS_CLOCK"


class UnknownShapeName(BadRequest):
    """INVALID_ARGUMENT: no such shape in this game (metadata ``shapes``)."""

    reason = "UNKNOWN_SHAPE"


class RatingsPlayerRequired(auth.MissingToken):
    """UNAUTHENTICATED: GetRatings of oneself needs a player's token."""

    reason = "PLAYER_TOKEN_REQUIRED"


class MatchReplaced(StaleVersion):
    """ABORTED: a newer FindMatch of the same player replaced this stream."""

    reason = "MATCH_REPLACED"

    def __init__(self, message: str) -> None:
        PlatformError.__init__(self, message)


class PoolFull(LimitReached):
    """RESOURCE_EXHAUSTED: as many players wait as the service allows."""

    reason = "POOL_FULL"
