"""The common protobuf messages (tabletop.common.v1) from the kit's records."""

from __future__ import annotations

from collections.abc import Sequence

from google.protobuf import timestamp_pb2
from tabletop.common.v1 import game_pb2

from services.kit.engine import Outcome
from services.kit.games import Snapshot, Turn


def timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    ts = timestamp_pb2.Timestamp()
    ts.FromNanoseconds(int(seconds * 1_000_000_000))
    return ts


def outcome(result: Outcome) -> game_pb2.Outcome:
    return game_pb2.Outcome(
        scores=result.scores,
        winners=result.winners,
        reason=result.reason,
        details=result.details,
    )


def header(snap: Snapshot) -> game_pb2.GameHeader:
    msg = game_pb2.GameHeader(
        game_id=snap.game_id,
        game_type=snap.game_type,
        version=snap.version,
        seats=[game_pb2.Seat(index=i, name=n) for i, n in enumerate(snap.seat_names)],
        status=(
            game_pb2.GAME_STATUS_FINISHED
            if snap.outcome is not None
            else game_pb2.GAME_STATUS_IN_PROGRESS
        ),
        to_act=snap.to_act,
        created_at=timestamp(snap.created_at),
        updated_at=timestamp(snap.updated_at),
    )
    if snap.outcome is not None:
        msg.outcome.CopyFrom(outcome(snap.outcome))
    if snap.viewer is not None:
        msg.viewer = snap.viewer
    if snap.options:
        msg.options.update(snap.options)
    return msg


def event(data: dict) -> game_pb2.Event:
    msg = game_pb2.Event(kind=data["kind"], text=data["text"])
    if "seat" in data:
        msg.seat = data["seat"]
    if data.get("data"):
        msg.data.update(data["data"])
    return msg


def turn(record: Turn) -> game_pb2.TurnRecord:
    return game_pb2.TurnRecord(
        version=record.version,
        seat=record.seat,
        move_text=record.move_text,
        events=[event(e) for e in record.events],
        applied_at=timestamp(record.applied_at),
    )


def seat_tokens(names: Sequence[str], tokens: Sequence[str]) -> list[game_pb2.SeatToken]:
    return [
        game_pb2.SeatToken(seat=i, name=name, token=token)
        for i, (name, token) in enumerate(zip(names, tokens, strict=True))
    ]


__all__ = ["event", "header", "outcome", "seat_tokens", "timestamp", "turn"]
