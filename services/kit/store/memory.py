"""``memory://``: the move log in a dict, for tests and benchmarks. Lost on exit."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

from .base import (
    DuplicateRequest,
    GameExists,
    GameRecord,
    MoveRecord,
    OutboxEvent,
    PlayerQuotas,
    Quarantined,
    QuotaExceeded,
    Quotas,
    StoredEvent,
    VersionConflict,
    check_status,
    held,
    json_scalar_equal,
    lobby_waiting,
    option_filter,
    over_quota,
    players_of,
)
from .ratings import MemoryRatings


def _copy(value: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A JSON copy, as the other backends keep it: later changes to the caller's dict do
    not reach the store, and what JSON cannot carry is refused here too."""
    return None if value is None else json.loads(json.dumps(dict(value)))


class MemoryStore(MemoryRatings):
    def __init__(self, url: str = "memory://") -> None:
        super().__init__()
        self.url = url
        self._games: dict[str, GameRecord] = {}
        self._moves: dict[str, list[MoveRecord]] = {}
        self._requests: dict[str, dict[str, int]] = {}
        self._quarantined_at: dict[str, float] = {}
        self._outbox = _Outbox()
        # The players' index: by game, each seat's player.
        self._players: dict[str, dict[int, str]] = {}

    async def create(
        self,
        game: GameRecord,
        owner_limit: int = 0,
        waiting_limit: int = 0,
        quotas: Quotas | None = None,
        player_quotas: PlayerQuotas | None = None,
    ) -> None:
        if game.game_id in self._games:
            raise GameExists(game.game_id)
        # As the SQL backends write it: at version 0, last changed when created.
        game = dataclasses.replace(
            game,
            version=0,
            updated_at=game.created_at,
            finished_at=None,
            quarantined=None,
            table=_copy(game.table),
            lobby=_copy(game.lobby),
            human_at=game.created_at if game.human_at is None else game.human_at,
        )
        quotas = quotas or Quotas(owner_limit, waiting_limit)
        limits = quotas.applying_to(game)
        if game.owner is not None and limits:
            mine = [
                g
                for g in self._games.values()
                if g.owner == game.owner and g.game_type == game.game_type and g.finished_at is None
            ]
            over_quota(game.owner, limits, held(mine))
        player_limits = (player_quotas or PlayerQuotas()).applying_to(game)
        for player in players_of(game) if player_limits else ():
            held_by = self._held_by(player, game.game_type)
            counts = {
                "player_games": len(held_by),
                "player_waiting": sum(g.waiting for g in held_by),
            }
            over_quota(player, player_limits, counts)
        self._games[game.game_id] = dataclasses.replace(game, outbox=())
        self._players[game.game_id] = {i: p for i, p in enumerate(game.seat_players) if p}
        self._moves[game.game_id] = []
        self._requests[game.game_id] = {}
        self._outbox.write(game.game_type, game.outbox)

    def _held_by(self, player: str, game_type: str) -> list[GameRecord]:
        """The unfinished games of ``game_type`` where ``player`` holds a seat."""
        return [
            g
            for gid, seats in self._players.items()
            if player in seats.values()
            and (g := self._games[gid]).game_type == game_type
            and g.finished_at is None
        ]

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
        player, most = move.seat_player, move.player_games
        if player and most and len(self._held_by(player, game.game_type)) >= most:
            raise QuotaExceeded(player, most, "player_games")
        if move.rating is not None:
            self.rate_memory(move.rating, move.applied_at)
        if move.seat_player is not None:
            seats = self._players.setdefault(game_id, {})
            seats.pop(move.seat, None)
            if move.seat_player:
                seats[move.seat] = move.seat_player
        lobby = _copy(move.lobby)
        self._moves[game_id].append(
            dataclasses.replace(
                move,
                outbox=(),
                lobby=None,
                due_at=None,
                bot_turn=False,
                human_at=None,
                seat_player=None,
                player_games=0,
                rating=None,
            )
        )
        self._outbox.write(game.game_type, move.outbox)
        if move.request_id is not None:
            requests[move.request_id] = move.version
        waiting = game.waiting if lobby is None else lobby_waiting(lobby)
        self._games[game_id] = dataclasses.replace(
            game,
            version=move.version,
            updated_at=move.applied_at,
            finished_at=move.applied_at if move.finished else game.finished_at,
            lobby=game.lobby if lobby is None else lobby,
            waiting=waiting and not move.finished,
            due_at=move.due_at,
            bot_turn=move.bot_turn,
            human_at=move.applied_at if move.human_at is None else move.human_at,
        )

    async def delete_finished_before(self, timestamp: float, game_type: str) -> list[str]:
        gone = [
            gid
            for gid, g in self._games.items()
            if g.game_type == game_type and g.finished_at is not None and g.finished_at < timestamp
        ]
        for gid in gone:
            del self._games[gid], self._moves[gid], self._requests[gid]
            self._players.pop(gid, None)
            self._quarantined_at.pop(gid, None)
        return gone

    async def count_active(self, game_type: str) -> int:
        return sum(g.finished_at is None and g.game_type == game_type for g in self._games.values())

    def _open_games(self, game_type: str) -> list[GameRecord]:
        """The unfinished, unquarantined games of ``game_type``."""
        return [
            g
            for g in self._games.values()
            if g.game_type == game_type and g.finished_at is None and g.quarantined is None
        ]

    async def list_games(
        self,
        game_type: str,
        *,
        status: str | None = None,
        players: int | None = None,
        options: Mapping[str, Any] | None = None,
        after: tuple[float, str] | None = None,
        limit: int = 50,
        player: str | None = None,
    ) -> list[GameRecord]:
        check_status(status)
        wanted = option_filter(options)

        def listed(g: GameRecord) -> bool:
            if g.game_type != game_type or g.quarantined is not None:
                return False
            if player is not None and player not in self._players.get(g.game_id, {}).values():
                return False
            finished = g.finished_at is not None
            if status == "waiting" and not (g.waiting and not finished):
                return False
            if status == "in_progress" and (g.waiting or finished):
                return False
            if status == "finished" and not finished:
                return False
            if players is not None and g.players != players:
                return False
            if after is not None and (g.created_at, g.game_id) >= tuple(after):
                return False
            return all(
                name in g.options and json_scalar_equal(g.options[name], value)
                for name, value in wanted.items()
            )

        found = sorted(
            filter(listed, self._games.values()),
            key=lambda g: (g.created_at, g.game_id),
            reverse=True,
        )
        return found[: max(limit, 0)]

    async def count_waiting(self, game_type: str) -> int:
        return sum(g.waiting for g in self._open_games(game_type))

    async def due(
        self,
        game_type: str,
        now: float,
        *,
        waiting_ttl: float,
        idle_seconds: float,
        limit: int = 100,
    ) -> list[str]:
        deadlines: list[tuple[float, str]] = []
        for g in self._open_games(game_type):
            # Each condition compared as the SQL backends compare it (now - ttl, not a sum).
            met = []
            if g.waiting and waiting_ttl > 0 and g.created_at <= now - waiting_ttl:
                met.append(g.created_at + waiting_ttl)
            human_at = g.updated_at if g.human_at is None else g.human_at
            if not g.waiting and idle_seconds > 0 and human_at <= now - idle_seconds:
                met.append(human_at + idle_seconds)
            if g.due_at is not None and g.due_at <= now:
                met.append(g.due_at)
            if met:
                deadlines.append((min(met), g.game_id))
        return [gid for _, gid in sorted(deadlines)[: max(limit, 0)]]

    async def bot_turns(self, game_type: str, before: float, limit: int = 100) -> list[str]:
        waiting = sorted(
            (g.updated_at, g.game_id)
            for g in self._open_games(game_type)
            if g.bot_turn and g.updated_at <= before
        )
        return [gid for _, gid in waiting[: max(limit, 0)]]

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

    # --- the outbox --------------------------------------------------------------------

    async def player_events(
        self, game_type: str, player_id: str, after: int, limit: int = 200
    ) -> list[StoredEvent]:
        found = [
            row.stored()
            for row in self._outbox.rows
            if row.game_type == game_type
            and row.event.player_id == player_id
            and row.sequence > after
        ]
        return found[: max(limit, 0)]

    async def last_event(self, game_type: str) -> int:
        return max((r.sequence for r in self._outbox.rows if r.game_type == game_type), default=0)

    async def claim_webhooks(
        self, game_type: str, claimant: str, now: float, lease: float, limit: int = 20
    ) -> list[StoredEvent]:
        due = sorted(
            (
                r
                for r in self._outbox.rows
                if r.game_type == game_type
                and r.event.webhook
                and r.delivered_at is None
                and r.retry_at <= now
                and (r.claimed_until is None or r.claimed_until < now)
            ),
            key=lambda r: (r.retry_at, r.sequence),
        )[: max(limit, 0)]
        for row in due:
            row.claimed_by, row.claimed_until = claimant, now + lease
        return [row.stored() for row in due]

    async def webhook_result(
        self, sequence: int, claimant: str, delivered: bool, now: float, retry_at: float
    ) -> None:
        for row in self._outbox.rows:
            if row.sequence == sequence and row.claimed_by == claimant and not row.delivered_at:
                row.attempts += 1
                row.claimed_by, row.claimed_until = None, None
                row.delivered_at = now if delivered else None
                row.retry_at = retry_at

    async def webhooks_pending(self, game_type: str) -> int:
        return sum(
            r.game_type == game_type and r.event.webhook and r.delivered_at is None
            for r in self._outbox.rows
        )

    async def delete_events_before(self, game_type: str, timestamp: float) -> int:
        kept = [
            r
            for r in self._outbox.rows
            if r.game_type != game_type or r.event.created_at >= timestamp
        ]
        gone = len(self._outbox.rows) - len(kept)
        self._outbox.rows = kept
        return gone

    async def close(self) -> None:
        return None


@dataclasses.dataclass
class _Row:
    sequence: int
    game_type: str
    event: OutboxEvent
    attempts: int = 0
    retry_at: float = 0.0
    delivered_at: float | None = None
    claimed_by: str | None = None
    claimed_until: float | None = None

    def stored(self) -> StoredEvent:
        return StoredEvent(self.sequence, self.event, self.attempts)


class _Outbox:
    """The outbox's rows, in sequence order."""

    def __init__(self) -> None:
        self.rows: list[_Row] = []
        self.ids: set[str] = set()
        self.last = 0

    def write(self, game_type: str, events: tuple[OutboxEvent, ...]) -> None:
        for event in events:
            if event.event_id in self.ids:
                continue
            self.ids.add(event.event_id)
            self.last += 1
            self.rows.append(_Row(self.last, game_type, event))
