"""Signing in: the player's token the client sends where no seat token is given.

``signin NAME`` signs a guest in through the gateway (PlayersService/SignIn) and keeps
the player's token and refresh token in ``${XDG_CONFIG_HOME:-~/.config}/tabletop/
player.json`` (mode 0600: the refresh token is a secret, like a password). Later
commands send that token, signed in again with the refresh token when it is about to
expire, so the player keeps its id. ``TABLETOP_JWT`` gives a token from a platform's own
identity provider instead (it wins over the file; nothing is written).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import grpc
from tabletop.gateway.v1 import players_pb2, players_pb2_grpc

# A token this close to its expiry is refreshed before it is sent.
REFRESH_AHEAD_SECONDS = 60.0


def player_file() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tabletop" / "player.json"


def _save(reply: players_pb2.SignInResponse) -> dict[str, Any]:
    """Keep a sign-in, readable by this user only, written aside then moved in place."""
    data = {
        "player_id": reply.player_id,
        "player_name": reply.player_name,
        "token": reply.token,
        "expires_at": reply.expires_at.ToNanoseconds() / 1e9,
        "refresh_token": reply.refresh_token,
        "refresh_expires_at": reply.refresh_expires_at.ToNanoseconds() / 1e9,
    }
    path = player_file()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, aside = tempfile.mkstemp(dir=path.parent, prefix=".player-", suffix=".json")
    try:
        with os.fdopen(fd, "w") as handle:  # mkstemp makes it 0600
            json.dump(data, handle)
        os.replace(aside, path)
    except BaseException:
        Path(aside).unlink(missing_ok=True)
        raise
    return data


def _load() -> dict[str, Any] | None:
    path = player_file()
    try:
        data: dict[str, Any] = json.loads(path.read_text())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        sys.exit(f"cannot read {path}: {exc}; sign in again (signin NAME)")
    return data


def sign_in(channel: grpc.Channel, **request: str) -> players_pb2.SignInResponse:
    stub = players_pb2_grpc.PlayersServiceStub(channel)
    reply: players_pb2.SignInResponse = stub.SignIn(
        players_pb2.SignInRequest(**request), timeout=30
    )
    return reply


def player_token(channel: grpc.Channel) -> str | None:
    """The player's token to send: TABLETOP_JWT's, else the signed-in guest's (refreshed
    when it is about to expire), else None."""
    given = os.environ.get("TABLETOP_JWT")
    if given:
        return given
    data = _load()
    if data is None:
        return None
    if float(data.get("expires_at", 0)) - REFRESH_AHEAD_SECONDS > time.time():
        return str(data["token"])
    if float(data.get("refresh_expires_at", 0)) <= time.time():
        sys.exit(f"the sign-in in {player_file()} has expired: sign in again (signin NAME)")
    data = _save(sign_in(channel, refresh_token=str(data["refresh_token"])))
    return str(data["token"])


def cmd_signin(channel: grpc.Channel, args: argparse.Namespace) -> None:
    """Sign a guest in (or, signed in already, again under the same id: --new for a new
    player); print the player's id."""
    known = None if args.new else _load()
    if known is not None and float(known.get("refresh_expires_at", 0)) > time.time():
        reply = sign_in(channel, player_name=args.player_name, refresh_token=known["refresh_token"])
    else:
        reply = sign_in(channel, player_name=args.player_name)
    _save(reply)
    print(f"signed in as {reply.player_name}: player {reply.player_id}")
    print(f"kept in {player_file()} (keep it private: it signs you in)")


def cmd_whoami(channel: grpc.Channel, args: argparse.Namespace) -> None:
    if os.environ.get("TABLETOP_JWT"):
        print("playing with TABLETOP_JWT's token")
        return
    data = _load()
    if data is None:
        print("not signed in (signin NAME)")
        return
    print(f"{data['player_name']}: player {data['player_id']} ({player_file()})")
