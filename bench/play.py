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
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import grpc

from services import registry

FINISHED = 2  # tabletop.common.v1.GAME_STATUS_FINISHED


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

    def intercept_unary_unary(self, continuation, client_call_details, request):
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
    """Plays games of one kind, every seat, with random legal moves, one decision a step."""

    def __init__(
        self,
        game: str,
        channel: grpc.Channel,
        rng: random.Random | None = None,
        players: int = 0,
        timeout: float = 30.0,
    ) -> None:
        entry = registry.by_name(game)
        self.game = game
        self.pb2 = entry.pb2()
        self.players = players or entry.engine().GAME.min_players
        self.rng = rng or random.Random()
        self.timeout = timeout
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
        return self._calls[name](request, metadata=metadata, timeout=self.timeout)

    def new_game(self) -> None:
        created = self._call("CreateGame", players=self.players)
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
