"""``python -m bench ab``: one change's worth, as CPU per call, back to back.

Starts every variant's processes at once (a variant is a copy of the tree and settings),
then runs the same closed loop against each in turn, round after round, so a machine
that gets busier or quieter during the run touches every variant alike. Prints, per
variant, the median over the rounds of each process's CPU time per call (from /proc:
steadier than calls a second on a shared machine) with every round's figure, calls a
second, p50 and p99, and the load average while it ran.

    python -m bench ab --game channeling --via direct \\
        --variant before=/tmp/tree-before --variant after=.
    python -m bench ab --via echo --variant asyncio=.:TABLETOP_EVENT_LOOP=asyncio \\
        --variant uvloop=.:TABLETOP_EVENT_LOOP=uvloop
    python -m bench ab --game glow --via gateway --variant log=.:TABLETOP_ACCESS_LOG=true \\
        --variant nolog=.:TABLETOP_ACCESS_LOG=false

A variant is ``LABEL=ROOT[:NAME=VALUE[:NAME=VALUE...]]``: the tree its processes run
from and the settings they get. ``--omit-view`` sends SubmitMove as a watching client does
(for one variant only: its setting ``BENCH_OMIT_VIEW=1``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench import processes
from bench.load import LoadFigures
from bench.rpc import MoveScripts, echo_load, submit_move_load


@dataclass
class Variant:
    label: str
    root: Path
    env: dict[str, str]
    runs: list[LoadFigures] = field(default_factory=list)


def parse_variant(text: str) -> Variant:
    label, sep, rest = text.partition("=")
    if not sep or not label:
        raise argparse.ArgumentTypeError(f"{text!r}: LABEL=ROOT[:NAME=VALUE...]")
    root, *settings = rest.split(":")
    env = {}
    for item in settings:
        name, sep, value = item.partition("=")
        if not sep:
            raise argparse.ArgumentTypeError(f"{item!r} in {text!r}: NAME=VALUE")
        env[name] = value
    path = Path(root or ".").resolve()
    if not path.is_dir():
        raise argparse.ArgumentTypeError(f"{root!r} is not a directory")
    return Variant(label, path, env)


def per_call_us(figures: LoadFigures, process: str) -> float | None:
    """CPU microseconds ``process`` spent per call over the measured window."""
    cores = figures.cpu_cores.get(process)
    if cores is None or not figures.calls_per_second:
        return None
    return cores / figures.calls_per_second * 1e6


def summary(variant: Variant, processes_measured: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {"variant": variant.label, "root": str(variant.root), **variant.env}
    for name in processes_measured:
        rounds = [per_call_us(f, name) for f in variant.runs]
        known = [r for r in rounds if r is not None]
        if known:
            out[f"{name}_cpu_us_per_call"] = round(statistics.median(known), 1)
            out[f"{name}_rounds_us"] = [round(r, 1) for r in known]
    for key in ("calls_per_second", "p50_ms", "p99_ms"):
        out[key] = round(statistics.median(getattr(f, key) for f in variant.runs), 3)
    out["errors"] = sum(f.errors for f in variant.runs)
    return out


async def _one(via: str, target: processes.Running, game: str, scripts, args, probe, omit):
    if via == "echo":
        return await echo_load(
            target.address, args.concurrency, args.seconds, args.warmup, cpu=probe
        )
    return await submit_move_load(
        via, target.address, game, scripts, args.concurrency, args.seconds, args.warmup,
        cpu=probe, omit_view=omit,
    )  # fmt: skip


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(prog="python -m bench ab", description=__doc__.split("\n\n")[0])
    p.add_argument("--game", default="channeling")
    p.add_argument("--via", choices=["direct", "gateway", "echo"], default="direct")
    p.add_argument("--variant", type=parse_variant, action="append", required=True)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--seconds", type=float, default=3.0)
    p.add_argument("--warmup", type=float, default=1.0)
    p.add_argument("--omit-view", action="store_true", help="SubmitMove with omit_view set")
    p.add_argument("--store-url", default=None, help="the services' store (default: SQLite)")
    p.add_argument("--out", default=None, help="write the summary as JSON here too")
    args = p.parse_args(argv)
    variants: list[Variant] = args.variant
    measured = {"echo": ["echo"], "direct": ["service"], "gateway": ["gateway", "service"]}[
        args.via
    ]
    scripts = None if args.via == "echo" else MoveScripts(args.game)
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-ab-") as tmp, contextlib.ExitStack() as stack:
        work = Path(tmp)
        targets: list[tuple[processes.Running, dict[str, processes.Running]]] = []
        for v in variants:
            if args.via == "echo":
                echo = stack.enter_context(processes.echo(work, root=v.root, **v.env))
                targets.append((echo, {"echo": echo}))
                continue
            service = stack.enter_context(
                processes.game_service(args.game, work, args.store_url, root=v.root, **v.env)
            )
            running = {"service": service}
            target = service
            if args.via == "gateway":
                target = stack.enter_context(
                    processes.gateway({args.game: service.address}, work, root=v.root, **v.env)
                )
                running["gateway"] = target
            targets.append((target, running))

        async def drive() -> None:
            for round_no in range(args.rounds):
                # Alternate the order, so neither variant always runs first in a round.
                order = list(range(len(variants)))
                if round_no % 2:
                    order.reverse()
                for i in order:
                    target, running = targets[i]

                    def probe(running=running) -> dict[str, float]:
                        return {name: proc.cpu_seconds() for name, proc in running.items()}

                    v = variants[i]
                    omit = args.omit_view or v.env.get("BENCH_OMIT_VIEW") == "1"
                    figures = await _one(args.via, target, args.game, scripts, args, probe, omit)
                    variants[i].runs.append(figures)

        started = time.time()
        asyncio.run(drive())
    load_after = os.getloadavg()
    rows = [summary(v, measured) for v in variants]
    # Each round's figure against the first variant's in the same round: a pair measured
    # seconds apart, so the machine's drift cancels better than in the two medians.
    for row in rows[1:]:
        for name in measured:
            ours, base = row.get(f"{name}_rounds_us"), rows[0].get(f"{name}_rounds_us")
            if ours and base and len(ours) == len(base):
                ratios = [a / b for a, b in zip(ours, base, strict=True) if b]
                row[f"{name}_paired_ratio"] = round(statistics.median(ratios), 3)
    what = "echo" if args.via == "echo" else f"{args.game} SubmitMove via {args.via}"
    view = " (omit_view)" if args.omit_view else ""
    print(
        f"{what}{view}, {args.concurrency} clients, {args.rounds} rounds of {args.seconds:g} s"
        f" ({time.time() - started:.0f} s); load average {load_before[0]:.2f} before,"
        f" {load_after[0]:.2f} after"
    )
    for row in rows:
        cpu = "  ".join(
            f"{name} {row[f'{name}_cpu_us_per_call']:,.0f} µs/call"
            f" [{'/'.join(f'{x:,.0f}' for x in row[f'{name}_rounds_us'])}]"
            + (
                f" x{row[f'{name}_paired_ratio']:.2f} paired"
                if f"{name}_paired_ratio" in row
                else ""
            )
            for name in measured
            if f"{name}_cpu_us_per_call" in row
        )
        print(
            f"  {row['variant']:12} {cpu}  {row['calls_per_second']:,.0f}/s"
            f"  p50 {row['p50_ms']:.2f} ms  p99 {row['p99_ms']:.2f} ms"
            + (f"  errors {row['errors']}" if row["errors"] else "")
        )
    if args.out:
        record = {
            "what": what + view,
            "concurrency": args.concurrency,
            "rounds": args.rounds,
            "seconds": args.seconds,
            "load_average": {"before": load_before, "after": load_after},
            "variants": rows,
        }
        Path(args.out).write_text(json.dumps(record, indent=2))
