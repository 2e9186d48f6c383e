"""``ratings`` and ``leaderboard``: players' ratings per game and table shape
(docs/ratings.md), and the player's token they and ``match`` send.

    python -m client ratings [GAME] [--player ID]   # yours (a guest signs in) or ID's
    python -m client leaderboard glow [--shape 3p] [--page-size 20] [--page-token T]

A rating is shown as the service shows it: the conservative estimate on a familiar scale
(a newcomer 750, a settled average player about 1500), with "?" while provisional (fewer
than ten rated games in that shape).
"""

from __future__ import annotations

import argparse
from typing import Any

import grpc

from client import players
from client.game import Game
from services import registry


def shown(rating: Any) -> str:
    return f"{rating.shown}{'?' if rating.provisional else ''}"


def player_token(channel: grpc.Channel, args: argparse.Namespace) -> str:
    """The caller's player's token: --player-token, else the CLI's sign-in (TABLETOP_JWT,
    or the guest `signin NAME` keeps), else a new guest signed in now (--name)."""
    if getattr(args, "player_token", None):
        return str(args.player_token)
    found = players.player_token(channel)
    if found is None:
        name = getattr(args, "player_name", None) or "Guest"
        found = str(players._save(players.sign_in(channel, player_name=name))["token"])
    return found


def cmd_ratings(channel: grpc.Channel, args: argparse.Namespace) -> None:
    token = None if args.player else player_token(channel, args)
    for name in [args.name] if args.name else registry.names():
        game = Game(name, channel)
        reply = game.call("GetRatings", token, player_id=args.player or "")
        for r in reply.ratings:
            games = f"{r.games} rated game{'s' if r.games != 1 else ''}"
            print(f"{name}/{r.shape:6} {shown(r):>6}  {games}")


def cmd_leaderboard(game: Game, args: argparse.Namespace) -> None:
    reply = game.call(
        "ListLeaderboard", None, shape=args.shape, page_size=args.page_size,
        page_token=args.page_token,
    )  # fmt: skip
    print(f"{game.name}/{reply.shape}")
    for e in reply.entries:
        print(f"{e.rank:4}. {e.shown:5}  {e.player_name:40} {e.games} games  {e.player_id}")
    if not reply.entries:
        print("nobody has played ten rated games in this shape yet")
    if reply.next_page_token:
        print(f"next page: --page-token {reply.next_page_token}")


def add_commands(sub: Any) -> None:
    """The ratings' commands, on the client's subcommands."""
    p = sub.add_parser("ratings", help="a player's ratings in each game and shape")
    p.add_argument("name", nargs="?", choices=registry.names(), help="one game (default: all)")
    p.add_argument("--player", default="", help="a player id (default: you, signed in)")
    add_player_token(p)
    p = sub.add_parser("leaderboard", help="a game's best established players")
    p.add_argument("name", choices=registry.names(), help="game type")
    p.add_argument("--shape", default="", help="2p, 3p, 2v2... (default: the game's first)")
    p.add_argument("--page-size", type=int, default=0, help="entries per page (0: 20)")
    p.add_argument("--page-token", default="", help="the next page, as printed")


def add_player_token(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--player-token",
        default=None,
        help="your player's token (default: TABLETOP_JWT, else the guest `signin NAME` "
        "keeps, else a new guest signed in now)",
    )
    p.add_argument("--name", dest="player_name", default=None, help="a new guest's name")
