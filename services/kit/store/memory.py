"""``memory://``: the move log in a dict, for tests and benchmarks. Lost on exit."""

from __future__ import annotations

import dataclasses
from typing import Any

from .base import (
    DuplicateRequest,
    GameExists,
    GameRecord,
    MoveRecord,
    Quarantined,
    QuotaExceeded,
    VersionConflict,
)


class MemoryStore:
    def __init__(self, url: str = "memory://") -> None:
        self.url = url
        self._games: dict[str, GameRecord] = {}
        self._moves: dict[str, list[MoveRecord]] = {}
        self._requests: dict[str, dict[str, int]] = {}
        self._quarantined_at: dict[str, float] = {}

    async def create(self, game: GameRecord, owner_limit: int = 0) -> None:
        if game.game_id in self._games:
            raise GameExists(game.game_id)
        if owner_limit and game.owner is not None:
            held = sum(
                g.owner == game.owner and g.game_type == game.game_type and g.finished_at is None
                for g in self._games.values()
            )
            if held >= owner_limit:
                raise QuotaExceeded(game.owner, owner_limit)
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
            self._quarantined_at.pop(gid, None)
        return gone

    async def count_active(self, game_type: str) -> int:
        return sum(g.finished_at is None and g.game_type == game_type for g in self._games.values())

    async def quarantine(self, game_id: str, reason: str, at: float) -> None:
        game = self._games.get(game_id)
        if game is not None and game.quarantined is None:
            self._games[game_id] = dataclasses.replace(game, quarantined=reason)
            self._quarantined_at[game_id] = at

    async def quarantined(self) -> list[Quarantined]:
        found = [
            Quarantined(g.game_id, g.game_type, g.quarantined, self._quarantined_at[gid])
            for gid, g in self._games.items()
            if g.quarantined is not None
        ]
        return sorted(found, key=lambda q: q.at)

    async def release(self, game_id: str) -> bool:
        game = self._games.get(game_id)
        if game is None or game.quarantined is None:
            return False
        self._games[game_id] = dataclasses.replace(game, quarantined=None)
        del self._quarantined_at[game_id]
        return True

    async def raw(self, game_id: str) -> dict[str, Any] | None:
        game = self._games.get(game_id)
        if game is None:
            return None
        return {
            "game": dataclasses.asdict(game),
            "moves": [dataclasses.asdict(m) for m in self._moves[game_id]],
        }

    async def close(self) -> None:
        return None
