"""Our side's players for the peer benchmark, in a process of their own (so the client's
CPU is never counted as the server's): TABLES Channeling games at once through one
address (the gateway), closed loop, as a player plays today.

    python -m bench.peer.ours ADDRESS TABLES GAMES_PER_TABLE SEED [--omit-view] [--list-moves]

Each seat of a table has its own channel (its own connection, as each player would) and
follows its game with WatchGame, asking for its legal moves with each update
(``with_moves``). On a message that carries the view, says the game is in progress and
puts this seat to act, the seat picks one of the moves the message carries at random
(with ``--list-moves``, as a client did before streams carried them: of those a
ListMoves call answers) and sends SubmitMove with the version it saw as
``expected_version`` and a request id; then it reads its stream again (the mover learns
of the new state from its stream, as the other seat does, not from the answer). With
``--omit-view`` it asks for answers without the view, which its stream carries anyway.

Before the clock: GAMES_PER_TABLE games per table are created (seeds from SEED) and both
seats' streams opened, each with its first view read. A table plays its games one after
the other; one whose queue runs dry creates another while the clock runs (late_games).
Streams stay open until ``stop``, as the other side's sockets do.

Commands on stdin and answers on stdout as in client.js (ready, go, mark, stop).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import grpc

from client.api import FINISHED, IN_PROGRESS, GameClient, bearer
from services.kit.server import loop_factory

GAME = "channeling"
SETUP_AT_ONCE = 16


@dataclass
class Counts:
    moves: int = 0  # SubmitMove answered OK
    updates: int = 0  # stream messages after the first, both seats
    listed: int = 0  # ListMoves calls (--list-moves)
    finished: int = 0
    decisions: int = 0  # versions of the finished games
    late: int = 0
    errors: dict[str, int] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Game:
    game_id: str
    tokens: list[str]
    streams: list[Any]
    first: list[Any]
    random: random.Random


class Player:
    """One table: two seats, each with its own channel, playing their queue of games."""

    def __init__(self, address: str, omit_view: bool, counts: Counts, list_moves: bool) -> None:
        self.channels = [grpc.aio.insecure_channel(address) for _ in range(2)]
        self.clients = [GameClient(GAME, c) for c in self.channels]
        self.omit_view = omit_view
        self.list_moves = list_moves
        self.counts = counts
        self.games: list[Game] = []

    async def setup(self, seed: int) -> Game:
        created = await self.clients[0].create(2, seed=seed)
        # grpc.aio's stream call (read, cancel), which GameClient.watch types as an iterator.
        streams: list[Any] = [self._watch(created, seat) for seat in (0, 1)]
        first = [await s.read() for s in streams]
        game = Game(created.game_id, created.tokens, streams, first, random.Random(seed))
        self.games.append(game)
        return game

    def _watch(self, created: Any, seat: int) -> Any:
        client = self.clients[seat]
        request = client.pb2.WatchGameRequest(
            game_id=created.game_id, with_moves=not self.list_moves
        )
        return client._method("WatchGame", streaming=True)(
            request, metadata=bearer(created.tokens[seat])
        )

    async def play(self, game: Game) -> None:
        await asyncio.gather(self._seat(game, 0), self._seat(game, 1))

    async def _seat(self, game: Game, seat: int) -> None:
        client, token, stream = self.clients[seat], game.tokens[seat], game.streams[seat]
        message = game.first[seat]
        acted = -1
        while True:
            header = message.game
            if header.status == FINISHED:
                if seat == 0:
                    self.counts.finished += 1
                    self.counts.decisions += header.version
                return
            if (
                message.HasField("view")
                and header.status == IN_PROGRESS
                and seat in header.to_act
                and header.version > acted
            ):
                acted = header.version
                await self._move(client, token, game, seat, header.version, list(message.moves))
            message = await stream.read()
            if message is grpc.aio.EOF:
                raise RuntimeError(f"the stream of {game.game_id} seat {seat} ended")
            self.counts.updates += 1

    async def _move(
        self, client: GameClient, token: str, game: Game, seat: int, version: int, moves: list[Any]
    ) -> None:
        try:
            if self.list_moves:
                listed = await client.moves(game.game_id, token)
                self.counts.listed += 1
                if listed.game.version != version:
                    return  # moved on meanwhile: the stream brings what happened
                moves = list(listed.moves)
            if not moves:
                return
            await client.submit(
                game.game_id,
                token,
                game.random.choice(moves),
                expected_version=version,
                request_id=f"{game.game_id}-{seat}-{version}",
                omit_view=self.omit_view,
            )
            self.counts.moves += 1
        except grpc.aio.AioRpcError as error:
            code = error.code().name
            self.counts.errors[code] = self.counts.errors.get(code, 0) + 1

    async def close(self) -> None:
        for game in self.games:
            for stream in game.streams:
                stream.cancel()
        for channel in self.channels:
            await channel.close()


class Table:
    def __init__(self, player: Player, queue: list[Game], new_game: Any) -> None:
        self.player = player
        self.queue = queue
        self.new_game = new_game

    async def run(self) -> None:
        while True:
            if self.queue:
                game = self.queue.pop(0)
            else:
                self.player.counts.late += 1
                game = await self.new_game(self.player)
            await self.player.play(game)


def say(obj: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


async def main(argv: list[str]) -> None:
    p = argparse.ArgumentParser(prog="python -m bench.peer.ours", description=__doc__)
    p.add_argument("address")
    p.add_argument("tables", type=int)
    p.add_argument("games_per_table", type=int)
    p.add_argument("seed", type=int)
    p.add_argument("--omit-view", action="store_true")
    p.add_argument("--list-moves", action="store_true")
    args = p.parse_args(argv)
    counts = Counts()
    seeds = iter(range(args.seed * 1_000_003, args.seed * 1_000_003 + 10_000_000))

    async def new_game(player: Player) -> Game:
        return await player.setup(next(seeds))

    started = time.monotonic()
    players = [
        Player(args.address, args.omit_view, counts, args.list_moves) for _ in range(args.tables)
    ]
    queues: list[list[Game]] = [[] for _ in players]
    jobs = [t for _ in range(args.games_per_table) for t in range(args.tables)]
    for i in range(0, len(jobs), SETUP_AT_ONCE):
        batch = jobs[i : i + SETUP_AT_ONCE]
        made = await asyncio.gather(*(new_game(players[t]) for t in batch))
        for t, game in zip(batch, made, strict=True):
            queues[t].append(game)
    say({"event": "ready", "matches": len(jobs), "setup_seconds": time.monotonic() - started})
    tasks: list[asyncio.Task[None]] = []
    try:
        while True:
            line = await asyncio.to_thread(sys.stdin.readline)
            command = line.strip()
            if command == "go":
                tables = [Table(pl, q, new_game) for pl, q in zip(players, queues, strict=True)]
                tasks = [asyncio.create_task(t.run()) for t in tables]
                say({"event": "going"})
            elif command == "mark":
                failed = [str(t.exception()) for t in tasks if t.done() and not t.cancelled()]
                say({"event": "mark", **counts.as_dict(), "failed_tables": failed})
            elif command in ("stop", ""):
                failed = [str(t.exception()) for t in tasks if t.done() and not t.cancelled()]
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                say({"event": "done", **counts.as_dict(), "failed_tables": failed})
                break
    finally:
        for player in players:
            with contextlib.suppress(Exception):
                await player.close()


if __name__ == "__main__":
    # uvloop when installed, as the services run: the client's CPU is reported too.
    with asyncio.Runner(loop_factory=loop_factory("auto")) as runner:
        runner.run(main(sys.argv[1:]))
