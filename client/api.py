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

FINISHED = 2  # tabletop.common.v1.GAME_STATUS_FINISHED


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
    ) -> Any:
        fields: dict[str, Any] = {"game_id": game_id, "move": move, "request_id": request_id}
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
    ) -> AsyncIterator[Any]:
        """The view, then every move; or, from a version seen, the turns after it first."""
        request = self.pb2.WatchGameRequest(game_id=game_id)
        if from_version is not None:
            request.from_version = from_version
        return self._method("WatchGame", streaming=True)(
            request, metadata=bearer(token), timeout=timeout
        )

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
