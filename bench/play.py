"""A random player over a plain (synchronous) gRPC channel, as a real client plays, and an
interceptor that reports every call with its time and status.

The Locust user (bench/locustfile.py) is built from these two; they import nothing of
Locust, so the tests exercise them without it:

- :class:`GamePlayer` creates a game and, one decision per :meth:`GamePlayer.step`,
  plays every seat with random legal moves to the end: a seat the header says is to
  act, its ``ListMoves``, one of them sent back unchanged with ``SubmitMove``
  (``expected_version`` and a ``request_id``, as the contract asks).
- :class:`ReportingInterceptor` times each call and hands the method, the time, the
  response size and the status to a ``fire`` callable: Locust's
  ``environment.events.request.fire``.

A call refused with RESOURCE_EXHAUSTED (the gateway's per-client rate, say) is not
abandoned and not retried at once: the player waits what the refusal's ErrorInfo says
(``metadata["retry_after_ms"]``; :data:`BACKOFF_SECONDS` when it names no time), a
little more at random so that users refused together do not return together, and sends
the same call again, at most :data:`MAX_RETRIES` times. The refusal itself is still
reported as a failure: it is one.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc

from bench.engine import RANDOM_PLAY_OPTIONS
from services import registry
from services.kit.status import error_info

FINISHED = 2  # tabletop.common.v1.GAME_STATUS_FINISHED
BACKOFF_SECONDS = 1.0  # a RESOURCE_EXHAUSTED refusal that names no retry time
MAX_RETRIES = 10  # refusals of one call before the player gives up on it
JITTER = 0.5  # up to this share of the wait again, at random
THINK_TIME = 2.0  # seconds a person takes to decide a move, on average: the default


def think(mean: float, draw: float) -> float:
    """One wait between decisions: uniform between 0.5 and 1.5 times the mean (``draw``
    in [0, 1)), so users started together do not act in step."""
    return max(0.0, mean) * (0.5 + draw)


def retry_after(error: grpc.RpcError) -> float | None:
    """Seconds to wait before sending a refused call again; None when the refusal is not
    one to wait out (only RESOURCE_EXHAUSTED is: a limit that frees up with time)."""
    code = error.code() if hasattr(error, "code") else None
    if code != grpc.StatusCode.RESOURCE_EXHAUSTED:
        return None
    info = error_info(error)
    millis = info.metadata.get("retry_after_ms") if info is not None else None
    if millis is None or not millis.isdigit():
        return BACKOFF_SECONDS
    return int(millis) / 1000


class RpcFailure(Exception):
    """A call that ended with a status other than OK; its text is ``CODE: details``, so
    Locust's failure table groups failures by status."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code


def method_name(full: str) -> str:
    """'/tabletop.channeling.v1.ChannelingService/SubmitMove' -> 'ChannelingService/SubmitMove'."""
    service, _, method = full.lstrip("/").partition("/")
    return f"{service.rsplit('.', 1)[-1]}/{method}"


class ReportingInterceptor(grpc.UnaryUnaryClientInterceptor):
    """Reports each unary call: request_type "grpc", name "<Service>/<Method>", the
    response time in ms, the response's size, and an exception naming the status when
    the call failed (``context["code"]`` carries the status name either way)."""

    def __init__(self, fire: Callable[..., Any]) -> None:
        self._fire = fire

    def intercept_unary_unary(
        self,
        continuation: Callable[..., Any],
        client_call_details: grpc.ClientCallDetails,
        request: Any,
    ) -> Any:
        started = time.perf_counter()
        call = continuation(client_call_details, request)
        exception: Exception | None = None
        length = 0
        code = grpc.StatusCode.OK
        try:
            response = call.result()
            length = response.ByteSize() if hasattr(response, "ByteSize") else len(response)
        except grpc.RpcError as error:
            code = error.code() if hasattr(error, "code") else grpc.StatusCode.UNKNOWN
            details = error.details() if hasattr(error, "details") else str(error)
            exception = RpcFailure(code, details or "")
        method = client_call_details.method
        if isinstance(method, bytes):
            method = method.decode()
        self._fire(
            request_type="grpc",
            name=method_name(method),
            response_time=(time.perf_counter() - started) * 1000,
            response_length=length,
            response=None,
            context={"code": code.name},
            exception=exception,
        )
        return call


@dataclass
class Finished:
    """A game played to its end by one player."""

    game_id: str
    moves: int
    seconds: float


class GamePlayer:
    """Plays games of one kind, every seat, with random legal moves, one decision a step.
    Games are created with the game's RANDOM_PLAY_OPTIONS (Shén, Res Arcana Duo: a round limit)."""

    def __init__(
        self,
        game: str,
        channel: grpc.Channel,
        rng: random.Random | None = None,
        players: int = 0,
        timeout: float = 30.0,
        sleep: Callable[[float], Any] | None = None,
    ) -> None:
        entry = registry.by_name(game)
        self.game = game
        self.pb2 = entry.pb2()
        self.players = players or entry.engine().GAME.min_players
        self.rng = rng or random.Random()
        self.timeout = timeout
        # time.sleep looked up when called: under Locust it is gevent's (patched later).
        self._sleep = sleep or (lambda seconds: time.sleep(seconds))
        self.backoffs: list[float] = []  # every wait after a refusal, in seconds
        self._calls = {
            name: channel.unary_unary(
                f"/{entry.service_name}/{name}",
                request_serializer=getattr(self.pb2, f"{name}Request").SerializeToString,
                response_deserializer=getattr(self.pb2, f"{name}Response").FromString,
            )
            for name in ("CreateGame", "GetGame", "ListMoves", "SubmitMove")
        }
        self.game_id: str | None = None
        self.tokens: list[str] = []
        self.header: Any = None
        self.moves = 0
        self._started = 0.0

    def _call(self, name: str, token: str | None = None, **fields: Any) -> Any:
        request = getattr(self.pb2, f"{name}Request")(**fields)
        metadata = (("authorization", f"Bearer {token}"),) if token else None
        for attempt in range(MAX_RETRIES + 1):
            try:
                return self._calls[name](request, metadata=metadata, timeout=self.timeout)
            except grpc.RpcError as error:
                wait = retry_after(error)
                if wait is None or attempt == MAX_RETRIES:
                    raise
                wait *= 1 + JITTER * self.rng.random()
                self.backoffs.append(wait)
                self._sleep(wait)
        raise AssertionError("unreachable")

    def new_game(self) -> None:
        options = self.pb2.Options(**RANDOM_PLAY_OPTIONS.get(self.game, {}))
        created = self._call("CreateGame", players=self.players, options=options)
        self.game_id = created.game.game_id
        self.tokens = [t.token for t in sorted(created.seat_tokens, key=lambda t: t.seat)]
        self.header = created.game
        self.moves = 0
        self._started = time.perf_counter()

    def abandon(self) -> None:
        """Leave the current game (after a failed call); the next step starts another."""
        self.game_id = None

    def step(self) -> Finished | None:
        """One decision (a new game first when there is none); the game when it ended."""
        if self.game_id is None:
            self.new_game()
        assert self.game_id is not None
        try:
            seat = self.rng.choice(list(self.header.to_act))
            token = self.tokens[seat]
            listed = self._call("ListMoves", token, game_id=self.game_id)
            if not listed.moves:  # our header was behind; look again
                self.header = self._call("GetGame", token, game_id=self.game_id).game
                return None
            version = listed.game.version
            reply = self._call(
                "SubmitMove",
                token,
                game_id=self.game_id,
                move=self.rng.choice(list(listed.moves)),
                expected_version=version,
                request_id=f"{seat}-{version}",
            )
        except grpc.RpcError as error:
            if getattr(error, "code", None) and error.code() == grpc.StatusCode.ABORTED:
                self.header = self._call("GetGame", game_id=self.game_id).game
                return None
            self.abandon()
            raise
        self.header = reply.game
        self.moves += 1
        if self.header.status == FINISHED:
            done = Finished(self.game_id, self.moves, time.perf_counter() - self._started)
            self.game_id = None
            return done
        return None
