"""The move log every backend keeps: a game row and its accepted moves (event sourcing).

A game is rebuilt by replaying its moves from its seed, so the log is the only truth.
``append`` checks the version and the request id in the same transaction that writes
the move: the move is written only if the game is still at ``version - 1`` and the
request id was not used before in that game.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol


@dataclass(frozen=True)
class GameRecord:
    game_id: str
    game_type: str
    players: int
    options: Mapping[str, Any]
    seed: int
    token_hashes: tuple[str, ...]  # sha256 hex per seat; tokens themselves are never kept
    created_at: float
    version: int = 0
    updated_at: float = 0.0
    finished_at: float | None = None
    # Whose quota the game counts against while in progress ("key:NAME" or "addr:ADDRESS").
    owner: str | None = None
    # Why the game is quarantined (its log cannot be replayed); None for a sound game.
    quarantined: str | None = None


@dataclass(frozen=True)
class MoveRecord:
    version: int  # the game's version once this move applied (the first move is 1)
    seat: int
    move: str  # the move's text form
    events: list[dict[str, Any]] = field(default_factory=list)  # the Events, as JSON-able dicts
    request_id: str | None = None
    applied_at: float = 0.0
    finished: bool = False  # this move ended the game


class StoreError(Exception):
    """The store could not do what was asked (unreachable, full, corrupt)."""


class StoreCorrupt(StoreError):
    """The store's file or database fails its integrity check: it must not be served."""


class CorruptRow(StoreError):
    """A stored row of ``game_id`` no longer decodes (its columns are not what was written)."""

    def __init__(self, game_id: str, version: int | None, problem: str) -> None:
        where = f"move {version}" if version is not None else "the game row"
        super().__init__(f"game {game_id}: {where} does not decode ({problem})")
        self.game_id = game_id
        self.version = version


class QuotaExceeded(Exception):
    """The owner already has ``limit`` games in progress of this type."""

    def __init__(self, owner: str, limit: int) -> None:
        super().__init__(f"{owner} has {limit} games in progress")
        self.owner = owner
        self.limit = limit


@dataclass(frozen=True)
class Quarantined:
    game_id: str
    game_type: str
    reason: str
    at: float


class VersionConflict(Exception):
    """The game is no longer at the version the move was made against."""

    def __init__(self, current: int) -> None:
        super().__init__(f"the game is at version {current}")
        self.current = current


class DuplicateRequest(Exception):
    """The request id was already used in this game, by the move at ``version``."""

    def __init__(self, version: int) -> None:
        super().__init__(f"request id already applied at version {version}")
        self.version = version


class GameExists(Exception):
    """A game with this id exists already."""


class Store(Protocol):
    """What the game manager needs from a backend. Every method is a coroutine."""

    url: str

    async def create(self, game: GameRecord, owner_limit: int = 0) -> None:
        """Write a new game at version 0; raise GameExists if the id is taken.

        With ``owner_limit`` (and ``game.owner``), raise QuotaExceeded instead when that
        owner already has as many unfinished games of this type; the count and the write
        are one step, so concurrent creates cannot pass the limit together.
        """

    async def load(self, game_id: str) -> GameRecord | None:
        """The game row (with its current version), or None."""

    async def moves(
        self, game_id: str, after: int = 0, limit: int | None = None
    ) -> list[MoveRecord]:
        """Moves with version > ``after``, in order, at most ``limit``."""

    async def append(self, game_id: str, move: MoveRecord) -> None:
        """Write ``move`` if the game is at ``move.version - 1`` and its request id is new.

        Raises VersionConflict or DuplicateRequest, and writes nothing then.
        """

    async def delete_finished_before(self, timestamp: float, game_type: str) -> list[str]:
        """Remove games of ``game_type`` that finished before ``timestamp``; return their ids.

        Scoped by game type, so services of several games may share one database.
        """

    async def count_active(self, game_type: str) -> int:
        """How many games of ``game_type`` have not finished."""

    async def quarantine(self, game_id: str, reason: str, at: float) -> None:
        """Mark the game read-only for an operator: its log cannot be replayed."""

    async def quarantined(self) -> list[Quarantined]:
        """Every quarantined game, oldest first."""

    async def release(self, game_id: str) -> bool:
        """Lift the quarantine (the log was repaired or restored, or the rules fixed);
        the next load replays the game again. False if it was not quarantined."""

    async def raw(self, game_id: str) -> dict[str, Any] | None:
        """The game's row and move rows exactly as stored, undecoded (for an operator)."""

    async def close(self) -> None:
        """Finish pending writes and release connections."""


class SharedStore(Store, Protocol):
    """A store several replicas share (PostgreSQL): it tells each replica of moves the
    others appended, so their live games and watchers catch up."""

    async def listen(self, on_append: Callable[[str, int], Awaitable[None]]) -> None:
        """Call ``on_append(game_id, version)`` for every move appended by anyone, until
        the store is closed. Runs as a background task."""
