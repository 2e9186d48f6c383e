"""A decision's time limit: a deadline on the monotonic clock, or none."""

from __future__ import annotations

import time
from dataclasses import dataclass


@dataclass(frozen=True)
class Deadline:
    """When a decision must be taken by (``at`` on ``time.perf_counter``), or never."""

    at: float | None = None

    @classmethod
    def after(cls, ms: float | None) -> Deadline:
        """``ms`` milliseconds from now; None: no time limit (an iteration budget only)."""
        return cls(None if ms is None else time.perf_counter() + ms / 1000.0)

    def passed(self) -> bool:
        return self.at is not None and time.perf_counter() >= self.at


NEVER = Deadline()
