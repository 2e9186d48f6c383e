"""Players' events, derived from a game's header before and after a write.

What a player is told (docs/players.md, "Events and webhooks"): your turn, a game
started, a game over, a rematch offered or started. An event says which game, which
seat and what kind, never anything the player may not see: it is made from the header
alone (seats, whose turn, deadlines, status), never from a view, a hand or a move.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from tabletop.common.v1 import game_pb2

from services.kit.store import OutboxEvent

YOUR_TURN = "your_turn"
GAME_STARTED = "game_started"
GAME_OVER = "game_over"
REMATCH_OFFERED = "rematch_offered"
REMATCH_STARTED = "rematch_started"
KINDS = (YOUR_TURN, GAME_STARTED, GAME_OVER, REMATCH_OFFERED, REMATCH_STARTED)
# What the webhook posts: a player who is not connected needs to hear of these; a game
# starting is told by the your-turn that comes with it.
WEBHOOK_KINDS = frozenset({YOUR_TURN, GAME_OVER, REMATCH_OFFERED, REMATCH_STARTED})

_PROTO_KIND = {
    YOUR_TURN: game_pb2.PLAYER_EVENT_KIND_YOUR_TURN,
    GAME_STARTED: game_pb2.PLAYER_EVENT_KIND_GAME_STARTED,
    GAME_OVER: game_pb2.PLAYER_EVENT_KIND_GAME_OVER,
    REMATCH_OFFERED: game_pb2.PLAYER_EVENT_KIND_REMATCH_OFFERED,
    REMATCH_STARTED: game_pb2.PLAYER_EVENT_KIND_REMATCH_STARTED,
}


@dataclass(frozen=True)
class Header:
    """What events are derived from: one game's header at one version."""

    game_type: str
    game_id: str
    version: int
    # The player holding each seat ("" for a seat token's, a bot's, an open seat).
    players: tuple[str, ...]
    # Seats with a decision a person makes now (none while waiting or once finished).
    to_act: frozenset[int]
    deadlines: tuple[float | None, ...]
    started: bool  # every seat taken (a finished game had started, or was abandoned)
    finished: bool
    rematch_offers: tuple[int, ...] = ()
    rematch_game_id: str = ""


@dataclass(frozen=True)
class PlayerEvent:
    """One event for one player: the outbox row's body, the stream's and webhook's message."""

    event_id: str
    kind: str
    player_id: str
    game_type: str
    game_id: str
    version: int
    seat: int
    happened_at: float
    deadline: float | None = None
    by_seat: int | None = None
    rematch_game_id: str = ""

    def to_json(self) -> str:
        return json.dumps(
            {k: v for k, v in self.__dict__.items() if v is not None}, separators=(",", ":")
        )

    @classmethod
    def from_json(cls, body: str) -> PlayerEvent:
        data: dict[str, Any] = json.loads(body)
        return cls(**data)

    def outbox(self, webhooks: bool) -> OutboxEvent:
        return OutboxEvent(
            event_id=self.event_id,
            player_id=self.player_id,
            game_id=self.game_id,
            kind=self.kind,
            body=self.to_json(),
            created_at=self.happened_at,
            webhook=webhooks and self.kind in WEBHOOK_KINDS,
        )

    def to_proto(self, sequence: int) -> game_pb2.PlayerEvent:
        message = game_pb2.PlayerEvent(
            sequence=sequence,
            event_id=self.event_id,
            kind=_PROTO_KIND[self.kind],
            player_id=self.player_id,
            game_type=self.game_type,
            game_id=self.game_id,
            version=self.version,
            seat=self.seat,
            rematch_game_id=self.rematch_game_id,
        )
        if self.by_seat is not None:
            message.by_seat = self.by_seat
        if self.deadline is not None:
            message.deadline.FromNanoseconds(int(self.deadline * 1e9))
        message.happened_at.FromNanoseconds(int(self.happened_at * 1e9))
        return message


def webhook_body(event: game_pb2.PlayerEvent) -> bytes:
    """The webhook's body: the PlayerEvent in protobuf's JSON mapping, compact."""
    data = json_format.MessageToDict(event, preserving_proto_field_name=False)
    return json.dumps(data, separators=(",", ":"), sort_keys=True).encode()


def derive(before: Header | None, after: Header, at: float) -> list[PlayerEvent]:
    """The events the change from ``before`` to ``after`` makes (``before`` None: the game
    was just created). Only seats a player holds get events."""
    events: list[PlayerEvent] = []

    def add(kind: str, seat: int, **more: Any) -> None:
        player = after.players[seat]
        events.append(
            PlayerEvent(
                event_id=f"{after.game_type}:{after.game_id}:{after.version}:{kind}:{seat}",
                kind=kind,
                player_id=player,
                game_type=after.game_type,
                game_id=after.game_id,
                version=after.version,
                seat=seat,
                happened_at=at,
                **more,
            )
        )

    held = [seat for seat, player in enumerate(after.players) if player]
    was_started = before is not None and before.started
    was_finished = before is not None and before.finished
    if after.started and not after.finished and not was_started:
        for seat in held:
            add(GAME_STARTED, seat)
    if not after.finished:
        earlier = before.to_act if before is not None else frozenset()
        for seat in sorted(after.to_act - earlier):
            if after.players[seat]:
                add(YOUR_TURN, seat, deadline=after.deadlines[seat])
    if after.finished and not was_finished:
        for seat in held:
            add(GAME_OVER, seat)
    offered = before.rematch_offers if before is not None else ()
    for by in after.rematch_offers:
        if by in offered:
            continue
        offering = after.players[by] if 0 <= by < len(after.players) else ""
        for seat in held:
            if after.players[seat] != offering and seat not in after.rematch_offers:
                add(REMATCH_OFFERED, seat, by_seat=by)
    if after.rematch_game_id and not (before is not None and before.rematch_game_id):
        for seat in held:
            add(REMATCH_STARTED, seat, rematch_game_id=after.rematch_game_id)
    return _unique(events)


def _unique(events: Iterable[PlayerEvent]) -> list[PlayerEvent]:
    """One event per id (two offers at one version make one event per seat)."""
    seen: dict[str, PlayerEvent] = {}
    for event in events:
        seen.setdefault(event.event_id, event)
    return list(seen.values())
