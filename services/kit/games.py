"""Live games: the engine, the move log and the watchers of one game service.

No transport here: the gRPC layer (:mod:`services.kit.service`) converts messages and
statuses; this module decides. One writer per game: every read or write of a game's
state holds that game's lock, so a view never shows a move the log does not hold yet.
Different games proceed in parallel.

A game lives in memory once loaded, rebuilt by replaying its log from the seed; the log
is the only truth. A move is applied to the live state, then appended to the log with
its version check in the same transaction; only after the append returns is it
acknowledged, counted and sent to watchers. If the append fails the live state is
dropped and rebuilt from the log on the next call.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import random
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from services.kit import auth, corruption
from services.kit import table as tables
from services.kit.creators import Creators
from services.kit.engine import BadOptions, Engine, EngineError, Event, GameOver, Outcome
from services.kit.errors import (
    AlreadyGivenUp,
    BadRequest,
    GameCorrupt,
    GameNotFound,
    GameNotStarted,
    GameStarted,
    LimitReached,
    RequestIdReused,
    SeatNotOpen,
    StaleVersion,
    Unavailable,
    VersionOutOfRange,
    WatcherTooSlow,
)
from services.kit.kernel import always_public
from services.kit.store import (
    CorruptRow,
    DuplicateRequest,
    GameRecord,
    MoveRecord,
    QuotaExceeded,
    Store,
    StoreError,
    VersionConflict,
)

_log = structlog.get_logger("games")

# Turns kept in memory per game, for watchers that resume a little behind and for retried
# request ids; older ones are read from the log. Few, because every live game pays for them.
RECENT_TURNS = 8


@dataclass(frozen=True)
class Snapshot:
    """A game as one seat sees it at one version: what GetGame and watchers send."""

    game_id: str
    game_type: str
    version: int
    players: int
    seat_names: tuple[str, ...]
    to_act: tuple[int, ...]
    outcome: Outcome | None
    created_at: float
    updated_at: float
    viewer: int | None
    view: Any
    options: Mapping[str, Any] = field(default_factory=dict)
    waiting: bool = False  # seats still open: not started
    seats: tuple[SeatInfo, ...] = ()
    clock: tables.Clock | None = None


@dataclass(frozen=True)
class SeatInfo:
    """Who sits in a seat, and its clock, as the header shows it."""

    state: str  # open, taken, bot, given_up
    player_name: str
    level: str
    bank: float | None  # seconds left when its decision began (or now)
    deadline: float | None  # for a seat to act under a clock


@dataclass(frozen=True)
class Turn:
    """One accepted move as one seat may see it."""

    version: int
    seat: int
    move_text: str  # empty when the move is secret from the viewer
    events: tuple[dict[str, Any], ...]
    applied_at: float


@dataclass(frozen=True)
class WatchItem:
    turn: Turn | None
    snapshot: Snapshot | None  # set when this item is the game's latest version


@dataclass
class _Watcher:
    """One stream's pending updates. A watcher that falls behind holds the logged moves
    it has not been sent (shared with every other watcher, not copies) and only the
    newest view: the ones before it are dropped, as a resume sends turns then one view."""

    seat: int | None
    limit: int  # pending moves before the stream is ended
    pending: deque[tuple[MoveRecord, Snapshot | None]] = field(default_factory=deque)
    error: BaseException | None = None
    wake: asyncio.Event = field(default_factory=asyncio.Event)
    closed: bool = False


@dataclass(eq=False)
class LiveGame:
    record: GameRecord
    state: Any
    version: int
    updated_at: float
    requests: dict[str, int] = field(default_factory=dict)
    recent: deque[MoveRecord] = field(default_factory=lambda: deque(maxlen=RECENT_TURNS))
    watchers: list[_Watcher] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    broken: bool = False  # dropped after a failed append; callers reload
    # Views built at ``views_version``, by seat: a reply and the watchers of one seat share one.
    views: dict[int | None, Any] = field(default_factory=dict)
    views_version: int = -1
    table: tables.Table = field(default=None)  # type: ignore[assignment]  # set on create/load


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _logged(task: asyncio.Task[Any]) -> None:
    """A bot task's failure is logged (the next call or sweep retries the game)."""
    if not task.cancelled() and task.exception() is not None:
        _log.warning("bot_move_failed", error=repr(task.exception()))


def _table_event(kind: str, text: str, seat: int | None = None, **data: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"kind": kind, "text": text}
    if seat is not None:
        event["seat"] = seat
    if data:
        event["data"] = data
    return event


class Metrics(Protocol):
    """What the manager reports (services.kit.metrics.GameMetrics, or NullMetrics)."""

    def move_applied(self, game: str, engine_seconds: float) -> None: ...
    def move_rejected(self, game: str, reason: str) -> None: ...
    def games_live(self, game: str, count: int) -> None: ...
    def game_created(self, game: str) -> None: ...
    def game_finished(self, game: str) -> None: ...


class NullMetrics:
    """Reports to nowhere; the service passes its Prometheus-backed twin."""

    def move_applied(self, game: str, engine_seconds: float) -> None: ...
    def move_rejected(self, game: str, reason: str) -> None: ...
    def games_live(self, game: str, count: int) -> None: ...
    def game_created(self, game: str) -> None: ...
    def game_finished(self, game: str) -> None: ...


def event_dict(event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": event.kind, "text": event.text}
    if event.seat is not None:
        out["seat"] = event.seat
    if event.data:
        out["data"] = dict(event.data)
    if event.to is not None:
        out["to"] = sorted(event.to)
    return out


class GameManager:
    def __init__(
        self,
        engine: Engine,
        store: Store,
        *,
        metrics: Metrics | None = None,
        allow_seed: bool = False,
        max_live_games: int = 100_000,
        max_games: int = 0,
        watch_queue_limit: int = 1000,
        watch_stall_seconds: float = 30.0,
        creators: Creators | None = None,
        clock: Callable[[], float] = time.time,
        waiting_ttl: float = 3600.0,
        idle_seconds: float = 7 * 86400.0,
        waiting_per_client: int = 20,
        bots: Any = None,
        bot_games: int = 1,
    ) -> None:
        self.engine = engine
        self.game_type = engine.GAME.name
        self.store = store
        self.metrics = metrics or NullMetrics()
        self.allow_seed = allow_seed
        self.max_live_games = max_live_games
        self.max_games = max_games
        self.in_progress = 0  # games not finished, as this instance knows them
        self.watch_queue_limit = watch_queue_limit
        self.watch_stall_seconds = watch_stall_seconds  # one write waiting longer ends a stream
        self.creators = creators  # who may create games, and their quotas (None: anyone)
        self.clock = clock
        self._live: OrderedDict[str, LiveGame] = OrderedDict()
        self._loading: dict[str, asyncio.Future[LiveGame]] = {}
        # A game whose moves are all public needs no stored move parsed to show it.
        self._public_move = None if engine.public_move is always_public else engine.public_move
        self._created = 0
        self.waiting_ttl = waiting_ttl  # a table with open seats expires after this
        self.idle_seconds = idle_seconds  # a game without a clock or a move is abandoned
        self.waiting_per_client = waiting_per_client
        self._bot_rng = random.Random()  # bot choices are logged, so need no seed
        # Plays bot seats at their level (services.kit.bots.pool.BotPool); None: random.
        self.bots = bots
        # Games with a bot to move, served in turn, one decision each: a table of bots
        # playing a long game does not hold up the bot of a table with people at it.
        # ``bot_games`` runners take turns from the queue (as many as searches may run
        # at once), so bots cannot take the whole process from the people on it.
        self.bot_games = max(1, bot_games)
        self._bot_queue: deque[str] = deque()
        self._queued: set[str] = set()
        self._bot_runners: set[asyncio.Task[None]] = set()
        self._bots_warming: asyncio.Task[None] | None = None

    # --- creating and loading -----------------------------------------------------------

    async def start(self) -> None:
        """Count the games in progress the store already holds (for the games limit)."""
        try:
            self.in_progress = await self.store.count_active(self.game_type)
        except StoreError as exc:
            raise Unavailable(f"the store is unavailable: {exc}") from exc

    async def create(
        self,
        players: int,
        options: Any,
        seed: int | None = None,
        *,
        owner: str | None = None,
        owner_limit: int = 0,
        quota: str = "",
        plan: tables.Plan | None = None,
    ) -> tuple[LiveGame, dict[int, str]]:
        """A new game and a secret token for each seat reserved for the creator (every
        seat without a ``plan``); the store keeps only their hashes.

        With ``owner_limit``, the game counts against ``owner``'s quota (named ``quota``)
        while it is in progress, and is refused once that owner has as many unfinished;
        a table with open seats also counts against the owner's waiting tables.
        """
        info = self.engine.GAME
        if not info.min_players <= players <= info.max_players:
            raise BadOptions(
                f"{info.title} is for {info.min_players}-{info.max_players} players, not {players}"
            )
        if self.max_games and self.in_progress >= self.max_games:
            raise LimitReached(
                f"this service has its maximum of {self.max_games} games in progress",
                limit="max_games",
            )
        if seed is None:
            seed = secrets.randbits(63)
        if plan is not None and len(plan.seats) != players:
            raise BadOptions(f"seats lists {len(plan.seats)} seats for {players} players")
        state = self.engine.new_game(seed, players, options)
        reserved = (
            range(players) if plan is None else plan.returns_tokens
        )  # seats whose token goes back to the creator
        tokens = {seat: auth.new_token() for seat in reserved}
        hashes = tuple(auth.token_hash(tokens[s]) if s in tokens else "" for s in range(players))
        now = self.clock()
        table = tables.Table.create(
            plan or tables.Plan.from_dict(None, players),
            hashes,
            self.engine.GAME.sides_of(players, options),
            now,
            self.engine.to_act(state),
        )
        record = GameRecord(
            game_id=secrets.token_urlsafe(12),
            game_type=self.game_type,
            players=players,
            options=options.to_dict(),
            seed=seed,
            token_hashes=hashes,
            created_at=now,
            updated_at=now,
            owner=owner,
            table=None if plan is None else plan.to_dict(),
            lobby=table.lobby(),
            waiting=table.waiting,
            due_at=table.due_at(now),
        )
        waiting_limit = self.waiting_per_client if table.waiting and owner else 0
        try:
            if owner_limit or waiting_limit:
                await self.store.create(record, owner_limit, waiting_limit=waiting_limit)
            else:  # stores written before quotas (a benchmark's) take the game alone
                await self.store.create(record)
        except QuotaExceeded as exc:
            if getattr(exc, "quota", "games") == "waiting":
                raise LimitReached(
                    f"at most {exc.limit} tables waiting for players per client; fill or "
                    "leave one first",
                    limit="waiting_per_client",
                ) from None
            raise LimitReached(
                f"at most {exc.limit} games in progress per {quota or 'owner'}; finish one first",
                limit=quota or "games_per_owner",
            ) from None
        except StoreError as exc:
            raise Unavailable(f"the store is unavailable: {exc}") from exc
        game = LiveGame(record, state, 0, now, table=table)
        self.in_progress += 1
        self._remember(game)
        self.metrics.game_created(self.game_type)
        if any(s.state == tables.BOT for s in table.seats):
            self.warm_bots()
        self._kick(game)
        return game, tokens

    async def get(self, game_id: str) -> LiveGame:
        """The live game, loaded and replayed from the log if it is not in memory.

        The load is a task of its own, shared by every call waiting for this game: a
        caller that gives up (its deadline passed, its client went away) leaves it running
        for the others, rather than handing them its cancellation.
        """
        game = self._live.get(game_id)
        if game is not None:
            self._live.move_to_end(game_id)
            return game
        pending = self._loading.get(game_id)
        if pending is None:
            pending = asyncio.ensure_future(self._load_shared(game_id))
            # Its error reaches every caller still waiting; when they all gave up, nobody
            # is left to tell (asyncio would log it as "never retrieved").
            pending.add_done_callback(_retrieved)
            self._loading[game_id] = pending
        return await asyncio.shield(pending)

    async def _load_shared(self, game_id: str) -> LiveGame:
        try:
            game = await self._load(game_id)
            self._remember(game)
            return game
        finally:
            del self._loading[game_id]

    async def _load(self, game_id: str) -> LiveGame:
        if not isinstance(game_id, str) or not game_id or len(game_id) > 64:
            raise GameNotFound("no such game")
        try:
            record = await self.store.load(game_id)
            if record is None or record.game_type != self.game_type:
                raise GameNotFound(f"no {self.engine.GAME.title} game {game_id!r}")
            if record.quarantined is not None:
                raise self._corrupt(game_id, None)
            moves = await self.store.moves(game_id)
        except CorruptRow as exc:
            raise await self._quarantine(game_id, exc.version, "the row does not decode") from None
        except StoreError as exc:
            raise Unavailable(f"the store is unavailable: {exc}") from exc
        try:
            options = self.engine.GAME.options_type.from_dict(record.options)
            state = self.engine.new_game(record.seed, record.players, options)
        except Exception as exc:
            raise await self._quarantine(game_id, None, corruption.problem(exc)) from None
        # The header shows every option the game is played under, including those a row
        # stored before they existed takes from STORED_BEFORE.
        record = dataclasses.replace(record, options=options.to_dict())
        try:
            table = tables.Table.create(
                tables.Plan.from_dict(record.table, record.players),
                record.token_hashes,
                self.engine.GAME.sides_of(record.players, options),
                record.created_at,
                self.engine.to_act(state),
            )
        except Exception as exc:
            raise await self._quarantine(game_id, None, corruption.problem(exc)) from None
        game = LiveGame(record, state, 0, record.updated_at, table=table)
        await self._replay(game, moves)
        return game

    async def _replay(self, game: LiveGame, moves: list[MoveRecord]) -> None:
        """Apply logged moves; a move that cannot be replayed quarantines the game."""
        for move in moves:
            try:
                if move.version != game.version + 1:
                    raise CorruptRow(game.record.game_id, move.version, "a gap in the log")
                self._replay_one(game, move)
            except Exception as exc:
                self._drop(game)
                problem = corruption.problem(exc)
                raise await self._quarantine(game.record.game_id, move.version, problem) from None

    def _corrupt(self, game_id: str, version: int | None) -> GameCorrupt:
        where = {} if version is None else {"version": version}
        return GameCorrupt(
            f"game {game_id} cannot be replayed from its stored log; it is quarantined "
            "(read-only) for an operator",
            **where,
        )

    async def _quarantine(self, game_id: str, version: int | None, problem: str) -> GameCorrupt:
        """Log, count and mark the game quarantined (dropped from memory); the error to raise."""
        live = self._live.get(game_id)
        if live is not None:
            self._drop(live)
        where = f"move {version}" if version else "the game row"
        _log.error("game_quarantined", game_id=game_id, version=version, problem=problem)
        corruption.CORRUPT_GAMES.labels(self.game_type).inc()
        try:
            await self.store.quarantine(
                game_id, f"{where} cannot be replayed ({problem})", self.clock()
            )
        except StoreError as exc:  # the game stays refused; the next load tries again
            _log.warning("quarantine_not_recorded", game_id=game_id, error=str(exc))
        return self._corrupt(game_id, version)

    def _replay_one(self, game: LiveGame, move: MoveRecord) -> None:
        if move.move.startswith(tables.TABLE_ENTRY):
            self._replay_table_entry(game, move)
        else:
            self.engine.apply(game.state, move.seat, self.engine.parse_move(move.move))
            game.table.after_move(move.seat, move.applied_at, self.engine.to_act(game.state))
        game.version = move.version
        game.updated_at = move.applied_at
        if move.request_id is not None:
            game.requests[move.request_id] = move.version
        game.recent.append(move)

    def _remember(self, game: LiveGame) -> None:
        self._live[game.record.game_id] = game
        self._live.move_to_end(game.record.game_id)
        if len(self._live) > self.max_live_games:
            # Forget the least recently used idle games; their logs rebuild them.
            for gid, old in list(self._live.items()):
                if len(self._live) <= self.max_live_games:
                    break
                if not old.watchers and not old.lock.locked() and old is not game:
                    del self._live[gid]
        self.metrics.games_live(self.game_type, len(self._live))

    def _drop(self, game: LiveGame) -> None:
        game.broken = True
        if self._live.get(game.record.game_id) is game:
            del self._live[game.record.game_id]
        for watcher in game.watchers:
            self._close_watcher(watcher, Unavailable("the game is being reloaded; resume"))
        game.watchers.clear()
        self.metrics.games_live(self.game_type, len(self._live))

    @contextlib.asynccontextmanager
    async def locked(self, game_id: str) -> AsyncIterator[LiveGame]:
        """The live game with its lock held (one writer per game)."""
        while True:
            game = await self.get(game_id)
            async with game.lock:
                if game.broken:
                    continue
                yield game
                return

    # --- reading ----------------------------------------------------------------------

    def snapshot(self, game: LiveGame, seat: int | None, *, with_view: bool = True) -> Snapshot:
        """The game at its current version as ``seat`` sees it. Call with the lock held.

        ``with_view=False`` leaves ``view`` None, for answers that carry only the header
        (ListMoves, GetHistory): the seat's view is the costliest part to build.
        """
        record = game.record
        view = None
        if with_view:
            if game.views_version != game.version:
                game.views.clear()
                game.views_version = game.version
            view = game.views.get(seat)
            if view is None:
                view = game.views[seat] = self.engine.view(game.state, seat)
        table = game.table
        outcome = self.outcome(game)
        to_act = () if outcome is not None or table.waiting else table.to_act
        return Snapshot(
            game_id=record.game_id,
            game_type=record.game_type,
            version=game.version,
            players=record.players,
            seat_names=tuple(self.engine.GAME.seat_names(record.players)),
            to_act=tuple(to_act),
            outcome=outcome,
            created_at=record.created_at,
            updated_at=game.updated_at,
            viewer=seat,
            view=view,
            options=record.options,
            waiting=table.waiting,
            seats=tuple(
                SeatInfo(
                    s.state,
                    s.name,
                    s.level,
                    s.bank,
                    table.deadline(i) if i in to_act else None,
                )
                for i, s in enumerate(table.seats)
            ),
            clock=table.plan.clock,
        )

    def outcome(self, game: LiveGame) -> Outcome | None:
        """The rules' outcome, or the table's (resigned, expired, abandoned)."""
        return game.table.final_outcome(self.engine.outcome(game.state))

    def _seat(self, game: LiveGame, seat_token: str | None) -> int | None:
        return auth.seat_of(seat_token, game.table.token_hashes)

    async def read(self, game_id: str, seat_token: str | None) -> tuple[Snapshot, int | None]:
        async with self.locked(game_id) as game:
            seat = self._seat(game, seat_token)
            return self.snapshot(game, seat), seat

    async def legal_moves(
        self, game_id: str, seat_token: str | None
    ) -> tuple[Snapshot, list[Any], int | None]:
        async with self.locked(game_id) as game:
            seat = self._seat(game, seat_token)
            snap = self.snapshot(game, seat, with_view=False)
            moves = []
            if seat is not None and seat in snap.to_act and game.table.seats[seat].state == "taken":
                moves = self.engine.legal_moves(game.state, seat)
            return snap, moves, seat

    def turn_for(self, move: MoveRecord, seat: int | None) -> Turn:
        """A logged move as ``seat`` may see it: its visible events, and the move itself
        unless the engine says it is secret from that seat."""
        shown = move.move
        secret = (
            self._public_move is not None
            and seat != move.seat
            and not move.move.startswith(tables.TABLE_ENTRY)
        )
        if secret and self._public_move is not None:
            try:
                public = self._public_move(self.engine.parse_move(move.move))
            except Exception as exc:  # the row changed since it was replayed
                _log.error(  # the call's log context carries the game id
                    "stored_move_unreadable",
                    version=move.version,
                    problem=corruption.problem(exc),
                )
                raise GameCorrupt(
                    "a stored move of this game can no longer be read", version=move.version
                ) from None
            if not public:
                shown = ""
        events = tuple(
            {k: v for k, v in e.items() if k != "to"}
            for e in move.events
            if "to" not in e or (seat is not None and seat in e["to"])
        )
        return Turn(move.version, move.seat, shown, events, move.applied_at)

    async def history(
        self, game_id: str, seat_token: str | None, after: int, limit: int
    ) -> tuple[Snapshot, list[Turn]]:
        async with self.locked(game_id) as game:
            seat = self._seat(game, seat_token)
            if after > game.version:
                await self._follow(game)  # seen on another replica: read the log first
            snap = self.snapshot(game, seat, with_view=False)
        if after < 0 or after > snap.version:
            raise VersionOutOfRange(f"from_version must be 0..{snap.version}")
        moves = await self._moves(game_id, after, limit)
        return snap, [self.turn_for(m, seat) for m in moves]

    async def _moves(self, game_id: str, after: int, limit: int | None) -> list[MoveRecord]:
        try:
            return await self.store.moves(game_id, after, limit)
        except CorruptRow as exc:
            raise await self._quarantine(game_id, exc.version, "the row does not decode") from None
        except StoreError as exc:
            raise Unavailable(f"the store is unavailable: {exc}") from exc

    # --- writing ----------------------------------------------------------------------

    async def submit(
        self,
        game_id: str,
        seat_token: str | None,
        decode_move: Callable[[], Any],
        expected_version: int | None,
        request_id: str | None,
        with_view: bool = True,
    ) -> tuple[Snapshot, Turn]:
        """Apply one move for the token's seat and log it; return the game and the turn.

        ``with_view=False`` leaves the snapshot's view None (a client that watches the
        game gets the view from its stream): the view is not built for this answer.

        ``decode_move`` builds the move; it is called once the caller is known to hold a
        seat, so an unauthenticated call learns nothing about what it sent.

        A request id seen before returns that first turn again (the move is not applied
        twice); the same id with a different move is refused.
        """
        async with self.locked(game_id) as game:
            seat = self._seat(game, seat_token)
            if seat is None:
                raise auth.MissingToken("a move needs a seat token: authorization: Bearer <token>")
            move = decode_move()
            if expected_version is not None and expected_version > game.version:
                # The caller saw a later version: another replica logged moves this one
                # has not heard of yet. Read them from the shared log first; a retry's
                # own move may be among them.
                await self._follow(game)
            if request_id and request_id in game.requests:
                turn = await self._previous(game, request_id, seat, move)
                return self.snapshot(game, seat, with_view=with_view), turn
            if expected_version is not None and expected_version != game.version:
                raise StaleVersion(game.version, expected_version)
            self._may_move(game, seat)
            record = await self._apply_move(game, seat, move, request_id, expected_version)
            self._kick(game)
            return self.snapshot(game, seat, with_view=with_view), self.turn_for(record, seat)

    def _may_move(self, game: LiveGame, seat: int) -> None:
        """Refuse a move the table forbids, before the engine sees it."""
        if self.outcome(game) is not None:
            raise GameOver("the game is over")
        if game.table.waiting:
            raise GameNotStarted("seats are still open; the game starts when the last is taken")
        if game.table.seats[seat].state == tables.GIVEN_UP:
            raise AlreadyGivenUp("this seat has given up; the service plays it now")

    async def _apply_move(
        self,
        game: LiveGame,
        seat: int,
        move: Any,
        request_id: str | None = None,
        expected_version: int | None = None,
        extra: tuple[dict[str, Any], ...] = (),
    ) -> MoveRecord:
        """Apply a game move for ``seat`` (lock held), log it, and tell watchers."""
        started = time.perf_counter()
        try:
            events = self.engine.apply(game.state, seat, move)
        except EngineError as exc:
            self.metrics.move_rejected(self.game_type, exc.reason)
            raise
        except Exception:
            self._drop(game)  # an engine bug may have left the state half-changed
            raise
        engine_seconds = time.perf_counter() - started
        now = self.clock()
        game.table.after_move(seat, now, self.engine.to_act(game.state))
        record = MoveRecord(
            version=game.version + 1,
            seat=seat,
            move=str(move),
            events=[*extra, *(event_dict(e) for e in events)],
            request_id=request_id or None,
            applied_at=now,
            finished=self.outcome(game) is not None,
        )
        await self._append(game, record, expected_version)
        self.metrics.move_applied(self.game_type, engine_seconds)
        return record

    async def _append(
        self, game: LiveGame, record: MoveRecord, expected_version: int | None = None
    ) -> None:
        """Log an entry already applied to the live game (lock held); on any failure the
        live game is dropped and rebuilt from the log by the next call."""
        finished = record.finished
        record = dataclasses.replace(
            record,
            lobby=game.table.lobby(finished) if self._lobby_changes(game, record) else None,
            due_at=None if finished else game.table.due_at(record.applied_at),
        )
        try:
            await self.store.append(game.record.game_id, record)
        except (VersionConflict, DuplicateRequest) as exc:
            # Another replica wrote first: our state is behind the log.
            self._drop(game)
            if isinstance(exc, VersionConflict):
                raise StaleVersion(exc.current, expected_version or game.version) from exc
            raise Unavailable("the move raced a retry of itself; retry") from exc
        except (StoreError, OSError) as exc:
            self._drop(game)
            raise Unavailable(f"the store is unavailable: {exc}") from exc
        except BaseException:
            self._drop(game)  # cancelled mid-append: the log decides, reload from it
            raise
        self._commit(game, record)
        if finished:
            self.in_progress = max(0, self.in_progress - 1)
            self.metrics.game_finished(self.game_type)

    @staticmethod
    def _lobby_changes(game: LiveGame, record: MoveRecord) -> bool:
        """Whether this entry changes what the lobby shows (seats or status)."""
        return record.finished or record.move.startswith(tables.TABLE_ENTRY)

    # --- tables: seats, resigning, bots and clocks -------------------------------------

    async def join(self, game_id: str, seat: int | None, name: str) -> tuple[Snapshot, int, str]:
        """Take an open seat (the first one when ``seat`` is None): the game, the seat and
        its new token. The last join starts the game."""
        name = tables.player_name(name)
        async with self.locked(game_id) as game:
            table = game.table
            if self.outcome(game) is not None:
                raise GameOver("the game is over")
            if seat is None:
                seat = table.first_open()
                if seat is None:
                    raise SeatNotOpen("no seat is open at this table")
            elif not 0 <= seat < game.record.players:
                raise BadRequest(f"seat must be 0..{game.record.players - 1}")
            elif table.seats[seat].state != tables.OPEN:
                raise SeatNotOpen(f"seat {seat} is not open", seat=seat)
            token = auth.new_token()
            digest = auth.token_hash(token)
            now = self.clock()
            to_act = self.engine.to_act(game.state)
            started = table.join(seat, name, digest, now, to_act)
            events = [
                _table_event("player_joined", f"{name} sat down", seat, name=name),
                {
                    "kind": "seat_token",
                    "text": "",
                    "seat": seat,
                    "data": {"sha256": digest},
                    "to": [],
                },
            ]
            if started:
                events.append(_table_event("game_started", "every seat is taken: the game begins"))
            record = MoveRecord(game.version + 1, seat, tables.JOIN, events, applied_at=now)
            await self._append(game, record)
            self._kick(game)
            return self.snapshot(game, seat), seat, token

    async def leave(self, game_id: str, seat_token: str | None) -> Snapshot:
        """Give a seat back before the start: it opens again and its token stops working."""
        async with self.locked(game_id) as game:
            seat = self._seated(game, seat_token)
            if self.outcome(game) is not None:
                raise GameOver("the game is over")
            if not game.table.waiting:
                raise GameStarted("the game has started; resign instead")
            name = game.table.seats[seat].name
            game.table.leave(seat)
            now = self.clock()
            event = _table_event("player_left", f"{name} left; the seat is open again", seat)
            record = MoveRecord(game.version + 1, seat, tables.LEAVE, [event], applied_at=now)
            await self._append(game, record)
            return self.snapshot(game, None)

    async def resign(self, game_id: str, seat_token: str | None) -> tuple[Snapshot, Turn]:
        """Give up a seat in a game in progress (see Table.resign)."""
        async with self.locked(game_id) as game:
            seat = self._seated(game, seat_token)
            if self.outcome(game) is not None:
                raise GameOver("the game is over")
            if game.table.waiting:
                raise GameNotStarted("the game has not started; leave instead")
            if game.table.seats[seat].state == tables.GIVEN_UP:
                raise AlreadyGivenUp("this seat has already given up")
            record = await self._give_up(game, seat, "resigned", ())
            self._kick(game)
            return self.snapshot(game, seat), self.turn_for(record, seat)

    def _seated(self, game: LiveGame, seat_token: str | None) -> int:
        seat = self._seat(game, seat_token)
        if seat is None:
            raise auth.MissingToken("this needs a seat token: authorization: Bearer <token>")
        return seat

    async def _give_up(
        self, game: LiveGame, seat: int, why: str, extra: tuple[dict[str, Any], ...]
    ) -> MoveRecord:
        now = self.clock()
        ended = game.table.resign(seat, now, game.record.players, why)
        name = game.table.seats[seat].name or f"Seat {seat}"
        events = [*extra, _table_event("resigned", f"{name} {why}", seat)]
        if ended:
            events.append(_table_event("game_over", "one side is left: it wins"))
        else:
            events.append(
                _table_event("zombie", f"the service plays {name}'s seat from now on", seat)
            )
        record = MoveRecord(
            game.version + 1, seat, tables.RESIGN, events, applied_at=now, finished=ended
        )
        await self._append(game, record)
        return record

    def _replay_table_entry(self, game: LiveGame, move: MoveRecord) -> None:
        """Apply a logged table entry (see services.kit.table) to the live game."""
        table, at, seat = game.table, move.applied_at, move.seat
        data = {e["kind"]: e.get("data", {}) for e in move.events}
        if move.move == tables.JOIN:
            name = data["player_joined"]["name"]
            table.join(seat, name, data["seat_token"]["sha256"], at, self.engine.to_act(game.state))
        elif move.move == tables.LEAVE:
            table.leave(seat)
        elif move.move == tables.RESIGN:
            why = "forfeited on time" if "timeout" in data else "resigned"
            table.resign(seat, at, game.record.players, why)
        elif move.move == tables.EXPIRE:
            table.end(tables.EXPIRE, game.record.players)
        elif move.move == tables.ABANDON:
            table.end(tables.ABANDON, game.record.players)
        else:
            raise ValueError(f"unknown table entry {move.move!r}")

    def _kick(self, game: LiveGame) -> None:
        """Queue the game if a bot seat is to act: the service plays it, off this call."""
        if game.table.bot_to_move() is None:
            return
        game_id = game.record.game_id
        self.warm_bots()
        if game_id not in self._queued:
            self._queued.add(game_id)
            self._bot_queue.append(game_id)
        while len(self._bot_runners) < self.bot_games and len(self._bot_runners) < len(
            self._bot_queue
        ):
            task = asyncio.get_running_loop().create_task(self._run_bots())
            self._bot_runners.add(task)
            task.add_done_callback(self._bot_runners.discard)
            task.add_done_callback(_logged)

    def warm_bots(self) -> None:
        """Start the bot pool's workers now (the service does at start, unless told not
        to; else the first bot seat does): a process start is a second or more, which no
        bot's first move should wait for."""
        if self._bots_warming is None and self.bots is not None and hasattr(self.bots, "warm"):
            self._bots_warming = asyncio.get_running_loop().create_task(self.bots.warm())
            self._bots_warming.add_done_callback(_logged)

    async def _run_bots(self) -> None:
        """Take games from the queue in turn: one bot decision each, then to the back."""
        while self._bot_queue:
            game_id = self._bot_queue.popleft()
            self._queued.discard(game_id)
            try:
                again = await self._one_bot_move(game_id)
            except Exception as exc:  # the next entry or the clock's sweep tries again
                _log.warning("bot_move_failed", game_id=game_id, error=repr(exc))
                again = False
            if again and game_id not in self._queued:
                self._queued.add(game_id)
                self._bot_queue.append(game_id)
            await asyncio.sleep(0)

    async def _one_bot_move(self, game_id: str) -> bool:
        """One bot decision on the game, if one is due; whether another follows."""
        async with self.locked(game_id) as game:
            if self.outcome(game) is not None:
                return False
            seat = game.table.bot_to_move()
            if seat is None:
                return False
            await self._bot_move(game, seat, ())
            if self.outcome(game) is not None:
                return False
            return game.table.bot_to_move() is not None

    async def _bot_move(self, game: LiveGame, seat: int, extra: tuple[dict[str, Any], ...]) -> None:
        """The bot's move for ``seat`` (lock held), logged as that seat's move.

        With a bot pool the level's search runs in a worker process, so the event loop
        and every other game go on; this game waits for it (its lock is held, so no
        other entry can slip in between the decision and its append). Without one (tests,
        tools), or if the search fails, a uniformly random legal move: a bot never stalls
        a game.
        """
        level = game.table.seats[seat].level
        moves = self.engine.legal_moves(game.state, seat)
        move = moves[0] if len(moves) == 1 else None
        if move is None and self.bots is not None:
            try:
                text = await self.bots.decide(
                    self.game_type, game.state, seat, level, players=game.record.players
                )
                move = self.engine.parse_move(text)
            except Exception as exc:
                _log.warning("bot_search_failed", seat=seat, level=level, error=repr(exc))
                move = None
            if move is not None and move not in moves:
                _log.warning("bot_move_not_legal", seat=seat, level=level)
                move = None
        if move is None:
            move = self._bot_rng.choice(moves)
        event = _table_event(
            "bot_move", f"the {level} bot moved for seat {seat}", seat, level=level
        )
        await self._apply_move(game, seat, move, extra=(*extra, event))

    async def settle(self) -> None:
        """Wait until no bot of this service has a move to make (tests)."""
        while self._bot_runners:
            await asyncio.gather(*list(self._bot_runners), return_exceptions=True)

    async def sweep(self, limit: int = 100) -> int:
        """Act on every game due now: deadlines passed, bots to move after a restart,
        waiting tables expired, games abandoned. The number of entries logged."""
        now = self.clock()
        try:
            due = await self.store.due(
                self.game_type,
                now,
                waiting_ttl=self.waiting_ttl,
                idle_seconds=self.idle_seconds,
                limit=limit,
            )
        except StoreError as exc:
            raise Unavailable(f"the store is unavailable: {exc}") from exc
        done = 0
        for game_id in due:
            try:
                done += await self.fire(game_id)
            except (StaleVersion, Unavailable, GameCorrupt, GameNotFound) as exc:
                # Another replica fired first, or the store is down: the next sweep sees.
                _log.info("sweep_skipped", game_id=game_id, why=str(exc))
        return done

    async def fire(self, game_id: str) -> int:
        """Whatever is due on one game now, at most one entry; 1 if one was logged."""
        async with self.locked(game_id) as game:
            if self.outcome(game) is not None:
                return 0
            now = self.clock()
            table, players = game.table, game.record.players
            if table.waiting:
                if not self.waiting_ttl or game.record.created_at > now - self.waiting_ttl:
                    return 0
                entry, kind = tables.EXPIRE, "table_expired"
            elif (seat := table.overdue(now)) is not None:
                timeout = _table_event("timeout", f"seat {seat} ran out of time", seat)
                if table.plan.clock is not None and table.plan.clock.forfeit:
                    await self._give_up(game, seat, "forfeited on time", (timeout,))
                else:
                    await self._bot_move(game, seat, (timeout,))
                self._kick(game)
                return 1
            elif (seat := table.bot_to_move()) is not None:
                await self._bot_move(game, seat, ())
                self._kick(game)
                return 1
            elif (
                table.plan.clock is None
                and self.idle_seconds
                and game.updated_at <= now - self.idle_seconds
            ):
                entry, kind = tables.ABANDON, "game_abandoned"
            else:
                return 0
            table.end(entry, players)
            event = _table_event(kind, tables.ENDINGS[entry][1])
            record = MoveRecord(
                game.version + 1, tables.SERVICE_SEAT, entry, [event], applied_at=now, finished=True
            )
            await self._append(game, record)
            return 1

    async def list_games(self, **filters: Any) -> tuple[list[GameRecord], int]:
        """A page of the lobby and how many tables are waiting."""
        try:
            games = await self.store.list_games(self.game_type, **filters)
            waiting = await self.store.count_waiting(self.game_type)
        except StoreError as exc:
            raise Unavailable(f"the store is unavailable: {exc}") from exc
        return games, waiting

    async def _previous(self, game: LiveGame, request_id: str, seat: int, move: Any) -> Turn:
        version = game.requests[request_id]
        earlier = next((m for m in game.recent if m.version == version), None)
        if earlier is None:
            (earlier,) = await self._moves(game.record.game_id, version - 1, 1)
        if earlier.seat != seat or earlier.move != str(move):
            raise RequestIdReused(
                f"request_id {request_id!r} was used for another move at version {version}"
            )
        return self.turn_for(earlier, seat)

    def _commit(self, game: LiveGame, record: MoveRecord) -> None:
        game.version = record.version
        game.updated_at = record.applied_at
        if record.request_id is not None:
            game.requests[record.request_id] = record.version
        game.recent.append(record)
        self._notify(game, record)

    async def catch_up(self, game_id: str, version: int | None = None) -> None:
        """Apply moves another replica logged (a shared store told us of them)."""
        game = self._live.get(game_id)
        if game is None or (version is not None and game.version >= version):
            return
        async with game.lock:
            if game.broken:
                return
            await self._follow(game)

    async def _follow(self, game: LiveGame) -> None:
        """Replay the logged moves after the live version (lock held) and tell watchers."""
        for record in await self._moves(game.record.game_id, game.version, None):
            await self._replay(game, [record])
            self._notify(game, record)

    # --- watching ---------------------------------------------------------------------

    _closing: str | None = None  # why every stream was ended (set once, by a drain)

    def _notify(self, game: LiveGame, record: MoveRecord) -> None:
        """Queue the new turn, and the view at this version, for every watcher.

        Views are built here, with the lock held, so each is the view at exactly this
        version; one per seat watching, shared by that seat's watchers.
        """
        if not game.watchers:
            return
        snapshots: dict[int | None, Snapshot] = {}
        for watcher in list(game.watchers):
            if watcher.closed:
                continue
            if watcher.seat not in snapshots:
                snapshots[watcher.seat] = self.snapshot(game, watcher.seat)
            if len(watcher.pending) >= watcher.limit:
                self._close_watcher(
                    watcher,
                    WatcherTooSlow(
                        "this watcher fell too far behind; resume from the last version seen",
                        version=record.version - 1,
                        limit="watch_queue_limit",
                    ),
                )
                game.watchers.remove(watcher)
                continue
            if watcher.pending:
                # Only the newest pending update keeps its view: a slow watcher pins
                # one view, not one per move it is behind.
                watcher.pending[-1] = (watcher.pending[-1][0], None)
            watcher.pending.append((record, snapshots[watcher.seat]))
            watcher.wake.set()

    def _close_watcher(self, watcher: _Watcher, error: BaseException) -> None:
        watcher.closed = True
        watcher.error = error
        watcher.wake.set()

    async def watch(
        self, game_id: str, seat_token: str | None, from_version: int | None
    ) -> AsyncGenerator[WatchItem, None]:
        """The view now (``from_version`` None), or the turns after ``from_version``; then
        every new turn."""
        async with self.locked(game_id) as game:
            if self._closing is not None:
                # Admitted before the drain began, here after close_watchers ran.
                raise self._closed_error(from_version)
            seat = self._seat(game, seat_token)
            if from_version is not None and from_version > game.version:
                await self._follow(game)  # seen on another replica: read the log first
            if from_version is not None and not 0 <= from_version <= game.version:
                raise VersionOutOfRange(f"from_version must be 0..{game.version}")
            snap = self.snapshot(game, seat)
            backlog: list[WatchItem] = []
            if from_version is not None and from_version < game.version:
                missed = [m for m in game.recent if m.version > from_version]
                if not missed or missed[0].version != from_version + 1:
                    # No further than the live version: a shared log may already hold
                    # moves of another replica, which _follow queues when it hears of them.
                    missed = await self._moves(game_id, from_version, game.version - from_version)
                backlog = [WatchItem(self.turn_for(m, seat), None) for m in missed]
                backlog[-1] = WatchItem(backlog[-1].turn, snap)
            else:
                backlog = [WatchItem(None, snap)]
            watcher = _Watcher(seat, self.watch_queue_limit)
            game.watchers.append(watcher)
        return self._stream(game, watcher, backlog)

    async def _stream(
        self, game: LiveGame, watcher: _Watcher, backlog: list[WatchItem]
    ) -> AsyncGenerator[WatchItem, None]:
        try:
            for item in backlog:
                yield item
            while True:
                if watcher.pending:
                    record, snap = watcher.pending.popleft()
                    yield WatchItem(self.turn_for(record, watcher.seat), snap)
                    continue
                if watcher.error is not None:
                    raise watcher.error
                watcher.wake.clear()
                await watcher.wake.wait()
        finally:
            watcher.closed = True
            if watcher in game.watchers:
                game.watchers.remove(watcher)

    def close_watchers(self, message: str) -> None:
        """End every stream, and refuse those still on their way in (the service is
        draining): UNAVAILABLE with the version to resume from, once what is pending is
        sent. Clients resume elsewhere."""
        self._closing = message
        for game in self._live.values():
            for watcher in game.watchers:
                self._close_watcher(watcher, self._closed_error(game.version))
            game.watchers.clear()

    def _closed_error(self, version: int | None) -> Unavailable:
        if version is None:
            return Unavailable(f"{self._closing}; watch again", draining="true")
        return Unavailable(
            f"{self._closing}; resume from version {version}", draining="true", version=version
        )

    @property
    def live_count(self) -> int:
        return len(self._live)

    async def remove_finished(self, older_than_seconds: float) -> list[str]:
        """Forget finished games whose end is older than the retention time."""
        cutoff = self.clock() - older_than_seconds
        try:
            gone = await self.store.delete_finished_before(cutoff, self.game_type)
        except StoreError as exc:
            raise Unavailable(f"the store is unavailable: {exc}") from exc
        for gid in gone:
            game = self._live.pop(gid, None)
            if game is not None:
                game.broken = True
        self.metrics.games_live(self.game_type, len(self._live))
        return gone
