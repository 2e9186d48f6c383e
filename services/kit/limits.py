"""Per-client limits, one interceptor for the game services and the gateway.

A client is the peer's address without its port (or, where the operator trusts the
hop in front, the ``x-forwarded-for`` the gateway adds). Each limit refuses with
RESOURCE_EXHAUSTED and an ErrorInfo naming the limit, and is counted:

- ``rate``: calls a second per client (token bucket with a burst);
- ``streams``: open server streams (WatchGame) per client;
- ``auth_failures``: after this many UNAUTHENTICATED answers within a window from one
  address on one game (or ``ADDRESS_FACTOR`` times as many from one address on any
  games), that address's further calls that *fail* authentication are answered
  RESOURCE_EXHAUSTED with a retry delay instead, until the window has passed. Calls with
  a valid token, or none, always go through: many users behind one NAT are never locked
  out by one guesser among them, and a guesser gets no more than the limit per window;
- ``max_message_bytes``: a request larger than this (the routed and game calls arrive as
  bytes, so their size is known before any parsing);
- ``metadata_bytes`` and ``metadata_entries``: a call whose metadata (its headers) is over
  ``MAX_METADATA_BYTES`` in all or ``MAX_METADATA_ENTRIES`` entries, the limits
  docs/security.md names. gRPC itself is set to take far more (``GRPC_METADATA_BYTES``),
  so every call up to them is taken and every one beyond is refused here, with a
  reason; at gRPC's own defaults it refused between 8 and 16 KiB at random, and beyond
  without one. The gateway's Envoy applies the same two numbers.
"""

from __future__ import annotations

import functools
import inspect
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

import grpc
from prometheus_client import Counter

from services.kit import status
from services.kit.errors import LimitReached
from services.kit.interceptor import replace_behaviour

# Every ``limit`` a per-client refusal names (tabletop_limited_total on a service,
# tabletop_gateway_limited_total on the gateway): ClientLimits' and
# services.kit.overload.ConcurrencyLimit's. Each is a series at 0 from the start.
CLIENT_LIMITS = (
    "rate_per_client",
    "streams_per_client",
    "auth_failures",
    "max_message_bytes",
    "max_concurrent_calls",
    "metadata_bytes",
    "metadata_entries",
)

# The per-client limits at the front door: the gateway's defaults. Behind the gateway
# the services apply them too (services/run.py, deploy/k8s), keyed by the client the
# gateway names, for what reaches a service without the gateway's Python side counting
# it: failed authentications on the calls Envoy routes, and Play (Envoy routes a session
# straight to its game; its moves are messages no proxy counts: services/kit/session.py).
FRONT_DOOR = {
    "TABLETOP_RATE_PER_CLIENT": "500",
    "TABLETOP_BURST_PER_CLIENT": "1000",
    "TABLETOP_STREAMS_PER_CLIENT": "64",
    "TABLETOP_AUTH_FAILURES_PER_CLIENT": "30",
}

# A call's metadata: at most this many bytes (each entry's name and value) in this many
# entries. The gateway imports both for Envoy's own limits.
MAX_METADATA_BYTES = 16 * 1024
MAX_METADATA_ENTRIES = 100
# What gRPC core takes before our check (its grpc.max_metadata_size and
# grpc.absolute_max_metadata_size): well above the limits, so they are ours to answer.
GRPC_METADATA_BYTES = 4 * MAX_METADATA_BYTES
# Headers a proxy in front adds on the way in (the gateway's Envoy): not the caller's,
# not counted, so a call the gateway let through is never refused here for them.
PROXY_HEADERS = ("x-forwarded-for", "x-forwarded-proto", "x-request-id", "x-envoy-")

MAX_TRACKED = 100_000  # clients remembered; the least recently seen are forgotten
# An address may fail this many times the per-game limit across all games before its
# failures on any game are refused: spraying guesses over many games gains little.
ADDRESS_FACTOR = 10


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


def game_of(request: Any) -> str | None:
    """The game id of a serialized request, without parsing it: every game call but
    CreateGame carries ``string game_id = 1``, which a serializer writes first."""
    if not isinstance(request, bytes) or len(request) < 2 or request[0] != 0x0A:
        return None
    size = request[1]
    if size == 0 or size > 127 or len(request) < 2 + size:  # ids are short: a 1-byte length
        return None
    return request[2 : 2 + size].decode("utf-8", "replace")


def metadata_size(metadata: Iterable[tuple[str, str | bytes]] | None) -> tuple[int, int]:
    """(bytes, entries) of a call's metadata as its caller sent it: each entry's name and
    value, without the headers a proxy in front added (PROXY_HEADERS)."""
    size = entries = 0
    for key, value in metadata or ():
        if key.startswith(PROXY_HEADERS):
            continue
        size += len(key) + len(value)
        entries += 1
    return size, entries


def client_address(context: grpc.aio.ServicerContext[Any, Any], trust_forwarded_for: bool) -> str:
    """The client a call comes from: its peer, or the gateway's x-forwarded-for if trusted."""
    if trust_forwarded_for:
        forwarded = forwarded_client(context.invocation_metadata())
        if forwarded:
            return forwarded
    return client_of(context.peer())


@dataclass(frozen=True)
class _Lockout:
    seconds: float
    count: Callable[[], None]


# Set by ClientLimits.admit for the call it admits: the client is locked out of failing
# authentication for ``seconds``. Each call runs in its own task, so this is per call.
_LOCKOUT: ContextVar[_Lockout | None] = ContextVar("tabletop_auth_lockout", default=None)


# Set by ClientLimits.admit for a stream it admits: the wait (seconds, 0: none) before its
# client may send one more request message, each taken from the client's calls-a-second
# bucket, so a stream of requests (Play's moves) is held to the rate of separate calls.
_MESSAGES: ContextVar[Callable[[], float] | None] = ContextVar("tabletop_messages", default=None)
# Set alongside: the request size limit, checked on each message of such a stream.
_MESSAGE_BYTES: ContextVar[Callable[[int], None] | None] = ContextVar(
    "tabletop_message_bytes", default=None
)


def message_wait() -> float:
    """0 if this stream's client may send one more request now (taking it from its
    rate), else the seconds to wait (the refusal counted). 0 where no limits run."""
    acquire = _MESSAGES.get()
    return acquire() if acquire is not None else 0.0


def check_message_size(size: int) -> None:
    """Refuse one request message of a stream over max_message_bytes (LimitReached,
    counted), as a call's request is refused before it is read. None where no limits run."""
    check = _MESSAGE_BYTES.get()
    if check is not None:
        check(size)


def auth_refusal() -> grpc.Status | None:
    """What to answer instead of UNAUTHENTICATED when this call's client is locked out
    of failing authentication (None: answer UNAUTHENTICATED). Counts the refusal."""
    lockout = _LOCKOUT.get()
    if lockout is None:
        return None
    lockout.count()
    return status.status_for(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "too many failed authentications from this address; wait",
        "RATE_LIMITED",
        {"limit": "auth_failures", "retry_after_ms": str(max(1, int(lockout.seconds * 1000)))},
    )


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
    max_metadata_bytes: int = MAX_METADATA_BYTES
    max_metadata_entries: int = MAX_METADATA_ENTRIES


class ClientLimits:
    """A guard of the server's interceptor (see services.kit.interceptor.Guard)."""

    def __init__(self, limits: Limits, limited: Counter) -> None:
        self.limits = limits
        self.rate = RateLimiter(limits.rate_per_client, limits.burst_per_client)
        self.streams = StreamCounter(limits.streams_per_client)
        failures, window = limits.auth_failures_per_client, limits.auth_failure_window
        self.auth_game = FailureWindow(failures, window)  # by address and game
        self.auth = FailureWindow(failures * ADDRESS_FACTOR, window)  # by address
        self._limited = limited

    def client(self, context: grpc.aio.ServicerContext[Any, Any]) -> str:
        return client_address(context, self.limits.trust_forwarded_for)

    async def _refuse(
        self,
        context: grpc.aio.ServicerContext[Any, Any],
        limit: str,
        message: str,
        wait: float | None,
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
        self, request: Any, context: grpc.aio.ServicerContext[Any, Any], streaming: bool
    ) -> tuple[str, bool, str | None]:
        """Refuse the call if a limit says so; else the ticket (client, holds a stream,
        its (client, game) key)."""
        await self._check_metadata(context)
        client = self.client(context)
        game = game_of(request)
        keyed = f"{client} {game}" if game else None
        locked = max(
            self.auth.blocked_for(client), self.auth_game.blocked_for(keyed) if keyed else 0.0
        )
        _LOCKOUT.set(
            _Lockout(locked, self._limited.labels("auth_failures").inc) if locked else None
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
        if streaming:
            _MESSAGES.set(functools.partial(self._message, client))
            _MESSAGE_BYTES.set(self._message_size)
        return client, streaming, keyed

    def _message_size(self, size: int) -> None:
        limit = self.limits.max_message_bytes
        if limit and size > limit:
            self._limited.labels("max_message_bytes").inc()
            raise LimitReached(f"the message is over {limit} bytes", limit="max_message_bytes")

    def _message(self, client: str) -> float:
        wait = self.rate.acquire(client)
        if wait:
            self._limited.labels("rate_per_client").inc()
        return wait

    async def _check_metadata(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        size, entries = metadata_size(context.invocation_metadata())
        most = self.limits.max_metadata_entries
        if most and entries > most:
            await self._refuse(
                context, "metadata_entries", f"the call's metadata has over {most} entries", None
            )
        most = self.limits.max_metadata_bytes
        if most and size > most:
            await self._refuse(
                context, "metadata_bytes", f"the call's metadata is over {most} bytes", None
            )

    def release(
        self, ticket: tuple[str, bool, str | None], context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        client, stream, keyed = ticket
        if stream:
            self.streams.close(client)
        if context.code() == grpc.StatusCode.UNAUTHENTICATED:
            self.auth.record(client)
            if keyed:
                self.auth_game.record(keyed)

    def wrap(self, handler: grpc.GenericRpcHandler) -> grpc.GenericRpcHandler:
        """``handler`` with its UNAUTHENTICATED answers turned into the lockout's refusal
        for a locked-out client: for a server (the gateway) that relays statuses it did
        not decide itself. The game services ask :func:`auth_refusal` directly."""
        return _LockoutAware(handler)


class _RefusingContext:
    """A servicer context whose ``abort`` with UNAUTHENTICATED answers the lockout's
    refusal instead, when the call's client is locked out."""

    def __init__(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        self._context = context

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    async def abort(
        self,
        code: grpc.StatusCode,
        details: str = "",
        trailing_metadata: Sequence[tuple[str, str | bytes]] = (),
    ) -> None:
        if code == grpc.StatusCode.UNAUTHENTICATED:
            refusal = auth_refusal()
            if refusal is not None:
                code, details = refusal.code, refusal.details
                trailing_metadata = refusal.trailing_metadata
        await self._context.abort(code, details, trailing_metadata)


class _LockoutAware(grpc.GenericRpcHandler):
    def __init__(self, inner: grpc.GenericRpcHandler) -> None:
        self._inner = inner
        self._handlers: dict[str, grpc.RpcMethodHandler[Any, Any] | None] = {}

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler[Any, Any] | None:
        path = details.method
        if path not in self._handlers:
            self._handlers[path] = self._wrap(self._inner.service(details))
        return self._handlers[path]

    @staticmethod
    def _wrap(
        handler: grpc.RpcMethodHandler[Any, Any] | None,
    ) -> grpc.RpcMethodHandler[Any, Any] | None:
        if handler is None:
            return None
        # Under grpc.aio the behaviours are coroutine or async generator functions (the
        # stubs type the synchronous server's), hence Any.
        if handler.unary_unary is not None:
            unary: Any = handler.unary_unary

            async def unary_unary(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                return await unary(request, _RefusingContext(context))

            return replace_behaviour(handler, unary_unary=unary_unary)
        if handler.unary_stream is not None:
            stream: Any = handler.unary_stream
            if inspect.iscoroutinefunction(stream):  # writes with context.write

                async def writer(request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
                    await stream(request, _RefusingContext(context))

                return replace_behaviour(handler, unary_stream=writer)

            async def unary_stream(
                request: Any, context: grpc.aio.ServicerContext[Any, Any]
            ) -> Any:
                async for message in stream(request, _RefusingContext(context)):
                    yield message

            return replace_behaviour(handler, unary_stream=unary_stream)
        return handler
