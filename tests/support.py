"""Starting services and the gateway for tests: in this process, or as processes."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from gateway.server import Gateway, create_gateway
from services import registry
from services.kit.games import GameManager
from services.kit.limits import Limits
from services.kit.metrics import GameMetrics
from services.kit.server import create_server, set_serving
from services.kit.service import GameService
from services.kit.store import Store, open_store
from services.kit.tls import ServerTls

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class RunningService:
    name: str
    port: int
    manager: GameManager
    store: Store
    server: grpc.aio.Server

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"


@contextlib.asynccontextmanager
async def service_in_process(
    name: str,
    store_url: str = "memory://",
    *,
    limits: Limits | None = None,
    tls: ServerTls | None = None,
    **manager_options,
) -> AsyncIterator[RunningService]:
    spec = GameService.load(registry.by_name(name))
    store = open_store(store_url)
    manager_options.setdefault("allow_seed", True)
    manager = GameManager(spec.engine, store, metrics=GameMetrics(name), **manager_options)
    await manager.start()
    server, port, health = create_server(
        "127.0.0.1:0", spec, manager, access_log=False, limits=limits, tls=tls
    )
    await server.start()
    await set_serving(health, [spec.name], True)
    try:
        yield RunningService(name, port, manager, store, server)
    finally:
        await server.stop(0)
        await store.close()


@contextlib.asynccontextmanager
async def gateway_in_process(
    routes: dict[str, list[str]], **options
) -> AsyncIterator[tuple[int, Gateway]]:
    options.setdefault("access_log", False)
    server, port, gateway = create_gateway("127.0.0.1:0", routes, **options)
    await server.start()
    with contextlib.suppress(Exception):
        await gateway.check_backends()
    try:
        yield port, gateway
    finally:
        await server.stop(0)
        await gateway.close()


# How long a process a test starts may take to serve or to stop, and a service to answer
# SERVING: no test is about those times, and a gateway's start (Envoy's with it) took
# over 30 s at load 16 here (CI's loaded runs are 5x slower than a quiet machine).
START_SECONDS = 90
SERVING_SECONDS = 30


@dataclass
class Process:
    popen: subprocess.Popen
    port: int
    metrics_port: int | None
    log: Path

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def lines(self) -> list[str]:
        return self.log.read_text(errors="replace").splitlines()

    def stop(self, sig: int = signal.SIGTERM, timeout: float = START_SECONDS) -> int:
        # SIGTERM's drain, then the bot workers' close, which waits for a worker still
        # starting to finish a search: 42 s at load 17 here. No test is about that time.
        if self.popen.poll() is None:
            self.popen.send_signal(sig)
        return self.popen.wait(timeout)


async def eventually(condition, timeout: float = 5.0) -> None:
    """Wait until ``condition()`` holds; fail if it does not within ``timeout`` seconds."""
    for _ in range(int(timeout / 0.02)):
        if condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"condition not reached in {timeout} s")


def _json(line: str) -> dict:
    try:
        value = json.loads(line)
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_process(
    module: str, env: dict[str, str], log: Path, timeout: float = START_SECONDS
) -> Process:
    """Run ``python -m module`` and wait until it logs that it serves; read its ports.

    The metrics port is picked free beforehand (the process cannot report one it chose
    itself before it serves), so another process may take it in between: a start that
    fails on "Address already in use" is tried again with another port.
    """
    for attempt in range(3):
        try:
            return _start_process(module, env, log, timeout)
        except PortTaken:
            if attempt == 2 or "TABLETOP_METRICS_PORT" in env:
                raise
    raise AssertionError("unreachable")


class PortTaken(RuntimeError):
    """The process could not bind a port that was free a moment before."""


def guest_key_file() -> str:
    """Where a gateway a test starts keeps the guests' signing key unless the test says:
    one key for the whole run, in a temporary folder (never data/ in the repository)."""
    if not _GUEST_KEYS:
        folder = tempfile.mkdtemp(prefix="tabletop-test-keys-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        _GUEST_KEYS.append(os.path.join(folder, "guest-signing-key.pem"))
    return _GUEST_KEYS[0]


_GUEST_KEYS: list[str] = []


def _start_process(module: str, env: dict[str, str], log: Path, timeout: float) -> Process:
    full_env = {
        **os.environ,
        "TABLETOP_HOST": "127.0.0.1",
        "TABLETOP_PORT": "0",
        "TABLETOP_METRICS_PORT": str(free_port()),
        "TABLETOP_LOG_FORMAT": "json",
        # A process a test starts spawns its bot worker at the first bot table only: most
        # tests have none, and a worker per process start is CPU the suite needs.
        "TABLETOP_BOT_WARM": "false",
        "TABLETOP_GUEST_SIGNING_KEY_FILE": guest_key_file(),
        **env,
    }
    handle = log.open("wb")
    popen = subprocess.Popen(
        [sys.executable, "-u", "-m", module],
        cwd=ROOT,
        env=full_env,
        stdout=handle,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = log.read_text(errors="replace")
        for line in text.splitlines():
            record = _json(line)
            if record.get("event") == "serving":
                return Process(popen, record["port"], record.get("metrics_port"), log)
        if popen.poll() is not None:
            error = PortTaken if "Address already in use" in text else RuntimeError
            raise error(f"{module} exited {popen.returncode}:\n{text}")
        time.sleep(0.05)
    popen.kill()
    raise RuntimeError(f"{module} did not start in {timeout}s:\n{log.read_text()}")


def wait_serving(address: str, service: str = "", timeout: float = SERVING_SECONDS) -> None:
    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
            except grpc.RpcError:
                pass
            time.sleep(0.05)
    raise TimeoutError(f"{address} is not SERVING {service!r}")


@contextlib.contextmanager
def running(module: str, env: dict[str, str], log: Path) -> Iterator[Process]:
    process = start_process(module, env, log)
    try:
        yield process
    finally:
        if process.popen.poll() is None:
            process.popen.kill()
            process.popen.wait(10)
