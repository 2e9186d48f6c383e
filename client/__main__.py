"""The command-line client: create, show, list and submit moves, watch, and random bots.

    python -m client games
    python -m client create channeling                 # prints the game id and seat tokens
    python -m client show channeling GAME [--token T]
    python -m client show shrine GAME --token T --as-seat sun  # draw from another seat's side
    python -m client moves channeling GAME --token T
    python -m client play channeling GAME --token T 3  # by number from `moves`
    python -m client play channeling GAME --token T "druid b2-b4"
    python -m client watch channeling GAME [--token T] [--from-version V]
    python -m client history channeling GAME [--token T]
    python -m client bot channeling [GAME --token T]   # random legal moves to the end
    python -m client bot shrine --level hard           # seat 0 at random against a hard bot

Tables (open seats, bots, clocks) and the lobby:

    python -m client create glow --players 3 --open 1 --bots 1 --name Ann --per-decision 60
    python -m client lobby glow [--status waiting] [--players 3] [--page-token T]
    python -m client join glow GAME --name Bob [--seat 1]   # prints the seat's token, once
    python -m client leave glow GAME --token T               # before the start
    python -m client resign glow GAME --token T              # after it
    python -m client play glow GAME --token T --interactive  # one seat, in this terminal

It talks to the gateway (127.0.0.1:50051) unless --target names a service directly;
TABLETOP_TARGET sets the default; --token can come from TABLETOP_TOKEN (--token wins).
It only uses the protos: what it does, any client can. A refused call prints its status,
its reason (ErrorInfo) and its message, and exits 1.
"""

from __future__ import annotations

import argparse
import importlib
import json
import math
import os
import random
import re
import sys
import time
from datetime import UTC, datetime
from typing import Any

import grpc
from tabletop.common.v1 import table_pb2
from tabletop.gateway.v1 import catalog_pb2, catalog_pb2_grpc

from client import render
from client.api import FINISHED, IN_PROGRESS, WAITING, refusal
from client.render.colour import paint
from services import registry


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
    header = response.game
    if header.status == 2:
        print(paint(f"game over: {header.outcome.reason}", "bold"))
        for line in header.outcome.details:
            print(f"  {line}")
        names = [header.seats[w].name for w in header.outcome.winners]
        print(f"  winners: {', '.join(names) or 'nobody'}")


def show_turn(game: Game, turn: Any, seats: Any) -> None:
    who = seats[turn.seat].name if turn.seat < len(seats) else f"seat {turn.seat}"
    what = turn.move_text or "(a secret move)"
    print(paint(f"v{turn.version} {who}: {what}", "bold"))
    for event in turn.events:
        print(f"    {event.text}")


def cmd_games(channel: grpc.Channel, args: argparse.Namespace) -> None:
    reply = catalog_pb2_grpc.CatalogServiceStub(channel).ListGames(catalog_pb2.ListGamesRequest())
    for g in reply.games:
        up = paint("up", "green") if g.up else paint("down", "red")
        waiting = f"{g.tables_waiting} waiting" if g.tables_waiting else ""
        print(
            f"{g.name:11} {g.title:40} {g.min_players}-{g.max_players} players  {up}  "
            f"{g.service}  {waiting}".rstrip()
        )


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


LEVELS = {
    "easy": table_pb2.BOT_LEVEL_EASY,
    "medium": table_pb2.BOT_LEVEL_MEDIUM,
    "hard": table_pb2.BOT_LEVEL_HARD,
}
SEAT_STATES = {
    table_pb2.SEAT_STATE_OPEN: "open",
    table_pb2.SEAT_STATE_TAKEN: "taken",
    table_pb2.SEAT_STATE_BOT: "bot",
    table_pb2.SEAT_STATE_GIVEN_UP: "given up",
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
    reply = game.call("CreateGame", **fields)
    print(f"game {reply.game.game_id}")
    for token in reply.seat_tokens:
        print(f"  seat {token.seat} ({token.name}): {token.token}")
    if table:
        for seat in reply.game.seats:
            if seat.state in (table_pb2.SEAT_STATE_OPEN, table_pb2.SEAT_STATE_BOT):
                who = "open" if seat.state == table_pb2.SEAT_STATE_OPEN else seat.player_name
                print(f"  seat {seat.index} ({seat.name}): {who}")
        print(waiting_for(reply.game))


def need_token(args: argparse.Namespace) -> str:
    if not args.token:
        sys.exit(f"{args.command} acts for a seat: give its --token=TOKEN (or TABLETOP_TOKEN)")
    return args.token


def seat_label(seat: Any) -> str:
    """A seat as the lobby shows it: who plays it, and how it is filled."""
    name = seat.player_name or seat.name
    state = SEAT_STATES.get(seat.state)
    return f"{name} ({state})" if state else name


def when(stamp: Any) -> str:
    return datetime.fromtimestamp(stamp.seconds, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def cmd_lobby(game: Game, args: argparse.Namespace) -> None:
    fields: dict[str, Any] = {"players": args.players, "page_size": args.page_size}
    if args.status is not None:
        fields["status"] = STATUSES[args.status]
    if args.page_token:
        fields["page_token"] = args.page_token
    reply = game.call("ListGames", **fields)
    rows = [("game", "status", "players", "seats", "created")]
    for header in reply.games:
        rows.append(
            (
                header.game_id,
                STATUS_NAMES.get(header.status, "unknown"),
                str(len(header.seats)),
                ", ".join(seat_label(s) for s in header.seats),
                when(header.created_at),
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
    reply = game.call("JoinGame", **fields)
    token = reply.seat_token
    name = reply.game.seats[token.seat].player_name
    print(f"game {reply.game.game_id}: {name} takes seat {token.seat} ({token.name})")
    print(f"  seat {token.seat} ({token.name}): {token.token}")
    print("the token is shown only this once: keep it (--token=TOKEN or TABLETOP_TOKEN)")
    print(waiting_for(reply.game))


def cmd_leave(game: Game, args: argparse.Namespace) -> None:
    reply = game.call("LeaveGame", need_token(args), game_id=args.game)
    print(f"game {reply.game.game_id}: you left; your seat is open again and its token void")
    print(waiting_for(reply.game))


def show_outcome(header: Any) -> None:
    """How a finished game ended, the winners named as the table knows them."""
    print(paint(f"game over: {header.outcome.reason}", "bold"))
    for line in header.outcome.details:
        print(f"  {line}")
    names = [seat_label(header.seats[w]) for w in header.outcome.winners]
    print(f"  winners: {', '.join(names) or 'nobody'}")


def cmd_resign(game: Game, args: argparse.Namespace) -> None:
    reply = game.call("Resign", need_token(args), game_id=args.game)
    show_turn(game, reply.turn, reply.game.seats)
    if reply.game.status == FINISHED:
        show_outcome(reply.game)
    else:
        print("the game goes on: the service's bot plays your seat, which cannot win")


def cmd_show(game: Game, args: argparse.Namespace) -> None:
    show_state(game, game.call("GetGame", args.token, game_id=args.game), args.as_seat)


def move_texts(game: Game, listed: Any) -> list[str]:
    """The listed moves' text forms: the service's labels, or (from a service that sends
    none) the same text drawn here."""
    if len(listed.labels) == len(listed.moves):
        return list(listed.labels)
    return [render.move(game.name, m) for m in listed.moves]


def cmd_moves(game: Game, args: argparse.Namespace) -> None:
    reply = game.call("ListMoves", args.token, game_id=args.game)
    if not reply.moves:
        print("no decision for this seat now")
    for i, text in enumerate(move_texts(game, reply)):
        print(f"{i:4}  {text}")


def chosen_move(listed: Any, texts: list[str], answer: str) -> Any | None:
    """The listed move an answer names: its number (as `moves` numbers them, from 0) or
    its text form; None if it names none."""
    if answer.isdigit() and int(answer) < len(listed.moves):
        return listed.moves[int(answer)]
    if answer in texts:
        return listed.moves[texts.index(answer)]
    return None


def cmd_play(game: Game, args: argparse.Namespace) -> None:
    if args.interactive:
        if args.move is not None:
            sys.exit("play --interactive asks for each move: give none on the command line")
        play_interactive(game, args)
        return
    if args.move is None:
        sys.exit("play takes a move (by number or text), or --interactive")
    listed = game.call("ListMoves", args.token, game_id=args.game)
    texts = move_texts(game, listed)
    chosen = chosen_move(listed, texts, args.move)
    if chosen is None:
        sys.exit(f"{args.move!r} is not one of this seat's {len(texts)} legal moves (see `moves`)")
    reply = game.call(
        "SubmitMove",
        args.token,
        game_id=args.game,
        move=chosen,
        expected_version=listed.game.version,
        request_id=f"cli-{time.time_ns()}",
    )
    show_turn(game, reply.turn, reply.game.seats)
    show_state(game, reply, args.as_seat)


def clock_text(seconds_left: float) -> str:
    """Seconds as m:ss (h:mm:ss from an hour on); what is overdue shows as 0:00."""
    whole = max(0, math.ceil(seconds_left))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


def left(seat: Any, now: float) -> str:
    """The countdown to a seat's deadline ("" for a seat without one)."""
    if not seat.HasField("deadline"):
        return ""
    return f"{clock_text(seat.deadline.ToNanoseconds() / 1e9 - now)} left"


def seat_lines(header: Any, now: float) -> list[str]:
    """Every seat: its rulebook name, who plays it and how, and its clock: the bank left
    (as of the start of its decision) and, for a seat to act, the time to its deadline."""
    lines = []
    for seat in header.seats:
        parts = [f"  {seat.index} {seat.name:<10} {seat_label(seat):<28}"]
        if seat.HasField("bank"):
            parts.append(f"bank {clock_text(seat.bank.ToNanoseconds() / 1e9)}")
        if seat.index in header.to_act:
            parts.append(", ".join(filter(None, ("to act", left(seat, now)))))
        if header.HasField("viewer") and seat.index == header.viewer:
            parts.append("(you)")
        lines.append("  ".join(parts).rstrip())
    return lines


def prompt(text: str) -> str | None:
    """A line from stdin, or None at its end (Ctrl-D)."""
    try:
        return input(text)
    except EOFError:
        return None


def has_decision(header: Any, seat: int) -> bool:
    """Whether ``seat``'s player decides now: the game is on, the seat is to act, and it
    is still the player's (a given-up seat is played by the service's bot)."""
    return (
        header.status == IN_PROGRESS
        and seat in header.to_act
        and header.seats[seat].state != table_pb2.SEAT_STATE_GIVEN_UP
    )


def wait_for_turn(game: Game, game_id: str, token: str, seat: int, seen: int, seats: Any) -> int:
    """Follow the game after version ``seen`` (WatchGame), printing each move, until this
    seat has a decision or the game is over; the last version printed. A stream that
    breaks off (a service draining, a watcher too slow) just ends the wait: the caller
    reads the game again and resumes from what it saw."""
    stream = game.watch(game_id, token, seen)
    try:
        for update in stream:
            if update.game.seats:  # a turn behind the latest carries no seats: keep the last
                seats = update.game.seats
            if update.HasField("turn"):
                show_turn(game, update.turn, seats)
                seen = update.turn.version
            if not update.HasField("view"):
                continue
            header = update.game
            if header.status == FINISHED or has_decision(header, seat):
                return seen
    except grpc.RpcError as error:
        if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED):
            raise
    finally:
        stream.cancel()
    return seen


def catch_up(game: Game, game_id: str, token: str, seen: int, version: int) -> int:
    """Print the moves after ``seen`` up to ``version`` (those made while this seat was
    deciding, or too fast to wait for): the same seat sees every move once."""
    while seen < version:
        reply = game.call("GetHistory", token, game_id=game_id, from_version=seen)
        if not reply.turns:
            break
        for turn in reply.turns:
            if turn.version <= version:
                show_turn(game, turn, reply.game.seats)
        seen = min(reply.turns[-1].version, version)
    return version


def play_interactive(game: Game, args: argparse.Namespace) -> None:
    """One seat in this terminal: wait for its turn, draw the board, the seats and their
    clocks, list the legal moves, read one by number or text, submit it; a refusal is
    shown and the seat asked again. Ends with the outcome, or at the end of stdin."""
    token = need_token(args)
    state = game.call("GetGame", token, game_id=args.game)
    if not state.game.HasField("viewer"):
        sys.exit("play --interactive plays a seat: the token opens none of this game's")
    seat = state.game.viewer
    me = state.game.seats[seat]
    print(f"playing {seat_label(me)} in seat {seat} ({me.name}); Ctrl-D leaves")
    seen = state.game.version  # the moves before this session are history (`history`)
    echo = not sys.stdin.isatty()  # piped answers are echoed, so the transcript reads
    while True:
        header = state.game
        seen = catch_up(game, args.game, token, seen, header.version)
        if header.status == FINISHED:
            show_state(game, state, args.as_seat)
            print("you won" if seat in header.outcome.winners else "you did not win")
            return
        if not has_decision(header, seat):
            now = time.time()
            acting = [
                ", ".join(filter(None, (seat_label(header.seats[s]), left(header.seats[s], now))))
                for s in header.to_act
            ]
            if header.status == WAITING:
                print(waiting_for(header))
            else:
                print(f"waiting for {', '.join(acting) or 'the service'}")
            seen = wait_for_turn(game, args.game, token, seat, seen, header.seats)
            state = game.call("GetGame", token, game_id=args.game)
            continue
        listed = game.call("ListMoves", token, game_id=args.game)
        if listed.game.version != header.version or not listed.moves:
            state = game.call("GetGame", token, game_id=args.game)
            continue  # the game moved on meanwhile (a timeout, say): look again
        side = seat_side(game, args.as_seat, header)
        print(render.board(game.name, state.view, header, as_seat=side))
        for line in seat_lines(listed.game, time.time()):
            print(line)
        texts = move_texts(game, listed)
        for i, text in enumerate(texts):
            print(f"{i:4}  {text}")
        while True:
            answer = prompt(f"v{header.version} your move (number or text): ")
            if answer is None:
                print("\nstdin closed: leaving the game as it is")
                return
            if echo:
                print(answer)
            answer = answer.strip()
            chosen = chosen_move(listed, texts, answer) if answer else None
            if chosen is not None:
                break
            if answer:
                print(f"{answer!r} is none of the moves above (0-{len(texts) - 1}, or a text)")
        try:
            reply = game.call(
                "SubmitMove",
                token,
                game_id=args.game,
                move=chosen,
                expected_version=listed.game.version,
                request_id=f"cli-{time.time_ns()}",
            )
        except grpc.RpcError as error:
            if error.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.NOT_FOUND):
                raise
            print(paint(f"refused: {refusal(error)}", "red"))
        else:
            show_turn(game, reply.turn, reply.game.seats)
            if reply.turn.version == seen + 1:
                seen = reply.turn.version
        state = game.call("GetGame", token, game_id=args.game)


def cmd_watch(game: Game, args: argparse.Namespace) -> None:
    for update in game.watch(args.game, args.token, args.from_version):
        if update.HasField("turn"):
            show_turn(game, update.turn, update.game.seats)
        if update.HasField("view"):
            show_state(game, update, args.as_seat)
            if update.game.status == 2:
                return


def cmd_history(game: Game, args: argparse.Namespace) -> None:
    after = 0
    while True:
        reply = game.call("GetHistory", args.token, game_id=args.game, from_version=after)
        for turn in reply.turns:
            show_turn(game, turn, reply.game.seats)
        if not reply.turns or reply.turns[-1].version >= reply.game.version:
            return
        after = reply.turns[-1].version


# What the bots set on a game they create unless --option does. Shén's rulebook has no end
# for a position nobody can change any more, which random players reach in about one game
# in 50 to 200 with 4 or more: its bots play under the opt-in round limit (a house rule).
BOT_OPTIONS: dict[str, dict[str, Any]] = {"shen": {"round_limit": 40}}


def bot_table(game: Game, args: argparse.Namespace) -> dict[str, Any]:
    """CreateGame's seats for ``bot --level``: seat 0 this client's, every other seat the
    service's bot at that level."""
    players = args.players or fewest_players(game)
    if players < 2:
        sys.exit(f"--level needs a game of 2 or more seats, not {players}")
    bot = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_BOT, bot_level=LEVELS[args.level])
    seats = [table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)] + [bot] * (players - 1)
    return {"players": players, "seats": seats}


def cmd_bot(game: Game, args: argparse.Namespace) -> None:
    """Random legal moves until the end: for one seat (with --token), or every seat of a
    new game (without a game id), created with BOT_OPTIONS unless --option says else.
    With --level the new game's seat 0 is played here and every other seat by the
    service's bot at that level."""
    rng = random.Random(args.bot_seed)
    if args.level is not None and args.game is not None:
        sys.exit("--level creates a new table against the service's bots: give no game id")
    if args.game is None:
        chosen = options(game, args.option)
        for key, value in BOT_OPTIONS.get(game.name, {}).items():
            if not chosen.HasField(key):
                setattr(chosen, key, value)
        seating: dict[str, Any] = {"players": args.players}
        if args.level is not None:
            seating = bot_table(game, args)
        created = game.call("CreateGame", options=chosen, **seating)
        game_id = created.game.game_id
        tokens = {t.seat: t.token for t in created.seat_tokens}
        print(f"game {game_id}")
        if args.level is not None:
            print(
                f"  seat 0 played here at random; seats 1-{len(seating['seats']) - 1}:"
                f" the service's {args.level} bot"
            )
    else:
        if not args.token:
            sys.exit("a bot for an existing game needs its seat's --token")
        game_id = args.game
        tokens = None
    moves_made = 0
    while True:
        if tokens is None:
            state = game.call("GetGame", args.token, game_id=game_id)
            seats = [state.game.viewer] if state.game.viewer in state.game.to_act else []
        else:
            state = game.call("GetGame", game_id=game_id)
            seats = [seat for seat in state.game.to_act if seat in tokens]  # not the bots'
        if state.game.status == 2:
            break
        if not seats:
            time.sleep(args.poll)
            continue
        seat = rng.choice(seats)
        token = tokens[seat] if tokens is not None else args.token
        listed = game.call("ListMoves", token, game_id=game_id)
        if not listed.moves:
            continue
        move = rng.choice(list(listed.moves))
        try:
            reply = game.call(
                "SubmitMove",
                token,
                game_id=game_id,
                move=move,
                expected_version=listed.game.version,
                request_id=f"bot-{seat}-{listed.game.version}",
            )
        except grpc.RpcError as error:
            if error.code() == grpc.StatusCode.ABORTED:
                continue  # someone else moved first; decide again
            raise
        moves_made += 1
        if args.verbose:
            show_turn(game, reply.turn, reply.game.seats)
    show_state(game, state)
    print(f"{moves_made} moves made by this bot")


def dests(parser: argparse.ArgumentParser) -> set[str]:
    return {a.dest for a in parser._actions}


# Game ids are base64url, so one in 64 begins with '-', which argparse would take for an
# option: in the game id's place (right after the game type) such a word is marked for
# parsing, and the mark taken off after.
GAME_ID_MARK = " "
GAME_ID_WORD = re.compile(r"-[A-Za-z0-9_-]+")


def mark_game_id(argv: list[str], commands: set[str], options: set[str]) -> list[str]:
    words = list(argv)
    for i in range(len(words) - 2):
        if words[i] in commands and words[i + 1] in registry.names():
            candidate = words[i + 2]
            if GAME_ID_WORD.fullmatch(candidate) and candidate not in options:
                words[i + 2] = GAME_ID_MARK + candidate
            break
    return words


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m client", description=__doc__.split("\n")[0])
    parser.add_argument(
        "--target",
        default=os.environ.get("TABLETOP_TARGET", f"127.0.0.1:{registry.GATEWAY.port}"),
        help="gateway or service address (default: the local gateway)",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("games", help="the games the gateway routes")

    def game_command(name: str, help_text: str, game_id: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("name", choices=registry.names(), help="game type")
        if game_id:
            p.add_argument("game", help="game id")
        p.add_argument(
            "--token",
            default=os.environ.get("TABLETOP_TOKEN"),
            help="the seat's token (default: TABLETOP_TOKEN)",
        )
        return p

    option_help = "a game option as key=value (repeatable), e.g. --option board=BOARD_ARCHIPELAGO"
    p = game_command("create", "create a game", game_id=False)
    p.add_argument("--players", type=int, default=0, help="0: the fewest the game allows")
    p.add_argument("--option", action="append", default=[], help=option_help)
    p.add_argument("--seed", type=int, default=None, help="only where the service allows it")
    table = p.add_argument_group(
        "a table (any of these: seats open to others, bots, names, a clock; without them "
        "every seat is the caller's and every token is printed)"
    )
    table.add_argument(
        "--open",
        type=int,
        default=0,
        metavar="N",
        help="the last N seats (before any --bots) open for anyone to join",
    )
    table.add_argument(
        "--bots",
        type=int,
        default=0,
        metavar="N",
        help="the last N seats played by the service's bot",
    )
    table.add_argument(
        "--level", choices=list(LEVELS), default=None, help="the bots' level (default medium)"
    )
    table.add_argument(
        "--name",
        dest="player_name",
        metavar="NAME",
        default=None,
        help="your display name on the seats reserved for you",
    )
    table.add_argument(
        "--per-decision",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="time for each decision",
    )
    table.add_argument(
        "--bank",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="each seat's time for the whole game",
    )
    table.add_argument(
        "--increment",
        type=seconds,
        default=None,
        metavar="SECONDS",
        help="added to a seat's bank after each of its moves",
    )
    table.add_argument(
        "--forfeit",
        action="store_true",
        help="a seat out of time forfeits (default: the bot moves for it)",
    )
    p = game_command("lobby", "the games waiting, in progress or finished", game_id=False)
    p.add_argument("--status", choices=sorted(STATUSES), default=None, help="default: every status")
    p.add_argument("--players", type=int, default=0, help="only games of N players (0: any)")
    p.add_argument(
        "--page-size", type=int, default=0, help="games per page (0: the service's default, 20)"
    )
    p.add_argument("--page-token", default="", help="the next page, as the previous one printed it")
    p = game_command("join", "take an open seat; prints its token, once")
    p.add_argument(
        "--name",
        dest="player_name",
        metavar="NAME",
        required=True,
        help="the name other players see",
    )
    p.add_argument(
        "--seat", type=int, default=None, help="the seat to take (default: the first open one)"
    )
    game_command("leave", "give your seat back before the game starts")
    game_command("resign", "give up your seat in a game in progress")
    as_seat_help = (
        "draw the board from this seat's side, by number or name (default: the token's "
        "seat, else the first); only for boards drawn from a side (shrine)"
    )
    p = game_command("show", "show the board")
    p.add_argument("--as-seat", default=None, help=as_seat_help)
    game_command("moves", "list this seat's legal moves")
    p = game_command("play", "submit a move by number or text, or play a seat (--interactive)")
    p.add_argument("move", nargs="?", default=None, help="by number (from `moves`) or text")
    p.add_argument(
        "--interactive",
        action="store_true",
        help="play the token's seat in this terminal: wait for its turn, show the board "
        "and clocks, read each move by number or text (Ctrl-D leaves)",
    )
    p.add_argument("--as-seat", default=None, help=as_seat_help)
    p = game_command("watch", "follow a game")
    p.add_argument(
        "--from-version", type=int, default=None, help="the last version seen: resume after it"
    )
    p.add_argument("--as-seat", default=None, help=as_seat_help)
    game_command("history", "the moves so far")
    p = game_command("bot", "play random legal moves to the end", game_id=False)
    p.add_argument("game", nargs="?", default=None, help="game id (none: a new game, all seats)")
    p.add_argument("--players", type=int, default=0, help="0: the fewest the game allows")
    p.add_argument("--option", action="append", default=[], help=option_help)
    p.add_argument("--bot-seed", type=int, default=None)
    p.add_argument(
        "--level",
        choices=list(LEVELS),
        default=None,
        help="a new table: seat 0 played here at random, every other seat the service's"
        " bot at this level (default: this command plays every seat)",
    )
    p.add_argument("--poll", type=float, default=0.2)
    p.add_argument("-v", "--verbose", action="store_true")

    with_ids = {name for name, p in sub.choices.items() if "game" in dests(p)}
    options = {o for p in sub.choices.values() for a in p._actions for o in a.option_strings}
    words = sys.argv[1:] if argv is None else argv
    args, extra = parser.parse_known_args(mark_game_id(words, with_ids, options))
    if getattr(args, "game", None):
        args.game = args.game.removeprefix(GAME_ID_MARK)
    if args.command == "play" and args.move is None and len(extra) == 1 and extra[0][:2] != "--":
        # An optional positional after an option (play GAME ID --token=T MOVE) is left
        # unmatched by argparse: it is the move, as when the positional was required.
        args.move = extra.pop()
    if extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    channel = grpc.insecure_channel(args.target)
    try:
        if args.command == "games":
            cmd_games(channel, args)
        else:
            globals()[f"cmd_{args.command}"](Game(args.name, channel), args)
    except grpc.RpcError as error:
        sys.exit(refusal(error))
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
