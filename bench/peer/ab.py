"""``python -m bench --only peer-ab``: our side of the peer benchmark, two trees in turns.

A change to the per-move path is measured as the peer section measures us (the same
players, the same game, 1 and 32 games at once, server CPU per move from /proc), but
against another copy of the tree in the same run, rounds interleaved (this tree, the
other, this tree...), so the machine's drift touches both alike. Each tree's players are
its own ``bench/peer/ours.py`` (a tree from before ``with_moves`` asks ListMoves).

    python -m bench --only peer-ab --peer-ab-root before=/tmp/tree-before
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.peer import harness
from bench.peer.run import figures, line, queue_length

THIS = "this tree"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--peer-ab-root",
        action="append",
        default=[],
        metavar="LABEL=PATH",
        help="peer-ab section: another tree whose side plays in turns with this one's",
    )


def settings(args: argparse.Namespace, quick: bool) -> dict[str, Any]:
    roots = {THIS: harness.ROOT}
    for item in args.peer_ab_root:
        label, sep, path = item.partition("=")
        if not sep:
            raise SystemExit(f"--peer-ab-root {item!r}: LABEL=PATH")
        roots[label] = Path(path).resolve()
    return {
        "roots": roots,
        "levels": [int(x) for x in args.peer_games.split(",") if x],
        "rounds": args.peer_rounds or (1 if quick else 3),
        "window": args.peer_seconds or (2.0 if quick else 8.0),
        "warmup": args.peer_warmup if args.peer_warmup is not None else (0.5 if quick else 2.0),
        # --peer-list-moves: both trees' players call ListMoves before each move (the plain
        # unary path: ListMoves + SubmitMove, as a client that does not ask with_moves).
        "list_moves": args.peer_list_moves,
    }


def section(
    roots: dict[str, Path],
    levels: list[int],
    rounds: int,
    window: float,
    warmup: float,
    list_moves: bool = False,
) -> dict[str, Any]:
    started = time.time()
    out: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "settings": {
            "rounds": rounds,
            "window_seconds": window,
            "warmup_seconds": warmup,
            "list_moves": list_moves,
        },
        "roots": {label: str(root) for label, root in roots.items()},
        "load_average": {"start": [round(x, 2) for x in os.getloadavg()]},
        "rounds": [],
        "sides": [],
    }
    with tempfile.TemporaryDirectory(prefix="bench-peer-ab-") as tmp, contextlib.ExitStack() as es:
        sides = {}
        for label, root in roots.items():
            work = Path(tmp) / label.replace(" ", "-")
            work.mkdir()
            sides[label] = es.enter_context(
                harness.our_stack(work, root=root, target=f"{harness.OURS}: {label}")
            )
        time.sleep(1.0)
        seed = 0
        for level in levels:
            rate = {label: 300.0 for label in sides}
            for number in range(0, rounds + 1):  # round 0: calibration, not counted
                for label, side in sides.items():
                    seconds = window if number else max(1.0, window / 3)
                    seed += 1
                    w = harness.play_round(
                        side,
                        None,
                        Path(tmp),
                        level,
                        queue_length(rate[label], level, warmup + seconds),
                        seed,
                        warmup,
                        seconds,
                        min_moves=100 if number else 0,
                        list_moves=list_moves,
                    )
                    row = figures(side.target, level, number, w, os.getloadavg()[0])
                    rate[label] = max(rate[label], row["moves_per_second"] or 1.0)
                    print(line(row, "warm" if not number else ""), flush=True)
                    if number:
                        out["rounds"].append({**row, "tree": label})
            for label in sides:
                mine = [r for r in out["rounds"] if r["tree"] == label and r["games"] == level]
                if not mine:
                    continue
                parts = mine[0]["parts_us_per_move"]
                out["sides"].append(
                    {
                        "tree": label,
                        "games": level,
                        "server_cpu_us_per_move": _median(mine, "server_cpu_us_per_move"),
                        "parts_us_per_move": {
                            p: _median([r["parts_us_per_move"] for r in mine], p) for p in parts
                        },
                        "client_cpu_us_per_move": _median(mine, "client_cpu_us_per_move"),
                        "list_calls_per_move": _median(mine, "list_calls_per_move"),
                        "moves_per_second": _median(mine, "moves_per_second"),
                        "rounds": [r["server_cpu_us_per_move"] for r in mine],
                    }
                )
    out["load_average"]["end"] = [round(x, 2) for x in os.getloadavg()]
    out["duration_seconds"] = round(time.time() - started, 1)
    return out


def _median(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(values), 1) if values else None


def markdown(ab: dict[str, Any]) -> list[str]:
    s, load = ab.get("settings", {}), ab.get("load_average", {})
    out = [
        f"Measured {ab.get('started')} ({ab.get('duration_seconds')} s): {s.get('rounds')}"
        f" round(s) per tree and size, interleaved, {s.get('window_seconds')} s windows after"
        f" {s.get('warmup_seconds')} s of play"
        f"{'; players call ListMoves before each move' if s.get('list_moves') else ''};"
        f" load average {load.get('start')} at the start,"
        f" {load.get('end')} at the end. Median round shown.",
        "",
        "| games at once | tree | server CPU µs/move | service | gateway (Python) | Envoy"
        " | client CPU µs/move | ListMoves per move | moves/s | rounds |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in ab.get("sides", []):
        p = r["parts_us_per_move"]
        out.append(
            f"| {r['games']} | {r['tree']} | {r['server_cpu_us_per_move']:,.0f} |"
            f" {p.get('service') or 0:,.0f} | {p.get('gateway') or 0:,.0f} |"
            f" {p.get('envoy') or 0:,.0f} | {r['client_cpu_us_per_move'] or 0:,.0f} |"
            f" {r['list_calls_per_move'] if r['list_calls_per_move'] is not None else ''} |"
            f" {r['moves_per_second']:,.0f} | {' / '.join(f'{x:,.0f}' for x in r['rounds'])} |"
        )
    return out
