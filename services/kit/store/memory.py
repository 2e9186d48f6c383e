"""``memory://``: the move log in a dict, for tests and benchmarks. Lost on exit."""

from __future__ import annotations

import dataclasses

from .base import DuplicateRequest, GameExists, GameRecord, MoveRecord, VersionConflict


class MemoryStore:
    def __init__(self, url: str = "memory://") -> None:
        self.url = url
        self._games: dict[str, GameRecord] = {}
        self._moves: dict[str, list[MoveRecord]] = {}
        self._requests: dict[str, dict[str, int]] = {}

    async def create(self, game: GameRecord) -> None:
        if game.game_id in self._games:
            raise GameExists(game.game_id)
        self._games[game.game_id] = game
        self._moves[game.game_id] = []
        self._requests[game.game_id] = {}

    async def load(self, game_id: str) -> GameRecord | None:
        return self._games.get(game_id)

    async def moves(
        self, game_id: str, after: int = 0, limit: int | None = None
    ) -> list[MoveRecord]:
        log = self._moves.get(game_id, [])
        end = len(log) if limit is None else min(len(log), after + limit)
        return log[after:end]

    async def append(self, game_id: str, move: MoveRecord) -> None:
        game = self._games[game_id]
        requests = self._requests[game_id]
        if move.request_id is not None and move.request_id in requests:
            raise DuplicateRequest(requests[move.request_id])
        if game.version != move.version - 1:
            raise VersionConflict(game.version)
        self._moves[game_id].append(move)
        if move.request_id is not None:
            requests[move.request_id] = move.version
        self._games[game_id] = dataclasses.replace(
            game,
            version=move.version,
            updated_at=move.applied_at,
            finished_at=move.applied_at if move.finished else game.finished_at,
        )

    async def delete_finished_before(self, timestamp: float, game_type: str) -> list[str]:
        gone = [
            gid
            for gid, g in self._games.items()
            if g.game_type == game_type and g.finished_at is not None and g.finished_at < timestamp
        ]
        for gid in gone:
            del self._games[gid], self._moves[gid], self._requests[gid]
        return gone

    async def count_active(self, game_type: str) -> int:
        return sum(g.finished_at is None and g.game_type == game_type for g in self._games.values())

    async def close(self) -> None:
        return None
