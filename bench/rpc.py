"""RPC figures: SubmitMove against a game service (directly, through our gateway or
through Envoy) and a raw-bytes echo, at several numbers of concurrent clients.

Each client plays its own games: the moves of seeded random games are computed with the
engine beforehand, so every timed call is one SubmitMove (with its expected version)
and nothing else. Games are created before the clock starts; a client that finishes all
of its games makes another outside the timed call.
"""

from __future__ import annotations

import importlib
import itertools
import time
from collections import deque
from collections.abc import Callable
from typing import Any

import grpc

from bench.echo import METHOD
from bench.engine import RANDOM_PLAY_OPTIONS
from bench.load import LoadFigures, closed_loop
from client.api import CreatedGame, GameClient
from services import registry
from services.kit.testing import random_game


class MoveScripts:
    """Seeded random games as (seat, protobuf move) lists, made once and reused."""

    def __init__(self, name: str, players: int | None = None, count: int = 64) -> None:
        entry = registry.by_name(name)
        engine = entry.engine()
        codec = importlib.import_module(f"{entry.package}.codec")
        self.name = name
        self.players = players or engine.GAME.min_players
        chosen = RANDOM_PLAY_OPTIONS.get(name, {})
        self.options = entry.pb2().Options(**chosen)  # the same, for CreateGame
        self.scripts: list[tuple[int, list[tuple[int, Any]]]] = []
        for seed in range(1, count + 1):
            played = random_game(engine, seed, self.players, engine.GAME.options_type(**chosen))
            moves = [(seat, codec.move_to_proto(move)) for seat, move in played.moves]
            self.scripts.append((seed, moves))
        self.mean_length = sum(len(m) for _, m in self.scripts) / len(self.scripts)
        self._next = itertools.cycle(self.scripts)

    def next(self) -> tuple[int, list[tuple[int, Any]]]:
        return next(self._next)


def channel(address: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(address)


async def submit_move_load(
    target_name: str,
    address: str,
    game: str,
    scripts: MoveScripts,
    concurrency: int,
    seconds: float,
    warmup: float = 0.5,
    expected_rate: float = 3000,
    cpu: Callable[[], dict[str, float]] | None = None,
    omit_view: bool = False,
) -> LoadFigures:
    """``concurrency`` clients, each submitting the moves of its own games in order;
    with ``omit_view`` as a client that watches would (no view in the answers)."""
    async with channel(address) as chan:
        client = GameClient(game, chan)
        budget = expected_rate * (seconds + warmup) / concurrency / scripts.mean_length
        per_worker = int(budget) + 1

        async def new_game() -> tuple[CreatedGame, list[tuple[int, Any]]]:
            seed, moves = scripts.next()
            game = await client.create(scripts.players, seed=seed, options=scripts.options)
            return game, moves

        async def make_worker(_: int):
            queue = deque([await new_game() for _ in range(per_worker)])
            position = 0

            async def step() -> float:
                nonlocal position
                if position == len(queue[0][1]):
                    queue.popleft()
                    if not queue:
                        queue.append(await new_game())  # not timed
                    position = 0
                created, moves = queue[0]
                seat, move = moves[position]
                started = time.perf_counter()
                try:
                    await client.call(
                        "SubmitMove",
                        created.tokens[seat],
                        game_id=created.game_id,
                        move=move,
                        expected_version=position,
                        omit_view=omit_view,
                    )
                except grpc.aio.AioRpcError:
                    queue.popleft()  # counted as an error; that game is left as it is
                    queue.append(await new_game())
                    position = 0
                    raise
                took = time.perf_counter() - started
                position += 1
                return took

            return step

        return await closed_loop(target_name, make_worker, concurrency, seconds, warmup, cpu)


async def echo_load(
    address: str,
    concurrency: int,
    seconds: float,
    warmup: float = 0.5,
    size: int = 120,
    cpu: Callable[[], dict[str, float]] | None = None,
) -> LoadFigures:
    """The same closed loop against the echo service: gRPC with no work behind it."""
    async with channel(address) as chan:
        echo: grpc.aio.UnaryUnaryMultiCallable[bytes, bytes] = chan.unary_unary(METHOD)
        payload = b"x" * size

        async def make_worker(_: int):
            async def step() -> float:
                started = time.perf_counter()
                await echo(payload, timeout=30)
                return time.perf_counter() - started

            return step

        return await closed_loop("echo", make_worker, concurrency, seconds, warmup, cpu)
