"""Channels to each game's backends, balanced per call, and their health.

A route is a comma-separated list of addresses. One address is one channel with
gRPC's round_robin policy, which balances calls over every address the name resolves
to (``dns:///tabletop-glow-headless:50055`` gives one per pod). Several addresses get a
channel each, taken in turn per call. Either way calls, not connections, are balanced.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterable
from dataclasses import dataclass, field

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
        ("grpc.max_send_message_length", max_message_bytes),
        ("grpc.enable_retries", 0),
        ("grpc.keepalive_time_ms", 30_000),
    ]


@dataclass
class Backend:
    """All channels to one game service."""

    service: str  # tabletop.channeling.v1.ChannelingService
    addresses: tuple[str, ...]
    channels: list[grpc.aio.Channel]
    up: bool = False
    _turn: itertools.cycle = field(init=False, repr=False)
    _methods: dict[tuple[int, str, str], object] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self._turn = itertools.cycle(range(len(self.channels)))

    def next_channel(self) -> tuple[int, grpc.aio.Channel]:
        index = next(self._turn) if len(self.channels) > 1 else 0
        return index, self.channels[index]

    def method(self, kind: str, path: str) -> object:
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


class Backends:
    def __init__(
        self,
        routes: dict[str, Iterable[str]],
        *,
        max_message_bytes: int = 1024 * 1024,
        tls: ClientTls | None = None,
    ) -> None:
        self.by_service: dict[str, Backend] = {}
        for service, addresses in routes.items():
            addresses = tuple(a.strip() for a in addresses if a.strip())
            channels = [make_channel(a, max_message_bytes, tls) for a in addresses]
            self.by_service[service] = Backend(service, addresses, channels)

    def get(self, service: str) -> Backend | None:
        return self.by_service.get(service)

    async def check(self, timeout: float = 1.0) -> dict[str, bool]:
        """Ask every backend's health service; a game is up when any channel says SERVING."""
        results: dict[str, bool] = {}
        for service, backend in self.by_service.items():
            up = False
            for channel in backend.channels:
                stub = health_pb2_grpc.HealthStub(channel)
                try:
                    reply = await stub.Check(
                        health_pb2.HealthCheckRequest(service=service), timeout=timeout
                    )
                except (TimeoutError, grpc.RpcError):
                    continue
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    up = True
                    break
            if up != backend.up:
                _log.info("backend", service=service, up=up)
            backend.up = up
            results[service] = up
        return results

    async def close(self) -> None:
        for backend in self.by_service.values():
            for channel in backend.channels:
                await channel.close()
