"""``make bench``: engine, service, gateway and echo figures from one run on one machine.

Prints a table and writes bench/results/latest.json (and a timestamped copy). Figures,
never pass/fail: the targets are reported beside what was measured.

    python -m bench                  # everything
    python -m bench --quick          # shorter windows (a smoke run)
    python -m bench --only engine    # engine figures only
    python -m bench --games channeling --concurrency 1,32
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from pathlib import Path

from bench import processes
from bench.engine import measure
from bench.rpc import MoveScripts, echo_load, submit_move_load
from services import registry

RESULTS = Path(__file__).resolve().parent / "results"


def engine_section(games: list[str], seconds: float) -> list[dict]:
    rows = []
    for name in games:
        engine = registry.by_name(name).engine()
        info = engine.GAME
        figures = measure(engine, info.min_players, info.options_type(), "default", seconds)
        rows.append(figures.as_dict())
        print(
            f"  {name:11} {figures.decisions_per_second:>10,.0f} decisions/s"
            f" {figures.games_per_second:>8,.1f} games/s"
            f" {figures.mean_decisions_per_game:>7,.1f} decisions/game"
            f"  median {figures.median_decision_us:>7.1f} us"
            f"  p99 {figures.p99_decision_us:>7.1f} us",
            flush=True,
        )
    return rows


async def rpc_section(games: list[str], levels: list[int], seconds: float, work: Path) -> dict:
    out: dict = {"echo": [], "direct": {}, "gateway": {}}
    with processes.echo(work) as address:
        for level in levels:
            figures = await echo_load(address, level, seconds)
            out["echo"].append(figures.as_dict())
            _print_load("echo", figures)
    for name in games:
        engine = registry.by_name(name).engine()
        scripts = MoveScripts(name, engine.GAME.min_players)
        out["direct"][name] = []
        out["gateway"][name] = []
        with processes.game_service(name, work) as service:
            for level in levels:
                figures = await submit_move_load("direct", service, name, scripts, level, seconds)
                out["direct"][name].append(figures.as_dict())
                _print_load(f"{name} direct", figures)
            with processes.gateway({name: service}, work) as gateway:
                for level in levels:
                    figures = await submit_move_load(
                        "gateway", gateway, name, scripts, level, seconds
                    )
                    out["gateway"][name].append(figures.as_dict())
                    _print_load(f"{name} gateway", figures)
    return out


def _print_load(label: str, f) -> None:
    print(
        f"  {label:22} c={f.concurrency:<4} {f.calls_per_second:>9,.0f} calls/s"
        f"  p50 {f.p50_ms:>7.2f} ms  p99 {f.p99_ms:>7.2f} ms  errors {f.errors}",
        flush=True,
    )


def targets(results: dict) -> list[dict]:
    """Each target of the issues, as measured."""
    out = []
    echo = {e["concurrency"]: e for e in results.get("rpc", {}).get("echo", [])}
    if 1 in echo:
        round_trip_us = echo[1]["p50_ms"] * 1000
        for row in results.get("engine", []):
            share = row["median_decision_us"] / round_trip_us
            out.append(
                {
                    "target": f"{row['game']}: median decision < 5% of an echo round trip",
                    "measured": f"{row['median_decision_us']:.1f} us = {share:.1%}"
                    f" of {round_trip_us:.0f} us",
                    "met": share < 0.05,
                }
            )
    for name, rows in results.get("rpc", {}).get("direct", {}).items():
        direct = {r["concurrency"]: r for r in rows}
        via = {r["concurrency"]: r for r in results["rpc"]["gateway"].get(name, [])}
        if 32 in direct and 32 in echo:
            share = direct[32]["calls_per_second"] / echo[32]["calls_per_second"]
            out.append(
                {
                    "target": f"{name}: direct SubmitMove at 32 clients >= 60% of echo",
                    "measured": f"{direct[32]['calls_per_second']:,.0f}"
                    f" / {echo[32]['calls_per_second']:,.0f} = {share:.0%}",
                    "met": share >= 0.6,
                }
            )
        if 32 in direct and 32 in via:
            share = via[32]["calls_per_second"] / direct[32]["calls_per_second"]
            out.append(
                {
                    "target": f"{name}: gateway keeps >= 80% of direct throughput at 32 clients",
                    "measured": f"{via[32]['calls_per_second']:,.0f}"
                    f" / {direct[32]['calls_per_second']:,.0f} = {share:.0%}",
                    "met": share >= 0.8,
                }
            )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench")
    parser.add_argument("--quick", action="store_true", help="short windows: a smoke run")
    parser.add_argument("--only", choices=["engine", "rpc"], default=None)
    parser.add_argument("--games", default=",".join(registry.names()))
    parser.add_argument("--concurrency", default="1,8,32,128")
    parser.add_argument("--seconds", type=float, default=None, help="window per RPC measurement")
    args = parser.parse_args()
    games = [g for g in args.games.split(",") if g]
    levels = [int(c) for c in args.concurrency.split(",")]
    window = args.seconds or (1.0 if args.quick else 4.0)
    results: dict = {
        "machine": processes.machine(),
        "command": "python -m bench "
        + " ".join(f"--{k}={v}" for k, v in vars(args).items() if v not in (None, False)),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if args.only in (None, "engine"):
        print("engine (one core, in process, random legal moves)", flush=True)
        results["engine"] = engine_section(games, 2.0 if args.quick else 8.0)
    if args.only in (None, "rpc"):
        print(f"rpc ({window:g} s windows; client, service and gateway are separate processes)")
        with tempfile.TemporaryDirectory(prefix="bench-") as work:
            results["rpc"] = asyncio.run(rpc_section(games, levels, window, Path(work)))
    results["targets"] = targets(results)
    if results["targets"]:
        print("targets")
        for t in results["targets"]:
            print(f"  [{'met' if t['met'] else 'MISSED'}] {t['target']}: {t['measured']}")
    RESULTS.mkdir(exist_ok=True)
    text = json.dumps(results, indent=2)
    (RESULTS / "latest.json").write_text(text)
    (RESULTS / f"bench-{time.strftime('%Y%m%dT%H%M%S')}.json").write_text(text)
    print(f"wrote {RESULTS / 'latest.json'}")


if __name__ == "__main__":
    main()
