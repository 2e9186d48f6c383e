"""Locust load test for any game service, directly or through the gateway.

Each simulated user plays whole games of one kind, every seat, with random legal moves,
as a real client does: ``CreateGame``, then per decision ``ListMoves`` and
``SubmitMove`` with one of the listed moves; at the end a new game. Every call is
reported to Locust per RPC method (``ChannelingService/SubmitMove``) with its time and
status; each finished game is reported too (request type ``game``; its "response time"
is the whole game, its "size" the number of moves).

gRPC is made gevent-friendly the way Locust's gRPC guide does it
(``grpc.experimental.gevent.init_gevent()`` before any channel exists), with one
channel per user and an interceptor that fires Locust's request events.

    make load GAME=channeling TARGET=127.0.0.1:50051 USERS=32 DURATION=60s   # headless
    .venv/bin/locust -f bench/locustfile.py --host 127.0.0.1:50051 --game glow  # web UI :8089

``--host`` is ``host:port`` (no scheme): the gateway (50051 with ``make run``) or a game
service itself. ``--game`` is a game of services/registry.py, a comma list, or ``all``
(users are spread over them; ``all`` needs the gateway). ``--players`` (default: the
game's fewest) and ``--think-time`` shape the load. Think time is what a person takes
to decide: each wait between one user's decisions is drawn between half and one and a
half times it, 2 s on average by default (``--think-time 0``: as fast as it can). A
refused call is waited out as the refusal says, then sent again (bench/play.py).
``--level easy|medium|hard`` (or TABLETOP_LOAD_LEVEL): each user creates tables where it
plays seat 0 and every other seat is the service's bot at that level, so the load
includes the bots' searches on the service, as real games against the computer do;
while the bots move the user waits (``GetGame`` every :data:`BOT_POLL_SECONDS`, reported
like any call). Without it a user plays every seat itself, as before. The services cap
the unfinished tables with a bot seat per client address (TABLETOP_BOT_TABLES_PER_CLIENT,
10): every user here shares one address, so for more than 10 users with ``--level`` start
the services with TABLETOP_BOT_TABLES_PER_CLIENT=0 (no cap), or the rest are refused.
Distributed: ``--master`` here, ``--worker --master-host HOST`` on every load machine
(or ``--processes -1`` for one worker per core on this one).
"""

from __future__ import annotations

import itertools
import random
import sys
import time
from pathlib import Path

import grpc
import grpc.experimental.gevent as grpc_gevent
from locust import User, events, task  # importing Locust patches the standard library

grpc_gevent.init_gevent()  # after that patching, before any gRPC object exists

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT / "gen", ROOT):  # workers may start anywhere: find the project
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from bench.engine import RANDOM_PLAY_OPTIONS  # noqa: E402
from bench.play import (  # noqa: E402
    FINISHED,
    THINK_TIME,
    Finished,
    GamePlayer,
    ReportingInterceptor,
    think,
)
from services import registry  # noqa: E402

LEVELS = ("easy", "medium", "hard")
BOT_POLL_SECONDS = 0.25  # between GetGame calls while the service's bots move


@events.init_command_line_parser.add_listener
def _arguments(parser) -> None:
    parser.add_argument(
        "--game",
        default="channeling",
        env_var="TABLETOP_LOAD_GAME",
        help=f"game to play: one of {', '.join(registry.names())}, a comma list, or all",
    )
    parser.add_argument(
        "--players",
        type=int,
        default=0,
        env_var="TABLETOP_LOAD_PLAYERS",
        help="players per game (default: the game's fewest)",
    )
    parser.add_argument(
        "--think-time",
        type=float,
        default=THINK_TIME,
        env_var="TABLETOP_LOAD_THINK_TIME",
        help=(
            f"mean seconds a user takes per decision, drawn between half and 1.5 times it "
            f"(default {THINK_TIME:g}, as a person plays; 0: as fast as it can)"
        ),
    )
    parser.add_argument(
        "--level",
        default="",
        env_var="TABLETOP_LOAD_LEVEL",
        help=(
            "play seat 0 against the service's bots at this level (easy, medium, hard) in"
            " every other seat (default: the user plays every seat)"
        ),
    )


def games_of(option: str) -> list[str]:
    if option.strip() == "all":
        return registry.names()
    names = [g.strip() for g in option.split(",") if g.strip()]
    for name in names:
        registry.by_name(name)  # a clear error for a game that is not in the list
    return names


@events.init.add_listener
def _check_games(environment, **_kwargs) -> None:
    options = environment.parsed_options
    if options is not None:
        try:
            games_of(options.game)
        except KeyError as exc:
            raise SystemExit(f"--game {options.game}: {exc.args[0]}") from None
        if options.level and options.level not in LEVELS:
            raise SystemExit(f"--level {options.level}: one of {', '.join(LEVELS)}")


class BotTablePlayer(GamePlayer):
    """Plays seat 0 of tables whose every other seat is the service's bot at ``level``.

    The bots move on the service after each of this player's moves; a step while they
    do is one ``GetGame`` after :data:`BOT_POLL_SECONDS`.
    """

    def __init__(
        self,
        game: str,
        channel: grpc.Channel,
        rng: random.Random,
        players: int,
        level: str,
        sleep=None,
    ) -> None:
        super().__init__(game, channel, rng, players, sleep=sleep)
        if self.players < 2:
            raise ValueError(f"{game} at {self.players} seats has no seat for a bot")
        self.level = level

    def new_game(self) -> None:
        from tabletop.common.v1 import table_pb2

        bot = table_pb2.SeatRequest(
            kind=table_pb2.SEAT_KIND_BOT,
            bot_level=getattr(table_pb2, f"BOT_LEVEL_{self.level.upper()}"),
        )
        seats = [table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)]
        seats += [bot] * (self.players - 1)
        options = self.pb2.Options(**RANDOM_PLAY_OPTIONS.get(self.game, {}))
        created = self._call("CreateGame", players=self.players, seats=seats, options=options)
        self.game_id = created.game.game_id
        self.tokens = [t.token for t in created.seat_tokens if t.seat == 0]
        self.header = created.game
        self.moves = 0
        self._started = time.perf_counter()

    def step(self) -> Finished | None:
        if self.game_id is None:
            self.new_game()
        assert self.game_id is not None
        token = self.tokens[0]
        try:
            if 0 in self.header.to_act:
                listed = self._call("ListMoves", token, game_id=self.game_id)
                if listed.moves:
                    version = listed.game.version
                    reply = self._call(
                        "SubmitMove",
                        token,
                        game_id=self.game_id,
                        move=self.rng.choice(list(listed.moves)),
                        expected_version=version,
                        request_id=f"0-{version}",
                    )
                    self.moves += 1
                else:  # our header was behind
                    reply = self._call("GetGame", token, game_id=self.game_id)
            else:
                self._sleep(BOT_POLL_SECONDS)
                reply = self._call("GetGame", token, game_id=self.game_id)
        except grpc.RpcError as error:
            if getattr(error, "code", None) and error.code() == grpc.StatusCode.ABORTED:
                self.header = self._call("GetGame", token, game_id=self.game_id).game
                return None
            self.abandon()
            raise
        self.header = reply.game
        if self.header.status == FINISHED:
            done = Finished(self.game_id, self.moves, time.perf_counter() - self._started)
            self.game_id = None
            return done
        return None


_numbers = itertools.count()


class GameUser(User):
    """One client playing games to the end, every seat, one decision per task."""

    host = "127.0.0.1:50051"

    def wait_time(self) -> float:
        return think(self.environment.parsed_options.think_time, random.random())

    def on_start(self) -> None:
        options = self.environment.parsed_options
        games = games_of(options.game)
        game = games[next(_numbers) % len(games)]
        self._channel = grpc.insecure_channel(self.host)
        channel = grpc.intercept_channel(
            self._channel, ReportingInterceptor(self.environment.events.request.fire)
        )
        self.player: GamePlayer
        if options.level:
            self.player = BotTablePlayer(
                game, channel, random.Random(), options.players, options.level
            )
        else:
            self.player = GamePlayer(game, channel, random.Random(), options.players)

    @task
    def decide(self) -> None:
        try:
            done = self.player.step()
        except grpc.RpcError:
            return  # reported by the interceptor; the player starts another game
        if done is not None:
            self.environment.events.request.fire(
                request_type="game",
                name=f"{self.player.game}: played to the end",
                response_time=done.seconds * 1000,
                response_length=done.moves,
                response=None,
                context={},
                exception=None,
            )

    def on_stop(self) -> None:
        self._channel.close()
