"""Keys served in turn, one step each, by a few runner tasks.

A key whose step says another follows goes to the back of the queue, so a key with a
long run of steps does not hold up the keys behind it; at most ``runners`` steps run at
once, so the queue cannot take the whole process from the rest of it. The game manager
serves its games with a bot to move this way (see :mod:`services.kit.botmoves`).
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Hashable
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class RoundRobin(Generic[K]):
    def __init__(
        self,
        step: Callable[[K], Awaitable[bool]],
        runners: int,
        done: Callable[[asyncio.Task[Any]], object],
    ) -> None:
        self._step = step  # one step on a key, whether another follows; it does not raise
        self.runners = runners
        self._done = done  # told of each runner's end (one that raised is a bug to log)
        self._queue: deque[K] = deque()
        self._queued: set[K] = set()
        self._running: set[asyncio.Task[None]] = set()

    def add(self, key: K) -> None:
        """Queue ``key`` unless it is queued, and start runners for it, up to ``runners``."""
        if key not in self._queued:
            self._queued.add(key)
            self._queue.append(key)
        while len(self._running) < self.runners and len(self._running) < len(self._queue):
            task = asyncio.get_running_loop().create_task(self._run())
            self._running.add(task)
            task.add_done_callback(self._running.discard)
            task.add_done_callback(self._done)

    async def _run(self) -> None:
        """Take keys from the queue in turn: one step each, then to the back."""
        while self._queue:
            key = self._queue.popleft()
            self._queued.discard(key)
            again = await self._step(key)
            if again and key not in self._queued:
                self._queued.add(key)
                self._queue.append(key)
            await asyncio.sleep(0)

    async def settle(self) -> None:
        """Wait until every runner has ended: the queue is empty."""
        while self._running:
            await asyncio.gather(*list(self._running), return_exceptions=True)
