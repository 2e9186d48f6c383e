"""A person's hard bot while other clients flood the service with tables of bots.

``python -m bench --only botfair`` (or ``python -m bench.botfair``). The attack of issue
25: other clients create 100-250 tables of two hard bots, and a person playing a hard
bot waited a minute for each reply. Three phases, each against a fresh Channeling
service process as deployed (hard bots at TABLETOP_BOT_MS_PER_DECISION, 500 ms by
default; the default number of bot workers, one less than the cores):

- **alone**: a person plays a hard bot;
- **attack, caps on**: meanwhile 8 other clients (127.0.0.2 to 127.0.0.9, told apart by
  the x-forwarded-for of a trusted hop, TABLETOP_TRUST_FORWARDED_FOR) ask for the
  tables; the per-client caps refuse most of them (counted);
- **attack, caps off**: the same with TABLETOP_BOT_TABLES_PER_CLIENT and
  TABLETOP_ALL_BOT_TABLES_PER_CLIENT at 0: every table is taken, the fair queue alone
  stands between them and the person.

A reply's wait is the bot's move's ``applied_at`` less the person's move before it
(the service's own times, so the client's polling is not in it). Printed per phase: the
waits' p50 and p99, p99 against alone's (the goal: within 2x), the tables taken and
refused, and the service's CPU (its process and bot workers) per second of wall time.
Figures, never pass/fail.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
from tabletop.common.v1 import table_pb2

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"
ATTACKERS = [f"127.0.0.{i}" for i in range(2, 10)]
P99_GOAL = 2.0

HARD = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_BOT, bot_level=table_pb2.BOT_LEVEL_HARD)
ME = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def attack(client: Any, tables: int) -> dict[str, int]:
    """Each attacker asks for its share of ``tables`` tables of two hard bots at once."""

    async def one(address: str) -> bool:
        request = client.pb2.CreateGameRequest(seats=[HARD, HARD])
        try:
            await client._method("CreateGame")(
                request, metadata=[("x-forwarded-for", address)], timeout=30
            )
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                raise
            return False
        return True

    asked = [ATTACKERS[i % len(ATTACKERS)] for i in range(tables)]
    taken = await asyncio.gather(*(one(address) for address in asked))
    return {"asked": tables, "taken": sum(taken), "refused": tables - sum(taken)}


async def person(client: Any, replies: int, rng: random.Random) -> list[float]:
    """Play seat 0 against a hard bot (new tables as games end) until the bot has replied
    ``replies`` times; each reply's wait in seconds, by the service's clock."""
    waits: list[float] = []
    while len(waits) < replies:
        game = await client.create(seats=[ME, HARD])
        game_id, token = game.game_id, game.tokens[0]
        moved = 0
        while True:
            header = (await client.get(game_id)).game
            if header.outcome.reason:
                break
            if 0 not in header.to_act:
                await asyncio.sleep(0.01)
                continue
            listed = await client.moves(game_id, token)
            if not listed.moves:
                continue
            try:
                await client.submit(game_id, token, rng.choice(list(listed.moves)))
            except grpc.aio.AioRpcError:
                continue  # a stale view: look again
            moved += 1
            if moved % 5 == 0:
                seen = _waits(await client.history(game_id))
                if len(waits) + len(seen) >= replies:
                    break
        waits.extend(_waits(await client.history(game_id)))
    return waits[:replies]


def _waits(turns: list[Any]) -> list[float]:
    """The bot's replies to the person: a bot's move right after the person's."""
    out = []
    for before, after in itertools.pairwise(turns):
        bot = any(e.kind == "bot_move" for e in after.events)
        mine = before.seat == 0 and not any(e.kind == "bot_move" for e in before.events)
        if bot and after.seat == 1 and mine:
            out.append((after.applied_at.ToNanoseconds() - before.applied_at.ToNanoseconds()) / 1e9)
    return out


async def phase(
    label: str, work: Path, replies: int, tables: int, caps: bool, seed: int
) -> dict[str, Any]:
    """One phase against a fresh service process: the person's waits, the tables the
    attack got, the service's CPU."""
    from bench import processes
    from client.api import GameClient

    env = {"TABLETOP_TRUST_FORWARDED_FOR": "true", "TABLETOP_ACCESS_LOG": "false"}
    # The caps as deployed (the benchmarks' services lift them: see bench/processes.py).
    if caps:
        env |= {"TABLETOP_BOT_TABLES_PER_CLIENT": "10", "TABLETOP_ALL_BOT_TABLES_PER_CLIENT": "2"}
    else:
        env |= {"TABLETOP_BOT_TABLES_PER_CLIENT": "0", "TABLETOP_ALL_BOT_TABLES_PER_CLIENT": "0"}
    with processes.game_service("channeling", work, **env) as service:
        async with grpc.aio.insecure_channel(service.address) as channel:
            client = GameClient("channeling", channel, timeout=120)
            await asyncio.sleep(2.0)  # the bot workers start with the service
            got = {"asked": 0, "taken": 0, "refused": 0}
            if tables:
                got = await attack(client, tables)
                await asyncio.sleep(1.0)  # the attack's searches are under way
            cpu, wall = service.cpu_seconds(), time.monotonic()
            waits = await person(client, replies, random.Random(seed))
            cpu, wall = service.cpu_seconds() - cpu, time.monotonic() - wall
    row = {
        "phase": label,
        "replies": len(waits),
        "p50_ms": round(percentile(waits, 0.5) * 1000, 1),
        "p99_ms": round(percentile(waits, 0.99) * 1000, 1),
        "mean_ms": round(statistics.fmean(waits) * 1000, 1) if waits else None,
        "max_ms": round(max(waits) * 1000, 1) if waits else None,
        "tables": got,
        "service_cpu_per_second": round(cpu / wall, 2),
        "seconds": round(wall, 1),
    }
    print(line(row), flush=True)
    return row


def line(row: dict[str, Any]) -> str:
    tables = row["tables"]
    attack = (
        f"attack {tables['taken']} tables taken, {tables['refused']} refused"
        if tables["asked"]
        else "no attack"
    )
    return (
        f"  {row['phase']:18} p50 {row['p50_ms']:7.1f} ms  p99 {row['p99_ms']:7.1f} ms"
        f"  ({row['replies']} replies; {attack}; service CPU {row['service_cpu_per_second']:.2f}"
        f" s/s over {row['seconds']:.0f} s)"
    )


def section(replies: int, tables: int) -> dict[str, Any]:
    """Every phase, and p99 during each attack against alone's."""
    print(
        f"botfair (a person's hard-bot replies, {replies} per phase; {tables} tables of two"
        f" hard bots from {len(ATTACKERS)} other clients)",
        flush=True,
    )
    rows = []
    with tempfile.TemporaryDirectory(prefix="bench-botfair-") as tmp:
        work = Path(tmp)
        for seed, (label, attack_tables, caps) in enumerate(
            (
                ("alone", 0, True),
                ("attack, caps on", tables, True),
                ("attack, caps off", tables, False),
            )
        ):
            rows.append(asyncio.run(phase(label, work, replies, attack_tables, caps, seed)))
    alone = rows[0]["p99_ms"]
    for row in rows[1:]:
        row["p99_vs_alone"] = round(row["p99_ms"] / alone, 2) if alone else None
        met = row["p99_vs_alone"] is not None and row["p99_vs_alone"] <= P99_GOAL
        print(
            f"  {row['phase']}: p99 {row['p99_vs_alone']}x alone's, goal <= {P99_GOAL:g}x:"
            f" {'met' if met else 'missed'}",
            flush=True,
        )
    return {"replies": replies, "tables": tables, "attackers": len(ATTACKERS), "phases": rows}


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--fair-replies", type=int, help="a person's bot replies per phase (60; quick 15)"
    )
    p.add_argument("--fair-tables", type=int, help="tables of bots the attack asks for (100)")


def settings(args: argparse.Namespace, quick: bool) -> dict[str, Any]:
    return {
        "replies": args.fair_replies or (15 if quick else 60),
        "tables": args.fair_tables or 100,
    }


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m bench.botfair", description=__doc__.split("\n\n")[0]
    )
    add_arguments(p)
    p.add_argument("--quick", action="store_true", help="fewer replies: a smoke run")
    p.add_argument("--out", default=str(RESULTS), help="where botfair-latest.json goes")
    args = p.parse_args(sys.argv[1:] if argv is None else argv)
    from bench import processes

    started = time.time()
    results = {
        "machine": processes.machine(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(started)),
        "botfair": section(**settings(args, args.quick)),
        "duration_seconds": round(time.time() - started, 1),
    }
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "botfair-latest.json").write_text(json.dumps(results, indent=2))
    print(f"wrote {out / 'botfair-latest.json'} in {results['duration_seconds']:.0f} s")


if __name__ == "__main__":
    main()
