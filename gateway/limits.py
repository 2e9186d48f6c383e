"""Per-client limits: a request rate (token bucket) and a number of open streams.

A client is the peer's address as gRPC reports it, without the port. Behind a load
balancer that hides clients, set the limits on the balancer or raise these.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from dataclasses import dataclass

MAX_TRACKED = 100_000  # clients remembered; the least recently seen are forgotten


def client_of(peer: str | None) -> str:
    """'ipv4:10.0.0.7:51234' -> 'ipv4:10.0.0.7'; 'ipv6:[::1]:5000' -> 'ipv6:[::1]'."""
    if not peer:
        return "unknown"
    head, sep, tail = peer.rpartition(":")
    return head if sep and tail.isdigit() and head not in ("ipv4", "ipv6") else peer


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class RateLimiter:
    """``rate`` requests a second per client, bursts up to ``burst``; rate 0 is no limit."""

    def __init__(self, rate: float, burst: float, clock=time.monotonic) -> None:
        self.rate = rate
        self.burst = max(burst, 1.0)
        self.clock = clock
        self._buckets: OrderedDict[str, _Bucket] = OrderedDict()

    def acquire(self, client: str) -> float:
        """0.0 when the call may go; else the seconds until it could."""
        if self.rate <= 0:
            return 0.0
        now = self.clock()
        bucket = self._buckets.get(client)
        if bucket is None:
            bucket = self._buckets[client] = _Bucket(self.burst, now)
            if len(self._buckets) > MAX_TRACKED:
                self._buckets.popitem(last=False)
        else:
            self._buckets.move_to_end(client)
            bucket.tokens = min(self.burst, bucket.tokens + (now - bucket.stamp) * self.rate)
            bucket.stamp = now
        if bucket.tokens >= 1.0:
            bucket.tokens -= 1.0
            return 0.0
        return (1.0 - bucket.tokens) / self.rate


class StreamCounter:
    """Open streams per client, at most ``limit`` (0: no limit)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._open: dict[str, int] = {}

    def try_open(self, client: str) -> bool:
        count = self._open.get(client, 0)
        if self.limit and count >= self.limit:
            return False
        self._open[client] = count + 1
        return True

    def close(self, client: str) -> None:
        count = self._open.get(client, 0) - 1
        if count > 0:
            self._open[client] = count
        else:
            self._open.pop(client, None)
