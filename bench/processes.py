"""Start the processes a benchmark measures: a game service, the gateway, the echo server,
Envoy; and read what they cost (resident memory, CPU time) from /proc."""

from __future__ import annotations

import contextlib
import os
import platform
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Running:
    """A started process: where it listens and its pid (for /proc figures)."""

    address: str
    pid: int
    log: Path

    def rss_bytes(self) -> int:
        return rss_bytes(self.pid)

    def cpu_seconds(self) -> float:
        """The process's and its live children's: the gateway's Envoy is its child, and
        the gateway's cost per call is both."""
        return sum(cpu_seconds(pid) for pid in tree(self.pid))


def tree(pid: int) -> list[int]:
    """``pid`` and every live process descended from it."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
                children.setdefault(parent, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, ()))
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for_line(popen: subprocess.Popen, log: Path, marker: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if marker in log.read_text(errors="replace"):
            return
        if popen.poll() is not None:
            raise RuntimeError(f"process exited: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.05)
    raise RuntimeError(f"not ready in {timeout}s: {log.read_text(errors='replace')[-2000:]}")


@contextlib.contextmanager
def process(
    argv: Sequence[str],
    env: dict[str, str],
    workdir: Path,
    marker: str,
    address: str,
    timeout: float = 60,
    root: Path | str = ROOT,
) -> Iterator[Running]:
    """Run ``argv`` in ``root`` (another copy of the tree, to compare two versions of
    the code) until the block ends; ready once ``marker`` shows in its output."""
    name = Path(argv[-1]).name.replace(".", "_")
    log = workdir / f"{name}-{time.time_ns()}.log"
    with log.open("wb") as handle:
        popen = subprocess.Popen(
            list(argv),
            cwd=root,
            env={**os.environ, **env},
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_for_line(popen, log, marker, timeout)
        yield Running(address, popen.pid, log)
    finally:
        popen.terminate()
        try:
            popen.wait(15)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()


def python_module(module: str) -> list[str]:
    return [sys.executable, "-u", "-m", module]


@contextlib.contextmanager
def game_service(
    name: str, workdir: Path, store_url: str | None = None, *, root: Path | str = ROOT, **env: str
) -> Iterator[Running]:
    """``python -m services.<name>`` on a free port with seeds allowed, otherwise as
    deployed: the access log on (to a file here) and the default store, SQLite with
    synchronous=FULL, in ``workdir``. ``env`` overrides any setting."""
    port = free_port()
    settings = {
        "TABLETOP_HOST": "127.0.0.1",
        "TABLETOP_PORT": str(port),
        "TABLETOP_METRICS_PORT": str(free_port()),
        "TABLETOP_STORE_URL": store_url or f"sqlite:///{workdir}/{name}-{port}.db",
        "TABLETOP_ALLOW_SEED": "true",
        "TABLETOP_MAX_CONNECTION_AGE_SECONDS": "0",
        "TABLETOP_MAX_GAMES": "0",
        "TABLETOP_GAMES_PER_CLIENT": "0",
        # Every benchmark table comes from one address: the bot caps would refuse most.
        "TABLETOP_BOT_TABLES_PER_CLIENT": "0",
        "TABLETOP_ALL_BOT_TABLES_PER_CLIENT": "0",
        **env,
    }
    with process(
        python_module(f"services.{name}"),
        settings,
        workdir,
        '"event": "serving"',
        f"127.0.0.1:{port}",
        root=root,
    ) as running:
        yield running


@contextlib.contextmanager
def gateway(
    routes: dict[str, str], workdir: Path, *, root: Path | str = ROOT, **env: str
) -> Iterator[Running]:
    """``python -m gateway`` routing only ``routes`` (game -> address), as deployed but
    with no per-client rate limit (every benchmark call comes from one address)."""
    from services import registry

    port = free_port()
    settings = {
        "TABLETOP_HOST": "127.0.0.1",
        "TABLETOP_PORT": str(port),
        "TABLETOP_METRICS_PORT": str(free_port()),
        "TABLETOP_RATE_PER_CLIENT": "0",
        "TABLETOP_STREAMS_PER_CLIENT": "0",
        # Every other game is not routed, so health checks go only where there is a backend.
        **{f"TABLETOP_ROUTE_{name.upper()}": "" for name in registry.names()},
        **{f"TABLETOP_ROUTE_{name.upper()}": address for name, address in routes.items()},
        **env,
    }
    with process(
        python_module("gateway"),
        settings,
        workdir,
        '"event": "serving"',
        f"127.0.0.1:{port}",
        root=root,
    ) as running:
        yield running


@contextlib.contextmanager
def echo(workdir: Path, *, root: Path | str = ROOT, **env: str) -> Iterator[Running]:
    port = free_port()
    with process(
        python_module("bench.echo"),
        {"BENCH_PORT": str(port), **env},
        workdir,
        "serving port=",
        f"127.0.0.1:{port}",
        root=root,
    ) as running:
        yield running


def rss_bytes(pid: int) -> int:
    """Resident set size of a process (VmRSS), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no VmRSS for pid {pid}")


def cpu_seconds(pid: int) -> float:
    """User plus system CPU time a process has used, in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def machine() -> dict[str, object]:
    """What the figures were measured on, and how busy it was when they were."""
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
    with contextlib.suppress(Exception):
        import grpc

        info["grpcio"] = grpc.__version__
    info["load_average_at_start"] = [round(x, 2) for x in os.getloadavg()]
    return info
