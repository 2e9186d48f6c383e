"""``match GAME``: wait in a pool (FindMatch) for players of your level, then play the
seat you are given in this terminal, as ``play --interactive`` does (docs/ratings.md).

    python -m client match channeling                       # rated, 5 minutes a decision
    python -m client match glow --shape 3p --casual --per-decision 60
    python -m client match shrine --bots-after 30 --level hard   # bots if nobody comes

It signs in as a guest through the gateway (or sends --player-token); the player's token
then acts for its seat.
"""

from __future__ import annotations

import argparse
from typing import Any

from google.protobuf import duration_pb2
from tabletop.common.v1 import table_pb2

from client.game import Game
from client.interactive import play_interactive
from client.ratings import add_player_token, player_token
from client.tables import LEVELS, seconds
from services import registry


def request_of(game: Game, args: argparse.Namespace) -> Any:
    clock = table_pb2.TimeControl(
        per_decision=duration_pb2.Duration(seconds=round(args.per_decision)),
        on_timeout=table_pb2.TIMEOUT_ACTION_FORFEIT,
    )
    request = game.pb2.FindMatchRequest(shape=args.shape, rated=not args.casual, time_control=clock)
    if args.bots_after is not None:
        request.bots_after.FromNanoseconds(int(args.bots_after * 1e9))
        request.bot_level = LEVELS[args.level or "medium"]
    return request


def cmd_match(game: Game, args: argparse.Namespace) -> None:
    token = player_token(game.channel, args)
    metadata = [("authorization", f"Bearer {token}")]
    found = None
    for message in game.stub.FindMatch(request_of(game, args), metadata=metadata):
        if message.HasField("waiting"):
            w = message.waiting
            print(
                f"waiting: {w.players_waiting} in this pool, {w.waited.seconds} s so far, "
                f"within {w.window_points} points",
                flush=True,
            )
        else:
            found = message.found
            break
    if found is None:
        raise SystemExit("the pool closed without a match")
    seat = found.game.seats[found.seat]
    rated = "rated" if found.rated else "casual"
    print(f"matched: game {found.game_id}, you play {seat.name} (seat {found.seat}), {rated}")
    if args.no_play:
        return
    args.game, args.token, args.as_seat = found.game_id, token, None
    play_interactive(game, args)


def add_command(sub: Any) -> None:
    p = sub.add_parser("match", help="wait for players of your level, then play")
    p.add_argument("name", choices=registry.names(), help="game type")
    p.add_argument("--shape", default="", help="2p, 3p, 2v2... (default: the game's first)")
    p.add_argument("--casual", action="store_true", help="not rated")
    p.add_argument(
        "--per-decision", type=seconds, default=300.0, metavar="SECONDS",
        help="the table's time for each decision (default 300); out of time forfeits",
    )  # fmt: skip
    p.add_argument("--bots-after", type=seconds, default=None, metavar="SECONDS")
    p.add_argument("--level", choices=list(LEVELS), default=None, help="the bots' level")
    p.add_argument("--no-play", action="store_true", help="print the match and stop")
    add_player_token(p)
