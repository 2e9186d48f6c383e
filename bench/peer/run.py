"""The peer section: our gateway and Channeling service beside boardgame.io's server (in
memory and with FlatFile storage), interleaved rounds at each number of games at once,
server and client CPU per move and moves per second, the medians and the ratios.

Per number of games: one calibration round per side (not counted: it warms every process
and measures the rate the next rounds' game queues are sized from), then ``rounds``
rounds of ours, bgio-memory, bgio-flatfile in turn, so a machine that gets busier or
quieter touches all three alike.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.peer import harness
from bench.peer.harness import BGIO_FLATFILE, BGIO_MEMORY, OURS, TARGETS, Side, Window
from bench.peer.where import where

# Moves a second before a side is calibrated: only the first queue's size depends on it.
FIRST_GUESS = {OURS: 300.0, BGIO_MEMORY: 1500.0, BGIO_FLATFILE: 300.0}
DECISIONS_PER_GAME = 70  # a little under the ~75 seen, so queues are not short
MARGIN = 1.8  # queue for this much more play than the rate measured so far (it varies 2x)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--peer-games", default="1,32", help="games at once, peer section (1,32)")
    p.add_argument("--peer-rounds", type=int, help="rounds per side and size (3; quick 1)")
    p.add_argument("--peer-seconds", type=float, help="measured window per round (8; quick 2)")
    p.add_argument("--peer-warmup", type=float, help="play before each window (2; quick 0.5)")
    p.add_argument(
        "--peer-omit-view", action="store_true", help="our players send SubmitMove with omit_view"
    )
    p.add_argument(
        "--peer-list-moves",
        action="store_true",
        help="our players ask ListMoves before each move (else their stream carries the moves)",
    )
    p.add_argument(
        "--peer-play",
        action="store_true",
        help="each of our seats plays on one Play session (else WatchGame + SubmitMove calls)",
    )
    p.add_argument(
        "--peer-profile",
        action="store_true",
        help="py-spy our service and gateway in one more round",
    )


def settings(args: argparse.Namespace, quick: bool) -> dict[str, Any]:
    if args.peer_play and (args.peer_list_moves or args.peer_omit_view):
        # A session's updates carry the moves and the view: no ListMoves, no view to omit.
        raise SystemExit("--peer-play takes neither --peer-list-moves nor --peer-omit-view")
    return {
        "levels": [int(x) for x in args.peer_games.split(",") if x],
        "rounds": args.peer_rounds or (1 if quick else 3),
        "window": args.peer_seconds or (2.0 if quick else 8.0),
        "warmup": args.peer_warmup if args.peer_warmup is not None else (0.5 if quick else 2.0),
        "min_moves": 40 if quick else 200,
        "idle": 2.0 if quick else 5.0,
        "omit_view": args.peer_omit_view,
        "list_moves": args.peer_list_moves,
        "play": args.peer_play,
        "profile": args.peer_profile,
        "store_url": args.store_url,
    }


def queue_length(rate: float, level: int, seconds: float) -> int:
    """Games each table sets up before the clock: enough for ``seconds`` of play at
    ``rate`` moves a second, with a margin (a table that runs out sets one up late)."""
    return max(2, math.ceil(rate * seconds * MARGIN / level / DECISIONS_PER_GAME) + 1)


def _per_move(seconds: float, moves: int) -> float | None:
    return round(seconds / moves * 1e6, 1) if moves else None


def _failed(done: dict[str, Any]) -> dict[str, int]:
    failed = done.get("failed_tables") or []
    return {"failed tables": len(failed)} if failed else {}


def figures(target: str, level: int, number: int, w: Window, load: float) -> dict[str, Any]:
    """One round's figures: CPU per move of each part of the server, the client's, the
    rate, and what the client saw (updates per move, game lengths, late set-ups)."""
    mark0, mark1 = w.marks
    moves = w.moves
    done = w.done
    finished = done.get("finished") or 0
    row: dict[str, Any] = {
        "target": target,
        "games": level,
        "round": number,
        "client": w.ready.get("mode", "calls") if target.startswith(OURS) else "socket.io",
        "seconds": round(w.seconds, 3),
        "moves": moves,
        "moves_per_second": round(moves / w.seconds, 1) if w.seconds else 0.0,
        "server_cpu_us_per_move": _per_move(sum(w.server.values()), moves),
        "parts_us_per_move": {part: _per_move(s, moves) for part, s in w.server.items()},
        "server_cores": round(sum(w.server.values()) / w.seconds, 3) if w.seconds else 0.0,
        "client_cpu_us_per_move": _per_move(w.client, moves),
        "client_cores": round(w.client / w.seconds, 3) if w.seconds else 0.0,
        "updates_per_move": round((mark1["updates"] - mark0["updates"]) / moves, 2)
        if moves
        else None,
        "late_games": mark1["late"] - mark0["late"],
        "queued_games": w.ready.get("matches"),
        "setup_seconds": round(w.ready.get("setup_seconds") or 0.0, 2),
        "finished_games": finished,
        "decisions_per_game": round(done["decisions"] / finished, 1) if finished else None,
        # Refused calls by code, and tables that stopped on an error (a stream that ended).
        "errors": {**(done.get("errors") or {}), **_failed(done)},
        "load_average": round(load, 2),
    }
    if done.get("failed_tables"):
        row["failures"] = done["failed_tables"][:3]
    if "listed" in mark1:
        row["list_calls_per_move"] = round((mark1["listed"] - mark0["listed"]) / moves, 2)
    if "deckSeen" in done:
        row["deck_seen"] = done["deckSeen"]  # states that showed a player the deck: 0
    return row


def line(row: dict[str, Any], label: str = "") -> str:
    parts = row["parts_us_per_move"]
    split = ""
    if len(parts) > 1:
        split = " (" + " + ".join(f"{k} {v or 0:,.0f}" for k, v in parts.items()) + ")"
    late = f"  late games {row['late_games']}" if row["late_games"] else ""
    errors = f"  errors {row['errors']}" if row["errors"] else ""
    server = row["server_cpu_us_per_move"] or 0.0
    client = row["client_cpu_us_per_move"] or 0.0
    target = row["target"]
    if row.get("client") == "play" and not target.endswith("play"):  # peer-ab names its modes
        target += " [Play]"
    return (
        f"  {target:14} {row['games']:>3} games {label or 'r' + str(row['round']):6}"
        f" {row['moves_per_second']:>8,.0f} moves/s  server {server:>7,.0f} µs/move{split}"
        f"  client {client:>6,.0f} µs/move  {row['updates_per_move']} updates/move"
        f"  load {row['load_average']:.1f}{late}{errors}"
    )


def _median(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(values), 1) if values else None


def summarize(
    rows: list[dict[str, Any]], levels: list[int], idle: dict[str, dict[str, float]] | None = None
) -> dict[str, Any]:
    """Per side and size, the medians over the rounds (and the CPU per move above what
    the side burns at rest); per size, ours against each of boardgame.io's: the ratio of
    the medians, and the median of the rounds' ratios (each round of ours against the
    round of theirs right after it)."""
    for row in rows:
        rest = sum((idle or {}).get(row["target"], {}).values())  # ms a second
        if row["server_cpu_us_per_move"] and row["moves_per_second"]:
            above = row["server_cpu_us_per_move"] - rest * 1000 / row["moves_per_second"]
            row["server_cpu_us_per_move_above_idle"] = round(above, 1)
    sides = []
    for level in levels:
        for target in TARGETS:
            mine = [r for r in rows if r["target"] == target and r["games"] == level]
            if not mine:
                continue
            finished = sum(r["finished_games"] for r in mine)
            decisions = sum((r["decisions_per_game"] or 0) * r["finished_games"] for r in mine)
            parts = {
                part: round(statistics.median(r["parts_us_per_move"][part] or 0 for r in mine), 1)
                for part in mine[0]["parts_us_per_move"]
            }
            sides.append(
                {
                    "target": target,
                    "games": level,
                    "rounds": len(mine),
                    "server_cpu_us_per_move": _median(mine, "server_cpu_us_per_move"),
                    "server_cpu_us_per_move_above_idle": _median(
                        mine, "server_cpu_us_per_move_above_idle"
                    ),
                    "parts_us_per_move": parts,
                    "client_cpu_us_per_move": _median(mine, "client_cpu_us_per_move"),
                    "moves_per_second": _median(mine, "moves_per_second"),
                    "updates_per_move": _median(mine, "updates_per_move"),
                    "decisions_per_game": round(decisions / finished, 1) if finished else None,
                    "rounds_server_us": [r["server_cpu_us_per_move"] for r in mine],
                    "late_games": sum(r["late_games"] for r in mine),
                }
            )
    ratios = []
    for level in levels:
        ours = [r for r in rows if r["target"] == OURS and r["games"] == level]
        for target in (BGIO_MEMORY, BGIO_FLATFILE):
            theirs = [r for r in rows if r["target"] == target and r["games"] == level]
            if not ours or not theirs:
                continue
            a, b = (
                _median(ours, "server_cpu_us_per_move"),
                _median(theirs, "server_cpu_us_per_move"),
            )
            pairs = [
                x["server_cpu_us_per_move"] / y["server_cpu_us_per_move"]
                for x, y in zip(ours, theirs, strict=False)
                if x["server_cpu_us_per_move"] and y["server_cpu_us_per_move"]
            ]
            ca, cb = (
                _median(ours, "client_cpu_us_per_move"),
                _median(theirs, "client_cpu_us_per_move"),
            )
            ratios.append(
                {
                    "games": level,
                    "against": target,
                    "server_ratio": round(a / b, 2) if a and b else None,
                    "server_ratio_paired": round(statistics.median(pairs), 2) if pairs else None,
                    "client_ratio": round(ca / cb, 2) if ca and cb else None,
                }
            )
    return {"sides": sides, "ratios": ratios}


def _profile_round(
    side: Side,
    workdir: Path,
    out_dir: Path,
    level: int,
    rate: float,
    warmup: float,
    window: float,
    omit_view: bool,
    list_moves: bool = False,
    play: bool = False,
) -> dict[str, Any]:
    """One more round of ours, not counted, with py-spy sampling the service and the
    gateway's Python process through the window (the same sampling as bench profile)."""
    from bench import profile

    spy = profile.py_spy()
    if spy is None:
        return {"error": "no py-spy: `make bench` installs it (the bench extra)"}
    seconds = max(2, int(2 * window))  # twice a window: more samples
    out_dir.mkdir(parents=True, exist_ok=True)
    raws = {part: out_dir / f"profile-peer-{part}.txt" for part in side.pids}
    samplers: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        for part, pid in side.pids.items():
            command = [spy, "record", "-p", str(pid), "-d", str(seconds), "-r", "250"]
            command += ["--nonblocking", "--gil", "-f", "raw", "-o", str(raws[part])]
            samplers.append(
                subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            )

    w = harness.play_round(
        side,
        None,
        workdir,
        level,
        queue_length(rate, level, warmup + seconds + 2),
        seed=999,
        warmup=warmup,
        window=seconds + 1.0,
        omit_view=omit_view,
        during=start,
        list_moves=list_moves,
        play=play,
    )
    out: dict[str, Any] = {
        "games": level,
        "figures": figures(OURS, level, 0, w, os.getloadavg()[0]),
    }
    for sampler, (part, raw) in zip(samplers, raws.items(), strict=True):
        _, err = sampler.communicate(timeout=seconds + 60)
        if sampler.returncode or not raw.exists():
            out[part] = {"error": err.decode(errors="replace")[-1000:]}
            continue
        text = raw.read_text()
        samples = sum(int(m[2]) for m in map(profile._LINE.match, text.splitlines()) if m)
        out[part] = {
            "raw": str(raw),
            "gil_share": round(samples / (250 * seconds), 3),  # samples at 250 Hz
            "where": [[label, round(share, 4)] for label, share in where(text)],
            "summary": profile.summarize(text, 30),
        }
    return out


def section(
    results: dict[str, Any],
    work: Path,
    out_dir: Path,
    levels: list[int],
    rounds: int,
    window: float,
    warmup: float,
    min_moves: int = 200,
    omit_view: bool = False,
    list_moves: bool = False,
    play: bool = False,
    profile: bool = False,
    store_url: str | None = None,
    calibrate: float | None = None,
    per_table: int | None = None,
    idle: float = 5.0,
) -> dict[str, Any]:
    """Every side at every size, interleaved; ``calibrate`` 0 skips the calibration
    rounds, ``per_table`` fixes each table's queue of games (else sized from the rate)."""
    started = time.time()
    node = harness.node_ready()
    out: dict[str, Any] = {
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "settings": {
            "games": levels,
            "rounds": rounds,
            "window_seconds": window,
            "warmup_seconds": warmup,
            "min_moves": min_moves,
            "omit_view": omit_view,
            "list_moves": list_moves,
            "play": play,
            "store": store_url or "SQLite, synchronous=full (the default)",
        },
        "versions": harness.versions(node),
        "load_average": {"start": [round(x, 2) for x in os.getloadavg()]},
        "cpus": os.cpu_count(),
        "calibration": [],
        "rounds": [],
    }
    print(
        f"peer ({rounds} round(s) of {window:g} s after {warmup:g} s per side and size;"
        f" boardgame.io {out['versions'].get('boardgame.io', '?')} on node"
        f" {out['versions'].get('node', '?')}; load average {out['load_average']['start']})",
        flush=True,
    )
    rate = {(t, level): FIRST_GUESS[t] for t in TARGETS for level in levels}
    seed = 1
    with contextlib.ExitStack() as stack:
        sides = {
            OURS: stack.enter_context(harness.our_stack(work, store_url)),
            BGIO_MEMORY: stack.enter_context(harness.bgio_server(node, "memory", work)),
            BGIO_FLATFILE: stack.enter_context(harness.bgio_server(node, "flatfile", work)),
        }
        time.sleep(1.0)  # started: let start-up work settle before the idle figure
        out["idle_ms_per_second"] = harness.idle_cpu(list(sides.values()), idle)
        print(
            "  idle, no client: "
            + "; ".join(
                f"{t} {sum(parts.values()):.1f} ms/s"
                for t, parts in out["idle_ms_per_second"].items()
            ),
            flush=True,
        )

        def one(target: str, level: int, seconds: float, number: int) -> dict[str, Any]:
            nonlocal seed
            seed += 1
            queued = per_table or queue_length(rate[target, level], level, warmup + seconds)
            load = os.getloadavg()[0]
            w = harness.play_round(
                sides[target],
                node,
                work,
                level,
                queued,
                seed,
                warmup,
                seconds,
                omit_view,
                min_moves=min_moves if number else 0,
                list_moves=list_moves,
                play=play,
            )
            row = figures(target, level, number, w, load)
            measured = max(1.0, row["moves_per_second"])
            # The calibration round replaces the first guess; later rounds only raise it,
            # so a queue is never short because one round was slow.
            rate[target, level] = max(rate[target, level], measured) if number else measured
            return row

        for level in levels:
            for target in TARGETS if calibrate != 0 else ():
                try:
                    row = one(target, level, calibrate or max(1.0, window / 3), 0)
                except Exception as exc:
                    out["calibration"].append({"target": target, "games": level, "error": str(exc)})
                    results.setdefault("errors", []).append(f"peer calibration {target}: {exc}")
                    print(f"  ERROR {target} {level} games: {exc}", flush=True)
                    continue
                out["calibration"].append(row)
                print(line(row, "warm"), flush=True)
            for number in range(1, rounds + 1):
                for target in TARGETS:
                    try:
                        row = one(target, level, window, number)
                    except Exception as exc:
                        results.setdefault("errors", []).append(f"peer {target} {level}: {exc}")
                        print(f"  ERROR {target} {level} games: {exc}", flush=True)
                        continue
                    out["rounds"].append(row)
                    print(line(row), flush=True)
        if profile:
            level = max(levels)
            print(f"  profiling ours at {level} games (py-spy, one more round)", flush=True)
            out["profile"] = _profile_round(
                sides[OURS],
                work,
                out_dir,
                level,
                rate[OURS, level],
                warmup,
                window,
                omit_view,
                list_moves,
                play,
            )
    out.update(summarize(out["rounds"], levels, out["idle_ms_per_second"]))
    out["load_average"]["end"] = [round(x, 2) for x in os.getloadavg()]
    out["duration_seconds"] = round(time.time() - started, 1)
    # Kept apart as well: a later run of other sections rewrites latest.json without it,
    # and BENCHMARKS.md shows the last peer figures measured (report.lines).
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "peer-latest.json").write_text(json.dumps(out, indent=2))
    return out
