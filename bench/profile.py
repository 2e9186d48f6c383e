"""``python -m bench profile``: where a service's (or the gateway's) time goes under load.

Starts the service (and the gateway with ``--via gateway``), drives SubmitMove at it
with N concurrent clients as ``make bench`` does, samples the process under test with
py-spy (the ``bench`` extra) and prints where the samples fall: by source file and by
function, own time and inclusive. The raw samples are kept (collapsed stacks, which
speedscope and flamegraph.pl read) in bench/results/profile-<game>-<via>.txt.

    python -m bench profile --game channeling --via direct --seconds 10
    python -m bench profile --game glow --via gateway --env TABLETOP_ACCESS_LOG=false

Also printed: CPU time per call of each process, read from /proc, which is the figure
to compare between variants (a store, the access log) on a busy machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from bench import processes
from bench.load import LoadFigures
from bench.rpc import MoveScripts, submit_move_load

RESULTS = Path(__file__).resolve().parent / "results"
_LINE = re.compile(r"^(.*) (\d+)$")
_FRAME = re.compile(r"^(?P<name>.*) \((?P<file>[^()]*?)(?::\d+)?\)$")


def py_spy() -> str | None:
    found = Path(sys.executable).with_name("py-spy")
    return str(found) if found.exists() else shutil.which("py-spy")


def _frame(text: str) -> tuple[str, str]:
    match = _FRAME.match(text)
    if not match:
        return text, "?"
    return match["name"], match["file"]


def summarize(raw: str, top: int = 25) -> str:
    """Own and inclusive shares of the samples, by file and by function."""
    own_file: Counter[str] = Counter()
    own_fn: Counter[str] = Counter()
    incl_fn: Counter[str] = Counter()
    total = 0
    for line in raw.splitlines():
        match = _LINE.match(line.strip())
        if not match:
            continue
        count = int(match[2])
        frames = [_frame(f) for f in match[1].split(";")]
        total += count
        name, file = frames[-1]
        own_file[file] += count
        own_fn[f"{name} ({file})"] += count
        for key in {f"{n} ({f})" for n, f in frames}:
            incl_fn[key] += count
    if not total:
        return "no samples"
    out = [f"{total} samples (threads holding the GIL: the Python work)", "", "own time by file:"]
    out += [f"  {n / total:6.1%}  {k}" for k, n in own_file.most_common(top)]
    out += ["", "own time by function:"]
    out += [f"  {n / total:6.1%}  {k}" for k, n in own_fn.most_common(top)]
    out += ["", "inclusive time by function (kit, gateway, game code):"]
    ours = [
        (k, n) for k, n in incl_fn.most_common() if re.search(r"\((services|gateway|client)/", k)
    ]
    out += [f"  {n / total:6.1%}  {k}" for k, n in ours[:top]]
    return "\n".join(out)


async def _drive(address: str, game: str, concurrency: int, seconds: float, cpu) -> LoadFigures:
    scripts = MoveScripts(game)
    return await submit_move_load(
        "profile", address, game, scripts, concurrency, seconds, warmup=1.0, cpu=cpu
    )


def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(prog="python -m bench profile", description=__doc__)
    p.add_argument("--game", default="channeling")
    p.add_argument("--via", choices=["direct", "gateway"], default="direct")
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--concurrency", type=int, default=32)
    p.add_argument("--store-url", default=None, help="the service's store (default: SQLite)")
    p.add_argument("--env", action="append", default=[], help="NAME=VALUE for the processes")
    p.add_argument("--all-threads", action="store_true", help="not only GIL-holding samples")
    p.add_argument("--top", type=int, default=25)
    args = p.parse_args(argv)
    env = dict(item.split("=", 1) for item in args.env)
    spy = py_spy()
    if spy is None:
        raise SystemExit("no py-spy: `make bench` installs it (the bench extra)")
    RESULTS.mkdir(exist_ok=True)
    raw_path = RESULTS / f"profile-{args.game}-{args.via}.txt"
    with (
        tempfile.TemporaryDirectory(prefix="bench-profile-") as tmp,
        contextlib.ExitStack() as stack,
    ):
        work = Path(tmp)
        service = stack.enter_context(
            processes.game_service(args.game, work, args.store_url, **env)
        )
        running = {"service": service}
        target = service
        if args.via == "gateway":
            target = stack.enter_context(
                processes.gateway({args.game: service.address}, work, **env)
            )
            running["gateway"] = target
        command = [spy, "record", "-p", str(target.pid), "-d", str(int(args.seconds)), "-r", "250"]
        command += ["--nonblocking", "-f", "raw", "-o", str(raw_path)]
        if not args.all_threads:
            command.append("--gil")
        sampler = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)

        def cpu() -> dict[str, float]:
            return {name: proc.cpu_seconds() for name, proc in running.items()}

        figures = asyncio.run(
            _drive(target.address, args.game, args.concurrency, args.seconds, cpu)
        )
        _, err = sampler.communicate(timeout=args.seconds + 60)
        if sampler.returncode:
            raise SystemExit(f"py-spy failed: {err.decode(errors='replace')[-1000:]}")
    f = figures.as_dict()
    print(
        f"{args.game} via {args.via}, {args.concurrency} clients: {f['calls_per_second']:,.0f}"
        f" SubmitMove/s, p50 {f['p50_ms']:.2f} ms, p99 {f['p99_ms']:.2f} ms"
    )
    for name, cores in f["cpu_cores"].items():
        per_call = cores / f["calls_per_second"] * 1e6 if f["calls_per_second"] else 0
        print(f"  {name}: {cores:.0%} of a core, {per_call:,.0f} µs CPU per call")
    print()
    print(summarize(raw_path.read_text(), args.top))
    print(f"\nraw samples: {raw_path}")
