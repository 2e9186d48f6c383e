"""Per-client limits, one interceptor for the game services and the gateway.

A client is the peer's address without its port (or, where the operator trusts the
hop in front, the ``x-forwarded-for`` the gateway adds). Each limit refuses with
RESOURCE_EXHAUSTED and an ErrorInfo naming the limit, and is counted:

- ``rate``: calls a second per client (token bucket with a burst);
- ``streams``: open server streams (WatchGame) per client;
- ``auth_failures``: after this many UNAUTHENTICATED answers within a window, a client
  is refused outright until the window has passed (token guessing gets nowhere);
- ``max_message_bytes``: a request larger than this (the routed and game calls arrive as
  bytes, so their size is known before any parsing).
"""

from __future__ import annotations

import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import grpc
from prometheus_client import Counter

from services.kit import status

MAX_TRACKED = 100_000  # clients remembered; the least recently seen are forgotten


def client_of(peer: str | None) -> str:
    """'ipv4:10.0.0.7:51234' -> 'ipv4:10.0.0.7'; 'ipv6:[::1]:5000' -> 'ipv6:[::1]'."""
    if not peer:
        return "unknown"
    head, sep, tail = peer.rpartition(":")
    return head if sep and tail.isdigit() and head not in ("ipv4", "ipv6") else peer


def forwarded_client(metadata: Iterable[tuple[str, str | bytes]] | None) -> str | None:
    for key, value in metadata or ():
        if key == "x-forwarded-for":
            text = value.decode("latin-1") if isinstance(value, bytes) else value
            return text.split(",")[0].strip()[:128] or None
    return None


@dataclass
class _Bucket:
    tokens: float
    stamp: float


class RateLimiter:
    """``rate`` requests a second per client, bursts up to ``burst``; rate 0 is no limit."""

    def __init__(
        self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
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


class FailureWindow:
    """At most ``limit`` failures per client in ``window`` seconds (limit 0: no limit)."""

    def __init__(
        self, limit: int, window: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.limit = limit
        self.window = window
        self.clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def _recent(self, client: str) -> deque[float] | None:
        times = self._failures.get(client)
        if times is None:
            return None
        cutoff = self.clock() - self.window
        while times and times[0] <= cutoff:
            times.popleft()
        if not times:
            del self._failures[client]
            return None
        return times

    def blocked_for(self, client: str) -> float:
        """Seconds until this client may try again; 0.0 when it may now."""
        if not self.limit:
            return 0.0
        times = self._recent(client)
        if times is None or len(times) < self.limit:
            return 0.0
        return max(0.001, times[0] + self.window - self.clock())

    def record(self, client: str) -> None:
        if not self.limit:
            return
        times = self._recent(client)
        if times is None:
            times = self._failures[client] = deque(maxlen=self.limit)
            if len(self._failures) > MAX_TRACKED:
                self._failures.popitem(last=False)
        times.append(self.clock())


@dataclass(frozen=True)
class Limits:
    rate_per_client: float = 0.0
    burst_per_client: float = 1000.0
    streams_per_client: int = 0
    auth_failures_per_client: int = 0
    auth_failure_window: float = 60.0
    trust_forwarded_for: bool = False
    max_message_bytes: int = 1024 * 1024


class ClientLimits:
    """A guard of the server's interceptor (see services.kit.interceptor.Guard)."""

    def __init__(self, limits: Limits, limited: Counter) -> None:
        self.limits = limits
        self.rate = RateLimiter(limits.rate_per_client, limits.burst_per_client)
        self.streams = StreamCounter(limits.streams_per_client)
        self.auth = FailureWindow(limits.auth_failures_per_client, limits.auth_failure_window)
        self._limited = limited

    def client(self, context: grpc.aio.ServicerContext) -> str:
        if self.limits.trust_forwarded_for:
            forwarded = forwarded_client(context.invocation_metadata())
            if forwarded:
                return forwarded
        return client_of(context.peer())

    async def _refuse(
        self, context: grpc.aio.ServicerContext, limit: str, message: str, wait: float | None
    ) -> None:
        self._limited.labels(limit).inc()
        metadata = {"limit": limit}
        reason = "LIMIT_REACHED"
        if wait is not None:
            reason = "RATE_LIMITED"
            metadata["retry_after_ms"] = str(max(1, int(wait * 1000)))
        await status.abort(
            context,
            status.status_for(grpc.StatusCode.RESOURCE_EXHAUSTED, message, reason, metadata),
        )

    async def admit(
        self, request: Any, context: grpc.aio.ServicerContext, streaming: bool
    ) -> tuple[str, bool]:
        """Refuse the call if a limit says so; else the ticket (client, holds a stream)."""
        client = self.client(context)
        blocked = self.auth.blocked_for(client)
        if blocked:
            await self._refuse(
                context, "auth_failures", "too many failed authentications; wait", blocked
            )
        wait = self.rate.acquire(client)
        if wait:
            await self._refuse(context, "rate_per_client", "too many calls; slow down", wait)
        limit = self.limits.max_message_bytes
        if limit and isinstance(request, bytes) and len(request) > limit:
            await self._refuse(
                context, "max_message_bytes", f"the request is over {limit} bytes", None
            )
        if streaming and not self.streams.try_open(client):
            await self._refuse(
                context,
                "streams_per_client",
                f"at most {self.streams.limit} open streams per client",
                None,
            )
        return client, streaming

    def release(self, ticket: tuple[str, bool], context: grpc.aio.ServicerContext) -> None:
        client, stream = ticket
        if stream:
            self.streams.close(client)
        if context.code() == grpc.StatusCode.UNAUTHENTICATED:
            self.auth.record(client)
