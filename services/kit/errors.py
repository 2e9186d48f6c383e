"""Errors of the platform itself (not of a game's rules), each with its reason code.

Engines raise the errors of :mod:`services.kit.engine`; the game manager and the server
raise these. :mod:`services.kit.status` maps both to gRPC statuses.
"""

from __future__ import annotations


class PlatformError(Exception):
    reason = "UNAVAILABLE"

    def __init__(self, message: str, **metadata: object) -> None:
        super().__init__(message)
        self.message = message
        self.metadata = {k: str(v) for k, v in metadata.items()}


class GameNotFound(PlatformError):
    reason = "GAME_NOT_FOUND"


class StaleVersion(PlatformError):
    reason = "STALE_VERSION"

    def __init__(self, current: int, expected: int) -> None:
        super().__init__(
            f"the game is at version {current}, not {expected}: fetch it and decide again",
            current_version=current,
        )
        self.current = current


class RequestIdReused(PlatformError):
    reason = "REQUEST_ID_REUSED"


class VersionOutOfRange(PlatformError):
    reason = "VERSION_OUT_OF_RANGE"


class BadRequest(PlatformError):
    reason = "BAD_REQUEST"


class SeedNotAllowed(PlatformError):
    reason = "SEED_NOT_ALLOWED"


class LimitReached(PlatformError):
    reason = "LIMIT_REACHED"


class RateLimited(PlatformError):
    reason = "RATE_LIMITED"


class WatcherTooSlow(PlatformError):
    reason = "WATCHER_TOO_SLOW"


class Unavailable(PlatformError):
    reason = "UNAVAILABLE"


class GameCorrupt(PlatformError):
    """The game's stored log cannot be replayed: the store's fault, never the caller's.

    The message never quotes a stored row: a secret move's text is hidden information.
    """

    reason = "GAME_CORRUPT"


class SeatNotOpen(PlatformError):
    reason = "SEAT_NOT_OPEN"


class GameNotStarted(PlatformError):
    reason = "GAME_NOT_STARTED"


class GameStarted(PlatformError):
    reason = "GAME_STARTED"


class AlreadyGivenUp(PlatformError):
    reason = "ALREADY_GIVEN_UP"


class BadPageToken(PlatformError):
    reason = "BAD_PAGE_TOKEN"


class PlayerHasSeat(PlatformError):
    """The player already holds a seat of a table that lets a player hold one."""

    reason = "PLAYER_HAS_SEAT"


class NoRematch(PlatformError):
    """No rematch of this game (not finished, abandoned, not the caller's, or started)."""

    reason = "NO_REMATCH"
