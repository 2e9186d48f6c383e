"""Tables and the lobby: create (open seats, bots, clocks), lobby, join, leave, resign."""

from __future__ import annotations

import argparse
import math
import sys
from datetime import UTC, datetime
from typing import Any

from tabletop.common.v1 import table_pb2

from client.api import FINISHED, IN_PROGRESS, WAITING
from client.game import (
    Game,
    fewest_players,
    need_token,
    options,
    seat_label,
    show_outcome,
    show_turn,
)

LEVELS = {
    "easy": table_pb2.BOT_LEVEL_EASY,
    "medium": table_pb2.BOT_LEVEL_MEDIUM,
    "hard": table_pb2.BOT_LEVEL_HARD,
}
STATUSES = {"waiting": WAITING, "in_progress": IN_PROGRESS, "finished": FINISHED}
STATUS_NAMES = {WAITING: "waiting", IN_PROGRESS: "in progress", FINISHED: "finished"}


def seconds(text: str) -> float:
    """A number of seconds from the command line (the service checks its range)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds")
    return value


def wants_clock(args: argparse.Namespace) -> bool:
    clock = (args.per_decision, args.bank, args.increment)
    return any(v is not None for v in clock) or args.forfeit


def time_control(args: argparse.Namespace) -> Any:
    """The TimeControl the clock options ask for, or None for no clock."""
    if not wants_clock(args):
        return None
    action = (
        table_pb2.TIMEOUT_ACTION_FORFEIT if args.forfeit else table_pb2.TIMEOUT_ACTION_BOT_MOVES
    )
    control = table_pb2.TimeControl(on_timeout=action)
    for name in ("per_decision", "bank", "increment"):
        value = getattr(args, name)
        if value is not None:
            getattr(control, name).FromNanoseconds(round(value * 1e9))
    return control


def seat_requests(game: Game, args: argparse.Namespace) -> list[Any]:
    """One SeatRequest per seat: the caller's reserved seats first, then --open, then
    --bots (so the bots sit last)."""
    players = args.players or fewest_players(game)
    if args.open < 0 or args.bots < 0:
        sys.exit("--open and --bots take a number of seats (0 or more)")
    if args.open + args.bots > players:
        sys.exit(f"--open {args.open} and --bots {args.bots}: the game has {players} seats")
    reserved = players - args.open - args.bots
    if args.player_name is not None and reserved == 0:
        sys.exit("--name names the caller's reserved seats, and --open and --bots leave none")
    if args.level is not None and not args.bots:
        sys.exit("--level sets the level of the --bots seats")
    level = LEVELS[args.level or "medium"]
    return (
        [
            table_pb2.SeatRequest(
                kind=table_pb2.SEAT_KIND_RESERVED, player_name=args.player_name or ""
            )
        ]
        * reserved
        + [table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_OPEN)] * args.open
        + [table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_BOT, bot_level=level)] * args.bots
    )


def waiting_for(header: Any) -> str:
    """What a table waits for, in one line."""
    if header.status == WAITING:
        open_seats = sum(s.state == table_pb2.SEAT_STATE_OPEN for s in header.seats)
        return f"waiting for {open_seats} more player{'s' if open_seats != 1 else ''} to join"
    if header.status == IN_PROGRESS:
        return "the game has started"
    return "the game is over"


def cmd_create(game: Game, args: argparse.Namespace) -> None:
    fields: dict[str, Any] = {"players": args.players, "options": options(game, args.option)}
    if args.seed is not None:
        fields["seed"] = args.seed
    table = bool(
        args.open or args.bots or args.player_name is not None or args.level or wants_clock(args)
    )
    if table:  # without any table option the request is exactly as before tables existed
        fields["seats"] = seat_requests(game, args)
        fields["players"] = len(fields["seats"])
        control = time_control(args)
        if control is not None:
            fields["time_control"] = control
    # Never a seat token: it is not a key, nor a player's.
    player = None if args.key else getattr(args, "player_token", None)
    if player:
        # As a signed-in player: without table options every seat is the caller's, as
        # before tables, so the table lets one player hold them all.
        fields["several_seats_per_player"] = not table
    reply = game.call("CreateGame", args.key or player, **fields)
    print(f"game {reply.game.game_id}")
    for token in reply.seat_tokens:
        print(token_line(reply.game, token))
    if table:
        for seat in reply.game.seats:
            if seat.state in (table_pb2.SEAT_STATE_OPEN, table_pb2.SEAT_STATE_BOT):
                who = "open" if seat.state == table_pb2.SEAT_STATE_OPEN else seat.player_name
                print(f"  seat {seat.index} ({seat.name}): {who}")
        print(waiting_for(reply.game))


def token_line(header: Any, token: Any) -> str:
    """A seat's token as create and join print it: the seat's number, its rulebook name
    and its player's name when one was given, then the token."""
    player = header.seats[token.seat].player_name if token.seat < len(header.seats) else ""
    who = f"{token.name}, {player}" if player and player != token.name else token.name
    return f"  seat {token.seat} ({who}): {token.token}"


def duration(value: Any) -> str:
    """A protobuf Duration for people: 45s, 5m, 1h30m, 2m30s."""
    total = round(value.ToNanoseconds() / 1e9)
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    text = "".join(f"{n}{unit}" for n, unit in ((hours, "h"), (minutes, "m"), (secs, "s")) if n)
    return text or "0s"


def clock(header: Any) -> str:
    """The table's clock in a few words ("-" for none)."""
    if not header.HasField("time_control"):
        return "-"
    control = header.time_control
    parts = []
    if control.HasField("per_decision"):
        parts.append(f"{duration(control.per_decision)} a decision")
    if control.HasField("bank"):
        bank = f"bank {duration(control.bank)}"
        if control.HasField("increment"):
            bank += f" +{duration(control.increment)}"
        parts.append(bank)
    parts.append("forfeit" if control.on_timeout == table_pb2.TIMEOUT_ACTION_FORFEIT else "bot")
    return ", ".join(parts)


def options_text(header: Any) -> str:
    """The options the game was created with (every one, defaults included): key=value."""
    from google.protobuf import json_format

    values = json_format.MessageToDict(header.options)
    shown = [
        f"{key}={int(value) if isinstance(value, float) and value.is_integer() else value}"
        for key, value in sorted(values.items())
    ]
    return ", ".join(shown) or "-"


def result(game: Game, header: Any) -> str:
    """How a finished game ended, its winners by their seats' names ("-" before the end).
    The lobby's headers carry no outcome: a finished game's is read with GetGame."""
    if header.status != FINISHED:
        return "-"
    if not header.HasField("outcome"):
        header = game.call("GetGame", game_id=header.game_id).game
    names = [header.seats[w].name for w in header.outcome.winners]
    return f"{header.outcome.reason}: {', '.join(names) or 'nobody'} won"


def when(stamp: Any) -> str:
    return datetime.fromtimestamp(stamp.seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def cmd_lobby(game: Game, args: argparse.Namespace) -> None:
    fields: dict[str, Any] = {"players": args.players, "page_size": args.page_size}
    if args.status is not None:
        fields["status"] = STATUSES[args.status]
    if args.page_token:
        fields["page_token"] = args.page_token
    token = None
    if args.mine:
        if not args.token:
            sys.exit("lobby --mine lists a player's games: sign in first (signin NAME)")
        fields["mine"], token = True, args.token
    reply = game.call("ListGames", token, **fields)
    rows = [("game", "status", "players", "seats", "clock", "created", "result", "options")]
    for header in reply.games:
        rows.append(
            (
                header.game_id,
                "your turn"
                if header.HasField("viewer") and header.viewer in header.to_act
                else STATUS_NAMES.get(header.status, "unknown"),
                str(len(header.seats)),
                ", ".join(seat_label(s) for s in header.seats),
                clock(header),
                when(header.created_at),
                result(game, header),
                options_text(header),
            )
        )
    if len(rows) == 1:
        print("no games")
    else:
        widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
        for row in rows:
            print("  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]))
    if reply.next_page_token:
        print(f"next page: --page-token={reply.next_page_token}")
    waiting = reply.waiting_tables
    print(f"{waiting} table{'s' if waiting != 1 else ''} waiting for players")


def cmd_join(game: Game, args: argparse.Namespace) -> None:
    fields: dict[str, Any] = {"game_id": args.game, "player_name": args.player_name}
    if args.seat is not None:
        fields["seat"] = args.seat
    player = getattr(args, "player_token", None)  # a seat token has nothing to do here
    if not args.player_name and not player:
        sys.exit("join needs --name NAME, or a signed-in player (signin NAME)")
    reply = game.call("JoinGame", player, **fields)
    token = reply.seat_token
    name = reply.game.seats[token.seat].player_name
    print(f"game {reply.game.game_id}: {name} takes seat {token.seat} ({token.name})")
    print(token_line(reply.game, token))
    print("the token is shown only this once: keep it (--token=TOKEN or TABLETOP_TOKEN)")
    print(waiting_for(reply.game))


def cmd_rematch(game: Game, args: argparse.Namespace) -> None:
    reply = game.call("OfferRematch", need_token(args), game_id=args.game)
    header = reply.game
    offered = ", ".join(header.seats[s].player_name or header.seats[s].name
                        for s in header.rematch_offers)  # fmt: skip
    if header.rematch_game_id:
        seat = ""
        new = game.call("GetGame", args.token, game_id=header.rematch_game_id).game
        if new.HasField("viewer"):
            seat = f"; you play seat {new.viewer} ({new.seats[new.viewer].name})"
        print(f"rematch started: game {header.rematch_game_id}{seat}")
    else:
        print(f"rematch offered by {offered}; waiting for the others to accept")


def cmd_leave(game: Game, args: argparse.Namespace) -> None:
    reply = game.call("LeaveGame", need_token(args), game_id=args.game)
    print(f"game {reply.game.game_id}: you left; your seat is open again and its token void")
    print(waiting_for(reply.game))


def cmd_resign(game: Game, args: argparse.Namespace) -> None:
    reply = game.call("Resign", need_token(args), game_id=args.game)
    show_turn(game, reply.turn, reply.game.seats)
    if reply.game.status == FINISHED:
        show_outcome(reply.game)
    else:
        print("the game goes on: the service's bot plays your seat, which cannot win")
