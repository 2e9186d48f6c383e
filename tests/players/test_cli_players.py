"""The command-line client as players use it, each command a ``python -m client``
process against a served system (a gateway process with Envoy, The Channeling as a
process trusting the gateway's guests): sign in, create and join without seat tokens,
list my games, a rematch, the kept sign-in refreshed once expired, TABLETOP_JWT."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import grpc
from tabletop.common.v1 import table_pb2

from client.api import FINISHED, GameClient
from tests.players.stack import players_stack
from tests.support import ROOT

GAME_LINE = re.compile(r"^game (\S+)", re.M)
PLAYER_LINE = re.compile(r"player (guest-\S+)")


def cli(target: str, home: Path, *words: str, env: dict[str, str] | None = None) -> str:
    full = {
        **os.environ,
        "TABLETOP_TARGET": target,
        "XDG_CONFIG_HOME": str(home),
        "NO_COLOR": "1",
        **(env or {}),
    }
    full.pop("TABLETOP_TOKEN", None)
    if not (env and "TABLETOP_JWT" in env):
        full.pop("TABLETOP_JWT", None)
    done = subprocess.run(
        [sys.executable, "-m", "client", *words],
        cwd=ROOT,
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, (words, done.stdout, done.stderr)
    return done.stdout


def kept(home: Path) -> dict:
    return json.loads((home / "tabletop" / "player.json").read_text())


async def test_two_players_sign_in_create_join_play_and_rematch_with_the_cli(tmp_path):
    ada_home, ben_home = tmp_path / "ada", tmp_path / "ben"
    with players_stack(tmp_path) as stack:
        target = stack.address
        said = cli(target, ada_home, "signin", "Ada")
        ada_id = PLAYER_LINE.search(said).group(1)
        path = ada_home / "tabletop" / "player.json"
        assert oct(path.stat().st_mode & 0o777) == "0o600"
        assert kept(ada_home)["player_id"] == ada_id and kept(ada_home)["refresh_token"]
        ben_id = PLAYER_LINE.search(cli(target, ben_home, "signin", "Ben")).group(1)
        assert ben_id != ada_id

        game_id = GAME_LINE.search(
            cli(target, ada_home, "create", "channeling", "--open", "1")
        ).group(1)
        joined = cli(target, ben_home, "join", "channeling", game_id)
        assert "Ben takes seat 1" in joined

        async with grpc.aio.insecure_channel(target) as channel:
            client = GameClient("channeling", channel)
            header = (await client.get(game_id)).game
            assert [s.player_id for s in header.seats] == [ada_id, ben_id]

            mine = cli(target, ada_home, "lobby", "channeling", "--mine")
            assert game_id in mine
            to_act = header.to_act[0]
            home = (ada_home, ben_home)[to_act]
            assert "your turn" in cli(target, home, "lobby", "channeling", "--mine")
            cli(target, home, "play", "channeling", game_id, "0")
            assert (await client.get(game_id)).game.version == header.version + 1

            cli(target, ben_home, "resign", "channeling", game_id)
            assert (await client.get(game_id)).game.status == FINISHED
            assert "waiting for the others" in cli(
                target, ada_home, "rematch", "channeling", game_id
            )
            started = cli(target, ben_home, "rematch", "channeling", game_id)
            rematch_id = re.search(r"rematch started: game (\S+); you play seat 0", started).group(
                1
            )
            new = (await client.get(rematch_id)).game
            assert [s.player_id for s in new.seats] == [ben_id, ada_id]
            assert new.seats[0].state == table_pb2.SEAT_STATE_TAKEN

        # An expired token is refreshed with the kept refresh token: the same player.
        data = kept(ada_home)
        data["expires_at"] = time.time() - 5
        path.write_text(json.dumps(data))
        assert rematch_id in cli(target, ada_home, "lobby", "channeling", "--mine")
        again = kept(ada_home)
        assert again["player_id"] == ada_id and again["token"] != data["token"]
        assert oct(path.stat().st_mode & 0o777) == "0o600"

        # A provider's token in TABLETOP_JWT, and no sign-in kept: the same as Ben.
        empty = tmp_path / "nobody"
        listed = cli(
            target,
            empty,
            "lobby",
            "channeling",
            "--mine",
            env={"TABLETOP_JWT": kept(ben_home)["token"]},
        )
        assert game_id in listed and rematch_id in listed
        assert not (empty / "tabletop").exists()
