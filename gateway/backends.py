"""Channels to each game's backends, balanced per call, and their health.

A route is a comma-separated list of addresses. One address is one channel with
gRPC's round_robin policy, which balances calls over every address the name resolves
to (``dns:///tabletop-glow-headless:50055`` gives one per pod). Several addresses get a
channel each, taken in turn per call. Either way calls, not connections, are balanced.

Health, two ways. Each channel holds a health ``Watch`` stream to its backend: the
backend pushes SERVING / NOT_SERVING (a drain, a shutdown) and a lost connection ends
the stream, so those are known at once and cost nothing while nothing changes (a probe
costs the backend about a millisecond of CPU at rest, grpc.aio's own price per call,
whatever the call). A polled ``Check`` with a short deadline stays, less often, for the
backend that answers nothing at all (stopped, hung, cut off), which a Watch waiting for
news never notices. A backend whose Watch is UNIMPLEMENTED (an older kit) is left to
the poll. gRPC's client-side health checking (``healthCheckConfig``) is left off, since
it would refuse every call to a backend whose Watch fails instead of leaving it in use.
A channel that failed its last check (or whose Watch said NOT_SERVING or ended) is
skipped; when every channel of a game failed, its calls are refused at once with
UNAVAILABLE (see gateway.router). A channel not yet checked is used: until health is
known, calls go through as they always did.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import grpc
import structlog
from grpc_health.v1 import health_pb2, health_pb2_grpc

from services.kit.tls import ClientTls

_log = structlog.get_logger("backends")


_SERVICE_CONFIG = json.dumps({"loadBalancingConfig": [{"round_robin": {}}], "methodConfig": []})


def channel_options(max_message_bytes: int) -> list[tuple[str, object]]:
    return [
        ("grpc.service_config", _SERVICE_CONFIG),
        ("grpc.max_receive_message_length", 16 * 1024 * 1024),
        # A call's request over max_message_bytes is refused before it is relayed; a
        # streamed message (Play's) is relayed, for the game to refuse it as an answer.
        ("grpc.max_send_message_length", 16 * 1024 * 1024),
        ("grpc.enable_retries", 0),
        ("grpc.keepalive_time_ms", 30_000),
        # Read from a backend's stream only as fast as the client reads from ours: no
        # window grown by BDP probing and little read ahead, so a stalled watcher's
        # updates wait in the backend (which ends the watcher) instead of the gateway.
        ("grpc.http2.bdp_probe", 0),
        ("grpc.http2.lookahead_bytes", 65536),
    ]


@dataclass
class Backend:
    """All channels to one game service."""

    service: str  # tabletop.channeling.v1.ChannelingService
    addresses: tuple[str, ...]
    channels: list[grpc.aio.Channel]
    up: bool = False
    # Per channel: True (its last check answered SERVING), False (it did not), None (not
    # checked yet).
    healthy: list[bool | None] = field(default_factory=list)
    _turn: itertools.cycle[int] = field(init=False, repr=False)
    # Raw-bytes multicallables: unary_unary or unary_stream, as their kind says.
    _methods: dict[tuple[int, str, str], Any] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._turn = itertools.cycle(range(len(self.channels)))
        if len(self.healthy) != len(self.channels):
            self.healthy = [None] * len(self.channels)

    @property
    def known_down(self) -> bool:
        """Every channel failed its last health check."""
        return bool(self.channels) and all(h is False for h in self.healthy)

    def next_channel(self) -> tuple[int, grpc.aio.Channel]:
        """The next channel in turn, skipping those known to be down (unless all are)."""
        if len(self.channels) == 1:
            return 0, self.channels[0]
        for _ in range(len(self.channels)):
            index = next(self._turn)
            if self.healthy[index] is not False:
                return index, self.channels[index]
        index = next(self._turn)
        return index, self.channels[index]

    def method(self, kind: str, path: str) -> Any:
        """A cached raw-bytes multicallable of the next channel for ``path``."""
        index, channel = self.next_channel()
        key = (index, kind, path)
        found = self._methods.get(key)
        if found is None:
            found = self._methods[key] = getattr(channel, kind)(path)
        return found


def make_channel(
    address: str, max_message_bytes: int, tls: ClientTls | None = None
) -> grpc.aio.Channel:
    options = channel_options(max_message_bytes)
    if tls is not None:
        return grpc.aio.secure_channel(address, tls.credentials(), options=options + tls.options())
    return grpc.aio.insecure_channel(address, options=options)


async def _serving(channel: grpc.aio.Channel, service: str, timeout: float) -> bool:
    stub = health_pb2_grpc.HealthStub(channel)
    try:
        check = stub.Check  # type: ignore[attr-defined]  # HealthStub's stub lacks its methods
        reply: health_pb2.HealthCheckResponse = await check(
            health_pb2.HealthCheckRequest(service=service), timeout=timeout
        )
    except (TimeoutError, grpc.RpcError):
        return False
    return reply.status == health_pb2.HealthCheckResponse.SERVING


class Backends:
    def __init__(
        self,
        routes: dict[str, Iterable[str]],
        *,
        max_message_bytes: int = 1024 * 1024,
        tls: ClientTls | None = None,
    ) -> None:
        self.by_service: dict[str, Backend] = {}
        self.watch_ends = 0  # health Watch streams that ended (each reopened later)
        for service, addresses in routes.items():
            addresses = tuple(a.strip() for a in addresses if a.strip())
            channels = [make_channel(a, max_message_bytes, tls) for a in addresses]
            self.by_service[service] = Backend(service, addresses, channels)

    def get(self, service: str) -> Backend | None:
        return self.by_service.get(service)

    async def check(self, timeout: float = 1.0) -> dict[str, bool]:
        """Ask every channel's health service at once; a game is up when any says SERVING."""
        backends = list(self.by_service.values())
        answers = await asyncio.gather(
            *(
                _serving(channel, backend.service, timeout)
                for backend in backends
                for channel in backend.channels
            )
        )
        results: dict[str, bool] = {}
        at = 0
        for backend in backends:
            healthy: list[bool | None] = list(answers[at : at + len(backend.channels)])
            at += len(backend.channels)
            up = any(healthy)
            if up != backend.up or healthy != backend.healthy:
                _log.info(
                    "backend", service=backend.service, up=up,
                    healthy=dict(zip(backend.addresses, healthy, strict=True)),
                )  # fmt: skip
            backend.healthy = healthy
            backend.up = up
            results[backend.service] = up
        return results

    def _set(self, backend: Backend, index: int, healthy: bool) -> bool:
        """Record one channel's health; True when the game's ``up`` changed."""
        before, was = backend.up, backend.healthy[index]
        backend.healthy[index] = healthy
        backend.up = any(backend.healthy)
        if was != healthy:
            _log.info(
                "backend", service=backend.service, up=backend.up,
                healthy=dict(zip(backend.addresses, backend.healthy, strict=True)),
            )  # fmt: skip
        return backend.up != before

    async def watch(
        self,
        backend: Backend,
        index: int,
        retry: float,
        changed: Callable[[str, bool], Awaitable[None]],
    ) -> None:
        """Follow channel ``index``'s health Watch for good: each status it pushes. A
        stream that ends after answering (the connection aged out, the backend restarted)
        is reopened at once; one that fails before answering marks the channel down and
        is tried again every ``retry`` seconds. ``changed(service, up)`` is awaited when
        the game's ``up`` changes."""
        stub = health_pb2_grpc.HealthStub(backend.channels[index])
        request = health_pb2.HealthCheckRequest(service=backend.service)
        while True:
            call = stub.Watch(request)  # type: ignore[attr-defined]  # stub lacks methods
            answered = False
            try:
                async for reply in call:
                    answered = True
                    serving = reply.status == health_pb2.HealthCheckResponse.SERVING
                    if self._set(backend, index, serving):
                        await changed(backend.service, backend.up)
            except grpc.RpcError as error:
                if error.code() == grpc.StatusCode.UNIMPLEMENTED:
                    return  # an older backend: the polled Check alone follows it
            finally:
                call.cancel()
            self.watch_ends += 1
            if not answered:
                if self._set(backend, index, False):
                    await changed(backend.service, backend.up)
                await asyncio.sleep(retry)

    async def close(self) -> None:
        for backend in self.by_service.values():
            for channel in backend.channels:
                await channel.close()
