"""Memory: the resident size of one game service holding N live games, and what one live
game costs.

Two measures, because each misses something the other sees:

- **Resident size (RSS)** of a real ``python -m services.<game>`` process, read from
  /proc before and after creating N games over gRPC (default 10,000): what a pod's
  memory limit must hold, allocator overhead included. Games are fresh (version 0).
- **Python heap per live game** (tracemalloc, in this process): the game manager's
  share of one game at its start and half-way through (the state, the request ids and
  recent turns kept for watchers), with a store that keeps nothing, so only the live
  game is counted.
"""

from __future__ import annotations

import asyncio
import gc
import time
import tracemalloc
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import grpc

from bench import processes
from bench.stores import EngineScripts
from client.api import GameClient
from services import registry
from services.kit.games import GameManager
from services.kit.store import GameRecord, MoveRecord, PlayerQuotas, Quarantined, Quotas


@dataclass
class ServiceMemory:
    game: str
    live_games: int
    rss_before_mib: float
    rss_after_mib: float
    per_game_bytes: int
    create_seconds: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class HeapShare:
    game: str
    games: int
    at_start_bytes: int
    mid_game_bytes: int
    mid_game_decisions: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


async def service_rss(
    name: str, workdir: Path, count: int = 10_000, concurrency: int = 32, warm: int = 200
) -> ServiceMemory:
    """RSS of one service process before and after ``count`` CreateGame calls."""
    players = registry.by_name(name).engine().GAME.min_players
    # synchronous=normal: the store's durability is not what is measured here.
    store = f"sqlite:///{workdir}/{name}-memory.db?synchronous=normal"
    with processes.game_service(name, workdir, store, TABLETOP_ACCESS_LOG="false") as service:
        async with grpc.aio.insecure_channel(service.address) as channel:
            client = GameClient(name, channel)

            async def create(n: int) -> None:
                async def worker(share: int) -> None:
                    for _ in range(share):
                        await client.create(players)

                shares = [n // concurrency + (i < n % concurrency) for i in range(concurrency)]
                await asyncio.gather(*(worker(s) for s in shares if s))

            await create(warm)  # imports, caches and pools are warm before the first figure
            await asyncio.sleep(0.5)
            before = service.rss_bytes()
            started = time.perf_counter()
            await create(count)
            took = time.perf_counter() - started
            await asyncio.sleep(0.5)
            after = service.rss_bytes()
    return ServiceMemory(
        game=name,
        live_games=count,
        rss_before_mib=round(before / 2**20, 1),
        rss_after_mib=round(after / 2**20, 1),
        per_game_bytes=round((after - before) / count),
        create_seconds=round(took, 2),
    )


class DiscardStore:
    """A store that keeps nothing: the heap measured is the live games' alone."""

    url = "discard://"

    def __init__(self) -> None:
        self.versions: dict[str, int] = {}

    async def create(
        self,
        game: GameRecord,
        owner_limit: int = 0,
        waiting_limit: int = 0,
        quotas: Quotas | None = None,
        player_quotas: PlayerQuotas | None = None,
    ) -> None:
        return None

    async def load(self, game_id: str) -> GameRecord | None:
        return None

    async def moves(
        self, game_id: str, after: int = 0, limit: int | None = None
    ) -> list[MoveRecord]:
        return []

    async def append(self, game_id: str, move: MoveRecord) -> None:
        return None

    async def delete_finished_before(self, timestamp: float, game_type: str = "") -> list[str]:
        return []

    async def count_active(self, game_type: str = "") -> int:
        return 0

    async def list_games(
        self,
        game_type: str,
        *,
        status: str | None = None,
        players: int | None = None,
        options: Mapping[str, Any] | None = None,
        after: tuple[float, str] | None = None,
        limit: int = 50,
        player: str | None = None,
    ) -> list[GameRecord]:
        return []

    async def count_waiting(self, game_type: str) -> int:
        return 0

    async def due(
        self,
        game_type: str,
        now: float,
        *,
        waiting_ttl: float,
        idle_seconds: float,
        limit: int = 100,
    ) -> list[str]:
        return []

    async def bot_turns(self, game_type: str, before: float, limit: int = 100) -> list[str]:
        return []

    async def quarantine(self, game_id: str, reason: str, at: float) -> None:
        return None

    async def quarantined(self) -> list[Quarantined]:
        return []

    async def release(self, game_id: str) -> bool:
        return False

    async def raw(self, game_id: str) -> dict[str, Any] | None:
        return None

    async def close(self) -> None:
        return None


def _given(move: Any) -> Callable[[], Any]:
    """The decoder of a move already decoded."""
    return lambda: move


async def heap_share(name: str, games: int = 300) -> HeapShare:
    """tracemalloc's count of one live game, fresh and half-way through its moves."""
    scripts = EngineScripts(name, count=min(games, 64))
    manager = GameManager(
        scripts.engine, DiscardStore(), allow_seed=True, max_games=0, max_live_games=games + 1
    )
    plays = [scripts.next() for _ in range(games)]
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        created: list[tuple[str, dict[int, str], list[tuple[int, Any]]]] = []
        for seed, moves in plays:
            game, tokens = await manager.create(scripts.players, scripts.options, seed)
            created.append((game.record.game_id, tokens, moves))
        gc.collect()
        at_start = tracemalloc.get_traced_memory()[0] - base
        decisions = 0
        for game_id, tokens, moves in created:
            half = moves[: len(moves) // 2]
            for version, (seat, move) in enumerate(half):
                await manager.submit(game_id, tokens[seat], _given(move), version, f"r{version}")
            decisions += len(half)
        gc.collect()
        mid_game = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    return HeapShare(
        game=name,
        games=games,
        at_start_bytes=round(at_start / games),
        mid_game_bytes=round(mid_game / games),
        mid_game_decisions=round(decisions / games, 1),
    )


@dataclass
class WatcherCost:
    game: str
    games: int
    watchers: int
    rss_before_mib: float
    rss_after_mib: float
    per_watcher_bytes: int
    moves: int
    cpu_us_per_move_unwatched: float
    cpu_us_per_move_watched: float
    cpu_us_per_update: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


async def watcher_cost(
    name: str, workdir: Path, games: int = 100, moves_per_game: int = 20, channels: int = 4
) -> WatcherCost:
    """What one WatchGame stream costs a service: its resident memory (RSS with one
    watcher per seat of ``games`` games, against the same games unwatched), and its CPU
    per update (moves in watched games against the same moves in unwatched ones, each
    sent with omit_view as a watching client would)."""
    from bench.rpc import MoveScripts

    scripts = MoveScripts(name)
    players = scripts.players
    pb2 = registry.by_name(name).pb2()
    with processes.game_service(name, workdir, TABLETOP_ACCESS_LOG="false") as service:
        chans = [grpc.aio.insecure_channel(service.address) for _ in range(channels)]
        try:
            clients = [GameClient(name, c) for c in chans]

            async def new_games() -> list[tuple[Any, list[tuple[int, Any]]]]:
                made = []
                for i in range(games):
                    seed, moves = scripts.next()
                    created = await clients[i % channels].create(
                        players, seed=seed, options=scripts.options
                    )
                    made.append((created, moves[:moves_per_game]))
                return made

            async def play(made) -> int:
                async def one(i: int, created, moves) -> int:
                    client = clients[i % channels]
                    for version, (seat, move) in enumerate(moves):
                        await client.call(
                            "SubmitMove", created.tokens[seat], game_id=created.game_id,
                            move=move, expected_version=version, omit_view=True,
                        )  # fmt: skip
                    return len(moves)

                done = await asyncio.gather(*(one(i, c, m) for i, (c, m) in enumerate(made)))
                return sum(done)

            unwatched, watched = await new_games(), await new_games()
            await asyncio.sleep(0.5)
            before = service.rss_bytes()
            streams = []
            for i, (created, _) in enumerate(watched):
                method = chans[i % channels].unary_stream(
                    f"/{registry.by_name(name).service_name}/WatchGame",
                    request_serializer=pb2.WatchGameRequest.SerializeToString,
                    response_deserializer=pb2.WatchGameResponse.FromString,
                )
                for token in created.tokens:
                    streams.append(
                        method(
                            pb2.WatchGameRequest(game_id=created.game_id),
                            metadata=(("authorization", f"Bearer {token}"),),
                        )
                    )
            first = [asyncio.ensure_future(s.read()) for s in streams]
            await asyncio.gather(*first)  # every stream has its first view
            seen = [0] * len(streams)  # the newest version each stream has delivered

            async def drain(k: int) -> None:
                while (update := await streams[k].read()) is not grpc.aio.EOF:
                    message: Any = update
                    seen[k] = max(seen[k], message.game.version)

            readers = [asyncio.ensure_future(drain(k)) for k in range(len(streams))]
            await asyncio.sleep(0.5)
            after = service.rss_bytes()
            cpu0 = service.cpu_seconds()
            moves_unwatched = await play(unwatched)
            cpu1 = service.cpu_seconds()
            moves_watched = await play(watched)
            final = [len(m) for _, m in watched for _ in range(players)]
            deadline = time.monotonic() + 30
            while seen != final and time.monotonic() < deadline:
                await asyncio.sleep(0.05)  # every update delivered before the clock stops
            if seen != final:
                raise RuntimeError("watchers did not see every move within 30 s")
            cpu2 = service.cpu_seconds()
            for s in streams:
                s.cancel()
            await asyncio.gather(*readers, return_exceptions=True)
        finally:
            for c in chans:
                await c.close()
    plain = (cpu1 - cpu0) / moves_unwatched * 1e6
    with_watchers = (cpu2 - cpu1) / moves_watched * 1e6
    return WatcherCost(
        game=name,
        games=games,
        watchers=len(streams),
        rss_before_mib=round(before / 2**20, 1),
        rss_after_mib=round(after / 2**20, 1),
        per_watcher_bytes=round((after - before) / len(streams)),
        moves=moves_watched,
        cpu_us_per_move_unwatched=round(plain, 1),
        cpu_us_per_move_watched=round(with_watchers, 1),
        cpu_us_per_update=round((with_watchers - plain) / players, 1),
    )
