"""One game type's stub and messages, and what every command prints of a game."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from typing import Any

import grpc
from tabletop.common.v1 import table_pb2
from tabletop.gateway.v1 import catalog_pb2, catalog_pb2_grpc

from client import render
from client.api import FINISHED
from client.render.colour import paint
from services import registry

SEAT_STATES = {
    table_pb2.SEAT_STATE_OPEN: "open",
    table_pb2.SEAT_STATE_TAKEN: "taken",
    table_pb2.SEAT_STATE_BOT: "bot",
    table_pb2.SEAT_STATE_GIVEN_UP: "given up",
}


class Game:
    """One game type's stub and messages, found by the naming convention."""

    def __init__(self, name: str, channel: grpc.Channel) -> None:
        entry = registry.by_name(name)
        self.name = name
        self.pb2 = entry.pb2()
        grpc_module = importlib.import_module(f"{entry.proto_package}.{name}_pb2_grpc")
        self.stub = getattr(grpc_module, f"{name.capitalize()}ServiceStub")(channel)
        self.channel = channel

    def call(self, method: str, token: str | None = None, **fields: Any) -> Any:
        request = getattr(self.pb2, f"{method}Request")(**fields)
        metadata = [("authorization", f"Bearer {token}")] if token else None
        return getattr(self.stub, method)(request, metadata=metadata, timeout=30)

    def watch(self, game_id: str, token: str | None, from_version: int | None = None) -> Any:
        metadata = [("authorization", f"Bearer {token}")] if token else None
        request = self.pb2.WatchGameRequest(game_id=game_id)
        if from_version is not None:
            request.from_version = from_version
        return self.stub.WatchGame(request, metadata=metadata)


def seat_side(game: Game, spec: str | None, header: Any) -> int | None:
    """The seat whose side ``--as-seat`` asks the board to be drawn from (a seat number or
    name), or None: the view's own choice (the token's seat, else the first seat)."""
    if spec is None:
        return None
    if not render.draws_from_seat(game.name):
        sys.exit(f"--as-seat: the {game.name} board is drawn the same for every seat")
    names = [seat.name.lower() for seat in header.seats]
    if spec.isdigit() and int(spec) < len(names):
        return int(spec)
    if spec.lower() in names:
        return names.index(spec.lower())
    sys.exit(f"--as-seat {spec!r}: the seats are {', '.join(names)} (or 0-{len(names) - 1})")


def show_state(game: Game, response: Any, as_seat: str | None = None) -> None:
    side = seat_side(game, as_seat, response.game)
    print(render.board(game.name, response.view, response.game, as_seat=side))
    if response.game.status == FINISHED:
        show_outcome(response.game)


def turn_lines(turn: Any, seats: Any) -> list[str]:
    """One accepted move as the commands print it: version, the seat's rulebook name and
    the move's text, then its events."""
    who = seats[turn.seat].name if turn.seat < len(seats) else f"seat {turn.seat}"
    what = turn.move_text or "(a secret move)"
    return [paint(f"v{turn.version} {who}: {what}", "bold")] + [
        f"    {event.text}" for event in turn.events
    ]


def show_turn(game: Game, turn: Any, seats: Any) -> None:
    for line in turn_lines(turn, seats):
        print(line)


def options(game: Game, pairs: list[str]) -> Any:
    """The game's Options message from ``key=value`` pairs (values as JSON, or text)."""
    from google.protobuf import json_format

    values: dict[str, Any] = {}
    for pair in pairs:
        key, sep, raw = pair.partition("=")
        if not sep:
            sys.exit(f"--option takes key=value, not {pair!r}")
        try:
            values[key] = json.loads(raw)
        except ValueError:
            values[key] = raw
    try:
        return json_format.ParseDict(values, game.pb2.Options())
    except json_format.ParseError as error:
        sys.exit(f"bad --option: {error}")


def fewest_players(game: Game) -> int:
    """The fewest players the game allows: from the gateway's catalog, or (when --target
    is a game service, which has no catalog) from the game's rules module."""
    catalog = catalog_pb2_grpc.CatalogServiceStub(game.channel)
    try:
        reply = catalog.ListGames(catalog_pb2.ListGamesRequest(), timeout=30)
    except grpc.RpcError as error:
        if error.code() != grpc.StatusCode.UNIMPLEMENTED:
            raise
    else:
        for entry in reply.games:
            if entry.name == game.name:
                return entry.min_players
    return registry.by_name(game.name).engine().GAME.min_players


def need_token(args: argparse.Namespace) -> str:
    if not args.token:
        sys.exit(f"{args.command} acts for a seat: give its --token=TOKEN (or TABLETOP_TOKEN)")
    return args.token


def outcome_lines(header: Any) -> list[str]:
    """How a finished game ended, the winners by their seats' rulebook names."""
    names = [header.seats[w].name for w in header.outcome.winners]
    return [
        paint(f"game over: {header.outcome.reason}", "bold"),
        *(f"  {line}" for line in header.outcome.details),
        f"  winners: {', '.join(names) or 'nobody'}",
    ]


def show_outcome(header: Any) -> None:
    for line in outcome_lines(header):
        print(line)


def move_texts(game: Game, listed: Any) -> list[str]:
    """The listed moves' text forms: the service's labels, or (from a service that sends
    none) the same text drawn here."""
    if len(listed.labels) == len(listed.moves):
        return list(listed.labels)
    return [render.move(game.name, m) for m in listed.moves]


def chosen_move(listed: Any, texts: list[str], answer: str) -> Any | None:
    """The listed move an answer names: its number (as `moves` numbers them, from 0) or
    its text form; None if it names none."""
    if answer.isdigit() and int(answer) < len(listed.moves):
        return listed.moves[int(answer)]
    if answer in texts:
        return listed.moves[texts.index(answer)]
    return None


def seat_label(seat: Any) -> str:
    """A seat as the lobby shows it: who plays it, and how it is filled."""
    name = seat.player_name or seat.name
    state = SEAT_STATES.get(seat.state)
    return f"{name} ({state})" if state else name
