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
    python -m client mygames                           # a player's games, your turn first
    python -m client follow                            # a player's turns as they come

Tables (open seats, bots, clocks) and the lobby:

    python -m client create glow --players 3 --open 1 --bots 1 --name Ann --per-decision 60
    python -m client lobby glow [--status waiting] [--players 3] [--page-token T]
    python -m client join glow GAME --name Bob [--seat 1]   # prints the seat's token, once
    python -m client leave glow GAME --token T               # before the start
    python -m client resign glow GAME --token T              # after it
    python -m client rematch glow GAME --token T             # after the end: offer or accept

Players (docs/players.md): sign in once, then play without seat tokens, on any device:

    python -m client signin Ada                  # a guest; prints the player id
    python -m client create glow --open 1        # the reserved seat is Ada's
    python -m client join glow GAME              # as Ada (named by her token)
    python -m client lobby glow --mine           # Ada's games, as her seat sees them
    python -m client rematch glow GAME           # offer (or accept) a rematch
    python -m client play glow GAME --token T --interactive  # one seat, in this terminal

Ratings and matchmaking (a guest signs in through the gateway; docs/ratings.md):

    python -m client match channeling        # wait for a player of your level, then play
    python -m client ratings [GAME] [--player ID]
    python -m client leaderboard glow --shape 3p

It talks to the gateway (127.0.0.1:50051) unless --target names a service directly;
TABLETOP_TARGET sets the default; --token can come from TABLETOP_TOKEN (--token wins).
Without either, a signed-in player's token is sent (TABLETOP_JWT, a provider's token,
else the one `signin` keeps in ~/.config/tabletop/player.json, refreshed as it expires).
Where the service requires application keys, create and bot send --key (or TABLETOP_KEY)
with CreateGame, and nothing else: the key only creates, a seat token plays.
It only uses the protos: what it does, any client can. A refused call prints its status,
its reason (ErrorInfo) and its message, and exits 1.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Callable
from typing import Any

import grpc
from tabletop.gateway.v1 import catalog_pb2, catalog_pb2_grpc

from client import mygames
from client.api import FINISHED, IN_PROGRESS, refusal
from client.bot import cmd_bot
from client.game import Game, chosen_move, move_texts, seat_label, show_state, show_turn
from client.interactive import play_interactive
from client.match import add_command as add_match
from client.match import cmd_match
from client.players import cmd_signin, cmd_whoami, player_token
from client.ratings import add_commands as add_ratings
from client.ratings import cmd_leaderboard, cmd_ratings
from client.render.colour import paint
from client.tables import (
    LEVELS,
    STATUSES,
    cmd_create,
    cmd_join,
    cmd_leave,
    cmd_lobby,
    cmd_rematch,
    cmd_resign,
    seconds,
    waiting_for,
)
from services import registry


def cmd_games(channel: grpc.Channel, args: argparse.Namespace) -> None:
    reply = catalog_pb2_grpc.CatalogServiceStub(channel).ListGames(catalog_pb2.ListGamesRequest())
    for g in reply.games:
        up = paint("up", "green") if g.up else paint("down", "red")
        waiting = f"{g.tables_waiting} waiting" if g.tables_waiting else ""
        print(
            f"{g.name:11} {g.title:40} {g.min_players}-{g.max_players} players  {up}  "
            f"{g.service}  {waiting}".rstrip()
        )


def cmd_show(game: Game, args: argparse.Namespace) -> None:
    show_state(game, game.call("GetGame", args.token, game_id=args.game), args.as_seat)


def cmd_moves(game: Game, args: argparse.Namespace) -> None:
    reply = game.call("ListMoves", args.token, game_id=args.game)
    if not reply.moves:
        print("no decision for this seat now")
    for i, text in enumerate(move_texts(game, reply)):
        print(f"{i:4}  {text}")


def cmd_play(game: Game, args: argparse.Namespace) -> None:
    if args.interactive:
        if args.move is not None:
            sys.exit("play --interactive asks for each move: give none on the command line")
        play_interactive(game, args)
        return
    if args.move is None:
        sys.exit("play takes a move (by number or text), or --interactive")
    listed = game.call("ListMoves", args.token, game_id=args.game)
    if not listed.moves:
        sys.exit(f"{args.move!r} not sent: {no_decision(listed.game)}")
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


def no_decision(header: Any) -> str:
    """Why a seat has nothing to decide now, in one line."""
    if header.status != IN_PROGRESS:
        return waiting_for(header)  # waiting for players, or over
    if not header.HasField("viewer"):
        return "a spectator has no moves: give a seat's --token=TOKEN (or TABLETOP_TOKEN)"
    acting = ", ".join(f"{header.seats[s].name} ({seat_label(header.seats[s])})"
                       for s in header.to_act)  # fmt: skip
    return f"it is not this seat's decision now (to act: {acting or 'the service'})"


def cmd_watch(game: Game, args: argparse.Namespace) -> None:
    # Turns behind the game's latest version come without the seats: name them from the
    # game as it is, by their rulebook names, as `history` does.
    seats = game.call("GetGame", args.token, game_id=args.game).game.seats
    for update in game.watch(args.game, args.token, args.from_version):
        if update.game.seats:
            seats = update.game.seats
        if update.HasField("turn"):
            show_turn(game, update.turn, seats)
        if update.HasField("view"):
            show_state(game, update, args.as_seat)
            if update.game.status == FINISHED:
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


# Every command but ``games`` (which needs no game type), by name.
COMMANDS: dict[str, Callable[[Game, argparse.Namespace], None]] = {
    "create": cmd_create,
    "lobby": cmd_lobby,
    "join": cmd_join,
    "leave": cmd_leave,
    "resign": cmd_resign,
    "show": cmd_show,
    "moves": cmd_moves,
    "play": cmd_play,
    "watch": cmd_watch,
    "history": cmd_history,
    "bot": cmd_bot,
    "leaderboard": cmd_leaderboard,
    "match": cmd_match,
    "rematch": cmd_rematch,
}
# Commands that send the signed-in player's token where no seat token is given.
AS_PLAYER = {c for c in COMMANDS if c not in ("bot", "leaderboard", "match")}


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


# Tokens are opaque base64url too: "--token -x..." would make argparse take the value for
# an option, so such a value is joined to its option ("--token=-x...") before parsing.
OPAQUE_OPTIONS = frozenset({"--token", "--page-token", "--player-token"})


def join_opaque_values(argv: list[str], options: set[str]) -> list[str]:
    """``argv`` with each opaque option's value that begins with '-' (and is no option
    of ours) joined to it."""
    words: list[str] = []
    i = 0
    while i < len(argv):
        word = argv[i]
        value = argv[i + 1] if i + 1 < len(argv) else ""
        if word in OPAQUE_OPTIONS and value.startswith("-") and value not in options:
            words.append(f"{word}={value}")
            i += 2
            continue
        words.append(word)
        i += 1
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
    mygames.add_commands(sub)  # a player's games and events (client/mygames.py)
    p = sub.add_parser("signin", help="sign in as a guest player; prints the player id")
    p.add_argument("player_name", metavar="NAME", help="the name other players see")
    p.add_argument("--new", action="store_true", help="a new player, not the one signed in")
    sub.add_parser("whoami", help="the player signed in")

    def game_command(name: str, help_text: str, game_id: bool = True) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text)
        p.add_argument("name", choices=registry.names(), help="game type")
        if game_id:
            p.add_argument("game", help="game id")
        p.add_argument(
            "--token",
            default=os.environ.get("TABLETOP_TOKEN"),
            help="the seat's token (default: TABLETOP_TOKEN, else the signed-in player's)",
        )
        return p

    option_help = "a game option as key=value (repeatable), e.g. --option board=BOARD_ARCHIPELAGO"
    key_help = "the application key CreateGame needs where keys are set (default: TABLETOP_KEY)"
    p = game_command("create", "create a game", game_id=False)
    p.add_argument("--key", default=os.environ.get("TABLETOP_KEY"), help=key_help)
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
    p.add_argument("--mine", action="store_true", help="only the signed-in player's games")
    p = game_command("join", "take an open seat; prints its token, once")
    p.add_argument(
        "--name",
        dest="player_name",
        metavar="NAME",
        default="",
        help="the name other players see (a signed-in player: its own by default)",
    )
    p.add_argument(
        "--seat", type=int, default=None, help="the seat to take (default: the first open one)"
    )
    game_command("leave", "give your seat back before the game starts")
    game_command("resign", "give up your seat in a game in progress")
    game_command("rematch", "offer (or accept) a rematch of a finished game")
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
    p.add_argument("--key", default=os.environ.get("TABLETOP_KEY"), help=key_help)
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
    add_ratings(sub)
    add_match(sub)

    with_ids = {name for name, p in sub.choices.items() if "game" in dests(p)}
    options = {o for p in sub.choices.values() for a in p._actions for o in a.option_strings}
    words = join_opaque_values(sys.argv[1:] if argv is None else argv, options | {"-h"})
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
        elif args.command in mygames.COMMANDS:
            mygames.COMMANDS[args.command](channel, args)
        elif args.command == "ratings":
            cmd_ratings(channel, args)
        elif args.command == "signin":
            cmd_signin(channel, args)
        elif args.command == "whoami":
            cmd_whoami(channel, args)
        else:
            # The signed-in player's token, sent where no seat token is given (and by
            # create, where no application key is).
            args.player_token = player_token(channel) if args.command in AS_PLAYER else None
            if not getattr(args, "token", None):  # leaderboard and match take none
                args.token = args.player_token
            COMMANDS[args.command](Game(args.name, channel), args)
        sys.stdout.flush()  # here, where a reader gone away is caught below
    except grpc.RpcError as error:
        sys.exit(refusal(error))
    except KeyboardInterrupt:
        pass
    except BrokenPipeError:
        # The reader left (`client ... | head`): stop quietly, as a filter does. Python
        # would flush stdout again at exit and report that failure too: point it at
        # /dev/null first.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)


if __name__ == "__main__":
    main()
