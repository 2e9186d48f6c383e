"""A served system for the players' tests: game services as processes, trusting a JWKS
(the gateway's guests', or a provider's on loopback), and a real ``python -m gateway``
(Envoy in front) routing to them and signing guests in."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from services import registry
from tests.support import Process, free_port, start_process, wait_serving

GUEST_ISSUER = "tabletop-guests"


@dataclass
class Stack:
    gateway: Process
    services: dict[str, Process]

    @property
    def address(self) -> str:
        return self.gateway.address


@contextlib.contextmanager
def players_stack(
    logs: Path,
    games: tuple[str, ...] = ("channeling",),
    *,
    jwks_url: str = "",
    issuer: str = GUEST_ISSUER,
    service_env: dict[str, str] | None = None,
) -> Iterator[Stack]:
    """The games' services trust ``jwks_url`` (default: the gateway's own guests' JWKS,
    on its metrics port, picked here so the services know it before the gateway starts)."""
    started: list[Process] = []
    metrics = free_port()
    url = jwks_url or f"http://127.0.0.1:{metrics}/.well-known/jwks.json"
    try:
        routes = {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES}
        services = {}
        for name in games:
            env = {
                "TABLETOP_STORE_URL": "memory://",
                "TABLETOP_ACCESS_LOG": "false",
                "TABLETOP_JWT_JWKS_URL": url,
                "TABLETOP_JWT_ISSUER": issuer,
                **(service_env or {}),
            }
            process = start_process(f"services.{name}", env, logs / f"{name}.log")
            started.append(process)
            services[name] = process
            routes[f"TABLETOP_ROUTE_{name.upper()}"] = process.address
        gateway = start_process(
            "gateway",
            {
                "TABLETOP_ACCESS_LOG": "false",
                "TABLETOP_METRICS_PORT": str(metrics),
                "TABLETOP_GUEST_SIGNING_KEY_FILE": str(logs / "data" / "guest-key.pem"),
                **routes,
            },
            logs / "gateway.log",
        )
        started.append(gateway)
        for name in games:
            wait_serving(gateway.address, registry.by_name(name).service_name, timeout=30)
        yield Stack(gateway, services)
    finally:
        for process in reversed(started):
            if process.popen.poll() is None:
                process.popen.kill()
                process.popen.wait(10)
