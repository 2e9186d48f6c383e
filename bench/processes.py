"""Start the processes a benchmark measures: a game service, the gateway, the echo server."""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_line(popen: subprocess.Popen, log: Path, marker: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if marker in log.read_text(errors="replace"):
            return
        if popen.poll() is not None:
            raise RuntimeError(f"process exited: {log.read_text()[-2000:]}")
        time.sleep(0.05)
    raise RuntimeError(f"not ready in {timeout}s: {log.read_text()[-2000:]}")


@contextlib.contextmanager
def process(module: str, env: dict[str, str], workdir: Path, marker: str) -> Iterator[None]:
    log = workdir / f"{module.replace('.', '_')}-{time.time_ns()}.log"
    with log.open("wb") as handle:
        popen = subprocess.Popen(
            [sys.executable, "-u", "-m", module],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_for_line(popen, log, marker)
        yield
    finally:
        popen.terminate()
        try:
            popen.wait(15)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()


@contextlib.contextmanager
def game_service(
    name: str, workdir: Path, store_url: str | None = None, **env: str
) -> Iterator[str]:
    port = free_port()
    settings = {
        "TABLETOP_HOST": "127.0.0.1",
        "TABLETOP_PORT": str(port),
        "TABLETOP_METRICS_PORT": str(free_port()),
        "TABLETOP_STORE_URL": store_url or f"sqlite:///{workdir}/{name}-{port}.db",
        "TABLETOP_ALLOW_SEED": "true",
        "TABLETOP_MAX_CONNECTION_AGE_SECONDS": "0",
        **env,
    }
    with process(f"services.{name}", settings, workdir, '"event": "serving"'):
        yield f"127.0.0.1:{port}"


@contextlib.contextmanager
def gateway(routes: dict[str, str], workdir: Path, **env: str) -> Iterator[str]:
    port = free_port()
    settings = {
        "TABLETOP_HOST": "127.0.0.1",
        "TABLETOP_PORT": str(port),
        "TABLETOP_METRICS_PORT": str(free_port()),
        "TABLETOP_RATE_PER_CLIENT": "0",
        "TABLETOP_STREAMS_PER_CLIENT": "0",
        **{f"TABLETOP_ROUTE_{name.upper()}": address for name, address in routes.items()},
        **env,
    }
    with process("gateway", settings, workdir, '"event": "serving"'):
        yield f"127.0.0.1:{port}"


@contextlib.contextmanager
def echo(workdir: Path) -> Iterator[str]:
    port = free_port()
    with process("bench.echo", {"BENCH_PORT": str(port)}, workdir, "serving port="):
        yield f"127.0.0.1:{port}"


def machine() -> dict[str, object]:
    """What the figures were measured on."""
    import platform

    info: dict[str, object] = {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
    }
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
    with contextlib.suppress(OSError):
        mem = Path("/proc/meminfo").read_text().split()[1]
        info["memory_gib"] = round(int(mem) / 1024 / 1024, 1)
    return info


def dumps(data: object) -> str:
    return json.dumps(data, indent=2, sort_keys=True)
