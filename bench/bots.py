"""The bots' strength and cost, and how they behave behind the gateway.

Two parts, both run by ``python -m bench --only bots`` (or ``python -m bench.bots``):

**strength** (in process, games in parallel in spawned worker processes, one per core):
for each game at two players, Glow at 4 and Shén at 4 in two teams, ``hard`` against
``random`` and ``hard`` against ``medium``, seats alternated game by game (at 4 players
the hard seat goes round the table; in Shén's teams the hard team is seats 0 and 2, then
1 and 3). Each game counts the hard side's share of the win (1, or 1/k for a win shared
by k seats of which it holds one): the win rate with its 95% Wilson interval, the game
length in decisions (mean and max), and each level's decisions per second of one core
(CPU time from ``time.process_time`` in the worker that searched; a seat with a single
legal move takes it without a search, as the service does, and is not counted there).
``easy`` is not in a matchup; its cost comes from a probe of 40 decisions per game.
Shén and Res Arcana Duo play with the round limits of bench/engine.py's
RANDOM_PLAY_OPTIONS (40 and 20 rounds, opt-in house rules), so a game of random seats ends.

**served** (processes: the game services and the gateway, as deployed): Channeling and
Shrine tables with seat 1 a hard bot and seat 0 played at random by a client through the
gateway; each bot move's latency is its ``applied_at`` in GetHistory less the previous
move's (the client's, or the bot's own when it moves twice), against the hard budget
plus 200 ms; and the bot's wins. Then the p99 of SubmitMove on games without bots (4
clients, closed loop) alone and while 32 more clients play hard-bot games in another
process.

Targets are printed met or missed; results go to bench/results/bots-latest.json.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import math
import multiprocessing
import os
import random
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
MATCHUPS = (("hard", "random"), ("hard", "medium"))
TARGETS = {"random": 0.90, "medium": 0.60}  # the hard side's win rate against each
COST_PROBE_DECISIONS = 40
SERVED_GAMES = ("channeling", "shrine")
SERVED_SLACK_MS = 200.0
SERVED_WINS = 8  # of 10
P99_FACTOR = 2.0
BOT_CLIENTS = 32


@dataclass(frozen=True)
class Config:
    label: str
    game: str
    players: int
    options: dict[str, Any]
    teams: int = 0  # Shén: the hard side is a team


def configurations(games: list[str]) -> list[Config]:
    """Every game at two players, Glow at 4 and Shén at 4 in two teams."""
    from bench.engine import RANDOM_PLAY_OPTIONS

    out = []
    for game in games:
        base = dict(RANDOM_PLAY_OPTIONS.get(game, {}))
        out.append(Config(f"{game} 2p", game, 2, base))
        if game == "glow":
            out.append(Config("glow 4p", game, 4, base))
        if game == "shen":
            out.append(Config("shen 4p teams", game, 4, {**base, "teams": 2}, teams=2))
    return out


def hard_seats(config: Config, index: int) -> tuple[int, ...]:
    """The hard side's seats in game ``index``: alternated so no seat order favours it."""
    if config.teams:
        team = index % config.teams
        return tuple(range(team, config.players, config.teams))
    return (index % config.players,)


def wilson(wins: float, games: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a win rate (``wins`` may hold shared halves)."""
    if games == 0:
        return (0.0, 1.0)
    p = wins / games
    denominator = 1 + z * z / games
    centre = (p + z * z / (2 * games)) / denominator
    half = z * math.sqrt(p * (1 - p) / games + z * z / (4 * games * games)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


# --- in a worker process ----------------------------------------------------------------


def _timed_decider(level: str, ms: float, players: int, cost: dict[str, list[float]]) -> Any:
    from services.kit.bots import levels

    def decide(engine: Any, state: Any, seat: int, rng: random.Random) -> Any:
        legal = engine.legal_moves(state, seat)
        if len(legal) == 1:
            return legal[0]
        started = time.process_time()
        move = levels.decide(engine, state, seat, level, rng, ms, players=players)
        cost[level][0] += time.process_time() - started
        cost[level][1] += 1
        return move

    return decide


def play_game(
    config: Config, hard: tuple[int, ...], opponent: str, seed: int, ms: float
) -> dict[str, Any]:
    """One game, hard in ``hard``'s seats and ``opponent`` elsewhere: who won, how long,
    and each level's CPU seconds and searched decisions."""
    from services import registry
    from services.kit.bots import match

    engine = registry.by_name(config.game).engine()
    options = engine.GAME.options_type(**config.options)
    cost: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    deciders = [
        _timed_decider("hard" if seat in hard else opponent, ms, config.players, cost)
        for seat in range(config.players)
    ]
    game = match.play(engine, seed, config.players, deciders, options)
    assert game.outcome is not None  # match.play plays to the end
    winners = set(game.outcome.winners)
    share = len(winners & set(hard)) / len(winners) if winners else 0.0
    return {"share": share, "decisions": len(game.moves), "cost": dict(cost)}


def probe_cost(config: Config, level: str, seed: int, ms: float) -> dict[str, Any]:
    """``level``'s cost on the first decisions of a game where every seat plays it."""
    from services import registry

    engine = registry.by_name(config.game).engine()
    options = engine.GAME.options_type(**config.options)
    state = engine.new_game(seed, config.players, options)
    rng = random.Random(seed)
    cost: dict[str, list[float]] = defaultdict(lambda: [0.0, 0])
    decide = _timed_decider(level, ms, config.players, cost)
    for _ in range(COST_PROBE_DECISIONS):
        if engine.outcome(state) is not None:
            break
        seat = engine.to_act(state)[0]
        engine.apply(state, seat, decide(engine, state, seat, rng))
    return {"cost": dict(cost)}


# --- strength ---------------------------------------------------------------------------


def _rates(cost: dict[str, list[float]]) -> dict[str, float | None]:
    return {level: (n / cpu if cpu > 0 else None) for level, (cpu, n) in sorted(cost.items())}


def strength(games: list[str], count: int, ms: float, workers: int) -> list[dict[str, Any]]:
    """Every configuration's matchups, ``count`` games each, in ``workers`` processes."""
    configs = configurations(games)
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    costs: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0]))
    with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures: dict[Any, tuple[Config, str | None]] = {}
        for config in configs:
            futures[pool.submit(probe_cost, config, "easy", 1, ms)] = (config, None)
            for _, opponent in MATCHUPS:
                rows[(config.label, opponent)] = {
                    "configuration": config.label,
                    "matchup": f"hard vs {opponent}",
                    "games": 0,
                    "wins": 0.0,
                    "lengths": [],
                    "started": time.monotonic(),
                }
                for index in range(count):
                    seed = 10_000 + index
                    future = pool.submit(
                        play_game, config, hard_seats(config, index), opponent, seed, ms
                    )
                    futures[future] = (config, opponent)
        pending = {key: count for key in rows}
        for future in as_completed(futures):
            config, against = futures[future]
            got = future.result()
            for level, (cpu, n) in got["cost"].items():
                costs[config.label][level][0] += cpu
                costs[config.label][level][1] += n
            if against is None:  # the cost probe
                continue
            row = rows[(config.label, against)]
            row["games"] += 1
            row["wins"] += got["share"]
            row["lengths"].append(got["decisions"])
            pending[(config.label, against)] -= 1
            if pending[(config.label, against)] == 0:
                _finish(row, against)
                print(line(row), flush=True)
    out = []
    for (label, _), row in rows.items():
        row["decisions_per_cpu_second"] = _rates(costs[label])
        out.append(row)
    for label in dict.fromkeys(r["configuration"] for r in out):
        rates = _rates(costs[label])
        shown = ", ".join(f"{lv} {r:,.1f}" for lv, r in rates.items() if r is not None)
        print(f"  {label:15} decisions/s per core: {shown}", flush=True)
    return out


def _finish(row: dict[str, Any], opponent: str) -> None:
    low, high = wilson(row["wins"], row["games"])
    row["win_rate"] = row["wins"] / row["games"]
    row["interval_95"] = [round(low, 3), round(high, 3)]
    row["target"] = TARGETS[opponent]
    row["met"] = row["win_rate"] >= TARGETS[opponent]
    row["met_at_95"] = low >= TARGETS[opponent]  # the whole interval clears the target
    lengths = row.pop("lengths")
    row["mean_length"] = round(statistics.fmean(lengths), 1)
    row["max_length"] = max(lengths)
    row["seconds"] = round(time.monotonic() - row.pop("started"), 1)


def line(row: dict[str, Any]) -> str:
    low, high = row["interval_95"]
    return (
        f"  {row['configuration']:15} {row['matchup']:15} {row['win_rate']:6.1%}"
        f" [{low:.1%}, {high:.1%}] of {row['games']} games; length mean"
        f" {row['mean_length']:.0f} max {row['max_length']}"
        f"  target >= {row['target']:.0%}: {'met' if row['met'] else 'MISSED'}"
        f"{' (interval clear of it)' if row['met_at_95'] else ''}"
    )


# --- served, through the gateway --------------------------------------------------------


def bot_table(game: str, level: str, players: int = 2) -> dict[str, Any]:
    """CreateGame fields for a table: seat 0 the caller's, every other seat a bot."""
    from tabletop.common.v1 import table_pb2

    from bench.engine import RANDOM_PLAY_OPTIONS
    from services import registry

    enum = getattr(table_pb2, f"BOT_LEVEL_{level.upper()}")
    seats = [table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)] + [
        table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_BOT, bot_level=enum)
    ] * (players - 1)
    options = registry.by_name(game).pb2().Options(**RANDOM_PLAY_OPTIONS.get(game, {}))
    return {"players": players, "seats": seats, "options": options}


async def play_seat_zero(
    client: Any, game: str, level: str, rng: random.Random, moves: Any = None
) -> Any:
    """A table against bots, seat 0 played at random until the end: its id and final
    header. ``moves``, a shared counter, counts seat 0's moves (each one a bot's turn)."""
    import grpc

    from client.api import FINISHED

    created = await client.create(**bot_table(game, level))
    game_id, token = created.game_id, created.tokens[0]
    header = created.response.game
    while header.status != FINISHED:
        if 0 not in header.to_act:
            async for update in client.watch(game_id, token, header.version, timeout=300):
                header = update.game
                if header.status == FINISHED or 0 in header.to_act:
                    break
            continue
        listed = await client.moves(game_id, token)
        if not listed.moves:
            header = (await client.get(game_id, token)).game
            continue
        try:
            reply = await client.submit(
                game_id,
                token,
                rng.choice(list(listed.moves)),
                expected_version=listed.game.version,
                request_id=f"0-{listed.game.version}",
            )
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.ABORTED:
                raise
            header = (await client.get(game_id, token)).game
            continue
        header = reply.game
        if moves is not None:
            with moves.get_lock():
                moves.value += 1
    return created.game_id, header


async def bot_latencies(address: str, game: str, count: int, ms: float) -> dict[str, Any]:
    """``count`` tables of ``game`` against a hard bot: each bot move's latency, wins."""
    import grpc

    from client.api import GameClient

    latencies: list[float] = []
    over: list[str] = []  # table.move of each bot move over the limit, with its latency
    limit = ms + SERVED_SLACK_MS
    wins = 0.0
    async with grpc.aio.insecure_channel(address) as channel:
        client = GameClient(game, channel, timeout=120)
        for index in range(count):
            game_id, header = await play_seat_zero(client, game, "hard", random.Random(index))
            winners = set(header.outcome.winners)
            wins += (1 in winners) / len(winners) if winners else 0.0
            turns = await client.history(game_id)
            for before, turn in itertools.pairwise(turns):
                if turn.seat == 1:
                    gap = turn.applied_at.ToDatetime() - before.applied_at.ToDatetime()
                    latencies.append(gap.total_seconds() * 1000)
                    if latencies[-1] > limit:
                        over.append(f"{index}.{turn.version}: {latencies[-1]:.0f} ms")
    return {
        "game": game,
        "games": count,
        "bot_wins": wins,
        "bot_moves": len(latencies),
        "max_ms": round(max(latencies), 1) if latencies else None,
        "p50_ms": round(statistics.median(latencies), 1) if latencies else None,
        "over_limit": len(over),
        "over_limit_moves": over,
        "limit_ms": limit,
        "latency_met": bool(latencies) and max(latencies) <= limit,
        "wins_met": wins >= SERVED_WINS * count / 10,
    }


def _bot_clients(address: str, game: str, clients: int, stop: Any, played: Any) -> None:
    """In its own process: ``clients`` clients playing hard-bot tables until ``stop``."""
    import grpc

    from client.api import GameClient

    async def one(client: GameClient, n: int) -> None:
        rng = random.Random(n)
        while not stop.is_set():
            await play_seat_zero(client, game, "hard", rng, played)

    async def main() -> None:
        async with grpc.aio.insecure_channel(address) as channel:
            client = GameClient(game, channel, timeout=300)
            tasks = [asyncio.create_task(one(client, n)) for n in range(clients)]
            while not stop.is_set():
                await asyncio.sleep(0.2)
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(main())


async def p99_under_bot_load(address: str, game: str, window: float) -> dict[str, Any]:
    """SubmitMove p99 on games without bots, alone and beside 32 clients' bot games."""
    from bench.rpc import MoveScripts, submit_move_load

    scripts = MoveScripts(game)
    alone = await submit_move_load("plain", address, game, scripts, 4, window, 1.0, 300)
    context = multiprocessing.get_context("spawn")
    stop, played = context.Event(), context.Value("i", 0)
    worker = context.Process(
        target=_bot_clients, args=(address, game, BOT_CLIENTS, stop, played), daemon=True
    )
    worker.start()
    try:
        await asyncio.sleep(5)  # the bot games under way before the window opens
        loaded = await submit_move_load("beside bots", address, game, scripts, 4, window, 1.0, 300)
    finally:
        stop.set()
        worker.join(30)
        if worker.is_alive():
            worker.terminate()
    return {
        "game": game,
        "window_seconds": window,
        "plain_clients": 4,
        "bot_clients": BOT_CLIENTS,
        "client_moves_in_bot_games": played.value,
        "p99_alone_ms": round(alone.p99_ms, 2),
        "p99_beside_bots_ms": round(loaded.p99_ms, 2),
        "calls_alone": alone.calls,
        "calls_beside_bots": loaded.calls,
        "errors": alone.errors + loaded.errors,
        "ratio": round(loaded.p99_ms / alone.p99_ms, 2) if alone.p99_ms else None,
        "met": alone.p99_ms > 0 and loaded.p99_ms <= P99_FACTOR * alone.p99_ms,
    }


def served(work: Path, games: int, ms: float, window: float) -> dict[str, Any]:
    """The judged figures, through ``python -m gateway`` and the services as processes."""
    from bench import processes

    out: dict[str, Any] = {"latency": [], "p99": None}
    env = {"TABLETOP_BOT_MS_PER_DECISION": f"{ms:g}", "TABLETOP_ACCESS_LOG": "false"}
    with contextlib.ExitStack() as stack:
        routes = {
            name: stack.enter_context(processes.game_service(name, work, **env)).address
            for name in SERVED_GAMES
        }
        gateway = stack.enter_context(processes.gateway(routes, work))
        for name in SERVED_GAMES:
            row = asyncio.run(bot_latencies(gateway.address, name, games, ms))
            out["latency"].append(row)
            print(
                f"  {name:11} hard bot: {row['bot_moves']} moves, p50 {row['p50_ms']} ms, max"
                f" {row['max_ms']} ms, limit {row['limit_ms']:g} ms:"
                f" {'met' if row['latency_met'] else 'MISSED'} (over: {row['over_limit_moves']});"
                f" won {row['bot_wins']:g} of {games}:"
                f" {'met' if row['wins_met'] else 'MISSED'} (target {SERVED_WINS} of 10)",
                flush=True,
            )
        p99 = asyncio.run(p99_under_bot_load(gateway.address, SERVED_GAMES[0], window))
        out["p99"] = p99
        print(
            f"  {p99['game']:11} SubmitMove p99 on games without bots: {p99['p99_alone_ms']} ms"
            f" alone, {p99['p99_beside_bots_ms']} ms beside {BOT_CLIENTS} clients' hard-bot"
            f" games ({p99['client_moves_in_bot_games']} client moves) = {p99['ratio']}x, target <="
            f" {P99_FACTOR:g}x: {'met' if p99['met'] else 'MISSED'}",
            flush=True,
        )
    return out


# --- the section ------------------------------------------------------------------------


def section(
    games: list[str],
    count: int,
    ms: float,
    workers: int,
    served_games: int,
    window: float,
    parts: tuple[str, ...] = ("strength", "served"),
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "games_per_matchup": count,
        "ms_per_decision": ms,
        "workers": workers,
    }
    if "strength" in parts:
        print(
            f"bots: strength ({count} games per matchup, {ms:g} ms per hard decision,"
            f" {workers} worker processes)",
            flush=True,
        )
        started = time.monotonic()
        out["strength"] = strength(games, count, ms, workers)
        out["strength_seconds"] = round(time.monotonic() - started, 1)
    if "served" in parts:
        print(f"bots: served ({served_games} tables per game, {ms:g} ms per decision)", flush=True)
        started = time.monotonic()
        with tempfile.TemporaryDirectory(prefix="bench-bots-") as tmp:
            out["served"] = served(Path(tmp), served_games, ms, window)
        out["served_seconds"] = round(time.monotonic() - started, 1)
    return out


def markdown(bots: dict[str, Any]) -> str:
    """The figures as Markdown tables, for BENCHMARKS.md."""
    lines = [
        "| configuration | matchup | games | hard's win rate | 95% interval | length mean / max"
        " | target | |",
        "|---|---|---:|---:|---|---:|---:|---|",
    ]
    for r in bots.get("strength") or []:
        low, high = r["interval_95"]
        lines.append(
            f"| {r['configuration']} | {r['matchup']} | {r['games']} | {r['win_rate']:.1%}"
            f" | {low:.1%} - {high:.1%} | {r['mean_length']:.0f} / {r['max_length']}"
            f" | >= {r['target']:.0%} | {'met' if r['met'] else 'missed'} |"
        )
    lines += [
        "",
        "| configuration | decisions/s per core: "
        + " / ".join(("random", "easy", "medium", "hard"))
        + " |",
        "|---|---|",
    ]
    seen = set()
    for r in bots.get("strength") or []:
        if r["configuration"] in seen:
            continue
        seen.add(r["configuration"])
        rates = r["decisions_per_cpu_second"]
        shown = " / ".join(
            f"{rates[lv]:,.1f}" if rates.get(lv) else "-"
            for lv in ("random", "easy", "medium", "hard")
        )
        lines.append(f"| {r['configuration']} | {shown} |")
    return "\n".join(lines)


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m bench.bots", description=__doc__.split("\n\n")[0])
    add_arguments(p)
    p.add_argument("--games", default="", help="games (default: every game listed)")
    p.add_argument("--parts", default="strength,served", help="strength, served or both")
    p.add_argument("--out", default=str(RESULTS), help="where bots-latest.json goes")
    return p


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--bot-games", type=int, help="games per matchup (200; quick 4)")
    p.add_argument("--bot-ms", type=float, help="ms per hard decision (500; quick 50)")
    p.add_argument("--bot-workers", type=int, help="worker processes (default: the cores)")
    p.add_argument("--bot-tables", type=int, help="served tables per game (10; quick 2)")
    p.add_argument("--bot-window", type=float, help="p99 window in seconds (10; quick 3)")


def settings(args: argparse.Namespace, quick: bool) -> dict[str, Any]:
    return {
        "count": args.bot_games or (4 if quick else 200),
        "ms": args.bot_ms or (50.0 if quick else 500.0),
        "workers": args.bot_workers or os.cpu_count() or 1,
        "served_games": args.bot_tables or (2 if quick else 10),
        "window": args.bot_window or (3.0 if quick else 10.0),
    }


def main(argv: list[str] | None = None) -> None:
    p = parser()
    p.add_argument("--quick", action="store_true", help="a handful of games: a smoke run")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    from bench import processes
    from services import registry

    games = [g for g in args.games.split(",") if g] or registry.names()
    chosen = settings(args, args.quick)
    started = time.time()
    results = {
        "machine": processes.machine(),
        "command": "python -m bench.bots " + " ".join(sys.argv[1:] if argv is None else argv),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "quick": args.quick,
        "bots": section(games, parts=tuple(args.parts.split(",")), **chosen),
    }
    results["duration_seconds"] = round(time.time() - started, 1)
    results["machine"]["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bots-latest.json").write_text(json.dumps(results, indent=2))
    print(markdown(results["bots"]))
    print(f"wrote {out / 'bots-latest.json'} in {results['duration_seconds']:.0f} s")


if __name__ == "__main__":
    main()
