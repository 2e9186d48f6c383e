"""``python -m bench --only peer-ab``: our side of the peer benchmark, two trees in turns.

A change to the per-move path is measured as the peer section measures us (the same
players, the same game, 1 and 32 games at once, server CPU per move from /proc), but
against another copy of the tree in the same run, rounds interleaved (this tree, the
other, this tree...), so the machine's drift touches both alike. Each tree's players are
its own ``bench/peer/ours.py`` (a tree from before ``with_moves`` asks ListMoves).

``--peer-ab-modes`` plays each tree with several kinds of players, in turns too: ``calls``
(WatchGame with the moves, SubmitMove per move), ``omit-view`` (the same, SubmitMove with
``omit_view``), ``play`` (one Play session per seat; a tree whose ours.py has no
``--play`` cannot). So a client-side change is measured against its baseline on one tree:

    python -m bench --only peer-ab --peer-ab-root before=/tmp/tree-before
    python -m bench --only peer-ab --peer-ab-modes calls,play
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
# A kind of our players: play_round's arguments (--peer-list-moves applies to the calls).
MODES: dict[str, dict[str, bool]] = {
    "calls": {},
    "omit-view": {"omit_view": True},
    "play": {"play": True},
}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--peer-ab-root",
        action="append",
        default=[],
        metavar="LABEL=PATH",
        help="peer-ab section: another tree whose side plays in turns with this one's",
    )
    p.add_argument(
        "--peer-ab-modes",
        default="calls",
        help=f"peer-ab section: our players' kinds, in turns on every tree ({', '.join(MODES)})",
    )


def settings(args: argparse.Namespace, quick: bool) -> dict[str, Any]:
    roots = {THIS: harness.ROOT}
    for item in args.peer_ab_root:
        label, sep, path = item.partition("=")
        if not sep:
            raise SystemExit(f"--peer-ab-root {item!r}: LABEL=PATH")
        roots[label] = Path(path).resolve()
    modes = [m for m in args.peer_ab_modes.split(",") if m]
    unknown = [m for m in modes if m not in MODES]
    if unknown or not modes:
        raise SystemExit(f"--peer-ab-modes {args.peer_ab_modes!r}: some of {', '.join(MODES)}")
    return {
        "roots": roots,
        "modes": modes,
        "levels": [int(x) for x in args.peer_games.split(",") if x],
        "rounds": args.peer_rounds or (1 if quick else 3),
        "window": args.peer_seconds or (2.0 if quick else 8.0),
        "warmup": args.peer_warmup if args.peer_warmup is not None else (0.5 if quick else 2.0),
        # --peer-list-moves: both trees' players call ListMoves before each move (the plain
        # unary path: ListMoves + SubmitMove, as a client that does not ask with_moves).
        "list_moves": args.peer_list_moves,
    }


def variants(roots: dict[str, Path], modes: list[str]) -> list[tuple[str, str, str]]:
    """(label, tree, mode) for every tree and mode; the label is the tree's alone when
    there is one mode (as before modes)."""
    return [
        (tree if len(modes) == 1 else f"{tree}, {mode}", tree, mode)
        for tree in roots
        for mode in modes
    ]


def section(
    roots: dict[str, Path],
    levels: list[int],
    rounds: int,
    window: float,
    warmup: float,
    list_moves: bool = False,
    modes: list[str] | None = None,
) -> dict[str, Any]:
    """Every tree with every kind of players, rounds in turns; per size, a calibration
    round of each first (not counted)."""
    modes = modes or ["calls"]
    started = time.time()
    out: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "settings": {
            "rounds": rounds,
            "window_seconds": window,
            "warmup_seconds": warmup,
            "list_moves": list_moves,
            "modes": modes,
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
            rate = {label: 300.0 for label, _, _ in variants(roots, modes)}
            for number in range(0, rounds + 1):  # round 0: calibration, not counted
                for label, tree, mode in variants(roots, modes):
                    seconds = window if number else max(1.0, window / 3)
                    seed += 1
                    kind = MODES[mode]
                    w = harness.play_round(
                        sides[tree],
                        None,
                        Path(tmp),
                        level,
                        queue_length(rate[label], level, warmup + seconds),
                        seed,
                        warmup,
                        seconds,
                        omit_view=kind.get("omit_view", False),
                        min_moves=100 if number else 0,
                        list_moves=list_moves and not kind.get("play"),
                        play=kind.get("play", False),
                    )
                    target = f"{harness.OURS}: {label}"
                    row = figures(target, level, number, w, os.getloadavg()[0])
                    rate[label] = max(rate[label], row["moves_per_second"] or 1.0)
                    print(line(row, "warm" if not number else ""), flush=True)
                    if number:
                        out["rounds"].append({**row, "tree": tree, "mode": mode, "label": label})
            for label, tree, mode in variants(roots, modes):
                mine = [r for r in out["rounds"] if r["label"] == label and r["games"] == level]
                if not mine:
                    continue
                parts = mine[0]["parts_us_per_move"]
                out["sides"].append(
                    {
                        "tree": tree,
                        "mode": mode,
                        "label": label,
                        "games": level,
                        "server_cpu_us_per_move": _median(mine, "server_cpu_us_per_move"),
                        "parts_us_per_move": {
                            p: _median([r["parts_us_per_move"] for r in mine], p) for p in parts
                        },
                        "client_cpu_us_per_move": _median(mine, "client_cpu_us_per_move"),
                        "list_calls_per_move": _median(mine, "list_calls_per_move"),
                        "moves_per_second": _median(mine, "moves_per_second"),
                        "rounds": [r["server_cpu_us_per_move"] for r in mine],
                        "errors": _errors(mine),
                    }
                )
    out["modes"] = against_first_mode(out["rounds"], modes)
    out["load_average"]["end"] = [round(x, 2) for x in os.getloadavg()]
    out["duration_seconds"] = round(time.time() - started, 1)
    return out


def _median(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(values), 1) if values else None


def _errors(rows: list[dict[str, Any]]) -> dict[str, int]:
    """Refused moves (by code) and failed tables over the rounds: 0 where all went well."""
    total: dict[str, int] = {}
    for row in rows:
        for code, n in (row.get("errors") or {}).items():
            total[code] = total.get(code, 0) + n
    return total


def against_first_mode(rows: list[dict[str, Any]], modes: list[str]) -> list[dict[str, Any]]:
    """Per tree and size, each other mode's server and client CPU per move over the first
    mode's: the ratio of the medians, and the median of the rounds' ratios (each round
    against the first mode's round of the same number, played just before it)."""
    out: list[dict[str, Any]] = []
    by: dict[tuple[str, int, str], list[dict[str, Any]]] = {}
    for r in rows:
        by.setdefault((r["tree"], r["games"], r.get("mode", "calls")), []).append(r)
    for tree in dict.fromkeys(r["tree"] for r in rows):
        for level in dict.fromkeys(r["games"] for r in rows):
            base = by.get((tree, level, modes[0]), [])
            for mode in modes[1:]:
                mine = by.get((tree, level, mode), [])
                if not base or not mine:
                    continue
                found: dict[str, Any] = {"tree": tree, "games": level, "mode": mode}
                for key in ("server_cpu_us_per_move", "client_cpu_us_per_move"):
                    a, b = _median(mine, key), _median(base, key)
                    pairs = [
                        x[key] / y[key]
                        for x, y in zip(mine, base, strict=False)
                        if x.get(key) and y.get(key)
                    ]
                    found[key.replace("_cpu_us_per_move", "_ratio")] = (
                        round(a / b, 2) if a and b else None
                    )
                    found[key.replace("_cpu_us_per_move", "_ratio_paired")] = (
                        round(statistics.median(pairs), 2) if pairs else None
                    )
                out.append(found)
    return out


PLAYERS = {
    "calls": "WatchGame + SubmitMove",
    "omit-view": "WatchGame + SubmitMove (omit_view)",
    "play": "Play session",
}


def markdown(ab: dict[str, Any]) -> list[str]:
    s, load = ab.get("settings", {}), ab.get("load_average", {})
    out = [
        f"Measured {ab.get('started')} ({ab.get('duration_seconds')} s): {s.get('rounds')}"
        f" round(s) per tree, kind of players and size, interleaved, {s.get('window_seconds')} s"
        f" windows after {s.get('warmup_seconds')} s of play"
        f"{'; players call ListMoves before each move' if s.get('list_moves') else ''};"
        f" load average {load.get('start')} at the start,"
        f" {load.get('end')} at the end. Median round shown.",
        "",
        "| games at once | tree | players | server CPU µs/move | service | gateway (Python)"
        " | Envoy | client CPU µs/move | ListMoves per move | moves/s | rounds | errors |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in ab.get("sides", []):
        p = r["parts_us_per_move"]
        mode = r.get("mode", "calls")
        errors = ", ".join(f"{k} {n}" for k, n in (r.get("errors") or {}).items())
        out.append(
            f"| {r['games']} | {r['tree']} | {PLAYERS.get(mode, mode)} |"
            f" {r['server_cpu_us_per_move']:,.0f} |"
            f" {p.get('service') or 0:,.0f} | {p.get('gateway') or 0:,.0f} |"
            f" {p.get('envoy') or 0:,.0f} | {r['client_cpu_us_per_move'] or 0:,.0f} |"
            f" {r['list_calls_per_move'] if r['list_calls_per_move'] is not None else ''} |"
            f" {r['moves_per_second']:,.0f} | {' / '.join(f'{x:,.0f}' for x in r['rounds'])} |"
            f" {errors} |"
        )
    ratios = ab.get("modes") or []
    if ratios:
        first = (s.get("modes") or ["calls"])[0]
        out += [
            "",
            f"Against {PLAYERS.get(first, first)} on the same tree (CPU per move, ratio of the"
            " medians; rounds paired: the median of each round's ratio to the round before it):",
            "",
            "| games at once | tree | players | server | client |",
            "|---|---|---|---|---|",
        ]

        def cell(r: dict[str, Any], part: str) -> str:
            a, b = r.get(f"{part}_ratio"), r.get(f"{part}_ratio_paired")
            return "" if a is None else f"{a:.2f}x (paired {b:.2f}x)"

        for r in ratios:
            out.append(
                f"| {r['games']} | {r['tree']} | {PLAYERS.get(r['mode'], r['mode'])} |"
                f" {cell(r, 'server')} | {cell(r, 'client')} |"
            )
    return out
