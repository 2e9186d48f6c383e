"""An alarm per key at a wall-clock time: the service's own games ring at their deadline.

The clock's sweep asks the store every interval for what is due, which may be up to an
interval late; a game this process holds rings at its deadline instead (``call_later``
on the event loop, with the wall clock converted once when set). Setting a key again
moves its alarm; ``None`` removes it. The callback gets the key and must not raise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

# Rung this much after the time, so the wall clock read then has surely passed it (the
# loop's monotonic clock and the wall clock need not tick alike).
LATE = 0.005


class Alarms:
    def __init__(self, ring: Callable[[str], object], clock: Callable[[], float]) -> None:
        self._ring = ring
        self._clock = clock
        self._set: dict[str, tuple[float, asyncio.TimerHandle]] = {}

    def __len__(self) -> int:
        return len(self._set)

    def set(self, key: str, at: float | None) -> None:
        """Ring ``key`` at ``at`` (wall-clock seconds; None: never)."""
        current = self._set.get(key)
        if current is not None:
            if current[0] == at:
                return
            current[1].cancel()
            del self._set[key]
        if at is None:
            return
        delay = max(0.0, at - self._clock()) + LATE
        handle = asyncio.get_running_loop().call_later(delay, self._rang, key, at)
        self._set[key] = (at, handle)

    def _rang(self, key: str, at: float) -> None:
        current = self._set.get(key)
        if current is not None and current[0] == at:
            del self._set[key]
        self._ring(key)

    def clear(self) -> None:
        for _, handle in self._set.values():
            handle.cancel()
        self._set.clear()
