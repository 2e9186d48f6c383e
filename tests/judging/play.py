"""Playing a rated 2-player Channeling game through the gateway by reflection: the
client keeps its own engine in step (it deals the same seeded game and applies each move
it sends, read back from the listed JSON through the codec) so the kit's hard bot can
choose the strong seats' moves; the weak seats' are random among ListMoves' moves."""

from __future__ import annotations

import random
import time
from typing import Any

import grpc
from google.protobuf import json_format
from tabletop.channeling.v1 import channeling_pb2

from services import registry
from services.channeling import codec
from services.kit.bots import levels
from tests.judging.gateway import FORFEIT, RETRIES, Guest, Reflected, retried

ENGINE = registry.by_name("channeling").engine()
# The hard level (ISMCTS) with a short time per decision: still far above random play
# (it won each of 10 seeded games against it while this test was written) and quick.
HARD_MS = 20.0


def engine_move(move: dict[str, Any]) -> Any:
    """A move as ListMoves' JSON shows it, as the engine's value (through the codec)."""
    return codec.move_from_proto(json_format.ParseDict(move, channeling_pb2.Move()))


def create_rated(client: Reflected, host: Guest, seed: int) -> str:
    """A rated table, the host's seat taken, one seat open (CreateGame has no request
    id: a retry after a lost answer may leave a waiting table, never a rated game)."""
    created = retried(lambda: client.call(
        "CreateGame",
        {"players": 2, "seats": [{"kind": "SEAT_KIND_RESERVED"}, {"kind": "SEAT_KIND_OPEN"}],
         "timeControl": FORFEIT, "rated": True, "seed": str(seed)},
        host.token,
    ))  # fmt: skip
    assert created["game"]["rated"] is True
    return created["game"]["gameId"]


def join(client: Reflected, game_id: str, guest: Guest) -> None:
    try:
        retried(lambda: client.call("JoinGame", {"gameId": game_id}, guest.token))
    except grpc.RpcError as error:
        # A retried join whose first try took the seat before its answer was lost.
        if "already holds" not in (error.details() or ""):
            raise


def play_rated(
    client: Reflected, seed: int, seats: list[Guest], strong: set[str], rng: random.Random
) -> str:
    """One rated game between ``seats`` (seat order), to its end; its game id."""
    game_id = create_rated(client, seats[0], seed)
    join(client, game_id, seats[1])
    state = ENGINE.new_game(seed, 2, ENGINE.GAME.options_type())
    seen = 0  # the game's version after the last move this client sent
    while ENGINE.outcome(state) is None:
        seat = ENGINE.to_act(state)[0]
        guest = seats[seat]
        listed = list_moves(client, game_id, guest, seen)
        assert listed["game"].get("toAct", []) == [seat], (listed["game"], seat)
        moves = {engine_move(m): m for m in listed["moves"]}
        assert set(moves) == set(ENGINE.legal_moves(state, seat))  # the client is in step
        if guest.player_id in strong:
            chosen = levels.decide(ENGINE, state, seat, "hard", rng, ms_per_decision=HARD_MS)
        else:
            chosen = engine_move(rng.choice(listed["moves"]))
        version = listed["game"].get("version", "0")
        body = {
            "gameId": game_id, "move": moves[chosen], "expectedVersion": version,
            "requestId": f"{seat}-{version}", "omitView": True,
        }  # fmt: skip
        sent = submit(client, body, guest)
        seen = int(sent["game"]["version"])
        ENGINE.apply(state, seat, chosen)
    return game_id


def submit(client: Reflected, body: dict[str, Any], guest: Guest) -> dict[str, Any]:
    """SubmitMove, again with the same expected version and request id while the answer
    is UNAVAILABLE (a replica died with it) or ABORTED (a replica that has not yet read
    the last move): the API applies it once, and answers a repeat with the first turn."""
    for _ in range(100):
        try:
            return retried(lambda: client.call("SubmitMove", body, guest.token))
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.ABORTED:
                raise
            RETRIES[error.code().name] += 1
            time.sleep(0.05)
    raise AssertionError(f"{body['gameId']}: no replica took the move at {body['expectedVersion']}")


def list_moves(client: Reflected, game_id: str, guest: Guest, seen: int) -> dict[str, Any]:
    """ListMoves at the version this client's last move made, or later, with a seat to
    act: another replica than the one that took the move (or the join) may answer
    before it has read it."""
    for _ in range(200):
        listed = retried(lambda: client.call("ListMoves", {"gameId": game_id}, guest.token))
        caught_up = int(listed["game"].get("version", "0")) >= seen
        if caught_up and listed["game"].get("toAct"):  # the join read, too
            return listed
        time.sleep(0.05)
    raise AssertionError(f"{game_id} stayed behind version {seen}")
