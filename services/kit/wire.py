"""The common protobuf messages (tabletop.common.v1) from the kit's records."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from google.protobuf import duration_pb2, struct_pb2, timestamp_pb2
from tabletop.common.v1 import game_pb2, table_pb2

from services.kit import table as tables
from services.kit.engine import Outcome
from services.kit.errors import BadRequest
from services.kit.games import SeatInfo, Snapshot, Turn
from services.kit.store import GameRecord
from services.kit.watchers import WatchItem

if TYPE_CHECKING:
    from services.kit.encoding import Encoder

SEAT_STATES = {
    tables.OPEN: table_pb2.SEAT_STATE_OPEN,
    tables.TAKEN: table_pb2.SEAT_STATE_TAKEN,
    tables.BOT: table_pb2.SEAT_STATE_BOT,
    tables.GIVEN_UP: table_pb2.SEAT_STATE_GIVEN_UP,
}
LEVELS = {
    "easy": table_pb2.BOT_LEVEL_EASY,
    "medium": table_pb2.BOT_LEVEL_MEDIUM,
    "hard": table_pb2.BOT_LEVEL_HARD,
}
LEVEL_NAMES = {v: k for k, v in LEVELS.items()}


def timestamp(seconds: float) -> timestamp_pb2.Timestamp:
    ts = timestamp_pb2.Timestamp()
    ts.FromNanoseconds(int(seconds * 1_000_000_000))
    return ts


def duration(seconds: float) -> duration_pb2.Duration:
    d = duration_pb2.Duration()
    d.FromNanoseconds(int(seconds * 1_000_000_000))
    return d


def seat(index: int, name: str, info: SeatInfo | None) -> game_pb2.Seat:
    msg = game_pb2.Seat(index=index, name=name)
    if info is None:
        return msg
    msg.state = SEAT_STATES[info.state]
    msg.player_name = info.player_name
    msg.player_id = info.player_id
    if info.level and info.state in (tables.BOT, tables.GIVEN_UP):
        # A given-up seat shows its level while the bot plays it (see tables.shown_level).
        msg.bot_level = LEVELS.get(info.level, table_pb2.BOT_LEVEL_UNSPECIFIED)
    if info.bank is not None:
        msg.bank.CopyFrom(duration(info.bank))
    if info.deadline is not None:
        msg.deadline.CopyFrom(timestamp(info.deadline))
    return msg


def time_control(clock: tables.Clock) -> table_pb2.TimeControl:
    msg = table_pb2.TimeControl(
        on_timeout=table_pb2.TIMEOUT_ACTION_FORFEIT
        if clock.forfeit
        else table_pb2.TIMEOUT_ACTION_BOT_MOVES
    )
    if clock.per_decision is not None:
        msg.per_decision.CopyFrom(duration(clock.per_decision))
    if clock.bank is not None:
        msg.bank.CopyFrom(duration(clock.bank))
    if clock.increment:
        msg.increment.CopyFrom(duration(clock.increment))
    return msg


def outcome(result: Outcome) -> game_pb2.Outcome:
    return game_pb2.Outcome(
        scores=result.scores,
        winners=result.winners,
        reason=result.reason,
        details=result.details,
    )


_STRUCTS: dict[int, tuple[Mapping[str, Any], struct_pb2.Struct]] = {}


def options_struct(options: Mapping[str, Any]) -> struct_pb2.Struct:
    """A game's options as a Struct, built once per options object (a game's never
    change once it is made): copying it costs a quarter of building it from the dict,
    and every header carries it."""
    found = _STRUCTS.get(id(options))
    if found is not None and found[0] is options:
        return found[1]
    struct = struct_pb2.Struct()
    struct.update(options)
    if len(_STRUCTS) >= 4096:
        _STRUCTS.clear()
    _STRUCTS[id(options)] = (options, struct)
    return struct


def header(snap: Snapshot) -> game_pb2.GameHeader:
    msg = game_pb2.GameHeader(
        game_id=snap.game_id,
        game_type=snap.game_type,
        version=snap.version,
        seats=[
            seat(i, n, snap.seats[i] if snap.seats else None) for i, n in enumerate(snap.seat_names)
        ],
        status=(
            game_pb2.GAME_STATUS_FINISHED
            if snap.outcome is not None
            else game_pb2.GAME_STATUS_WAITING
            if snap.waiting
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
        msg.options.CopyFrom(options_struct(snap.options))
    if snap.clock is not None:
        msg.time_control.CopyFrom(time_control(snap.clock))
    msg.rematch_offers.extend(snap.rematch_offers)
    msg.rematch_game_id = snap.rematch_game_id
    return msg


LOBBY_STATUS = {
    "waiting": game_pb2.GAME_STATUS_WAITING,
    "in_progress": game_pb2.GAME_STATUS_IN_PROGRESS,
    "finished": game_pb2.GAME_STATUS_FINISHED,
}


def lobby_header(
    record: GameRecord, seat_names: Sequence[str], options: dict[str, Any]
) -> game_pb2.GameHeader:
    """A game as the lobby shows it, from its row alone: what a spectator may see, without
    to_act or outcome (GetGame has them)."""
    plan = tables.Plan.from_dict(record.table, record.players)
    lobby = record.lobby or {}
    cards = lobby.get("seats") or [{"state": tables.TAKEN, "name": "", "level": ""}] * len(
        seat_names
    )
    finished = record.finished_at is not None
    status = (
        game_pb2.GAME_STATUS_FINISHED
        if finished
        else game_pb2.GAME_STATUS_WAITING
        if record.waiting
        else game_pb2.GAME_STATUS_IN_PROGRESS
    )
    msg = game_pb2.GameHeader(
        game_id=record.game_id,
        game_type=record.game_type,
        version=record.version,
        seats=[
            seat(
                i,
                n,
                SeatInfo(
                    c["state"],
                    c["name"],
                    tables.shown_level(c["state"], c["level"], finished),
                    None,
                    None,
                    c.get("player_id", ""),
                ),
            )
            for i, (n, c) in enumerate(zip(seat_names, cards, strict=True))
        ],
        status=status,
        created_at=timestamp(record.created_at),
        updated_at=timestamp(record.updated_at),
    )
    msg.options.update(options)
    if plan.clock is not None:
        msg.time_control.CopyFrom(time_control(plan.clock))
    return msg


def event(data: dict[str, Any]) -> game_pb2.Event:
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


def seat_tokens(names: Sequence[str], tokens: dict[int, str]) -> list[game_pb2.SeatToken]:
    return [
        game_pb2.SeatToken(seat=i, name=names[i], token=token)
        for i, token in sorted(tokens.items())
    ]


class WatchUpdates:
    """A game's WatchGameResponse bytes for each watch item, built once per item.

    The manager shares one item per seat (and one for every spectator) for each version,
    so a move watched by many streams is converted and serialized once per seat, and the
    same bytes are written to each stream (the handler's serializer passes bytes through).
    A stream that asked for moves gets the same message with its moves appended: ``moves``
    is the last field, so the bytes equal the whole message serialized at once.
    """

    def __init__(
        self,
        response_type: Any,
        game_type: str,
        view: Callable[[Snapshot], Any],
        move_to_proto: Callable[[Any], Any],
        encoder: Encoder | None = None,
    ) -> None:
        self.response_type = response_type
        self.game_type = game_type
        self.view = view
        self.move_to_proto = move_to_proto
        # The service's serialized headers and views, shared with its unary answers.
        self.encoder = encoder

    def message(
        self, item: WatchItem, game_id: str, with_moves: bool = False, game: Any = None
    ) -> Any:
        """The message for one stream, built afresh (what ``encode``'s bytes hold).

        ``game``: the header to send when the item has a snapshot, if the caller built it
        (a rated table's, with its seats' ratings); else it is built from the snapshot.
        """
        response = self.response_type()
        if item.turn is not None:
            response.turn.CopyFrom(turn(item.turn))
        if item.snapshot is not None:
            response.game.CopyFrom(game if game is not None else header(item.snapshot))
            response.view.CopyFrom(self.view(item.snapshot))
        elif item.turn is not None:
            response.game.game_id = game_id
            response.game.game_type = self.game_type
            response.game.version = item.turn.version
        if with_moves and item.moves:
            response.moves.extend(self.move_to_proto(m) for m in item.moves)
        return response

    def encode(
        self, item: WatchItem, game_id: str, with_moves: bool = False, game: Any = None
    ) -> bytes:
        """The bytes of ``message(item, game_id, with_moves, game)``, built once per item."""
        data = item.encoded
        if data is None:
            data = item.encoded = self._encoded(item, game_id, game)
        if not (with_moves and item.moves):
            return data
        full = item.encoded_moves
        if full is None:
            if self.encoder is not None and self.encoder.move_bytes is not None:
                full = self.encoder.with_moves(data, item.moves)  # moves' bytes kept by value
            else:
                moves = self.response_type(moves=[self.move_to_proto(m) for m in item.moves])
                full = data + moves.SerializeToString()
            item.encoded_moves = full
        return full

    def _encoded(self, item: WatchItem, game_id: str, game: Any) -> bytes:
        snap = item.snapshot
        if self.encoder is None or snap is None:
            data: bytes = self.message(item, game_id, game=game).SerializeToString()
            return data
        # The same bytes, from the seat's header and view serialized once per version.
        shown = game.SerializeToString() if game is not None else self.encoder.header(snap)
        # The turn's bytes shared with the other seats shown the same, and the answer.
        played = self.encoder.turn(item.turn) if item.turn is not None else None
        return self.encoder.answer(shown, played, snap)


def serialized(message: Any) -> bytes:
    """A response serializer for handlers that may write bytes already serialized."""
    if isinstance(message, bytes):
        return message
    data: bytes = message.SerializeToString()
    return data


__all__ = [
    "WatchUpdates",
    "duration",
    "event",
    "header",
    "lobby_header",
    "outcome",
    "seat",
    "seat_tokens",
    "serialized",
    "time_control",
    "timestamp",
    "turn",
]


def parse(message_type: Any, data: bytes) -> Any:
    """A request message from its bytes; BadRequest when they are not one (the handlers
    take bytes, so garbage gets INVALID_ARGUMENT rather than gRPC's own INTERNAL)."""
    try:
        return message_type.FromString(data)
    except Exception as exc:  # DecodeError, or a RecursionError on hostile nesting
        raise BadRequest(f"the request is not a valid {message_type.DESCRIPTOR.name}") from exc
