"""An asyncio client for any game service, directly or through the gateway.

Used by the tests, the benchmarks and the container checks; the same calls a
third-party client makes with only the protos::

    async with grpc.aio.insecure_channel("127.0.0.1:50051") as channel:
        client = GameClient("channeling", channel)
        game = await client.create(players=2)
        result = await client.play_random(game, random.Random(1))
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import grpc

from services import registry

IN_PROGRESS = 1  # tabletop.common.v1.GAME_STATUS_IN_PROGRESS
FINISHED = 2  # tabletop.common.v1.GAME_STATUS_FINISHED
WAITING = 3  # tabletop.common.v1.GAME_STATUS_WAITING


@dataclass
class CreatedGame:
    game_id: str
    tokens: list[str]
    response: Any


@dataclass
class PlayResult:
    game_id: str
    moves: int
    final: Any  # the last GetGameResponse
    aborted: int = 0
    versions: list[int] = field(default_factory=list)


def bearer(token: str | None) -> tuple[tuple[str, str], ...] | None:
    return (("authorization", f"Bearer {token}"),) if token else None


def error_reason(error: grpc.RpcError) -> str:
    """The reason of a refusal (google.rpc.ErrorInfo in its status details, as in
    tabletop.common.v1.ErrorReason without the prefix), or "" when it carries none."""
    from google.rpc import error_details_pb2
    from grpc_status import rpc_status

    try:
        found = rpc_status.from_call(error)  # type: ignore[arg-type]  # a raised RpcError is a Call
    except ValueError:  # a status whose details disagree with its code: no reason to read
        return ""
    for detail in found.details if found is not None else ():
        if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
            info = error_details_pb2.ErrorInfo()
            detail.Unpack(info)
            return info.reason
    return ""


def refusal(error: grpc.RpcError) -> str:
    """A refusal in one line for people: its status, its reason and its message."""
    reason = error_reason(error)
    code = error.code().name if error.code() is not None else "UNKNOWN"
    return f"{code} {reason}: {error.details()}" if reason else f"{code}: {error.details()}"


class GameClient:
    def __init__(self, name: str, channel: grpc.aio.Channel, timeout: float = 30.0) -> None:
        entry = registry.by_name(name)
        self.name = name
        self.pb2 = entry.pb2()
        self.service = entry.service_name
        self.timeout = timeout
        self._channel = channel
        self._methods: dict[str, Any] = {}

    def _method(self, name: str, streaming: bool = False) -> Any:
        found = self._methods.get(name)
        if found is None:
            kind = "unary_stream" if streaming else "unary_unary"
            found = getattr(self._channel, kind)(
                f"/{self.service}/{name}",
                request_serializer=getattr(self.pb2, f"{name}Request").SerializeToString,
                response_deserializer=getattr(self.pb2, f"{name}Response").FromString,
            )
            self._methods[name] = found
        return found

    async def call(self, method: str, token: str | None = None, **fields: Any) -> Any:
        request = getattr(self.pb2, f"{method}Request")(**fields)
        return await self._method(method)(request, metadata=bearer(token), timeout=self.timeout)

    async def create(self, players: int = 0, seed: int | None = None, **fields: Any) -> CreatedGame:
        if seed is not None:
            fields["seed"] = seed
        response = await self.call("CreateGame", players=players, **fields)
        tokens = [t.token for t in sorted(response.seat_tokens, key=lambda t: t.seat)]
        return CreatedGame(response.game.game_id, tokens, response)

    async def join(
        self, game_id: str, name: str, seat: int | None = None, token: str | None = None
    ) -> Any:
        """Take an open seat (the first one unless ``seat``); the reply holds its token.
        With a player's ``token`` the seat is the player's (``name`` may then be empty)."""
        fields: dict[str, Any] = {"game_id": game_id, "player_name": name}
        if seat is not None:
            fields["seat"] = seat
        return await self.call("JoinGame", token, **fields)

    async def leave(self, game_id: str, token: str) -> Any:
        return await self.call("LeaveGame", token, game_id=game_id)

    async def resign(self, game_id: str, token: str) -> Any:
        return await self.call("Resign", token, game_id=game_id)

    async def lobby(self, **filters: Any) -> Any:
        """One page of ListGames (filters: status, players, options, page_size, page_token)."""
        return await self.call("ListGames", **filters)

    async def get(self, game_id: str, token: str | None = None) -> Any:
        return await self.call("GetGame", token, game_id=game_id)

    async def moves(self, game_id: str, token: str) -> Any:
        return await self.call("ListMoves", token, game_id=game_id)

    async def submit(
        self,
        game_id: str,
        token: str | None,
        move: Any,
        expected_version: int | None = None,
        request_id: str = "",
        omit_view: bool = False,
    ) -> Any:
        """``omit_view``: answer without the caller's view (a client that watches gets it
        from its stream), which costs the service less."""
        fields: dict[str, Any] = {"game_id": game_id, "move": move, "request_id": request_id}
        if omit_view:
            fields["omit_view"] = True
        if expected_version is not None:
            fields["expected_version"] = expected_version
        return await self.call("SubmitMove", token, **fields)

    async def history(self, game_id: str, token: str | None = None, after: int = 0) -> list[Any]:
        turns: list[Any] = []
        while True:
            reply = await self.call(
                "GetHistory", token, game_id=game_id, from_version=after, page_size=1000
            )
            turns.extend(reply.turns)
            if not reply.turns or reply.turns[-1].version >= reply.game.version:
                return turns
            after = reply.turns[-1].version

    def watch(
        self,
        game_id: str,
        token: str | None = None,
        from_version: int | None = None,
        timeout: float | None = None,
        with_moves: bool = False,
    ) -> AsyncIterator[Any]:
        """The view, then every move; or, from a version seen, the turns after it first.
        ``with_moves``: a message that puts the caller's seat to act carries its legal
        moves too (``moves``), so a watching player needs no ListMoves."""
        request = self.pb2.WatchGameRequest(game_id=game_id, with_moves=with_moves)
        if from_version is not None:
            request.from_version = from_version
        stream: AsyncIterator[Any] = self._method("WatchGame", streaming=True)(
            request, metadata=bearer(token), timeout=timeout
        )
        return stream

    async def play_random(
        self,
        game: CreatedGame,
        rng: random.Random,
        *,
        max_moves: int = 100_000,
        request_ids: bool = True,
    ) -> PlayResult:
        """Play every seat with random legal moves until the game ends."""
        result = PlayResult(game.game_id, 0, None)
        state = await self.get(game.game_id)
        while state.game.status != FINISHED:
            if result.moves >= max_moves:
                raise AssertionError(f"{self.name} game did not end in {max_moves} moves")
            seat = rng.choice(list(state.game.to_act))
            token = game.tokens[seat]
            listed = await self.moves(game.game_id, token)
            move = rng.choice(list(listed.moves))
            try:
                reply = await self.submit(
                    game.game_id,
                    token,
                    move,
                    expected_version=listed.game.version,
                    request_id=f"{seat}-{listed.game.version}" if request_ids else "",
                )
            except grpc.aio.AioRpcError as error:
                if error.code() != grpc.StatusCode.ABORTED:
                    raise
                result.aborted += 1
            else:
                result.moves += 1
                result.versions.append(reply.game.version)
            state = await self.get(game.game_id)
        result.final = state
        return result
