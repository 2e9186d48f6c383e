"""Issue 26's judging scenario, as a new user tries it: through a gateway process (Envoy
in front) with reflection alone (``buf curl``: no protos on this side), two guests sign
in, one creates a table with an open seat, the other joins it with only its player's
token, both play from other connections with the same tokens (every ``buf curl`` is a
connection of its own), and a rematch starts with the sides rotated."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from tests.players.stack import players_stack

PLAYERS = "tabletop.gateway.v1.PlayersService"
GAME = "tabletop.channeling.v1.ChannelingService"


class Curl:
    def __init__(self, address: str) -> None:
        buf = shutil.which("buf", path=os.path.dirname(sys.executable))
        assert buf, "buf is installed with the dev dependencies"
        self.common = [buf, "curl", "--protocol", "grpc", "--http2-prior-knowledge"]
        self.url = f"http://{address}"

    def run(self, *words: str) -> str:
        done = subprocess.run([*self.common, *words], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (words, done.stdout, done.stderr)
        return done.stdout

    def call(self, method: str, body: dict, token: str | None = None) -> dict:
        headers = ["-H", f"Authorization: Bearer {token}"] if token else []
        out = self.run(*headers, "-d", json.dumps(body), f"{self.url}/{method}")
        return json.loads(out) if out.strip() else {}


def test_two_guests_play_and_rematch_through_the_gateway_with_reflection_alone(tmp_path):
    with players_stack(tmp_path) as stack:
        curl = Curl(stack.address)
        listed = curl.run("--list-services", curl.url).split()
        assert PLAYERS in listed and GAME in listed

        ada = curl.call(f"{PLAYERS}/SignIn", {"playerName": "Ada"})
        ben = curl.call(f"{PLAYERS}/SignIn", {"playerName": "Ben"})
        tokens = {ada["playerId"]: ada["token"], ben["playerId"]: ben["token"]}

        created = curl.call(
            f"{GAME}/CreateGame",
            {"players": 2, "seats": [{"kind": "SEAT_KIND_RESERVED"}, {"kind": "SEAT_KIND_OPEN"}]},
            ada["token"],
        )
        game_id = created["game"]["gameId"]
        assert created["game"]["seats"][0]["playerId"] == ada["playerId"]
        joined = curl.call(f"{GAME}/JoinGame", {"gameId": game_id}, ben["token"])
        assert joined["game"]["status"] == "GAME_STATUS_IN_PROGRESS"
        seats = [s["playerId"] for s in joined["game"]["seats"]]
        assert seats == [ada["playerId"], ben["playerId"]]

        # Both play, each call a new connection, with the player's token alone.
        played = 0
        while played < 6:
            header = curl.call(f"{GAME}/GetGame", {"gameId": game_id})["game"]
            if header["status"] != "GAME_STATUS_IN_PROGRESS":
                break
            seat = header["toAct"][0]
            token = tokens[seats[seat]]
            listed_moves = curl.call(f"{GAME}/ListMoves", {"gameId": game_id}, token)
            assert listed_moves["game"]["viewer"] == seat
            reply = curl.call(
                f"{GAME}/SubmitMove",
                {"gameId": game_id, "move": listed_moves["moves"][0]},
                token,
            )
            assert reply["game"]["version"] == str(int(header["version"]) + 1)
            played += 1
        assert played >= 2

        curl.call(f"{GAME}/Resign", {"gameId": game_id}, ben["token"])
        offered = curl.call(f"{GAME}/OfferRematch", {"gameId": game_id}, ben["token"])
        assert offered["game"]["rematchOffers"] == [1] and "rematchGameId" not in offered["game"]
        started = curl.call(f"{GAME}/OfferRematch", {"gameId": game_id}, ada["token"])
        rematch_id = started["game"]["rematchGameId"]
        rematch = curl.call(f"{GAME}/GetGame", {"gameId": rematch_id}, ada["token"])["game"]
        # Sides rotated: Ben plays seat 0 now, Ada seat 1.
        assert [s["playerId"] for s in rematch["seats"]] == [ben["playerId"], ada["playerId"]]
        assert rematch["viewer"] == 1 and rematch["status"] == "GAME_STATUS_IN_PROGRESS"
        mine = curl.call(f"{GAME}/ListGames", {"mine": True}, ben["token"])
        assert {g["gameId"] for g in mine["games"]} == {game_id, rematch_id}
