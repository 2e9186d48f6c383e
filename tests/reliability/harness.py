"""What the fuzz tests stand on: every game service and a gateway running in a background
thread, and a synchronous client that sends hostile calls and checks every answer.

The servers run on their own event loop in a thread, so hypothesis (which is synchronous)
drives plain blocking gRPC calls at them, directly or through the gateway.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import threading
import time
from collections import Counter
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, settings
from tabletop.common.v1 import errors_pb2

from services import registry
from services.kit.status import error_info
from tests.support import gateway_in_process, service_in_process

RPCS = (
    "CreateGame",
    "GetGame",
    "ListMoves",
    "SubmitMove",
    "WatchGame",
    "GetHistory",
    "JoinGame",
    "LeaveGame",
    "Resign",
    "ListGames",
)
# Calls that change a game when accepted, besides SubmitMove.
CHANGES_TABLE = frozenset({"JoinGame", "LeaveGame", "Resign"})
CALL_TIMEOUT = 30.0  # generous: a call this slow is a hang, not a busy machine
MAX_REQUEST = 15 * 1024 * 1024  # beyond gRPC's own hard ceiling a request never reaches us
FINISHED = 2  # tabletop.common.v1.GAME_STATUS_FINISHED
NEVER = frozenset(
    {
        grpc.StatusCode.UNKNOWN,
        grpc.StatusCode.INTERNAL,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.DATA_LOSS,
        grpc.StatusCode.CANCELLED,
        grpc.StatusCode.DEADLINE_EXCEEDED,
    }
)
REASONS = frozenset(
    name.removeprefix("ERROR_REASON_")
    for name in errors_pb2.ErrorReason.DESCRIPTOR.values_by_name
    if name != "ERROR_REASON_UNSPECIFIED"
)
CHANNEL_OPTIONS = [
    ("grpc.max_send_message_length", 64 * 1024 * 1024),
    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
]

# --- how long and how hard --------------------------------------------------------------

FUZZ_SECONDS = float(os.environ.get("TABLETOP_FUZZ_SECONDS", "0") or 0)
# Examples per fuzz test: 15 in make test (the same ones every run), 100 in make soak.
EXAMPLES = int(os.environ.get("TABLETOP_FUZZ_EXAMPLES", "15"))


def fixed_settings(examples: int = EXAMPLES) -> settings:
    """The run in ``make test``: the same examples every time, a bounded number."""
    return settings(
        max_examples=examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


def long_settings() -> settings:
    """``make fuzz``: fresh random examples, batch after batch, until the time is spent."""
    return settings(
        max_examples=50,
        derandomize=False,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        print_blob=True,
    )


def run_fuzz(test: Callable[[], None], share: float) -> None:
    """Run a hypothesis test once (fixed run) or for ``share`` of the fuzz time."""
    if FUZZ_SECONDS <= 0:
        test()
        return
    stop = time.monotonic() + share
    while time.monotonic() < stop:
        test()


def share_of_fuzz_time(tests: int) -> float:
    """Each fuzz test's share of TABLETOP_FUZZ_SECONDS of wall time, given the workers."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)
    return FUZZ_SECONDS * workers / max(1, tests)


# --- the servers --------------------------------------------------------------------------


class Stack:
    """Every game service in the list (memory stores) and a gateway routing to them, on an
    event loop of their own in a background thread."""

    def __init__(self, names: Sequence[str]) -> None:
        self.names = list(names)
        self.services: dict[str, Any] = {}
        self.gateway_port = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._exit = contextlib.AsyncExitStack()

    def run(self, coro: Coroutine[Any, Any, Any], timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    async def _up(self) -> None:
        for name in self.names:
            self.services[name] = await self._exit.enter_async_context(service_in_process(name))
        routes = {name: [svc.address] for name, svc in self.services.items()}
        port, _ = await self._exit.enter_async_context(gateway_in_process(routes))
        self.gateway_port = port

    def __enter__(self) -> Stack:
        self._thread.start()
        self.run(self._up())
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.run(self._exit.aclose())
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)
            self._loop.close()

    @property
    def gateway_address(self) -> str:
        return f"127.0.0.1:{self.gateway_port}"


# --- one game, as the fuzz knows it -------------------------------------------------------


@dataclass
class KnownGame:
    game_id: str
    tokens: list[str]
    state: tuple[Any, ...] = ()  # (version, status, to_act, views...) as last read
    legal: list[Message] = field(default_factory=list)  # every seat's legal moves now

    @property
    def version(self) -> int:
        return self.state[0] if self.state else 0

    @property
    def finished(self) -> bool:
        return bool(self.state) and self.state[1] == FINISHED


@dataclass
class Outcome:
    """One call's answer: a response (bytes) or an error."""

    method: str
    request: bytes
    metadata: tuple[tuple[str, Any], ...]
    response: bytes | None = None
    error: grpc.RpcError | None = None

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.OK if self.error is None else self.error.code()

    def describe(self) -> str:
        head = f"{self.method} with {len(self.request)} bytes and metadata {self.metadata!r:.300}"
        if self.error is None:
            return f"{head}: OK"
        return f"{head}: {self.error.code()} {self.error.details()!r:.300}"


class Target:
    """One game service, called directly or through the gateway, with the games the fuzz
    aims at: ``a`` (in progress, moved on by any legal move the fuzz happens to send),
    ``b`` (another game in progress: its tokens are replayed at ``a``) and ``c``
    (finished). ``pool`` holds moves that were legal in other games and states."""

    def __init__(self, stack: Stack, name: str, via: str) -> None:
        entry = registry.by_name(name)
        self.name = name
        self.via = via
        self.pb2 = entry.pb2()
        self.service = entry.service_name
        self.info = entry.engine().GAME
        self.stack = stack
        direct = stack.services[name].address
        self.address = direct if via == "direct" else stack.gateway_address
        self.channel = grpc.insecure_channel(self.address, options=CHANNEL_OPTIONS)
        self.health: list[tuple[grpc.Channel, str]] = [(self.channel, self.service)]
        if via == "gateway":
            self._direct = grpc.insecure_channel(direct)
            self.health = [(self.channel, ""), (self._direct, self.service)]
        self.calls: Counter[str] = Counter()
        self.answers: Counter[str] = Counter()  # method:OK or method:reason, for the summary
        self.rng = random.Random(f"{name}-{via}")
        self.request_ids: list[str] = ["r-0"]
        self.pool: list[Message] = []
        self.a = self.b = self.c = KnownGame("", [])
        self.foreign: list[KnownGame] = []  # a game of each other type

    def close(self) -> None:
        self.channel.close()
        if self.via == "gateway":
            self._direct.close()

    # --- plain calls, for setting up and checking ------------------------------------

    def typed(self, method: str, token: str | None = None, **fields: Any) -> Any:
        self.calls["checks"] += 1
        request = getattr(self.pb2, f"{method}Request")(**fields)
        call = self.channel.unary_unary(
            f"/{self.service}/{method}",
            request_serializer=type(request).SerializeToString,
            response_deserializer=getattr(self.pb2, f"{method}Response").FromString,
        )
        metadata = (("authorization", f"Bearer {token}"),) if token else None
        return call(request, metadata=metadata, timeout=CALL_TIMEOUT)

    def create(self, seed: int) -> KnownGame:
        reply = self.typed("CreateGame", players=self.info.min_players, seed=seed)
        tokens = [t.token for t in sorted(reply.seat_tokens, key=lambda t: t.seat)]
        game = KnownGame(reply.game.game_id, tokens)
        self.refresh(game)
        return game

    def read_state(self, game: KnownGame) -> tuple[Any, ...]:
        """The game's version, status, seats to act and the view of every seat and of a
        spectator: what no refused call may change."""
        views = []
        header = None
        for token in [None, *game.tokens]:
            reply = self.typed("GetGame", token, game_id=game.game_id)
            header = header or reply.game
            views.append(reply.view.SerializeToString(deterministic=True))
        assert header is not None
        return (header.version, header.status, tuple(header.to_act), *views)

    def refresh(self, game: KnownGame) -> None:
        game.state = self.read_state(game)
        game.legal = []
        if not game.finished:
            for seat in game.state[2]:
                listed = self.typed("ListMoves", game.tokens[seat], game_id=game.game_id)
                game.legal.extend(listed.moves)

    def play(self, game: KnownGame, moves: int, collect: bool = True) -> None:
        """Random legal moves; every move listed on the way goes into the pool."""
        header = self.typed("GetGame", game_id=game.game_id).game
        for _ in range(moves):
            if header.status == FINISHED:
                break
            seat = self.rng.choice(list(header.to_act))
            listed = list(self.typed("ListMoves", game.tokens[seat], game_id=game.game_id).moves)
            if collect:
                self.pool.extend(m for m in listed if m not in self.pool)
            header = self.typed(
                "SubmitMove",
                game.tokens[seat],
                game_id=game.game_id,
                move=self.rng.choice(listed),
                expected_version=header.version,
            ).game
        self.refresh(game)

    def setup(self) -> None:
        for other in registry.SERVICES:
            if other.name != self.name:  # a game of each other type: its id and tokens
                self.foreign.append(self.create_elsewhere(other))
        self.c = self.create(seed=3)
        self.play(self.c, 100_000)
        assert self.c.finished
        self.b = self.create(seed=2)
        self.play(self.b, 25)
        self.a = self.create(seed=1)
        self.play(self.a, 7, collect=False)

    def create_elsewhere(self, entry: registry.ServiceEntry) -> KnownGame:
        pb2 = entry.pb2()
        players = entry.engine().GAME.min_players
        with grpc.insecure_channel(self.stack.services[entry.name].address) as channel:
            self.calls["checks"] += 1
            reply = channel.unary_unary(
                f"/{entry.service_name}/CreateGame",
                request_serializer=pb2.CreateGameRequest.SerializeToString,
                response_deserializer=pb2.CreateGameResponse.FromString,
            )(pb2.CreateGameRequest(players=players), timeout=CALL_TIMEOUT)
        tokens = [t.token for t in sorted(reply.seat_tokens, key=lambda t: t.seat)]
        return KnownGame(reply.game.game_id, tokens)

    def live_a(self) -> KnownGame:
        """``a``, replaced by a new game when the fuzz's legal moves have ended it."""
        if self.a.finished:
            self.a = self.create(seed=self.rng.randrange(2**32))
        return self.a

    def known(self, game_id: str) -> KnownGame | None:
        return next((g for g in (self.a, self.b, self.c) if g.game_id == game_id), None)

    # --- hostile calls and the checks on their answers ---------------------------------

    def raw(self, method: str, data: bytes, metadata: tuple[tuple[str, Any], ...]) -> Outcome:
        """``data`` as the request, exactly: no serializer on the way."""
        self.calls["fuzzed"] += 1
        path = f"/{self.service}/{method}"
        outcome = Outcome(method, data, metadata)
        try:
            if method == "WatchGame":
                stream = self.channel.unary_stream(path)(
                    data, metadata=metadata, timeout=CALL_TIMEOUT
                )
                try:
                    outcome.response = next(stream)
                except StopIteration:
                    if stream.code() != grpc.StatusCode.OK:
                        outcome.error = stream  # type: ignore[assignment]
                    outcome.response = b""
                finally:
                    stream.cancel()
            else:
                outcome.response = self.channel.unary_unary(path)(
                    data, metadata=metadata, timeout=CALL_TIMEOUT
                )
        except grpc.RpcError as error:
            outcome.error = error
        return outcome

    def secrets(self) -> list[str]:
        return [t for g in (self.a, self.b, self.c, *self.foreign) for t in g.tokens]

    def replayed(self) -> list[str]:
        """Tokens of other games: of this type, and of the other types."""
        return [t for g in (self.b, self.c, *self.foreign) for t in g.tokens]

    def check_answer(self, outcome: Outcome) -> None:
        """OK, or a proper refusal: a client-error code with an ErrorInfo and a reason
        the contract lists, and nothing secret in it."""
        if outcome.ok:
            self.answers[f"{outcome.method}:OK"] += 1
            if outcome.response:  # an answer that is what the contract says it is
                getattr(self.pb2, f"{outcome.method}Response").FromString(outcome.response)
            return
        error = outcome.error
        assert error is not None
        assert error.code() not in NEVER, outcome.describe()
        info = error_info(error)
        assert info is not None, f"no ErrorInfo: {outcome.describe()}"
        assert info.domain == "tabletop", f"{info}: {outcome.describe()}"
        assert info.reason in REASONS, f"reason {info.reason!r}: {outcome.describe()}"
        self.answers[f"{outcome.method}:{info.reason}"] += 1
        said = (error.details() or "") + repr(info)
        for secret in self.secrets():
            assert secret not in said, f"a seat token in the answer: {outcome.describe()}"

    def check_game(self, game: KnownGame, outcome: Outcome) -> None:
        """A refused call changes nothing; an accepted SubmitMove adds one version (or
        none, when its request id was seen before) and answers with the game as it is.

        After a SubmitMove every seat's view is compared; after the calls that only read,
        the version and status (what any change would move)."""
        before = game.state
        if outcome.method in CHANGES_TABLE and outcome.ok:
            # An accepted resignation (the fuzz found a seat's token) is one log entry; the
            # known games are all full tables, so a join or leave is never accepted.
            header = self.typed("GetGame", game_id=game.game_id).game
            assert outcome.method == "Resign", outcome.describe()
            assert header.version == before[0] + 1 and header.status == FINISHED, outcome.describe()
            self.refresh(game)
            return
        if outcome.method != "SubmitMove":
            header = self.typed("GetGame", game_id=game.game_id).game
            now = (header.version, header.status, tuple(header.to_act))
            assert now == before[:3], f"the game changed: {outcome.describe()}"
            return
        after = self.read_state(game)
        if outcome.ok:
            reply = self.pb2.SubmitMoveResponse.FromString(outcome.response)
            if reply.game.game_id == game.game_id:
                assert after[0] in (before[0], before[0] + 1), outcome.describe()
                assert reply.game.version == after[0], outcome.describe()
                if after != before:
                    self.refresh(game)
                return
        assert after == before, f"the game changed: {outcome.describe()}"

    def assert_up(self) -> None:
        for channel, service in self.health:
            self.calls["checks"] += 1
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=CALL_TIMEOUT
            )
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, (self.via, service)

    def assert_playable(self) -> None:
        """The service still takes a legal move on the game the fuzz aimed at."""
        game = self.live_a()
        self.refresh(game)
        before = game.version
        self.play(game, 1, collect=False)
        assert game.version == before + 1
