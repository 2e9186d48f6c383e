"""Every game service and the gateway as their own processes, as ``make run`` starts them,
for tests that drive the stack from outside (the README's commands, the Node.js client,
the Locust load commands).

On the documented ports (services/registry.py) when every one of them is free, so a
command runs exactly as written; otherwise on free ports, and :attr:`Stack.ports` says
which documented port became which, for the caller to rewrite its commands. One stack
at a time holds the documented ports (a lock file, as test workers run side by side),
and a stack that cannot bind them after all starts again on free ports.
"""

from __future__ import annotations

import contextlib
import fcntl
import socket
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from services import registry
from tests.support import Process, free_port, start_process, wait_serving

LOCK = Path(tempfile.gettempdir()) / "tabletop-documented-ports.lock"


def documented_ports() -> list[int]:
    ports = [registry.GATEWAY.port, registry.GATEWAY.metrics_port]
    for entry in registry.SERVICES:
        ports += [entry.port, entry.metrics_port]
    return ports


def port_is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


@dataclass
class Stack:
    gateway: Process
    services: dict[str, Process]
    ports: dict[int, int] = field(default_factory=dict)  # documented port -> actual port

    @property
    def gateway_address(self) -> str:
        return self.gateway.address

    @property
    def on_documented_ports(self) -> bool:
        return all(k == v for k, v in self.ports.items())


@contextlib.contextmanager
def documented_ports_held() -> Iterator[bool]:
    """True while this process alone may use the documented ports (and they are free)."""
    with LOCK.open("a") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        try:
            yield all(port_is_free(p) for p in documented_ports())
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextlib.contextmanager
def running_stack(
    logs: Path, *, documented: bool = True, gateway_env: dict[str, str] | None = None
) -> Iterator[Stack]:
    """Start the stack (memory stores, seeds allowed for tests); stop it all afterwards.

    ``documented``: use the documented ports if all are free. ``gateway_env`` adds to the
    gateway's environment (a rate limit, say)."""
    with contextlib.ExitStack() as held:
        use = documented and held.enter_context(documented_ports_held())
        started: list[Process] = []
        try:
            try:
                stack = _start(logs, use, gateway_env, started)
            except RuntimeError:
                if not use:
                    raise
                _stop(started)  # a documented port was taken after all: go on free ones
                started.clear()
                stack = _start(logs, False, gateway_env, started)
            yield stack
        finally:
            _stop(started)


def _stop(started: list[Process]) -> None:
    for process in reversed(started):
        if process.popen.poll() is None:
            process.popen.kill()
            process.popen.wait(10)


def _start(
    logs: Path, use_documented: bool, gateway_env: dict[str, str] | None, started: list[Process]
) -> Stack:
    ports: dict[int, int] = {}

    def port_for(documented_port: int) -> int:
        ports[documented_port] = documented_port if use_documented else free_port()
        return ports[documented_port]

    services: dict[str, Process] = {}
    for entry in registry.SERVICES:
        env = {
            "TABLETOP_PORT": str(port_for(entry.port)),
            "TABLETOP_METRICS_PORT": str(port_for(entry.metrics_port)),
            "TABLETOP_STORE_URL": "memory://",
            "TABLETOP_ALLOW_SEED": "true",
            "TABLETOP_ACCESS_LOG": "false",
            "TABLETOP_BOT_MS_PER_DECISION": "50",  # the README's bot games end quickly
        }
        process = start_process(entry.package, env, logs / f"{entry.name}.log")
        started.append(process)
        services[entry.name] = process
    env = {
        "TABLETOP_PORT": str(port_for(registry.GATEWAY.port)),
        "TABLETOP_METRICS_PORT": str(port_for(registry.GATEWAY.metrics_port)),
        "TABLETOP_ACCESS_LOG": "false",
        **{f"TABLETOP_ROUTE_{name.upper()}": p.address for name, p in services.items()},
        **(gateway_env or {}),
    }
    gateway = start_process("gateway", env, logs / "gateway.log")
    started.append(gateway)
    for name in services:
        wait_serving(gateway.address, registry.by_name(name).service_name, timeout=30)
    return Stack(gateway, services, ports)
