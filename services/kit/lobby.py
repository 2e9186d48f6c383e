"""The table requests of every game: CreateGame's seats and clock, ListGames' filters and
its page token. Messages in, checked kit values out; every refusal names the field."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from google.protobuf import json_format
from tabletop.common.v1 import game_pb2, table_pb2

from services.kit import table as tables
from services.kit import wire
from services.kit.engine import BadOptions, GameInfo
from services.kit.errors import BadPageToken, BadRequest
from services.kit.store import GameRecord

PAGE_SIZE, PAGE_MAX = 20, 100
# A refusal names at most this many of the caller's own names, each cut at NAME_SHOWN
# characters: it never grows with the request (a refusal's trailers go back through every
# proxy on the way).
NAMES_SHOWN, NAME_SHOWN = 3, 40
# A Duration's nanos, as google.protobuf.Duration (and its JSON mapping) allows them.
NANOS_MAX = 999_999_999

_KINDS = {
    table_pb2.SEAT_KIND_UNSPECIFIED: tables.RESERVED,
    table_pb2.SEAT_KIND_RESERVED: tables.RESERVED,
    table_pb2.SEAT_KIND_OPEN: tables.OPEN,
    table_pb2.SEAT_KIND_BOT: tables.BOT,
}
_LEVELS = {table_pb2.BOT_LEVEL_UNSPECIFIED: "medium", **wire.LEVEL_NAMES}
_STATUSES = {
    game_pb2.GAME_STATUS_UNSPECIFIED: None,
    game_pb2.GAME_STATUS_WAITING: "waiting",
    game_pb2.GAME_STATUS_IN_PROGRESS: "in_progress",
    game_pb2.GAME_STATUS_FINISHED: "finished",
}


def players_of(request: Any, info: GameInfo) -> int:
    """CreateGame's player count: as asked, else one per listed seat, else the fewest."""
    return request.players or len(request.seats) or info.min_players


def plan_from_request(request: Any, players: int, info: GameInfo) -> tables.Plan | None:
    """The table CreateGame asks for; None when it asks for none (every seat the
    caller's, no clock: as before tables existed)."""
    clock = clock_from(request.time_control) if request.HasField("time_control") else None
    if not request.seats and clock is None:
        return None
    if not info.min_players <= players <= info.max_players:
        # Checked before a seat is listed: a player count of 2**31 lists none.
        raise BadOptions(
            f"{info.title} is for {info.min_players}-{info.max_players} players, not {players}"
        )
    if request.seats and len(request.seats) != players:
        raise BadOptions(f"seats lists {len(request.seats)} seats for {players} players")
    seats = []
    for i, asked in enumerate(request.seats):
        kind = _KINDS.get(asked.kind)
        level = _LEVELS.get(asked.bot_level)
        if kind is None:
            raise BadOptions(f"seats[{i}].kind {asked.kind} is not a SeatKind")
        if level is None:
            raise BadOptions(f"seats[{i}].bot_level {asked.bot_level} is not a BotLevel")
        name = ""
        if kind == tables.RESERVED:
            name = tables.player_name(asked.player_name, required=False)
        elif asked.player_name:
            raise BadOptions(f"seats[{i}]: only a reserved seat is named at creation")
        seats.append(tables.SeatPlan(kind, name, level if kind == tables.BOT else "medium"))
    if not seats:
        seats = [tables.SeatPlan(tables.RESERVED) for _ in range(players)]
    return tables.Plan(tuple(seats), clock)


def named(names: list[str]) -> str:
    """Some of the caller's names for a refusal: the first few, each cut short, and how
    many more there were."""
    shown = [repr(n if len(n) <= NAME_SHOWN else n[:NAME_SHOWN] + "...") for n in names]
    text = ", ".join(shown[:NAMES_SHOWN])
    if len(names) > NAMES_SHOWN:
        text += f" and {len(names) - NAMES_SHOWN} more"
    return text


def _seconds(name: str, value: Any) -> float | None:
    """A Duration as seconds, refused as protobuf refuses it: nanos within
    -999,999,999..999,999,999 and of the seconds' sign. Time controls are never negative."""
    if not -NANOS_MAX <= value.nanos <= NANOS_MAX:
        raise BadOptions(
            f"time_control.{name}: nanos must be within -{NANOS_MAX:,}..{NANOS_MAX:,} "
            "(whole seconds go in seconds)"
        )
    if (value.seconds < 0 < value.nanos) or (value.nanos < 0 < value.seconds):
        raise BadOptions(f"time_control.{name}: seconds and nanos must have the same sign")
    if value.seconds < 0 or value.nanos < 0:
        raise BadOptions(f"time_control.{name} may not be negative")
    seconds = value.seconds + value.nanos / 1e9
    return seconds or None


def clock_from(message: Any) -> tables.Clock:
    if message.on_timeout not in (
        table_pb2.TIMEOUT_ACTION_UNSPECIFIED,
        table_pb2.TIMEOUT_ACTION_BOT_MOVES,
        table_pb2.TIMEOUT_ACTION_FORFEIT,
    ):
        raise BadOptions(f"time_control.on_timeout {message.on_timeout} is not a TimeoutAction")
    return tables.Clock(
        per_decision=_seconds("per_decision", message.per_decision),
        bank=_seconds("bank", message.bank),
        increment=_seconds("increment", message.increment) or 0.0,
        forfeit=message.on_timeout == table_pb2.TIMEOUT_ACTION_FORFEIT,
    )


@dataclass(frozen=True)
class Query:
    """A lobby query: its filters, page size and where the page starts."""

    game_type: str
    status: str | None
    players: int | None
    options: dict[str, Any] | None
    size: int
    after: tuple[float, str] | None
    player: str | None = None  # mine: only this player's games

    def filters(self) -> dict[str, Any]:
        found = {
            "status": self.status,
            "players": self.players,
            "options": self.options,
            "after": self.after,
        }
        if self.player is not None:
            found["player"] = self.player
        return found

    def fingerprint(self) -> str:
        """The filters, hashed: a page token only continues the query that made it."""
        facts: list[Any] = [self.game_type, self.status, self.players, self.options]
        if self.player is not None:
            facts.append(self.player)
        return hashlib.sha256(json.dumps(facts, sort_keys=True).encode()).hexdigest()[:16]


def query_from_request(request: Any, info: GameInfo, player: str | None = None) -> Query:
    if request.status not in _STATUSES:
        raise BadRequest(f"status {request.status} is not a GameStatus")
    players = request.players or None
    if players is not None and not info.min_players <= players <= info.max_players:
        raise BadRequest(f"players must be 0 or {info.min_players}..{info.max_players}")
    size = request.page_size or PAGE_SIZE
    if not 0 < size <= PAGE_MAX:
        raise BadRequest(f"page_size must be 0..{PAGE_MAX}")
    options = _options_filter(request.options, info) if request.HasField("options") else None
    query = Query(info.name, _STATUSES[request.status], players, options, size, None, player)
    if request.page_token:
        query = dataclasses.replace(query, after=_cursor(request.page_token, query))
    return query


def _options_filter(message: Any, info: GameInfo) -> dict[str, Any] | None:
    wanted = json_format.MessageToDict(message)
    if not wanted:
        return None
    known = {f.name for f in dataclasses.fields(info.options_type)}
    unknown = sorted(set(wanted) - known)
    if unknown:
        raise BadRequest(f"unknown options: {named(unknown)}; known: {', '.join(sorted(known))}")
    out: dict[str, Any] = {}
    for key, value in wanted.items():
        if isinstance(value, float) and value.is_integer():
            value = int(value)  # a Struct holds every number as a double
        if not isinstance(value, (str, int, float, bool)):
            raise BadRequest(f"options.{key}: only a single value can be filtered on")
        out[key] = value
    return out


def _mac(payload: str, query: Query) -> str:
    return hashlib.sha256(f"{query.game_type}|{payload}".encode()).hexdigest()[:16]


def page_token(query: Query, last: GameRecord) -> str:
    """The opaque token of the page after ``last``: a (created_at, game_id) cursor, so it
    stays put when newer games are created, tied to these filters."""
    body = json.dumps([last.created_at, last.game_id, query.fingerprint()])
    payload = base64.urlsafe_b64encode(body.encode()).decode().rstrip("=")
    return f"{payload}.{_mac(payload, query)}"


def _cursor(token: str, query: Query) -> tuple[float, str]:
    refused = BadPageToken("page_token was not made by ListGames with these filters")
    payload, _, mac = token.partition(".")
    if len(token) > 512 or mac != _mac(payload, query):
        raise refused
    try:
        padded = payload + "=" * (-len(payload) % 4)
        created, game_id, fingerprint = json.loads(base64.urlsafe_b64decode(padded))
    except (ValueError, binascii.Error, TypeError):
        raise refused from None
    if fingerprint != query.fingerprint() or not isinstance(game_id, str):
        raise refused
    if not isinstance(created, (int, float)):
        raise refused
    return float(created), game_id
