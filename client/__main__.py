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

It talks to the gateway (127.0.0.1:50051) unless --target names a service directly;
TABLETOP_TARGET sets the default. It only uses the protos: what it does, any client can.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import random
import sys
import time
from typing import Any

import grpc
from tabletop.gateway.v1 import catalog_pb2, catalog_pb2_grpc

from client import render
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
        print(
            f"{g.name:11} {g.title:40} {g.min_players}-{g.max_players} players  {up}  {g.service}"
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


def cmd_create(game: Game, args: argparse.Namespace) -> None:
    fields: dict[str, Any] = {"players": args.players, "options": options(game, args.option)}
    if args.seed is not None:
        fields["seed"] = args.seed
    reply = game.call("CreateGame", **fields)
    print(f"game {reply.game.game_id}")
    for token in reply.seat_tokens:
        print(f"  seat {token.seat} ({token.name}): {token.token}")


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


def cmd_play(game: Game, args: argparse.Namespace) -> None:
    listed = game.call("ListMoves", args.token, game_id=args.game)
    texts = move_texts(game, listed)
    if args.move.isdigit() and int(args.move) < len(listed.moves):
        chosen = listed.moves[int(args.move)]
    elif args.move in texts:
        chosen = listed.moves[texts.index(args.move)]
    else:
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


def cmd_bot(game: Game, args: argparse.Namespace) -> None:
    """Random legal moves until the end: for one seat (with --token), or every seat of a
    new game (without a game id), created with BOT_OPTIONS unless --option says else."""
    rng = random.Random(args.bot_seed)
    if args.game is None:
        chosen = options(game, args.option)
        for key, value in BOT_OPTIONS.get(game.name, {}).items():
            if not chosen.HasField(key):
                setattr(chosen, key, value)
        created = game.call("CreateGame", players=args.players, options=chosen)
        game_id = created.game.game_id
        tokens = {t.seat: t.token for t in created.seat_tokens}
        print(f"game {game_id}")
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
            seats = list(state.game.to_act)
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
        p.add_argument("--token", default=os.environ.get("TABLETOP_TOKEN"), help="seat token")
        return p

    option_help = "a game option as key=value (repeatable), e.g. --option board=BOARD_ARCHIPELAGO"
    p = game_command("create", "create a game", game_id=False)
    p.add_argument("--players", type=int, default=0, help="0: the fewest the game allows")
    p.add_argument("--option", action="append", default=[], help=option_help)
    p.add_argument("--seed", type=int, default=None, help="only where the service allows it")
    as_seat_help = (
        "draw the board from this seat's side, by number or name (default: the token's "
        "seat, else the first); only for boards drawn from a side (shrine)"
    )
    p = game_command("show", "show the board")
    p.add_argument("--as-seat", default=None, help=as_seat_help)
    game_command("moves", "list this seat's legal moves")
    p = game_command("play", "submit a move by number or text")
    p.add_argument("move")
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
    p.add_argument("--poll", type=float, default=0.2)
    p.add_argument("-v", "--verbose", action="store_true")

    args = parser.parse_args(argv)
    channel = grpc.insecure_channel(args.target)
    try:
        if args.command == "games":
            cmd_games(channel, args)
        else:
            globals()[f"cmd_{args.command}"](Game(args.name, channel), args)
    except grpc.RpcError as error:
        sys.exit(f"{error.code().name}: {error.details()}")
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
