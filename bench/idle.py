"""``python -m bench --only idle``: what each of our processes burns at rest.

A deployment runs many services that spend most of their life waiting: what one costs
when nothing happens (health checks, timers, the clock's sweep, metrics, gRPC's own
polling) is paid by every replica all day. The section starts the Channeling service
(SQLite) behind the gateway, as deployed, with no client, lets start-up settle, then
reads each process's CPU time (user + system, from /proc) over the window: the service,
the gateway's Python process and Envoy (its child). Figures in ms of CPU a second.

``--idle-root LABEL=PATH[:NAME=VALUE...]`` measures another copy of the tree (or this one
with other settings, given to both processes) the same way, in turns with this one (A, B,
A, B...), so a before/after is one run on one machine:

    python -m bench --only idle --idle-seconds 30 --idle-root before=/tmp/tree-before
    python -m bench --only idle --idle-root slow=.:TABLETOP_HEALTH_INTERVAL_SECONDS=10
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import processes

ROOT = Path(__file__).resolve().parent.parent
PARTS = ("service", "gateway", "envoy")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--idle-seconds", type=float, help="window per round, idle section (30)")
    p.add_argument("--idle-rounds", type=int, help="rounds per tree, idle section (2; quick 1)")
    p.add_argument(
        "--idle-root",
        action="append",
        default=[],
        metavar="LABEL=PATH",
        help="another tree to measure in turns with this one (a before/after)",
    )


def settings(args: argparse.Namespace, quick: bool) -> dict[str, Any]:
    roots: dict[str, tuple[Path, dict[str, str]]] = {"this tree": (ROOT, {})}
    for item in args.idle_root:
        label, sep, rest = item.partition("=")
        if not sep:
            raise SystemExit(f"--idle-root {item!r}: LABEL=PATH[:NAME=VALUE...]")
        path, *pairs = rest.split(":")
        env = dict(pair.split("=", 1) for pair in pairs)
        roots[label] = (Path(path or ".").resolve(), env)
    return {
        "roots": roots,
        "seconds": args.idle_seconds or (10.0 if quick else 30.0),
        "rounds": args.idle_rounds or (1 if quick else 2),
    }


@contextlib.contextmanager
def stack(
    root: Path, workdir: Path, env: dict[str, str] | None = None
) -> Iterator[tuple[dict[str, Any], str]]:
    """The service behind the gateway, from ``root`` with ``env``; yields each part's CPU
    reader and the gateway's address."""
    env = env or {}
    with (
        processes.game_service("channeling", workdir, root=root, **env) as service,
        processes.gateway({"channeling": service.address}, workdir, root=root, **env) as gateway,
    ):
        parts = {
            "service": service.cpu_seconds,
            "gateway": lambda: processes.cpu_seconds(gateway.pid),
            "envoy": lambda: gateway.cpu_seconds() - processes.cpu_seconds(gateway.pid),
        }
        yield parts, gateway.address


def window(parts: dict[str, Any], seconds: float) -> dict[str, float]:
    """Each part's CPU over ``seconds``, in ms a second."""
    before = {p: read() for p, read in parts.items()}
    started = time.monotonic()
    time.sleep(seconds)
    elapsed = time.monotonic() - started
    return {p: round((read() - before[p]) / elapsed * 1000, 2) for p, read in parts.items()}


def section(
    roots: dict[str, tuple[Path, dict[str, str]]], seconds: float, rounds: int
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "seconds": seconds,
        "rounds": rounds,
        "load_average": {"start": [round(x, 2) for x in os.getloadavg()]},
        "trees": {},
        "settings": {label: env for label, (_, env) in roots.items() if env},
    }
    with tempfile.TemporaryDirectory(prefix="bench-idle-") as tmp, contextlib.ExitStack() as es:
        stacks = {}
        for label, (root, env) in roots.items():
            work = Path(tmp) / label.replace(" ", "-")
            work.mkdir()
            stacks[label] = es.enter_context(stack(root, work, env))[0]
        time.sleep(3.0)  # start-up work (the first sweep, imports on first call) settles
        runs: dict[str, list[dict[str, float]]] = {label: [] for label in roots}
        for number in range(1, rounds + 1):
            for label, parts in stacks.items():
                measured = window(parts, seconds)
                runs[label].append(measured)
                load = os.getloadavg()[0]
                print(line(label, measured, f"r{number}", load), flush=True)
    for label, each in runs.items():
        median = {p: round(statistics.median(f[p] for f in each), 2) for p in PARTS}
        out["trees"][label] = {"ms_per_second": median, "rounds": each}
    out["load_average"]["end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def line(label: str, figures: dict[str, float], tag: str, load: float) -> str:
    parts = "  ".join(f"{p} {figures[p]:6.2f}" for p in PARTS)
    return f"  idle {label:<12} {tag:<4} ms CPU a second: {parts}  load {load:.1f}"


def markdown(idle: dict[str, Any]) -> list[str]:
    """The table BENCHMARKS.md shows."""
    load = idle.get("load_average", {})
    out = [
        f"Each process at rest (no client), CPU over {idle.get('seconds')} s windows,"
        f" {idle.get('rounds')} round(s) per tree in turns, median shown; load average"
        f" {load.get('start')} at the start, {load.get('end')} at the end.",
        "",
        "| tree | service ms/s | gateway (Python) ms/s | Envoy ms/s | rounds |",
        "|---|---|---|---|---|",
    ]
    for label, tree in idle.get("trees", {}).items():
        m = tree["ms_per_second"]
        rounds = "; ".join(", ".join(f"{r[p]:.1f}" for p in PARTS) for r in tree.get("rounds", []))
        out.append(
            f"| {label} | {m['service']:.2f} | {m['gateway']:.2f} | {m['envoy']:.2f} | {rounds} |"
        )
    return out
