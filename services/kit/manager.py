"""What the parts of the game manager use of each other.

:class:`services.kit.games.GameManager` is one object assembled from parts of one job
each: the live games and their log (games), seats and the lobby (seats), bot turns
(botmoves), the clock (sweep) and watchers (watchers). Each part is a mixin that
subclasses this protocol, so mypy checks every use of another part against the one
declaration here, and the manager against all of them.
"""

from __future__ import annotations

import contextlib
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from services.kit.engine import Engine, Outcome
from services.kit.players.seats import Caller, PlayerPolicy
from services.kit.store import MoveRecord, Store

if TYPE_CHECKING:
    from services.kit.botqueue import BotQueue
    from services.kit.games import LiveGame, Snapshot, Turn


class Manager(Protocol):
    # The live games and their log (services.kit.games).
    engine: Engine
    game_type: str
    store: Store
    clock: Callable[[], float]
    waiting_ttl: float
    idle_seconds: float
    watch_queue_limit: int
    players: PlayerPolicy
    _live: OrderedDict[str, LiveGame]

    async def get(self, game_id: str) -> LiveGame: ...
    def locked(self, game_id: str) -> contextlib.AbstractAsyncContextManager[LiveGame]: ...
    def outcome(self, game: LiveGame) -> Outcome | None: ...
    def snapshot(self, game: LiveGame, seat: int | None, *, with_view: bool = True) -> Snapshot: ...
    def turn_for(self, move: MoveRecord, seat: int | None) -> Turn: ...
    def _seat(self, game: LiveGame, seat_token: Caller) -> int | None: ...
    async def _moves(self, game_id: str, after: int, limit: int | None) -> list[MoveRecord]: ...
    async def _follow(self, game: LiveGame) -> None: ...
    async def _apply_move(
        self,
        game: LiveGame,
        seat: int,
        move: Any,
        request_id: str | None = None,
        expected_version: int | None = None,
        extra: tuple[dict[str, Any], ...] = (),
    ) -> MoveRecord: ...
    async def _append(
        self, game: LiveGame, record: MoveRecord, expected_version: int | None = None
    ) -> None: ...

    # Seats (services.kit.seats).
    async def _give_up(
        self, game: LiveGame, seat: int, why: str, extra: tuple[dict[str, Any], ...]
    ) -> MoveRecord: ...

    # Bot turns (services.kit.botmoves).
    _bot_turns: BotQueue

    def _kick(self, game: LiveGame) -> None: ...
    async def _bot_move(
        self,
        game: LiveGame,
        seat: int,
        extra: tuple[dict[str, Any], ...],
        urgent: bool = False,
        gives_way: bool = False,
    ) -> None: ...

    # The clock (services.kit.sweep).
    def acting(self, game_id: str) -> contextlib.AbstractAsyncContextManager[LiveGame]: ...
    def due_soon(self, game: LiveGame) -> None: ...
    def _arm(self, game: LiveGame) -> None: ...
    async def stop_clock(self) -> None: ...
