"""Our side's players for the peer benchmark, in a process of their own (so the client's
CPU is never counted as the server's): TABLES Channeling games at once through one
address (the gateway), closed loop, as a player plays today.

    python -m bench.peer.ours ADDRESS TABLES GAMES_PER_TABLE SEED [--omit-view] [--list-moves]
                                                                   [--play]

Each seat of a table has its own channel (its own connection, as each player would) and
follows its game with WatchGame, asking for its legal moves with each update
(``with_moves``). On a message that carries the view, says the game is in progress and
puts this seat to act, the seat picks one of the moves the message carries at random
(with ``--list-moves``, as a client did before streams carried them: of those a
ListMoves call answers) and sends SubmitMove with the version it saw as
``expected_version`` and a request id; then it reads its stream again (the mover learns
of the new state from its stream, as the other seat does, not from the answer). With
``--omit-view`` it asks for answers without the view, which its stream carries anyway.

With ``--play`` each seat instead opens one Play session (its first message ``watch``,
with ``with_moves``) and sends each move on it as a message (``expected_version``, a
request id, ``omit_view``: the session's update carries the view); it acts on updates as
above, without waiting for its last move's answer (answers come in the order of the
moves, an update of the same version before or after its answer). An accepted answer is
a move; a refused one is counted by its code, as a failed SubmitMove is. A session is
read to its end (OK after the game's end, every move answered): an answer missing at
the end is counted (``unanswered``), another end fails the table.

Before the clock: GAMES_PER_TABLE games per table are created (seeds from SEED) and both
seats' streams opened, each with its first view read. A table plays its games one after
the other; one whose queue runs dry creates another while the clock runs (late_games).
Streams stay open until ``stop`` (or their game's end), as the other side's sockets do.

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
    moves: int = 0  # SubmitMove answered OK; on Play, answers that accepted the move
    updates: int = 0  # stream messages after the first, both seats (on Play, not answers)
    sent: int = 0  # moves sent on Play sessions
    answers: int = 0  # answers read on Play sessions (accepted or refused)
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


# A refusal's code (tabletop.common.v1.Refusal.code) by its name, as a call's error counts.
CODES = {code.value[0]: code.name for code in grpc.StatusCode}


class Player:
    """One table: two seats, each with its own channel, playing their queue of games."""

    def __init__(
        self,
        address: str,
        omit_view: bool,
        counts: Counts,
        list_moves: bool,
        play: bool = False,
    ) -> None:
        self.channels = [grpc.aio.insecure_channel(address) for _ in range(2)]
        self.clients = [GameClient(GAME, c) for c in self.channels]
        self.omit_view = omit_view
        self.list_moves = list_moves
        self.play_sessions = play
        self.counts = counts
        self.games: list[Game] = []

    async def setup(self, seed: int) -> Game:
        created = await self.clients[0].create(2, seed=seed)
        if self.play_sessions:
            streams = [await self._session(created, seat) for seat in (0, 1)]
            first = [await self._opened(s, created.game_id) for s in streams]
        else:
            # grpc.aio's stream call (read, cancel), which GameClient.watch types as an iterator.
            streams = [self._watch(created, seat) for seat in (0, 1)]
            first = [await s.read() for s in streams]
        game = Game(created.game_id, created.tokens, streams, first, random.Random(seed))
        self.games.append(game)
        return game

    async def _session(self, created: Any, seat: int) -> Any:
        """A seat's Play session, its watch sent (with the moves, as the stream's)."""
        client = self.clients[seat]
        call = self.channels[seat].stream_stream(
            f"/{client.service}/Play",
            request_serializer=client.pb2.PlayRequest.SerializeToString,
            response_deserializer=client.pb2.PlayResponse.FromString,
        )(metadata=bearer(created.tokens[seat]))
        watch = client.pb2.WatchGameRequest(game_id=created.game_id, with_moves=True)
        await call.write(client.pb2.PlayRequest(watch=watch))
        return call

    @staticmethod
    async def _opened(session: Any, game_id: str) -> Any:
        """A session's first update (the view), or why it ended instead."""
        first = await session.read()
        if first is grpc.aio.EOF:
            code, details = await session.code(), await session.details()
            raise RuntimeError(f"the session of {game_id} ended {code.name}: {details}")
        return first.update

    def _watch(self, created: Any, seat: int) -> Any:
        client = self.clients[seat]
        request = client.pb2.WatchGameRequest(
            game_id=created.game_id, with_moves=not self.list_moves
        )
        return client._method("WatchGame", streaming=True)(
            request, metadata=bearer(created.tokens[seat])
        )

    async def play(self, game: Game) -> None:
        seat = self._seat_on_session if self.play_sessions else self._seat
        await asyncio.gather(seat(game, 0), seat(game, 1))

    async def _seat_on_session(self, game: Game, seat: int) -> None:
        """A seat on its Play session: moves out as messages, updates and answers in."""
        pb2, session = self.clients[seat].pb2, game.streams[seat]
        message: Any = game.first[seat]  # the latest update, None after an answer
        acted, sent, answered, finished = -1, 0, 0, False
        while True:
            header = message.game if message is not None else None
            if header is not None and header.status == FINISHED and not finished:
                finished = True
                if seat == 0:
                    self.counts.finished += 1
                    self.counts.decisions += header.version
            elif (
                header is not None
                and message.HasField("view")
                and header.status == IN_PROGRESS
                and seat in header.to_act
                and header.version > acted
                and message.moves
            ):
                acted = header.version
                move = self._move_request(game, seat, header.version, list(message.moves))
                await session.write(pb2.PlayRequest(move=move))
                sent += 1
                self.counts.sent += 1
            response = await session.read()
            if response is grpc.aio.EOF:
                break
            if response.WhichOneof("response") == "answer":
                answered += 1
                self._answered(response.answer)
                message = None
            else:
                self.counts.updates += 1
                message = response.update
        code = await session.code()
        if code != grpc.StatusCode.OK or not finished:
            details = await session.details()
            raise RuntimeError(
                f"the session of {game.game_id} seat {seat} ended {code.name}: {details}"
            )
        if answered < sent:
            self._error("unanswered", sent - answered)

    def _move_request(self, game: Game, seat: int, version: int, moves: list[Any]) -> Any:
        """A move of those listed, for the version seen (game_id left out: the session's)."""
        return self.clients[seat].pb2.SubmitMoveRequest(
            move=game.random.choice(moves),
            expected_version=version,
            request_id=f"{game.game_id}-{seat}-{version}",
            omit_view=True,  # the update of the same version carries the view
        )

    def _answered(self, answer: Any) -> None:
        self.counts.answers += 1
        if answer.WhichOneof("result") == "accepted":
            self.counts.moves += 1
        else:
            self._error(CODES.get(answer.refused.code, str(answer.refused.code)))

    def _error(self, code: str, n: int = 1) -> None:
        self.counts.errors[code] = self.counts.errors.get(code, 0) + n

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
            self._error(error.code().name)

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
    p.add_argument("--play", action="store_true", help="each seat moves on a Play session")
    args = p.parse_args(argv)
    counts = Counts()
    seeds = iter(range(args.seed * 1_000_003, args.seed * 1_000_003 + 10_000_000))

    async def new_game(player: Player) -> Game:
        return await player.setup(next(seeds))

    started = time.monotonic()
    players = [
        Player(args.address, args.omit_view, counts, args.list_moves, args.play)
        for _ in range(args.tables)
    ]
    queues: list[list[Game]] = [[] for _ in players]
    jobs = [t for _ in range(args.games_per_table) for t in range(args.tables)]
    for i in range(0, len(jobs), SETUP_AT_ONCE):
        batch = jobs[i : i + SETUP_AT_ONCE]
        made = await asyncio.gather(*(new_game(players[t]) for t in batch))
        for t, game in zip(batch, made, strict=True):
            queues[t].append(game)
    say(
        {
            "event": "ready",
            "matches": len(jobs),
            "setup_seconds": time.monotonic() - started,
            "mode": "play" if args.play else "calls",
        }
    )
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
