"""A move's answers in process, tree against tree: the CPU the service spends building
them, without gRPC, the network or a store on disk.

``GameManager`` on the memory store plays Channeling (random legal moves, ``--games``
games in turns, each with both seats watching ``with_moves``), and after each move builds
what the service would send for it: the mover's SubmitMove answer and each watching
seat's update, as that tree's ``services/kit/service.py`` builds them. Two figures per
move, process CPU time: the whole move (the manager's submit, its notify, the answers)
and the answers alone (from the submit's return to the last update's bytes).

Each tree runs in a process of its own (its ``services`` first on the path), in
interleaved rounds:

    python -m bench.answers --root before=/tmp/tree-before [--rounds 7 --moves 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


async def _measure(games: int, moves: int, seed: int) -> dict[str, float]:
    from services import registry
    from services.kit import encoding, wire
    from services.kit.games import GameManager
    from services.kit.store import open_store

    entry = registry.by_name("channeling")
    engine, pb2 = entry.engine(), entry.pb2()
    codec = __import__(f"{entry.package}.codec", fromlist=["codec"])
    manager = GameManager(engine, open_store("memory://"))
    view_bytes = getattr(codec, "view_bytes", None)

    def view(snap: Any) -> Any:
        return codec.view_to_proto(snap.view)

    move_bytes = getattr(codec, "move_bytes", None)
    if move_bytes is not None:
        encoder = encoding.Encoder(view, encoding.header_key, view_bytes, move_bytes)
    elif view_bytes is not None:
        encoder = encoding.Encoder(view, encoding.header_key, view_bytes)
    else:
        encoder = encoding.Encoder(view, encoding.header_key)
    updates = wire.WatchUpdates(
        pb2.WatchGameResponse, entry.name, view, codec.move_to_proto, encoder
    )
    shared_turns = hasattr(encoder, "update")  # this tree's service.py path
    rng = random.Random(seed)

    async def table() -> tuple[str, dict[int, str], list[Any]]:
        live, tokens = await manager.create(2, engine.Options(), seed=rng.randrange(1 << 30))
        gid = live.record.game_id
        streams = []
        for seat in (0, 1):
            stream = await manager.watch(gid, tokens[seat], None, True)
            await anext(stream)
            streams.append(stream)
        return gid, tokens, streams

    tables = [await table() for _ in range(games)]
    played = 0
    answers_cpu = 0.0
    started = time.process_time()
    while played < moves:
        for i, (gid, tokens, streams) in enumerate(tables):
            async with manager.locked(gid) as now:
                if engine.outcome(now.state) is not None:
                    move = None
                else:
                    seat = engine.to_act(now.state)[0]
                    move = rng.choice(engine.legal_moves(now.state, seat))
            if move is None:
                for stream in streams:
                    await stream.aclose()
                tables[i] = await table()
                continue
            snap, turn = await manager.submit(gid, tokens[seat], _given(move), None, None)
            t0 = time.process_time()
            if shared_turns:
                sent = encoder.answer(encoder.header(snap), encoder.turn(turn), snap)
            else:
                sent = encoder.answer(
                    encoder.header(snap), wire.turn(turn).SerializeToString(), snap
                )
            out = [sent]
            for stream in streams:
                item = await anext(stream)
                if shared_turns and item.encoded is None:
                    item.encoded = encoder.update(item)
                    if item.moves and hasattr(encoder, "with_moves"):
                        item.encoded_moves = encoder.with_moves(item.encoded, item.moves)
                out.append(updates.encode(item, gid, True))
            answers_cpu += time.process_time() - t0
            played += 1
    total = time.process_time() - started
    return {"move_us": total / played * 1e6, "answers_us": answers_cpu / played * 1e6}


def _given(move: Any) -> Any:
    return lambda: move


def _child(args: argparse.Namespace) -> None:
    result = asyncio.run(_measure(args.games, args.moves, args.seed))
    print(json.dumps(result), flush=True)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--root", action="append", default=[], metavar="LABEL=PATH")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--games", type=int, default=8)
    p.add_argument("--moves", type=int, default=2000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        _child(args)
        return
    roots = {"this tree": ROOT}
    for item in args.root:
        label, _, path = item.partition("=")
        roots[label] = Path(path).resolve()
    me = Path(__file__).resolve()
    rows: dict[str, list[dict[str, float]]] = {label: [] for label in roots}
    print(f"answers in process, load average {os.getloadavg()}", flush=True)
    for number in range(args.rounds):
        for label, root in roots.items():
            argv = [sys.executable, str(me), "--child", "--games", str(args.games)]
            argv += ["--moves", str(args.moves), "--seed", str(args.seed + number)]
            env = {**os.environ, "PYTHONPATH": str(root)}
            done = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True)
            if done.returncode:
                raise SystemExit(f"{label}: {done.stderr}")
            row = json.loads(done.stdout.strip().splitlines()[-1])
            rows[label].append(row)
            print(
                f"  {label:12} r{number + 1}  move {row['move_us']:7,.0f} µs"
                f"  answers {row['answers_us']:6,.0f} µs  load {os.getloadavg()[0]:.1f}",
                flush=True,
            )
    for label, mine in rows.items():
        move = statistics.median(r["move_us"] for r in mine)
        answers = statistics.median(r["answers_us"] for r in mine)
        print(f"{label:12} median: move {move:,.0f} µs, answers {answers:,.0f} µs", flush=True)


if __name__ == "__main__":
    main()
