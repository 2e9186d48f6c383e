"""``bot``: random legal moves to the end, for every seat or against the service's bots."""

from __future__ import annotations

import argparse
import random
import sys
import time
from typing import Any

import grpc
from tabletop.common.v1 import table_pb2

from client.game import Game, fewest_players, options, show_state, show_turn
from client.tables import LEVELS

# What the bots set on a game they create unless --option does. Shén's rulebook has no end
# for a position nobody can change any more, which random players reach in about one game
# in 50 to 200 with 4 or more: its bots play under the opt-in round limit (a house rule).
# Res Arcana Duo's rulebook has no end for a game nobody brings to the victory points:
# its bots play under its opt-in round limit too.
BOT_OPTIONS: dict[str, dict[str, Any]] = {
    "shen": {"round_limit": 40},
    "resarcana": {"round_limit": 20},
}


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
        created = game.call("CreateGame", args.key, options=chosen, **seating)
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
