"""The processes of the peer benchmark: boardgame.io's server (Node), our service and
gateway, and the client processes that play against them; one measured round.

A round: the client process sets up its games (created, joined, both players connected
and holding the first state), then plays them closed loop; after the warm-up the CPU
time of every process (from /proc, children included) and the moves applied are read,
and again at the end of the window. The figures are the differences over that window.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench import processes

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
MODULES = HERE / "node_modules"

OURS = "ours"
BGIO_MEMORY = "bgio-memory"
BGIO_FLATFILE = "bgio-flatfile"
PORT_TRIES = 5  # ports tried for a boardgame.io server (another process may take one first)
TARGETS = (OURS, BGIO_MEMORY, BGIO_FLATFILE)


class NodeMissing(RuntimeError):
    """No node, or no node_modules and no npm to install them."""


def node_ready(install: bool = True) -> str:
    """The node binary, with bench/peer's packages installed (``npm ci`` from the lock
    file when node_modules is absent)."""
    node = shutil.which("node")
    if node is None:
        raise NodeMissing("no `node` on PATH (Debian: apt-get install nodejs npm)")
    if not (MODULES / "boardgame.io" / "package.json").is_file():
        npm = shutil.which("npm")
        if npm is None or not install:
            raise NodeMissing("no bench/peer/node_modules and no `npm` to install it")
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--prefix", str(HERE)],
            check=True,
            timeout=600,
            stdout=subprocess.DEVNULL,
        )
    return node


def versions(node: str) -> dict[str, str]:
    """What the other side ran: node's version and the packages' installed versions."""
    out = {"node": subprocess.run([node, "--version"], capture_output=True, text=True).stdout}
    out["node"] = out["node"].strip()
    for package in ("boardgame.io", "node-persist", "socket.io", "koa"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            out[package] = json.loads((MODULES / package / "package.json").read_text())["version"]
    return out


@dataclass
class Side:
    """A server under test: where its clients connect, and its processes by part."""

    target: str
    address: str
    parts: dict[str, Callable[[], float]]  # part -> CPU seconds so far
    pids: dict[str, int]  # the processes a profile may sample
    root: Path = ROOT  # the tree its processes (and our client) run from


@contextlib.contextmanager
def bgio_server(node: str, storage: str, workdir: Path) -> Iterator[Side]:
    """boardgame.io's Server on a free port, NODE_ENV=production (as deployed). The port
    is free on 127.0.0.1 when chosen, but Node listens on every address: another process
    may take it first, and then another port is tried (a loaded rehearsal met one)."""
    target = BGIO_MEMORY if storage == "memory" else BGIO_FLATFILE
    with contextlib.ExitStack() as stack:
        for attempt in range(PORT_TRIES):
            port = processes.free_port()
            argv = [node, str(HERE / "server.js"), str(port), storage]
            if storage == "flatfile":
                store = workdir / f"flatfile-{port}"
                store.mkdir(exist_ok=True)
                argv.append(str(store))
            try:
                running = stack.enter_context(
                    processes.process(
                        argv,
                        {"NODE_ENV": "production"},
                        workdir,
                        "serving port=",
                        f"http://127.0.0.1:{port}",
                        root=HERE,
                    )
                )
            except RuntimeError as exc:
                if "EADDRINUSE" in str(exc) and attempt + 1 < PORT_TRIES:
                    continue
                raise
            break
        yield Side(target, running.address, {"node": running.cpu_seconds}, {"node": running.pid})


@contextlib.contextmanager
def our_stack(
    workdir: Path, store_url: str | None = None, root: Path = ROOT, target: str = OURS
) -> Iterator[Side]:
    """The Channeling service (SQLite with synced commits unless ``store_url``) behind
    the gateway (Envoy and its Python side), both as deployed (bench/processes.py), run
    from ``root`` (another copy of the tree, for a before/after)."""
    with (
        processes.game_service("channeling", workdir, store_url, root=root) as service,
        processes.gateway({"channeling": service.address}, workdir, root=root) as gateway,
    ):

        def gateway_python() -> float:
            return processes.cpu_seconds(gateway.pid)

        def envoy() -> float:
            return gateway.cpu_seconds() - processes.cpu_seconds(gateway.pid)

        yield Side(
            target,
            gateway.address,
            {"service": service.cpu_seconds, "gateway": gateway_python, "envoy": envoy},
            {"service": service.pid, "gateway": gateway.pid},
            root,
        )


def idle_cpu(sides: list[Side], seconds: float) -> dict[str, dict[str, float]]:
    """Each side's CPU at rest (no client connected), in ms a second, by part: what
    health checks, timers and polling cost before any game."""
    before = {side.target: {p: read() for p, read in side.parts.items()} for side in sides}
    started = time.monotonic()
    time.sleep(seconds)
    after = {side.target: {p: read() for p, read in side.parts.items()} for side in sides}
    elapsed = time.monotonic() - started
    return {
        target: {p: round((after[target][p] - t0) / elapsed * 1000, 2) for p, t0 in parts.items()}
        for target, parts in before.items()
    }


class ClientProcess:
    """A client process speaking the line protocol of client.js and ours.py."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], log: Path) -> None:
        self.log = log
        self._stderr = log.open("wb")
        self.popen = subprocess.Popen(
            argv,
            cwd=cwd,
            env={**os.environ, **env},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            bufsize=1,
        )
        assert self.popen.stdout is not None
        self._selector = selectors.DefaultSelector()
        self._selector.register(self.popen.stdout, selectors.EVENT_READ)

    def cpu_seconds(self) -> float:
        return sum(processes.cpu_seconds(p) for p in processes.tree(self.popen.pid))

    def send(self, command: str) -> None:
        assert self.popen.stdin is not None
        self.popen.stdin.write(command + "\n")
        self.popen.stdin.flush()

    def expect(self, event: str, timeout: float) -> dict[str, Any]:
        assert self.popen.stdout is not None
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not self._selector.select(left):
                raise RuntimeError(f"no {event!r} from the client in {timeout:g} s{self._tail()}")
            line = self.popen.stdout.readline()
            if not line:
                raise RuntimeError(f"the client exited before {event!r}{self._tail()}")
            with contextlib.suppress(ValueError):
                message = json.loads(line)
                if message.get("event") == "error":
                    raise RuntimeError(f"the client failed: {message.get('error')}")
                if message.get("event") == event:
                    return dict(message)

    def _tail(self) -> str:
        self._stderr.flush()
        text = self.log.read_text(errors="replace")[-2000:]
        return f": {text}" if text else ""

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self.popen.stdin is not None:
                self.popen.stdin.close()
        try:
            self.popen.wait(30)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            self.popen.wait()
        self._selector.close()
        self._stderr.close()


def client_argv(
    side: Side,
    node: str | None,
    tables: int,
    per_table: int,
    seed: int,
    omit_view: bool,
    list_moves: bool = False,
    play: bool = False,
) -> tuple[list[str], Path, dict[str, str]]:
    if side.target.startswith(OURS):
        argv = [sys.executable, "-m", "bench.peer.ours", side.address, str(tables)]
        argv += [str(per_table), str(seed)] + (["--omit-view"] if omit_view else [])
        argv += ["--list-moves"] if list_moves else []
        argv += ["--play"] if play else []
        return argv, side.root, {}
    assert node is not None
    argv = [node, str(HERE / "client.js"), side.address, str(tables), str(per_table), str(seed)]
    return argv, HERE, {"NODE_ENV": "production"}


@dataclass
class Window:
    """What one round measured."""

    seconds: float
    moves: int
    server: dict[str, float]  # part -> CPU seconds in the window
    client: float
    marks: tuple[dict[str, Any], dict[str, Any]]
    ready: dict[str, Any]
    done: dict[str, Any]


def play_round(
    side: Side,
    node: str | None,
    workdir: Path,
    tables: int,
    per_table: int,
    seed: int,
    warmup: float,
    window: float,
    omit_view: bool = False,
    during: Callable[[], Any] | None = None,
    min_moves: int = 0,
    list_moves: bool = False,
    play: bool = False,
) -> Window:
    """One round against ``side``: set up, play ``warmup`` then ``window`` seconds, and
    on (up to 5 windows) until the window holds ``min_moves`` moves: a side that is slow
    to move is not judged on a handful. ``during`` is called as the window opens (to
    start a profiler). ``play``: our players move on Play sessions (ours.py --play)."""
    argv, cwd, env = client_argv(side, node, tables, per_table, seed, omit_view, list_moves, play)
    log = workdir / f"client-{side.target}-{time.time_ns()}.log"
    client = ClientProcess(argv, cwd, env, log)
    try:
        ready = client.expect("ready", timeout=600)
        client.send("go")
        client.expect("going", timeout=30)
        time.sleep(warmup)
        started = time.monotonic()
        server0 = {part: read() for part, read in side.parts.items()}
        client0 = client.cpu_seconds()
        client.send("mark")
        mark0 = client.expect("mark", timeout=30)
        if during is not None:
            during()
        until = window
        while True:
            time.sleep(max(0.0, until - (time.monotonic() - started)))
            server1 = {part: read() for part, read in side.parts.items()}
            client1 = client.cpu_seconds()
            elapsed = time.monotonic() - started
            client.send("mark")
            mark1 = client.expect("mark", timeout=30)
            if mark1["moves"] - mark0["moves"] >= min_moves or until >= 5 * window:
                break
            until += min(1.0, window)
        client.send("stop")
        done = client.expect("done", timeout=60)
    finally:
        client.close()
    return Window(
        seconds=elapsed,
        moves=mark1["moves"] - mark0["moves"],
        server={part: server1[part] - server0[part] for part in server0},
        client=client1 - client0,
        marks=(mark0, mark1),
        ready=ready,
        done=done,
    )
