"""Live games: the engine and the move log of one game service.

Here: creating a game, loading and replaying it from its log, its snapshot, submitting
and appending moves, its history. The :class:`GameManager` is assembled from this and
parts of one job each: seats and the lobby (:mod:`services.kit.seats`), bot turns
(:mod:`services.kit.botmoves`), the clock's sweep (:mod:`services.kit.sweep`) and
watchers (:mod:`services.kit.watchers`); what they use of each other is declared once,
in :mod:`services.kit.manager`.

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
import secrets
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog

from services.kit import auth, corruption, tracing
from services.kit import rematch as rematches
from services.kit import table as tables
from services.kit.botmoves import BotMoves
from services.kit.creators import Creators
from services.kit.engine import (
    BadOptions,
    Engine,
    EngineError,
    Event,
    GameOver,
    NotYourDecision,
    Outcome,
)
from services.kit.errors import (
    AlreadyGivenUp,
    GameCorrupt,
    GameNotFound,
    GameNotStarted,
    LimitReached,
    RequestIdReused,
    StaleVersion,
    Unavailable,
    VersionOutOfRange,
)
from services.kit.kernel import always_public
from services.kit.outbox.tracker import PlayerEvents
from services.kit.players import seats as holders
from services.kit.players.seats import Caller, PlayerPolicy
from services.kit.players.verifier import Player
from services.kit.ratings import headers as rated_headers
from services.kit.ratings import metrics as rated_metrics
from services.kit.ratings import tables as rated_tables
from services.kit.seats import Seats
from services.kit.store import (
    CorruptRow,
    DuplicateRequest,
    GameRecord,
    MoveRecord,
    QuotaExceeded,
    Quotas,
    Store,
    StoreError,
    VersionConflict,
)
from services.kit.sweep import ClockSweep
from services.kit.watchers import Watcher, Watchers

_log = structlog.get_logger("games")

# Turns kept in memory per game, for watchers that resume a little behind and for retried
# request ids; older ones are read from the log. Few, because every live game pays for them.
RECENT_TURNS = 8
# Turns as seats see them, shared by the seats shown the same (turn_for): those of the last
# moves of the games moving at once.
SHARED_TURNS = 256


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
    rated_shape: str = ""  # a rated table's shape name (docs/ratings.md); "" for none
    rematch_offers: tuple[int, ...] = ()  # after the end: seats that offered a rematch
    rematch_game_id: str = ""  # once it started
    rematch_open: bool = False  # finished, and a rematch may still start


@dataclass(frozen=True)
class SeatInfo:
    """Who sits in a seat, and its clock, as the header shows it."""

    state: str  # open, taken, bot, given_up
    player_name: str
    level: str
    bank: float | None  # seconds left when its decision began (or now)
    deadline: float | None  # for a seat to act under a clock
    player_id: str = ""  # the player holding it (docs/players.md)


@dataclass(frozen=True)
class Turn:
    """One accepted move as one seat may see it."""

    version: int
    seat: int
    move_text: str  # empty when the move is secret from the viewer
    events: tuple[dict[str, Any], ...]
    applied_at: float


@dataclass(eq=False)
class LiveGame:
    record: GameRecord
    state: Any
    version: int
    updated_at: float
    requests: dict[str, int] = field(default_factory=dict)
    recent: deque[MoveRecord] = field(default_factory=lambda: deque(maxlen=RECENT_TURNS))
    watchers: list[Watcher] = field(default_factory=list)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    broken: bool = False  # dropped after a failed append; callers reload
    # Views built at ``views_version``, by seat: a reply and the watchers of one seat share one.
    views: dict[int | None, Any] = field(default_factory=dict)
    views_version: int = -1
    # The snapshots the watchers were just queued, by seat, at ``notified_version``: the
    # mover's answer, built right after with nothing between, is the same (submit).
    notified: dict[int | None, Snapshot] = field(default_factory=dict)
    notified_version: int = -1
    table: tables.Table = field(default=None)  # type: ignore[assignment]  # set on create/load


def _retrieved(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


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


def _refusal(exceeded: QuotaExceeded) -> LimitReached:
    """The refusal of a create over one of the owner's table quotas (the games quota is
    named by whoever creates: services.kit.creators.Owner.quota)."""
    most = exceeded.limit
    if exceeded.quota == "bot_tables":
        return LimitReached(
            f"at most {most} tables with a bot seat per client; finish or resign one first",
            limit="bot_tables_per_client",
        )
    if exceeded.quota == "all_bot_tables":
        return LimitReached(
            f"at most {most} tables of bots alone per client; let one finish first",
            limit="all_bot_tables_per_client",
        )
    return LimitReached(
        f"at most {most} tables waiting for players per client; fill or leave one first",
        limit="waiting_per_client",
    )


def mover_of(events: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> str:
    """Who made a logged game move, from its events: the bot on a timeout, a bot, or a
    person (see services.kit.table.Table.after_move)."""
    kinds = {e.get("kind") for e in events}
    if "timeout" in kinds:
        return tables.TIMEOUT
    if "bot_move" in kinds:
        return tables.BOT_MOVE
    return tables.PERSON


def turn_key(move: MoveRecord, shown: str, visible: tuple[int, ...]) -> tuple[Any, ...]:
    """What a seat is shown of a logged move (its text, which of its events): the seats
    with the same key share one Turn."""
    return (id(move), shown, visible)


def event_dict(event: Event) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": event.kind, "text": event.text}
    if event.seat is not None:
        out["seat"] = event.seat
    if event.data:
        out["data"] = dict(event.data)
    if event.to is not None:
        out["to"] = sorted(event.to)
    return out


class GameManager(Seats, BotMoves, ClockSweep, Watchers):
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
        bot_tables_per_client: int = 10,
        all_bot_tables_per_client: int = 2,
        bots: Any = None,
        bot_games: int = 1,
        alarms: bool | None = None,
        players: PlayerPolicy | None = None,
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
        # Whose player tokens the service trusts, and the per-player quotas.
        self.players = players or PlayerPolicy.off()
        self.clock = clock
        self._live: OrderedDict[str, LiveGame] = OrderedDict()
        self._turns: OrderedDict[tuple[Any, ...], tuple[MoveRecord, Turn]] = OrderedDict()
        self._loading: dict[str, asyncio.Future[LiveGame]] = {}
        # A game whose moves are all public needs no stored move parsed to show it.
        self._public_move = None if engine.public_move is always_public else engine.public_move
        # An engine whose seats' views of a state differ only in the viewer says so with
        # reseat_view(view, seat): one view is built per version, the others from it.
        self._reseat_view: Callable[[Any, int | None], Any] | None = getattr(
            engine, "reseat_view", None
        )
        self._created = 0
        self.waiting_ttl = waiting_ttl  # a table with open seats expires after this
        self.idle_seconds = idle_seconds  # a game without a clock or a move is abandoned
        self.waiting_per_client = waiting_per_client
        # Per owner: tables with a bot seat, and tables of bots alone (0: no limit).
        self.bot_tables_per_client = bot_tables_per_client
        self.all_bot_tables_per_client = all_bot_tables_per_client
        self._init_bots(bots, bot_games)
        # Alarms at deadlines need the wall clock: with an injected one (tests move it by
        # hand) only the sweep fires.
        self._init_clock(clock is time.time if alarms is None else alarms)
        self.player_events = PlayerEvents(self.game_type)  # the outbox (services.kit.outbox)

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
        rated: bool = False,
        player: Player | None = None,
        several_seats: bool = False,
        game_id: str | None = None,
        token_hashes: tuple[str, ...] | None = None,
    ) -> tuple[LiveGame, dict[int, str]]:
        """A new game and a secret token for each seat reserved for the creator (every
        seat without a ``plan``); the store keeps only their hashes.

        With ``owner_limit``, the game counts against ``owner``'s quota (named ``quota``)
        while it is in progress, and is refused once that owner has as many unfinished;
        with an ``owner``, a table with open seats also counts against the owner's
        waiting tables, one with a bot seat against its bot tables, and one of bots
        alone against its all-bot tables.

        With a ``player`` (a player's CreateGame), the reserved seats are the player's (one
        unless ``several_seats``), counted against its per-player quotas. A rematch names
        its ``game_id`` and carries its seats' ``token_hashes`` (no new tokens).
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
        if player is not None:
            plan = holders.claim(
                plan or tables.Plan.from_dict(None, players), player, several_seats
            )
        if seed is None:
            seed = secrets.randbits(63)
        if plan is not None and len(plan.seats) != players:
            raise BadOptions(f"seats lists {len(plan.seats)} seats for {players} players")
        if rated:  # a rated table's rules (docs/ratings.md)
            rated_tables.check_rated(info, players, options, plan)
        state = self.engine.new_game(seed, players, options)
        reserved = (
            range(players) if plan is None else plan.returns_tokens
        )  # seats whose token goes back to the creator
        tokens = {seat: auth.new_token() for seat in reserved} if token_hashes is None else {}
        hashes = token_hashes or tuple(
            auth.token_hash(tokens[s]) if s in tokens else "" for s in range(players)
        )
        now = self.clock()
        table = tables.Table.create(
            plan or tables.Plan.from_dict(None, players),
            hashes,
            self.engine.GAME.sides_of(players, options),
            now,
            self.engine.to_act(state),
        )
        record = GameRecord(
            game_id=game_id or secrets.token_urlsafe(12),
            game_type=self.game_type,
            players=players,
            options=options.to_dict(),
            seed=seed,
            token_hashes=hashes,
            created_at=now,
            updated_at=now,
            owner=owner,
            table=rated_tables.config(plan, rated),
            lobby=table.lobby(),
            waiting=table.waiting,
            due_at=table.due_at(now),
            bot_turn=table.bot_to_move() is not None,
            human_at=now,
            bot_seats=sum(s.state == tables.BOT for s in table.seats),
            seat_players=holders.seat_players(table.seats),
        )
        record = dataclasses.replace(
            record, outbox=self.player_events.created(record.game_id, table, now)
        )
        quotas = Quotas(owner_limit)
        if owner:
            quotas = Quotas(
                owner_limit,
                self.waiting_per_client,
                self.bot_tables_per_client,
                self.all_bot_tables_per_client,
            )
        try:
            if player is not None:
                await self.store.create(record, quotas=quotas, player_quotas=self.players.quotas())
            elif quotas.applying_to(record):
                await self.store.create(record, quotas=quotas)
            else:  # stores written before quotas (a benchmark's) take the game alone
                await self.store.create(record)
        except QuotaExceeded as exc:
            by_player = holders.refusal(exc)
            if by_player is not None:
                raise by_player from None
            if exc.quota != "games":
                raise _refusal(exc) from None
            raise LimitReached(
                f"at most {exc.limit} games in progress per {quota or 'owner'}; finish one first",
                limit=quota or "games_per_owner",
            ) from None
        except StoreError as exc:
            raise Unavailable(f"the store is unavailable: {exc}") from exc
        game = LiveGame(record, state, 0, now, table=table)
        self.in_progress += 1
        self._remember(game)
        self._arm(game)
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
            self._arm(game)
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
            game.table.after_move(
                move.seat, move.applied_at, self.engine.to_act(game.state), mover_of(move.events)
            )
        game.version = move.version
        game.updated_at = move.applied_at
        if move.request_id is not None:
            game.requests[move.request_id] = move.version
        game.recent.append(move)

    def _remember(self, game: LiveGame) -> None:
        self.player_events.seen(game, self.outcome(game) is not None)
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
                if self._reseat_view is not None and game.views:
                    # The engine's views of one state differ in their viewer alone.
                    view = self._reseat_view(next(iter(game.views.values())), seat)
                else:
                    view = self.engine.view(game.state, seat)
                game.views[seat] = view
        table = game.table
        outcome = self.outcome(game)
        finished = outcome is not None
        to_act = () if finished or table.waiting else table.to_act
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
                    tables.shown_level(s.state, s.level, finished),
                    s.bank,
                    table.deadline(i) if i in to_act else None,
                    s.player_id,
                )
                for i, s in enumerate(table.seats)
            ),
            clock=table.plan.clock,
            rated_shape=rated_headers.rated_shape(self.engine.GAME, game.record),
            rematch_offers=tuple(table.rematch_offers),
            rematch_game_id=table.rematch_game_id,
            rematch_open=finished and rematches.possible(table, outcome),
        )

    def outcome(self, game: LiveGame) -> Outcome | None:
        """The rules' outcome, or the table's (resigned, expired, abandoned)."""
        return game.table.final_outcome(self.engine.outcome(game.state))

    def _seat(self, game: LiveGame, seat_token: Caller) -> int | None:
        return holders.seat_for(game.table, seat_token)

    async def read(self, game_id: str, seat_token: Caller) -> tuple[Snapshot, int | None]:
        """The game as the token's seat sees it. A read never writes nor waits for a
        search: what the clock made due is landed right after, off this call."""
        async with self.locked(game_id) as game:
            self.due_soon(game)
            seat = self._seat(game, seat_token)
            return self.snapshot(game, seat), seat

    async def legal_moves(
        self, game_id: str, seat_token: Caller
    ) -> tuple[Snapshot, list[Any], int | None]:
        """The token's seat's legal moves, once what the clock made due has landed: a
        seat whose time is up is never offered a move."""
        async with self.acting(game_id) as game:
            seat = self._seat(game, seat_token)
            snap = self.snapshot(game, seat, with_view=False)
            moves = []
            if seat is not None and seat in snap.to_act and game.table.seats[seat].state == "taken":
                with tracing.span("rules.legal_moves", game=self.game_type, seat=seat):
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
        visible = tuple(
            i
            for i, e in enumerate(move.events)
            if "to" not in e or (seat is not None and seat in e["to"])
        )
        # Every seat shown the same move text and the same events gets the same Turn (its
        # answer's bytes are then built once: services/kit/encoding.py): keyed by the
        # logged move itself (kept with it) and by exactly what this seat is shown.
        key = turn_key(move, shown, visible)
        found = self._turns.get(key)
        if found is not None and found[0] is move:
            return found[1]
        events = tuple({k: v for k, v in move.events[i].items() if k != "to"} for i in visible)
        turn = Turn(move.version, move.seat, shown, events, move.applied_at)
        if len(self._turns) >= SHARED_TURNS:
            self._turns.popitem(last=False)
        self._turns[key] = (move, turn)
        return turn

    async def history(
        self, game_id: str, seat_token: Caller, after: int, limit: int
    ) -> tuple[Snapshot, list[Turn]]:
        async with self.locked(game_id) as game:
            self.due_soon(game)
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
        seat_token: Caller,
        decode_move: Callable[[], Any],
        expected_version: int | None,
        request_id: str | None,
        with_view: bool = True,
    ) -> tuple[Snapshot, Turn]:
        """Apply one move for the token's seat and log it; return the game and the turn.

        ``with_view=False`` leaves the snapshot's view None (a client that watches the
        game gets the view from its stream): the view is not built for this answer.

        ``decode_move`` builds the move; it is called once the caller is known to hold a
        seat that may move now (or retries a request id), so an unauthenticated call
        learns nothing about what it sent, and a move out of turn is refused as such.

        What the clock made due lands first: a move after its seat's deadline is judged
        against the game after the timeout (a stale version, a seat that forfeited).

        A request id seen before returns that first turn again (the move is not applied
        twice); the same id with a different move is refused.
        """
        async with self.acting(game_id) as game:
            seat = self._seat(game, seat_token)
            if seat is None:
                raise holders.no_seat(seat_token, "a move needs a seat token")
            if expected_version is not None and expected_version > game.version:
                # The caller saw a later version: another replica logged moves this one
                # has not heard of yet. Read them from the shared log first; a retry's
                # own move may be among them.
                await self._follow(game)
            if request_id and request_id in game.requests:
                turn = await self._previous(game, request_id, seat, decode_move())
                return self.snapshot(game, seat, with_view=with_view), turn
            if expected_version is not None and expected_version != game.version:
                raise StaleVersion(game.version, expected_version)
            self._may_move(game, seat)
            move = decode_move()
            record = await self._apply_move(game, seat, move, request_id, expected_version)
            self._kick(game)
            # The seat's watchers were queued this very snapshot (no await since): shared.
            snap = game.notified.get(seat) if game.notified_version == game.version else None
            game.notified.clear()
            if snap is None or not with_view:
                snap = self.snapshot(game, seat, with_view=with_view)
            return snap, self.turn_for(record, seat)

    def _may_move(self, game: LiveGame, seat: int) -> None:
        """Refuse a move the table forbids, before the engine sees it."""
        if self.outcome(game) is not None:
            raise GameOver("the game is over")
        if game.table.waiting:
            raise GameNotStarted("seats are still open; the game starts when the last is taken")
        if game.table.seats[seat].state == tables.GIVEN_UP:
            raise AlreadyGivenUp("this seat has given up; the service plays it now")
        if seat not in game.table.to_act:
            # As the engine would refuse it (and counted alike), before the move is read.
            self.metrics.move_rejected(self.game_type, NotYourDecision.reason)
            raise NotYourDecision("it is not this seat's decision now")

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
            with tracing.span(
                "rules.apply", game=self.game_type, version=game.version + 1, seat=seat
            ):
                events = self.engine.apply(game.state, seat, move)
        except EngineError as exc:
            self.metrics.move_rejected(self.game_type, exc.reason)
            raise
        except Exception:
            self._drop(game)  # an engine bug may have left the state half-changed
            raise
        engine_seconds = time.perf_counter() - started
        now = self.clock()
        game.table.after_move(seat, now, self.engine.to_act(game.state), mover_of(extra))
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
        # The record as logged and queued to the watchers (its turn is then the one they
        # were sent: GameManager.turn_for shares a turn per logged record).
        committed = game.recent[-1]
        assert committed.version == record.version
        return committed

    async def _append(
        self, game: LiveGame, record: MoveRecord, expected_version: int | None = None
    ) -> None:
        """Log an entry already applied to the live game (lock held); on any failure the
        live game is dropped and rebuilt from the log by the next call."""
        finished = record.finished
        table = game.table
        # A finished game's later entries (rematch offers) leave it finished in the row.
        over = finished or self.outcome(game) is not None
        record = dataclasses.replace(
            record,
            lobby=table.lobby(over) if self._lobby_changes(game, record) else None,
            due_at=None if over else table.due_at(record.applied_at),
            bot_turn=not over and table.bot_to_move() is not None,
            human_at=table.human_at,
            outbox=self.player_events.made(
                game, record.version, self.outcome(game) is not None, record.applied_at
            ),
            rating=rated_tables.finishing_job(self.engine.GAME, game, self.outcome(game))
            if finished
            else None,
        )
        try:
            with tracing.span("store.append", game=self.game_type, version=record.version):
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
            rated_metrics.finished(record.rating)

    @staticmethod
    def _lobby_changes(game: LiveGame, record: MoveRecord) -> bool:
        """Whether this entry changes what the lobby shows (seats or status)."""
        return record.finished or record.move.startswith(tables.TABLE_ENTRY)

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
        with tracing.span("watchers.notify", watchers=len(game.watchers)):
            self._notify(game, record)
        self.player_events.committed(game, record.outbox)
        self._arm(game)

    # --- other replicas' moves, and retention -----------------------------------------

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
        self.player_events.seen(game, self.outcome(game) is not None)
        self._arm(game)

    async def close(self) -> None:
        """Stop the clock and the bot turns (the service is stopping; whoever serves the
        games next finds what is due in the store)."""
        await self.stop_clock()
        await self._bot_turns.close()

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
