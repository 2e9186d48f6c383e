"""A decision's time limit: a deadline on the monotonic clock, or none; and a search
that gives way when told to."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Protocol


class Flag(Protocol):
    """A shared byte (multiprocessing's RawValue("b")): non-zero asks searches to stop."""

    value: int


@dataclass(frozen=True)
class Deadline:
    """When a decision must be taken by (``at`` on ``time.perf_counter``), or never; and
    a search that gives way: once ``yield_to`` is raised (and ``floor`` has passed, so
    every decision gets some search) the deadline has passed too."""

    at: float | None = None
    yield_to: Flag | None = None
    floor: float = 0.0

    @classmethod
    def after(
        cls, ms: float | None, yield_to: Flag | None = None, floor_ms: float = 0.0
    ) -> Deadline:
        """``ms`` milliseconds from now; None: no time limit (an iteration budget only).
        With ``yield_to``, sooner once it is raised, but not before ``floor_ms``."""
        now = time.perf_counter()
        return cls(None if ms is None else now + ms / 1000.0, yield_to, now + floor_ms / 1000.0)

    def passed(self) -> bool:
        if self.at is None:
            return False
        now = time.perf_counter()
        if now >= self.at:
            return True
        return self.yield_to is not None and bool(self.yield_to.value) and now >= self.floor


NEVER = Deadline()
