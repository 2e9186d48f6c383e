"""The move log every backend keeps: a game row and its accepted moves (event sourcing).

A game is rebuilt by replaying its moves from its seed, so the log is the only truth.
``append`` checks the version and the request id in the same transaction that writes
the move: the move is written only if the game is still at ``version - 1`` and the
request id was not used before in that game.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from services.kit.ratings.job import RatingJob


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
    # The table chosen at creation (seats, clock), JSON-able; never changes afterwards.
    table: Mapping[str, Any] | None = None
    # What a lobby shows (status, seats), JSON-able; replaced by appends that carry one.
    lobby: Mapping[str, Any] | None = None
    # The table still has open seats: it has not started.
    waiting: bool = False
    # When the clock makes the service act on the game without a client call (a deadline,
    # or an abandonment); None when nothing is due.
    due_at: float | None = None
    # A bot (or the bot for a seat given up) is to move: the service plays it in turn.
    bot_turn: bool = False
    # When a person last made an entry in this game (at creation: its creation): a game
    # in progress nobody plays is abandoned after the idle time.
    human_at: float | None = None
    # Seats created as bots: the per-owner caps on tables with a bot seat, and on tables
    # of bots alone (``bot_seats == players``), count them.
    bot_seats: int = 0
    # The player (a player token's sub) holding each seat, "" for none: ``create`` writes
    # them to the players' index (``list_games(player=...)``). Not read back by ``load``:
    # the game's plan and log say who holds each seat.
    seat_players: tuple[str, ...] = ()
    # Players' events the creation makes (a table full at once starts): written to the
    # outbox with the game row, never kept with it.
    outbox: tuple[OutboxEvent, ...] = ()


# --- the outbox: players' events, written with the move that makes them ---------------


@dataclass(frozen=True)
class OutboxEvent:
    """One player's event as the outbox keeps it (services.kit.outbox makes and reads
    them). ``body`` is its JSON; ``webhook``: the webhook is to post it."""

    event_id: str  # unique: a second write of the same id is skipped
    player_id: str
    game_id: str
    kind: str
    body: str
    created_at: float
    webhook: bool = False


@dataclass(frozen=True)
class StoredEvent:
    """An outbox row: its ``sequence`` strictly increases in one store, in commit order,
    and is never reused (rows deleted by the retention leave gaps)."""

    sequence: int
    event: OutboxEvent
    attempts: int = 0  # webhook posts tried


@dataclass(frozen=True)
class MoveRecord:
    version: int  # the game's version once this move applied (the first move is 1)
    seat: int
    move: str  # the move's text form
    events: list[dict[str, Any]] = field(default_factory=list)  # the Events, as JSON-able dicts
    request_id: str | None = None
    applied_at: float = 0.0
    finished: bool = False  # this move ended the game
    # Not kept with the move: ``append`` writes them to the game row. A lobby replaces the
    # row's (and sets ``waiting`` from its status); None leaves both as they are.
    lobby: Mapping[str, Any] | None = None
    due_at: float | None = None  # always written: None clears the row's deadline
    bot_turn: bool = False  # always written
    human_at: float | None = None  # None: ``applied_at`` (an entry a person made)
    # Players' events this entry makes (services.kit.outbox): written to the outbox in the
    # same transaction as the move, never kept with it.
    outbox: tuple[OutboxEvent, ...] = ()
    # A finishing entry of a rated table: rated in the same transaction (store/ratings.py).
    rating: RatingJob | None = None
    # The player now holding ``seat`` (a join by a player), "" when it holds none any
    # more (a leave), None when the entry changes no seat's player: the players' index
    # takes it in the same transaction.
    seat_player: str | None = None
    # With a player taking the seat: refuse (QuotaExceeded "player_games") when that
    # player already holds seats at this many unfinished games of the type (0: no limit).
    player_games: int = 0


# The status filters ``list_games`` takes.
STATUSES = ("waiting", "in_progress", "finished")


def check_status(status: str | None) -> None:
    """Refuse a ``list_games`` status it does not know (ValueError)."""
    if status is not None and status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")


def lobby_waiting(lobby: Mapping[str, Any]) -> bool:
    """Whether a game whose lobby is ``lobby`` is a waiting table."""
    return lobby.get("status") == "waiting"


def option_filter(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The ``list_games`` option filter, checked: every value a JSON scalar.

    Containers are refused (TypeError) because the backends would not agree on them
    (PostgreSQL's ``@>`` is containment, not equality).
    """
    checked = dict(options or {})
    for name, value in checked.items():
        if value is not None and not isinstance(value, (bool, int, float, str)):
            raise TypeError(f"option {name!r}: a filter value must be a JSON scalar")
    return checked


def json_scalar_equal(stored: Any, wanted: Any) -> bool:
    """Equality as JSON means it: true is not 1, 1 is 1.0, strings are exact."""
    if isinstance(wanted, bool) or isinstance(stored, bool):
        return type(stored) is type(wanted) and stored == wanted
    if wanted is None or stored is None:
        return stored is None and wanted is None
    if isinstance(wanted, str) or isinstance(stored, str):
        return isinstance(stored, str) and isinstance(wanted, str) and stored == wanted
    if isinstance(wanted, (int, float)):
        return isinstance(stored, (int, float)) and stored == wanted
    return False


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


@dataclass(frozen=True)
class Quotas:
    """What one owner may hold of a game type at once (0: no limit): unfinished games,
    waiting tables, tables with a bot seat and tables of bots alone. ``create`` checks
    those the new game counts against."""

    games: int = 0
    waiting: int = 0
    bot_tables: int = 0
    all_bot_tables: int = 0

    def applying_to(self, game: GameRecord) -> dict[str, int]:
        """The quotas ``game`` counts against, by name, with their limits."""
        applying = {
            "games": self.games,
            "waiting": self.waiting if game.waiting else 0,
            "bot_tables": self.bot_tables if game.bot_seats else 0,
            "all_bot_tables": self.all_bot_tables if game.bot_seats == game.players else 0,
        }
        return {name: limit for name, limit in applying.items() if limit}


@dataclass(frozen=True)
class PlayerQuotas:
    """What one player may hold of a game type at once (0: no limit): unfinished tables
    where it holds a seat, and of those, tables waiting for players. ``create`` checks
    them for the players of ``GameRecord.seat_players``."""

    games: int = 0
    waiting: int = 0

    def applying_to(self, game: GameRecord) -> dict[str, int]:
        applying = {
            "player_games": self.games,
            "player_waiting": self.waiting if game.waiting else 0,
        }
        return {name: limit for name, limit in applying.items() if limit}


def players_of(game: GameRecord) -> list[str]:
    """The distinct players holding seats of ``game``, in seat order."""
    return list(dict.fromkeys(p for p in game.seat_players if p))


# What each quota counts among an owner's unfinished games (SQL: a boolean per row).
QUOTA_COUNTS = {
    "games": "TRUE",
    "waiting": "waiting",
    "bot_tables": "bot_seats > 0",
    "all_bot_tables": "bot_seats = players",
}


def held(games: list[GameRecord]) -> dict[str, int]:
    """What an owner's unfinished ``games`` count against each quota."""
    return {
        "games": len(games),
        "waiting": sum(g.waiting for g in games),
        "bot_tables": sum(g.bot_seats > 0 for g in games),
        "all_bot_tables": sum(g.bot_seats == g.players for g in games),
    }


def over_quota(owner: str, limits: dict[str, int], counts: Mapping[str, int]) -> None:
    """Raise QuotaExceeded for the first quota ``counts`` have reached."""
    for name, limit in limits.items():
        if counts[name] >= limit:
            raise QuotaExceeded(owner, limit, name)


class QuotaExceeded(Exception):
    """The owner already has ``limit`` games of this type counted by ``quota`` (a name
    of :class:`Quotas`: "games", "waiting", "bot_tables", "all_bot_tables")."""

    def __init__(self, owner: str, limit: int, quota: str = "games") -> None:
        what = {
            "games": "games in progress",
            "waiting": "waiting tables",
            "bot_tables": "tables with a bot",
            "all_bot_tables": "tables of bots alone",
            "player_games": "unfinished tables",
            "player_waiting": "tables waiting for players",
        }.get(quota, quota)
        super().__init__(f"{owner} has {limit} {what}")
        self.owner = owner
        self.limit = limit
        self.quota = quota


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

    async def create(
        self,
        game: GameRecord,
        owner_limit: int = 0,
        waiting_limit: int = 0,
        quotas: Quotas | None = None,
        player_quotas: PlayerQuotas | None = None,
    ) -> None:
        """Write a new game at version 0; raise GameExists if the id is taken.

        Its ``seat_players`` go to the players' index. With ``player_quotas``, raise
        QuotaExceeded ("player_games", "player_waiting") when one of them already holds
        seats at that many unfinished (waiting) tables of this type, counted in the
        same step as the write.

        With ``game.owner`` and quotas (``owner_limit`` and ``waiting_limit`` are
        ``Quotas.games`` and ``Quotas.waiting``, ``quotas`` overrides both), raise
        QuotaExceeded naming the first quota the game counts against that this owner's
        unfinished games of this type already fill (see :class:`Quotas`). The counts
        and the write are one step, so concurrent creates cannot pass a limit together.
        """

    async def load(self, game_id: str) -> GameRecord | None:
        """The game row (with its current version), or None."""

    async def moves(
        self, game_id: str, after: int = 0, limit: int | None = None
    ) -> list[MoveRecord]:
        """Moves with version > ``after``, in order, at most ``limit``."""

    async def append(self, game_id: str, move: MoveRecord) -> None:
        """Write ``move`` if the game is at ``move.version - 1`` and its request id is new.

        In the same transaction the game row takes ``move.due_at`` (None clears it),
        ``move.bot_turn``, ``move.human_at`` (None: ``move.applied_at``) and, when
        ``move.lobby`` is not None, that lobby and ``waiting`` from its status; a
        finishing move clears ``waiting``. Raises VersionConflict or DuplicateRequest, and
        writes nothing then. ``move.seat_player`` (not None) sets or clears the seat's
        player in the players' index, after checking ``move.player_games`` (QuotaExceeded).
        """

    async def delete_finished_before(self, timestamp: float, game_type: str) -> list[str]:
        """Remove games of ``game_type`` that finished before ``timestamp``; return their ids.

        Scoped by game type, so services of several games may share one database.
        """

    async def count_active(self, game_type: str) -> int:
        """How many games of ``game_type`` have not finished."""

    async def list_games(
        self,
        game_type: str,
        *,
        status: str | None = None,
        players: int | None = None,
        options: Mapping[str, Any] | None = None,
        after: tuple[float, str] | None = None,
        limit: int = 50,
        player: str | None = None,
    ) -> list[GameRecord]:
        """A lobby page: games of ``game_type``, newest first by (created_at, game_id),
        never a quarantined one.

        ``status`` is None or one of STATUSES; ``players`` an exact count; ``options``
        option names each equal (as JSON) to a scalar; ``after`` the (created_at,
        game_id) of the last game of the previous page: only games after it in this
        order, so pages stay stable while newer games are created. ``player``: only the
        games where that player holds a seat (from the players' index).
        """

    async def count_waiting(self, game_type: str) -> int:
        """How many unquarantined tables of ``game_type`` wait for players."""

    async def due(
        self,
        game_type: str,
        now: float,
        *,
        waiting_ttl: float,
        idle_seconds: float,
        limit: int = 100,
    ) -> list[str]:
        """Ids of unfinished, unquarantined games the service must act on at ``now``,
        earliest deadline first: a waiting table older than ``waiting_ttl``, a game in
        progress no person made an entry in for ``idle_seconds`` (its ``human_at``), or
        a game whose ``due_at`` has come. A ``waiting_ttl`` or ``idle_seconds`` of 0
        turns its condition off. Bot turns are not due here (see ``bot_turns``), so no
        number of tables of bots can push a deadline out of the list."""

    async def bot_turns(self, game_type: str, before: float, limit: int = 100) -> list[str]:
        """Ids of unfinished, unquarantined games with a bot to move since ``before`` or
        earlier (``bot_turn``, by their last entry), longest waiting first: the bot turns
        a service that crashed, or another replica, left behind."""

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


class OutboxStore(Store, Protocol):
    """A store with the outbox (every backend here): players' events, written by
    ``create`` and ``append`` with the game row and the move (``outbox`` of the record),
    in the same transaction."""

    async def player_events(
        self, game_type: str, player_id: str, after: int, limit: int = 200
    ) -> list[StoredEvent]:
        """``player_id``'s events of ``game_type`` with a sequence above ``after``, in order."""

    async def last_event(self, game_type: str) -> int:
        """The highest sequence written for ``game_type`` (0: none)."""

    async def claim_webhooks(
        self, game_type: str, claimant: str, now: float, lease: float, limit: int = 20
    ) -> list[StoredEvent]:
        """Undelivered webhook events of ``game_type`` due at ``now`` and claimed by
        nobody (or by a claim whose lease ran out), oldest first: each is claimed for
        ``claimant`` until ``now + lease``. Replicas sharing a store never get the same
        event while a claim holds."""

    async def webhook_result(
        self, sequence: int, claimant: str, delivered: bool, now: float, retry_at: float
    ) -> None:
        """The post of a claimed event: delivered, or failed (tried again from
        ``retry_at``); the claim ends. Ignored when the claim is no longer ``claimant``'s."""

    async def webhooks_pending(self, game_type: str) -> int:
        """Webhook events of ``game_type`` not delivered yet."""

    async def delete_events_before(self, game_type: str, timestamp: float) -> int:
        """Remove outbox rows of ``game_type`` written before ``timestamp``; how many."""


class SharedStore(Store, Protocol):
    """A store several replicas share (PostgreSQL): it tells each replica of moves the
    others appended, so their live games and watchers catch up."""

    async def listen(self, on_append: Callable[[str, int], Awaitable[None]]) -> None:
        """Call ``on_append(game_id, version)`` for every move appended by anyone, until
        the store is closed. Runs as a background task."""
