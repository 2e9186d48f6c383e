"""Bot turns served fairly by a few runner tasks: the bot workers are shared.

A game with a bot to move waits in one of two lanes: ``PEOPLE`` (a person sits at the
table and waits for the bot) before ``BOTS`` (a table of bots alone, or of seats given
up). Within a lane, owners (the client address or application key that created the
table) take turns, and each owner's games take turns: one decision each, then to the
back. So at most ``runners`` decisions run at once (one per bot worker), a person's turn
waits for at most the decisions already running, and a client with many tables gets
the same share as a client with one.

A timeout's move does not queue here at all: it is decided under its game's lock and
goes straight to the worker pool, whose queue is first come first served, so only the
decisions already running are ahead of it (see :mod:`services.kit.botmoves`). And a
decision for a table of bots gives way to a person waiting (the pool's give-way flag,
raised by the manager while ``waiting(PEOPLE)``): the person's waits for no search.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict, deque
from collections.abc import Awaitable, Callable
from typing import Any

PEOPLE, BOTS = "people", "bots"
LANES = (PEOPLE, BOTS)


class Lane:
    """Owners in turn, and each owner's games in turn."""

    def __init__(self) -> None:
        self._owners: OrderedDict[str, deque[str]] = OrderedDict()

    def __len__(self) -> int:
        return sum(len(games) for games in self._owners.values())

    def add(self, owner: str, game_id: str) -> None:
        self._owners.setdefault(owner, deque()).append(game_id)

    def take(self) -> str | None:
        """The next owner's next game; the owner goes to the back of the turn."""
        if not self._owners:
            return None
        owner, games = next(iter(self._owners.items()))
        game_id = games.popleft()
        del self._owners[owner]
        if games:
            self._owners[owner] = games
        return game_id


class BotQueue:
    """Games with a bot to move, in two lanes, served by at most ``runners`` steps at once."""

    def __init__(
        self,
        step: Callable[[str, str], Awaitable[bool]],
        runners: int,
        done: Callable[[asyncio.Task[Any]], object],
        changed: Callable[[], object] = lambda: None,
    ) -> None:
        # One bot decision on a game of a lane; whether another follows; never raises.
        self._step = step
        self.runners = runners
        self._done = done  # told of each runner's end (one that raised is a bug to log)
        self._changed = changed  # told whenever a turn is queued or taken
        self._lanes = {lane: Lane() for lane in LANES}
        self._queued: dict[str, tuple[str, str]] = {}  # game id -> (lane, owner)
        self._stepping: set[str] = set()
        self._running: set[asyncio.Task[None]] = set()

    def __contains__(self, game_id: str) -> bool:
        return game_id in self._queued or game_id in self._stepping

    def waiting(self, lane: str) -> int:
        return len(self._lanes[lane])

    def saturated(self) -> bool:
        """Every runner is playing a turn: a turn queued now waits for one to end."""
        return len(self._stepping) >= self.runners

    def add(self, game_id: str, owner: str, lane: str) -> None:
        """Queue the game's next bot turn (unless it is queued or being played), and start
        runners for it, up to ``runners``."""
        if game_id in self._queued or game_id in self._stepping:
            return
        self._queued[game_id] = (lane, owner)
        self._lanes[lane].add(owner, game_id)
        self._changed()
        while len(self._running) < self.runners and len(self._running) < len(self._queued):
            task = asyncio.get_running_loop().create_task(self._run())
            self._running.add(task)
            task.add_done_callback(self._running.discard)
            task.add_done_callback(self._done)

    def _take(self) -> tuple[str, str, str] | None:
        for lane in LANES:
            game_id = self._lanes[lane].take()
            if game_id is not None:
                _, owner = self._queued.pop(game_id)
                self._changed()
                return game_id, owner, lane
        return None

    async def _run(self) -> None:
        """Take games in turn: one decision each, then to the back of their owner's turn."""
        while (taken := self._take()) is not None:
            game_id, owner, lane = taken
            self._stepping.add(game_id)
            try:
                again = await self._step(game_id, lane)
            finally:
                self._stepping.discard(game_id)
                self._changed()
            if again:
                self.add(game_id, owner, lane)
            await asyncio.sleep(0)

    async def settle(self) -> None:
        """Wait until every runner has ended: the queue is empty."""
        while self._running:
            await asyncio.gather(*list(self._running), return_exceptions=True)

    async def close(self) -> None:
        """Forget every queued turn and stop the runners (the service is stopping: the
        sweep of whoever serves the games next finds the turns in the store)."""
        for lane in LANES:
            self._lanes[lane] = Lane()
        self._queued.clear()
        self._changed()
        for task in list(self._running):
            task.cancel()
        await asyncio.gather(*list(self._running), return_exceptions=True)
