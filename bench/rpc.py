"""RPC figures: SubmitMove against a game service (directly or through the gateway) and
a raw-bytes echo, at several numbers of concurrent clients.

Each client plays its own games: the moves of seeded random games are computed with the
engine beforehand, so every timed call is one SubmitMove (with its expected version)
and nothing else. Games are created before the clock starts.
"""

from __future__ import annotations

import itertools
from typing import Any

import grpc

from bench.echo import METHOD
from bench.load import LoadFigures, closed_loop
from client.api import GameClient
from services import registry
from services.kit.testing import random_game


class MoveScripts:
    """Seeded random games as (seat, protobuf move) lists, made once and reused."""

    def __init__(self, name: str, players: int, count: int = 64) -> None:
        entry = registry.by_name(name)
        engine = entry.engine()
        import importlib

        codec = importlib.import_module(f"{entry.package}.codec")
        self.players = players
        self.scripts: list[tuple[int, list[tuple[int, Any]]]] = []
        for seed in range(1, count + 1):
            played = random_game(engine, seed, players, engine.GAME.options_type())
            moves = [(seat, codec.move_to_proto(move)) for seat, move in played.moves]
            self.scripts.append((seed, moves))
        self.mean_length = sum(len(m) for _, m in self.scripts) / len(self.scripts)
        self._next = itertools.cycle(self.scripts)

    def next(self) -> tuple[int, list[tuple[int, Any]]]:
        return next(self._next)


async def submit_move_load(
    target_name: str,
    address: str,
    game: str,
    scripts: MoveScripts,
    concurrency: int,
    seconds: float,
    expected_rate: float = 4000,
) -> LoadFigures:
    channel = grpc.aio.insecure_channel(address)
    client = GameClient(game, channel)
    per_worker = int(expected_rate * (seconds + 1) / concurrency / scripts.mean_length) + 2

    async def make_worker(_: int):
        queue = []
        for _ in range(per_worker):
            seed, moves = scripts.next()
            created = await client.create(scripts.players, seed=seed)
            queue.append((created, moves))
        position = 0

        async def step() -> None:
            nonlocal position
            if not queue[0][1][position:]:
                queue.pop(0)
                if not queue:  # ran out: make another (rare; the budget above is generous)
                    seed, moves = scripts.next()
                    queue.append((await client.create(scripts.players, seed=seed), moves))
                position = 0
            created, moves = queue[0]
            seat, move = moves[position]
            await client.submit(
                created.game_id, created.tokens[seat], move, expected_version=position
            )
            position += 1

        return step

    try:
        return await closed_loop(target_name, make_worker, concurrency, seconds)
    finally:
        await channel.close()


async def echo_load(address: str, concurrency: int, seconds: float, size: int = 120) -> LoadFigures:
    channel = grpc.aio.insecure_channel(address)
    echo = channel.unary_unary(METHOD)
    payload = b"x" * size

    async def make_worker(_: int):
        async def step() -> None:
            await echo(payload, timeout=30)

        return step

    try:
        return await closed_loop("echo", make_worker, concurrency, seconds)
    finally:
        await channel.close()
