"""Store backends in moves a second: the game manager in this process (no gRPC), with
N concurrent games each applying the moves of a seeded random game, on each backend.

What this isolates is the move log: the same manager, engine and moves, only the store
changes. ``memory://`` is the floor (no I/O at all); SQLite is measured with its default
``synchronous=full`` (nothing acknowledged is lost on power loss) and with
``synchronous=normal``; PostgreSQL when a server is given (TABLETOP_BENCH_POSTGRES_URL,
else TABLETOP_TEST_POSTGRES_URL), in a schema of its own that is dropped afterwards.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
import uuid
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from bench.engine import RANDOM_PLAY_OPTIONS
from bench.load import LoadFigures, closed_loop
from services import registry
from services.kit.games import GameManager
from services.kit.store import open_store
from services.kit.testing import random_game

POSTGRES_ENV = ("TABLETOP_BENCH_POSTGRES_URL", "TABLETOP_TEST_POSTGRES_URL")


class EngineScripts:
    """Seeded random games as (seat, engine move) lists."""

    def __init__(self, name: str, count: int = 32) -> None:
        self.engine = registry.by_name(name).engine()
        info = self.engine.GAME
        self.players = info.min_players
        self.options = info.options_type(**RANDOM_PLAY_OPTIONS.get(info.name, {}))
        self.scripts = []
        for seed in range(1, count + 1):
            played = random_game(self.engine, seed, self.players, self.options)
            self.scripts.append((seed, played.moves))
        self.mean_length = sum(len(m) for _, m in self.scripts) / len(self.scripts)
        self._turn = 0

    def next(self) -> tuple[int, list[tuple[int, Any]]]:
        script = self.scripts[self._turn % len(self.scripts)]
        self._turn += 1
        return script


def postgres_url() -> str | None:
    for name in POSTGRES_ENV:
        url = os.environ.get(name)
        if url:
            return url
    return None


@contextlib.asynccontextmanager
async def postgres_schema(url: str) -> AsyncIterator[str]:
    """``url`` pointed at a fresh schema (search_path), dropped when the block ends."""
    import psycopg

    schema = f"tabletop_bench_{uuid.uuid4().hex[:12]}"
    parts = urlsplit(url)
    libpq = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)]
    base = urlunsplit(
        parts._replace(query=urlencode([(k, v) for k, v in libpq if not k.startswith("pool_")]))
    )
    async with await psycopg.AsyncConnection.connect(base, autocommit=True) as conn:
        await conn.execute(f"CREATE SCHEMA {schema}")
    query = [*libpq, ("options", f"-csearch_path={schema}")]
    try:
        yield urlunsplit(parts._replace(query=urlencode(query)))
    finally:
        async with await psycopg.AsyncConnection.connect(base, autocommit=True) as conn:
            await conn.execute(f"DROP SCHEMA {schema} CASCADE")


def backends(workdir: Path) -> list[tuple[str, str]]:
    """(label, URL) of every backend to measure on this machine."""
    out = [
        ("memory", "memory://"),
        ("sqlite (synchronous=full)", f"sqlite:///{workdir}/store-full.db"),
        ("sqlite (synchronous=normal)", f"sqlite:///{workdir}/store-normal.db?synchronous=normal"),
    ]
    url = postgres_url()
    if url:
        out.append(("postgresql", url))
    return out


async def moves_per_second(
    label: str,
    url: str,
    scripts: EngineScripts,
    concurrency: int,
    seconds: float,
    warmup: float = 0.5,
) -> LoadFigures:
    """Moves a second through GameManager.submit with ``concurrency`` games at once."""
    store = open_store(url)
    manager = GameManager(scripts.engine, store, allow_seed=True, max_games=0)
    try:
        await manager.start()
        budget = 4000 * (seconds + warmup) / concurrency / scripts.mean_length
        per_worker = int(budget) + 1

        async def new_game() -> tuple[str, dict[int, str], list[tuple[int, Any]]]:
            seed, moves = scripts.next()
            game, tokens = await manager.create(scripts.players, scripts.options, seed)
            return game.record.game_id, tokens, moves

        async def make_worker(_: int):
            queue = deque([await new_game() for _ in range(per_worker)])
            position = 0

            async def step() -> float:
                nonlocal position
                if position == len(queue[0][2]):
                    queue.popleft()
                    if not queue:
                        queue.append(await new_game())
                    position = 0
                game_id, tokens, moves = queue[0]
                seat, move = moves[position]
                started = time.perf_counter()
                try:
                    await manager.submit(
                        game_id, tokens[seat], lambda: move, position, f"r{position}"
                    )
                except Exception:
                    queue.popleft()
                    queue.append(await new_game())
                    position = 0
                    raise
                took = time.perf_counter() - started
                position += 1
                await asyncio.sleep(0)  # memory:// never waits: let the other games run
                return took

            return step

        return await closed_loop(label, make_worker, concurrency, seconds, warmup)
    finally:
        await store.close()
