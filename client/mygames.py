"""``mygames`` and ``follow``: a player's games across every game, and its events.

    python -m client mygames [--finished]    # your turn first, with the time left
    python -m client follow [--cursor C]     # a line per event: "your turn in channeling ..."

Both need a player's token (a JWT): ``--jwt``, TABLETOP_JWT, or the guest ``python -m
client signin NAME`` keeps. They call the gateway's PlayersService (docs/players.md).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import grpc
from tabletop.common.v1 import game_pb2
from tabletop.gateway.v1 import players_pb2, players_pb2_grpc

from client.players import player_token
from services import registry

SERVICE = "/tabletop.gateway.v1.PlayersService/"


def add_commands(sub: Any) -> None:
    """The two commands, on the client's subcommand parser."""
    jwt_help = "a player's token (default: TABLETOP_JWT, else the guest signed in)"
    p = sub.add_parser("mygames", help="your games in every game, your turn first")
    p.add_argument("--jwt", default=os.environ.get("TABLETOP_JWT"), help=jwt_help)
    p.add_argument("--finished", action="store_true", help="finished games too")
    p = sub.add_parser("follow", help="your turns, starts, ends and rematches, as they happen")
    p.add_argument("--jwt", default=os.environ.get("TABLETOP_JWT"), help=jwt_help)
    p.add_argument("--cursor", default="", help="resume after the event a cursor names")
    p.add_argument("--cursors", action="store_true", help="print each event's cursor too")


def _metadata(channel: grpc.Channel, args: argparse.Namespace) -> tuple[tuple[str, str], ...]:
    token = args.jwt or player_token(channel)  # else the guest `signin` keeps
    if not token:
        sys.exit("a player's token is needed: python -m client signin NAME, --jwt or TABLETOP_JWT")
    return (("authorization", f"Bearer {token}"),)


def left(deadline: Any, now: float | None = None) -> str:
    """ "20 s left", "3 min left", "2 h left" (a Timestamp), "" without one."""
    if deadline is None or not (deadline.seconds or deadline.nanos):
        return ""
    remaining = deadline.seconds + deadline.nanos / 1e9 - (time.time() if now is None else now)
    if remaining <= 0:
        return "time is up"
    if remaining < 120:
        return f"{remaining:.0f} s left"
    if remaining < 7200:
        return f"{remaining / 60:.0f} min left"
    return f"{remaining / 3600:.0f} h left"


def seat_name(game_type: str, header: game_pb2.GameHeader | None, seat: int) -> str:
    """The rulebook's name of ``seat`` ("Light"), from the header; else "seat N"."""
    if header is not None:
        for s in header.seats:
            if s.index == seat and s.name:
                return s.name
    return f"seat {seat}"


def game_line(game: players_pb2.MyGame, now: float | None = None) -> str:
    header = game.header
    where = f"{game.game_type} {header.game_id}"
    mine = seat_name(game.game_type, header, game.seat)
    if game.your_turn:
        clock = left(game.deadline if game.HasField("deadline") else None, now)
        return f"your turn in {where} ({mine})" + (f", {clock}" if clock else "")
    if header.status == game_pb2.GAME_STATUS_WAITING:
        return f"waiting for players in {where} ({mine})"
    if header.status == game_pb2.GAME_STATUS_FINISHED:
        return f"finished: {where} ({mine})"
    acting = ", ".join(seat_name(game.game_type, header, s) for s in header.to_act)
    return f"{acting or 'nobody'} to act in {where} ({mine})"


_SAID = {
    game_pb2.PLAYER_EVENT_KIND_YOUR_TURN: "your turn in",
    game_pb2.PLAYER_EVENT_KIND_GAME_STARTED: "the game started:",
    game_pb2.PLAYER_EVENT_KIND_GAME_OVER: "game over:",
    game_pb2.PLAYER_EVENT_KIND_REMATCH_OFFERED: "a rematch is offered in",
    game_pb2.PLAYER_EVENT_KIND_REMATCH_STARTED: "the rematch started for",
}


def event_line(
    event: game_pb2.PlayerEvent, header: game_pb2.GameHeader | None = None, now: float | None = None
) -> str:
    """One line for people: "your turn in channeling <id> (Light), 20 s left"."""
    said = _SAID.get(event.kind, "something happened in")
    mine = seat_name(event.game_type, header, event.seat)
    line = f"{said} {event.game_type} {event.game_id} ({mine})"
    if event.kind == game_pb2.PLAYER_EVENT_KIND_YOUR_TURN:
        clock = left(event.deadline if event.HasField("deadline") else None, now)
        if clock:
            line += f", {clock}"
    elif event.kind == game_pb2.PLAYER_EVENT_KIND_REMATCH_OFFERED:
        line += f" by {seat_name(event.game_type, header, event.by_seat)}"
    elif event.kind == game_pb2.PLAYER_EVENT_KIND_REMATCH_STARTED:
        line += f": {event.rematch_game_id}"
    return line


def cmd_mygames(channel: grpc.Channel, args: argparse.Namespace) -> None:
    stub = players_pb2_grpc.PlayersServiceStub(channel)
    reply = stub.ListMyGames(
        players_pb2.ListMyGamesRequest(include_finished=args.finished),
        metadata=_metadata(channel, args),
    )
    for game in reply.games:
        print(game_line(game))
    if not reply.games:
        print("no games")
    for service in reply.unavailable_services:
        print(f"({service} did not answer: its games are missing)")


def _header(channel: grpc.Channel, game_type: str, game_id: str, meta: Any) -> Any:
    """The game's header (for its seats' names); None when it cannot be read."""
    try:
        entry = registry.by_name(game_type)
    except KeyError:
        return None
    pb2 = entry.pb2()
    call = channel.unary_unary(
        f"/{entry.service_name}/GetGame",
        request_serializer=pb2.GetGameRequest.SerializeToString,
        response_deserializer=pb2.GetGameResponse.FromString,
    )
    try:
        return call(pb2.GetGameRequest(game_id=game_id), metadata=meta, timeout=5).game
    except grpc.RpcError:
        return None


def cmd_follow(channel: grpc.Channel, args: argparse.Namespace) -> None:
    meta = _metadata(channel, args)
    stub = players_pb2_grpc.PlayersServiceStub(channel)
    headers: dict[str, Any] = {}
    for message in stub.WatchMyGames(
        players_pb2.WatchMyGamesRequest(cursor=args.cursor), metadata=meta
    ):
        if not message.HasField("event"):
            if args.cursors:
                print(f"(following; cursor {message.cursor})", flush=True)
            continue
        event = message.event
        if event.game_id not in headers:
            if len(headers) > 256:
                headers.clear()
            headers[event.game_id] = _header(channel, event.game_type, event.game_id, ())
        line = event_line(event, headers[event.game_id])
        if args.cursors:
            line += f"  [cursor {message.cursor}]"
        print(line, flush=True)


COMMANDS: dict[str, Callable[[grpc.Channel, argparse.Namespace], None]] = {
    "mygames": cmd_mygames,
    "follow": cmd_follow,
}
