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

``--parts``: each of wave perf5's changes alone, in this tree, old way against new on the
same states (the best of several repeats, so a busy machine's share is mostly out): the
two seats' views (``view_to_proto`` and serialize each, against ``codec.view_bytes``),
the move's turn for the answer and two updates (three ``wire.turn`` against one shared),
the second seat's engine view (built, against ``reseat_view``), the mover's snapshot
(built, against the one its watcher was queued) and the seat's legal moves (converted
and serialized, against ``codec.move_bytes``), in µs per move.
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
    # A tree whose turns' bytes are shared (its WatchUpdates uses Encoder.turn).
    shared_turns = hasattr(encoder, "turn")
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
                out.append(updates.encode(item, gid, True))  # as the tree's service writes it
            answers_cpu += time.process_time() - t0
            played += 1
    total = time.process_time() - started
    return {"move_us": total / played * 1e6, "answers_us": answers_cpu / played * 1e6}


def _parts(moves: int, repeats: int) -> dict[str, tuple[float, float]]:
    import timeit

    from services.channeling import codec, engine
    from services.kit import wire
    from services.kit.games import GameManager, Turn
    from services.kit.store import open_store
    from services.kit.testing import choose

    states: list[tuple[Any, ...]] = []
    rng = random.Random(1)
    state = engine.new_game(1, 2, engine.Options())
    while len(states) < moves:
        if engine.outcome(state) is not None:
            state = engine.new_game(len(states), 2, engine.Options())
        seat, move = choose(engine, state, rng)
        events = engine.apply(state, seat, move)
        view0, view1 = engine.view(state, 0), engine.view(state, 1)
        turn = Turn(len(states), seat, str(move), tuple(_event(e) for e in events), 0.0)
        to_act = engine.to_act(state)
        legal = engine.legal_moves(state, to_act[0]) if to_act else []
        states.append((view0, view1, turn, legal, _copy(state)))
    manager = GameManager(engine, open_store("memory://"))

    def best(fn: Any) -> float:
        return min(timeit.repeat(fn, number=1, repeat=repeats)) / len(states) * 1e6

    def reset() -> None:
        codec._view_bytes.clear()
        codec._cell_bytes.clear()
        codec._player_bytes.clear()
        codec._move_bytes.clear()

    def views_old() -> None:
        for v0, v1, *_ in states:
            codec.view_to_proto(v0).SerializeToString()
            codec.view_to_proto(v1).SerializeToString()

    def views_new() -> None:
        for v0, v1, *_ in states:
            codec.view_bytes(v0)
            codec.view_bytes(v1)

    def turns_old() -> None:
        for _, _, turn, *_ in states:
            for _ in range(3):
                wire.turn(turn).SerializeToString()

    def turns_new() -> None:
        kept: dict[int, bytes] = {}
        for _, _, turn, *_ in states:
            for _ in range(3):
                if id(turn) not in kept:
                    kept[id(turn)] = wire.turn(turn).SerializeToString()
            kept.clear()

    def reseat_old() -> None:
        for *_, s in states:
            engine.view(s, 1)

    def reseat_new() -> None:
        for v0, *_ in states:
            engine.reseat_view(v0, 1)

    def moves_old() -> None:
        for _, _, _, legal, _ in states:
            b"".join(codec.move_to_proto(m).SerializeToString() for m in legal)

    def moves_new() -> None:
        for _, _, _, legal, _ in states:
            b"".join([codec.move_bytes(m) for m in legal])

    async def live() -> Any:
        game, _ = await manager.create(2, engine.Options(), seed=1)
        return game

    game = asyncio.run(live())

    def snapshot_old() -> None:
        for _ in states:
            manager.snapshot(game, 0)

    def snapshot_new() -> None:
        for _ in states:
            game.notified.get(0)

    out = {}
    for name, old, new in (
        ("two seats' views", views_old, views_new),
        ("the turn, three times", turns_old, turns_new),
        ("the second seat's engine view", reseat_old, reseat_new),
        ("the mover's snapshot", snapshot_old, snapshot_new),
        ("a seat's legal moves", moves_old, moves_new),
    ):
        reset()
        out[name] = (best(old), best(new))
    return out


def _event(event: Any) -> dict[str, Any]:
    from services.kit.games import event_dict

    return event_dict(event)


def _copy(state: Any) -> Any:
    import copy

    return copy.deepcopy(state)


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
    p.add_argument("--parts", action="store_true", help="each change alone, old way and new")
    args = p.parse_args()
    if args.parts:
        print(f"parts in process, load average {os.getloadavg()}", flush=True)
        for name, (old, new) in _parts(args.moves, args.rounds).items():
            print(f"  {name:32} {old:7.1f} -> {new:6.1f} µs a move", flush=True)
        return
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
