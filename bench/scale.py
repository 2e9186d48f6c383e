"""``python -m bench --only scale``: what a move costs as live games and watchers grow.

The Channeling service (SQLite, synced commits) behind the gateway, as deployed; this
process plays. Per point (games at once x watchers per game): every game has both seats
watching with ``with_moves`` (the players: each moves when its stream puts it to act,
SubmitMove with ``omit_view``) and ``watchers - 2`` spectators, each its own WatchGame
stream (read as raw bytes: the figure is the servers', and this process must keep up).
Every game plays at once, closed loop; a game that ends is replaced at once (its
creation counts in the window). ``--scale-think S``: each player waits S seconds (0.5 to
1.5 times, at random) before each move, as people do: thousands of games played closed
loop ask more than the service does in a second, and a queue seconds deep makes every
call wait, health checks included (Envoy then takes the backend out: docs/scaling.md).
After a warm-up, each server process's CPU time (user + system, from /proc) over the
window is divided by the moves applied in it.

    python -m bench --only scale                      # the default points (~5 minutes)
    python -m bench --only scale --scale-points 1x2,2048x2,32x64
    python -m bench --only scale --scale-points 2048x2 --scale-think 10

What grows with what: the service's cost per move holds its engine, its store append and
one message per seat watching (built once per seat, shared by that seat's streams) plus
one write per stream; the gateway relays every watcher's messages (Python), Envoy every
call.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc

from bench import idle as stacks
from client.api import FINISHED, IN_PROGRESS, GameClient, bearer

GAME = "channeling"
DEFAULT_POINTS = "1x2,32x2,256x2,2048x2,32x8,32x64"
CHANNELS = 8  # the players' connections, shared by every game (each stream is its own call)
SETUP_AT_ONCE = 16


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--scale-points",
        default=DEFAULT_POINTS,
        help=f"GAMESxWATCHERS points, scale section ({DEFAULT_POINTS})",
    )
    p.add_argument("--scale-seconds", type=float, help="window per point (8; quick 3)")
    p.add_argument("--scale-rounds", type=int, help="rounds per point (2; quick 1)")
    p.add_argument(
        "--scale-think",
        type=float,
        default=0.0,
        help="seconds a player waits before each move, on average (0: closed loop)",
    )


def settings(args: argparse.Namespace, quick: bool) -> dict[str, Any]:
    points = []
    for item in args.scale_points.split(","):
        games, _, watchers = item.partition("x")
        points.append((int(games), max(2, int(watchers or 2))))
    return {
        "points": points,
        "seconds": args.scale_seconds or (3.0 if quick else 8.0),
        "rounds": args.scale_rounds or (1 if quick else 2),
        "think": args.scale_think,
    }


class Players:
    """Every game's two seats and its spectators, over a few shared channels."""

    def __init__(self, address: str, watchers: int, think: float = 0.0) -> None:
        self.think = think
        # An argument of its own per channel: gRPC shares one connection between channels
        # to one address with the same arguments (all of them on one connection is
        # what stalled at Envoy's default of 1,024 streams a connection).
        self.channels = [
            grpc.aio.insecure_channel(address, options=[("tabletop.bench.connection", n)])
            for n in range(CHANNELS)
        ]
        # Generous: setting up thousands of games and streams at once queues calls.
        self.clients = [GameClient(GAME, c, timeout=300.0) for c in self.channels]
        self.watchers = watchers
        self.moves = 0
        self.errors: dict[str, int] = {}
        self.spectated = 0
        self._next = 0
        self._seed = 0
        self._calls: list[Any] = []

    def _client(self) -> GameClient:
        self._next += 1
        return self.clients[self._next % CHANNELS]

    def _watch(self, client: GameClient, game_id: str, token: str | None, raw: bool) -> Any:
        request = client.pb2.WatchGameRequest(game_id=game_id, with_moves=token is not None)
        if raw:
            call: Any = client._channel.unary_stream(
                f"/{client.service}/WatchGame",
                request_serializer=client.pb2.WatchGameRequest.SerializeToString,
                response_deserializer=None,  # bytes: a spectator only counts them
            )
            stream = call(request)
        else:
            stream = client._method("WatchGame", streaming=True)(request, metadata=bearer(token))
        self._calls.append(stream)
        return stream

    async def game(self) -> list[Any]:
        """A new game with its streams open and their first message read."""
        self._seed += 1
        client = self._client()
        created = await client.create(2, seed=self._seed)
        seats = [self._watch(self._client(), created.game_id, t, False) for t in created.tokens]
        lookers = [
            self._watch(self._client(), created.game_id, None, True)
            for _ in range(self.watchers - 2)
        ]
        first = [await s.read() for s in seats]
        for s in lookers:
            await s.read()
        rng = random.Random(self._seed)
        return [
            asyncio.ensure_future(self._seat(client, created, seat, seats[seat], first[seat], rng))
            for seat in (0, 1)
        ] + [asyncio.ensure_future(self._look(s)) for s in lookers]

    async def _seat(self, client: Any, created: Any, seat: int, stream: Any, message: Any,
                    rng: random.Random) -> None:  # fmt: skip
        acted = -1
        while True:
            header = message.game
            if header.status == FINISHED:
                return
            if (
                header.status == IN_PROGRESS
                and seat in header.to_act
                and message.moves
                and header.version > acted
            ):
                acted = header.version
                if self.think:
                    await asyncio.sleep(self.think * (0.5 + rng.random()))
                try:
                    await client.submit(
                        created.game_id,
                        created.tokens[seat],
                        rng.choice(list(message.moves)),
                        expected_version=header.version,
                        request_id=f"{created.game_id}-{header.version}",
                        omit_view=True,
                    )
                    self.moves += 1
                except grpc.aio.AioRpcError as error:
                    self.errors[error.code().name] = self.errors.get(error.code().name, 0) + 1
            message = await stream.read()
            if message is grpc.aio.EOF:
                return

    async def _look(self, stream: Any) -> None:
        while (await stream.read()) is not grpc.aio.EOF:
            self.spectated += 1

    async def close(self) -> None:
        for call in self._calls:
            call.cancel()
        for channel in self.channels:
            await channel.close()


async def table(players: Players, first: list[Any]) -> None:
    """One table: its game to the end, then the next, until cancelled."""
    tasks = first
    try:
        while True:
            await asyncio.gather(*tasks[:2])
            for t in tasks[2:]:
                t.cancel()
            tasks = await players.game()
    finally:
        for t in tasks:
            t.cancel()


async def point(
    address: str,
    parts: dict[str, Any],
    games: int,
    watchers: int,
    warmup: float,
    seconds: float,
    think: float = 0.0,
) -> dict[str, Any]:
    players = Players(address, watchers, think)
    started = time.monotonic()
    firsts: list[list[Any]] = []
    tables: list[asyncio.Future[None]] = []
    try:
        for i in range(0, games, SETUP_AT_ONCE):
            batch = min(SETUP_AT_ONCE, games - i)
            firsts += await asyncio.gather(*(players.game() for _ in range(batch)))
        setup = time.monotonic() - started
        tables = [asyncio.ensure_future(table(players, f)) for f in firsts]
        await asyncio.sleep(warmup)
        before = {p: read() for p, read in parts.items()}
        moves0, looked0, t0 = players.moves, players.spectated, time.monotonic()
        await asyncio.sleep(seconds)
        after = {p: read() for p, read in parts.items()}
        moves, looked, elapsed = (
            players.moves - moves0,
            players.spectated - looked0,
            time.monotonic() - t0,
        )
    finally:
        for t in [*tables, *(task for first in firsts for task in first)]:
            t.cancel()
        await asyncio.gather(*tables, return_exceptions=True)
        await players.close()
    per_move = {p: round((after[p] - before[p]) / max(1, moves) * 1e6) for p in parts}
    return {
        "games": games,
        "watchers": watchers,
        "moves": moves,
        "moves_per_second": round(moves / elapsed, 1),
        "us_per_move": per_move,
        "server_us_per_move": sum(per_move.values()),
        "spectator_messages_per_move": round(looked / max(1, moves), 2),
        "setup_seconds": round(setup, 1),
        "errors": dict(players.errors),
        "load_average": round(os.getloadavg()[0], 2),
    }


def section(
    points: list[tuple[int, int]], seconds: float, rounds: int, think: float = 0.0
) -> dict[str, Any]:
    out: dict[str, Any] = {
        "seconds": seconds,
        "rounds": rounds,
        "think": think,
        "load_average": {"start": [round(x, 2) for x in os.getloadavg()]},
        "points": [],
    }
    with tempfile.TemporaryDirectory(prefix="bench-scale-") as tmp:
        with stacks.stack(Path(stacks.ROOT), Path(tmp)) as (parts, gateway_address):
            for games, watchers in points:
                runs = []
                for number in range(1, rounds + 1):
                    try:
                        row = asyncio.run(
                            point(gateway_address, parts, games, watchers, 2.0, seconds, think)
                        )
                    except Exception as exc:  # a point that cannot be set up: said, not hidden
                        error = f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}"
                        if isinstance(exc, grpc.aio.AioRpcError):
                            error = f"{exc.code().name}: {exc.details()}"
                        print(f"  scale {games} games x {watchers} watchers: {error}", flush=True)
                        out.setdefault("errors", []).append(
                            {"games": games, "watchers": watchers, "error": error}
                        )
                        continue
                    runs.append(row)
                    print(line(row, f"r{number}"), flush=True)
                if not runs:
                    continue
                best = sorted(runs, key=lambda r: r["server_us_per_move"])[len(runs) // 2]
                out["points"].append({**best, "rounds": [r["server_us_per_move"] for r in runs]})
    out["load_average"]["end"] = [round(x, 2) for x in os.getloadavg()]
    return out


def line(row: dict[str, Any], tag: str) -> str:
    parts = " + ".join(f"{p} {us:,}" for p, us in row["us_per_move"].items())
    return (
        f"  scale {row['games']:>5} games x {row['watchers']:>2} watchers {tag:<3}"
        f" {row['moves_per_second']:>7.1f} moves/s  server {row['server_us_per_move']:>7,} µs/move"
        f" ({parts})  load {row['load_average']:.1f}"
        + (f"  errors {row['errors']}" if row["errors"] else "")
    )


def markdown(scale: dict[str, Any]) -> list[str]:
    load = scale.get("load_average", {})
    out = [
        f"{scale.get('seconds')} s windows after 2 s of play, {scale.get('rounds')} round(s)"
        + (
            f", each player thinking {scale['think']:g} s a move on average"
            if scale.get("think")
            else ""
        )
        + f" per point, median shown; load average {load.get('start')} at the start,"
        f" {load.get('end')} at the end.",
        "",
        "| games at once | watchers per game | moves/s | server CPU µs/move | service | gateway"
        " (Python) | Envoy | rounds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in scale.get("points", []):
        us = r["us_per_move"]
        out.append(
            f"| {r['games']:,} | {r['watchers']} | {r['moves_per_second']:,} |"
            f" {r['server_us_per_move']:,} | {us['service']:,} | {us['gateway']:,} |"
            f" {us['envoy']:,} | {' / '.join(f'{x:,}' for x in r['rounds'])} |"
        )
    for e in scale.get("errors", []):
        out.append(
            f"\n{e['games']:,} games x {e['watchers']} watchers: not measured ({e['error']})."
        )
    return out


__all__ = ["add_arguments", "markdown", "section", "settings"]
