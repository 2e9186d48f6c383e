"""Bot turns: the service's moves for bot seats, given-up seats and seats out of time.

A game with a bot to move is queued (:class:`services.kit.botqueue.BotQueue`) and
served fairly, one decision each, off the call that made it due: a table where a person
waits goes before tables of bots, and each client's tables get their share. A seat out
of time is played at once instead, under the lock of whatever landed the timeout: its
search goes straight to the workers (only the decisions already running are ahead of
it) with its budget capped at ``TIMEOUT_MOVE_MS``, so it lands within a second of its
deadline. A bot's move is an ordinary move through the same versioned append. Part of
:class:`services.kit.games.GameManager` (see :mod:`services.kit.manager`).
"""

from __future__ import annotations

import asyncio
import random
from typing import TYPE_CHECKING, Any

import structlog

from services.kit import table as tables
from services.kit import tracing
from services.kit.botqueue import BOTS, PEOPLE, BotQueue
from services.kit.manager import Manager
from services.kit.seats import table_event

if TYPE_CHECKING:
    from services.kit.games import LiveGame

_log = structlog.get_logger("games")

# The longest search a timeout's move may take, whatever the level's budget: with every
# worker busy on a hard search (TABLETOP_BOT_MS_PER_DECISION, 500 ms by default) the move
# still lands within a second of the deadline. A person's seat is played at "medium"
# (a fifth of the budget, 100 ms by default), so this binds only above 1 s a decision.
TIMEOUT_MOVE_MS = 200.0
# The longest a timeout's move waits for a worker's answer, queueing included: workers
# still starting on a loaded machine, or stopped, must not hold the deadline (and the
# game's lock, which every read of it waits for). Past it the move is a uniformly random
# legal one, as when a search fails, so the entry lands within a second of its deadline.
TIMEOUT_WAIT_S = 0.8


def _logged(task: asyncio.Task[Any]) -> None:
    """A bot task's failure is logged (the next call or sweep retries the game)."""
    if not task.cancelled() and task.exception() is not None:
        _log.warning("bot_move_failed", error=repr(task.exception()))


class BotMoves(Manager):
    """Bot turns: part of the game manager."""

    def _init_bots(self, bots: Any, bot_games: int) -> None:
        """The bot state, set by the manager's constructor."""
        self._bot_rng = random.Random()  # bot choices are logged, so need no seed
        # Plays bot seats at their level (services.kit.bots.pool.BotPool); None: random.
        self.bots = bots
        # Games with a bot to move, served fairly, one decision each (see BotQueue).
        # ``bot_games`` runners take turns from the queue (as many as searches may run
        # at once), so bots cannot take the whole process from the people on it.
        self.bot_games = max(1, bot_games)
        self._bot_turns = BotQueue(self._bot_turn, self.bot_games, _logged, self._give_way)
        self._bots_warming: asyncio.Task[None] | None = None
        self._urgent = 0  # timeouts' searches asked and not answered yet

    def _give_way(self) -> None:
        """Tell the pool whether searches for tables of bots must give way: a person
        waits for a bot, or a timeout's move for a worker, and every worker is busy."""
        if self.bots is not None and hasattr(self.bots, "give_way"):
            queue = self._bot_turns
            waits = self._urgent > 0 or queue.waiting(PEOPLE) > 0
            self.bots.give_way(waits and queue.saturated())

    def _kick(self, game: LiveGame) -> None:
        """Queue the game if a bot seat is to act: the service plays it, off this call."""
        table = game.table
        if table.bot_to_move() is None:
            return
        self.warm_bots()
        waits = any(s.state == tables.TAKEN for s in table.seats)
        self._bot_turns.add(game.record.game_id, game.record.owner or "", PEOPLE if waits else BOTS)

    def warm_bots(self) -> None:
        """Start the bot pool's workers now (the service does at start, unless told not
        to; else the first bot seat does): a process start is a second or more, which no
        bot's first move should wait for."""
        if self._bots_warming is None and self.bots is not None and hasattr(self.bots, "warm"):
            self._bots_warming = asyncio.get_running_loop().create_task(self.bots.warm())
            self._bots_warming.add_done_callback(_logged)

    @tracing.traced_root("bot.turn")
    async def _bot_turn(self, game_id: str, lane: str) -> bool:
        """A turn from the queue: one bot decision; whether the game goes to the back."""
        try:
            return await self._one_bot_move(game_id, gives_way=lane == BOTS)
        except Exception as exc:  # the next entry or the clock's sweep tries again
            _log.warning("bot_move_failed", game_id=game_id, error=repr(exc))
            return False

    async def _one_bot_move(self, game_id: str, gives_way: bool = False) -> bool:
        """One bot decision on the game, if one is due (after whatever the clock made due);
        whether another follows. ``gives_way``: a table of bots, whose search stops early
        while a person waits."""
        async with self.acting(game_id) as game:
            if self.outcome(game) is not None:
                return False
            seat = game.table.bot_to_move()
            if seat is None:
                return False
            await self._bot_move(game, seat, (), gives_way=gives_way)
            if self.outcome(game) is not None:
                return False
            return game.table.bot_to_move() is not None

    async def _bot_move(
        self,
        game: LiveGame,
        seat: int,
        extra: tuple[dict[str, Any], ...],
        urgent: bool = False,
        gives_way: bool = False,
    ) -> None:
        """The bot's move for ``seat`` (lock held), logged as that seat's move; ``urgent``
        for a timeout's (its search capped at TIMEOUT_MOVE_MS, and every search that
        ``gives_way`` stops for it).

        With a bot pool the level's search runs in a worker process, so the event loop
        and every other game go on; this game waits for it (its lock is held, so no
        other entry can slip in between the decision and its append). Without one (tests,
        tools), if the search fails, or if a timeout's search is late, a uniformly random
        legal move: a bot never stalls a game.
        """
        level = game.table.seats[seat].level
        moves = self.engine.legal_moves(game.state, seat)
        move = moves[0] if len(moves) == 1 else None
        if move is None and self.bots is not None:
            asked: dict[str, Any] = {}
            if urgent:
                asked["cap_ms"] = TIMEOUT_MOVE_MS
                self._urgent += 1
                self._give_way()
            elif gives_way:
                asked["gives_way"] = True
            try:
                with tracing.span("bot.search", game=self.game_type, seat=seat, level=level):
                    decided = self.bots.decide(
                        self.game_type,
                        game.state,
                        seat,
                        level,
                        players=game.record.players,
                        **asked,
                    )
                    text = await (asyncio.wait_for(decided, TIMEOUT_WAIT_S) if urgent else decided)
                move = self.engine.parse_move(text)
            except TimeoutError:
                _log.warning("bot_search_late", seat=seat, level=level, waited_s=TIMEOUT_WAIT_S)
                move = None
            except Exception as exc:
                _log.warning("bot_search_failed", seat=seat, level=level, error=repr(exc))
                move = None
            finally:
                if urgent:
                    self._urgent -= 1
                    self._give_way()
            if move is not None and move not in moves:
                _log.warning("bot_move_not_legal", seat=seat, level=level)
                move = None
        if move is None:
            move = self._bot_rng.choice(moves)
        event = table_event("bot_move", f"the {level} bot moved for seat {seat}", seat, level=level)
        await self._apply_move(game, seat, move, extra=(*extra, event))

    async def settle(self) -> None:
        """Wait until no bot of this service has a move to make (tests)."""
        await self._bot_turns.settle()
