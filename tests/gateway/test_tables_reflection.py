"""Tables as a new user meets them: through the gateway, knowing only what reflection
tells (no generated code), as separate clients that never share a token."""

from __future__ import annotations

import random
import signal
import time
from typing import Any

import grpc
from google.protobuf import json_format, message_factory
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
    ProtoReflectionDescriptorDatabase,
)

from tests.support import running, start_process, wait_serving

# A call's deadline: these tests are about tables, not time. A read of a game waits for a
# bot's search under way on it (docs/design.md), and a bot's first search waits for its
# worker process to start: seconds on a loaded machine (DEADLINE_EXCEEDED at 10 s, a Shén
# GetGame right after a resign handed the seat to the bot, at load 10).
DEADLINE = 60


class ReflectedClient:
    """One client of one game service, its messages built from reflection alone."""

    def __init__(self, address: str, service: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.pool = DescriptorPool(ProtoReflectionDescriptorDatabase(self.channel))
        self.service = self.pool.FindServiceByName(service)

    def call(self, method: str, body: dict[str, Any], token: str | None = None) -> dict[str, Any]:
        found = self.service.FindMethodByName(method)
        request = message_factory.GetMessageClass(found.input_type)
        response = message_factory.GetMessageClass(found.output_type)
        stub = self.channel.unary_unary(
            f"/{self.service.full_name}/{method}",
            request_serializer=request.SerializeToString,
            response_deserializer=response.FromString,
        )
        metadata = (("authorization", f"Bearer {token}"),) if token else None
        reply = stub(json_format.ParseDict(body, request()), metadata=metadata, timeout=DEADLINE)
        return json_format.MessageToDict(reply)

    def close(self) -> None:
        self.channel.close()


def play_out(clients: dict[int, tuple[ReflectedClient, str]], game_id: str, rng) -> dict:
    """Each seat's own client plays random legal moves until the game ends. The game as a
    move's answer left it decides who moves next; GetGame asks after a bot's turn."""
    any_client = next(iter(clients.values()))[0]
    game = None
    for _ in range(20_000):
        if game is None:
            game = any_client.call("GetGame", {"gameId": game_id})["game"]
        if game.get("status") == "GAME_STATUS_FINISHED":
            return game
        to_act = [s for s in game.get("toAct", []) if s in clients]
        game = None
        if not to_act:
            time.sleep(0.02)  # a bot's turn
            continue
        seat = rng.choice(to_act)
        client, token = clients[seat]
        listed = client.call("ListMoves", {"gameId": game_id}, token)
        if not listed.get("moves"):
            continue
        move = rng.choice(listed["moves"])
        try:
            game = client.call(
                "SubmitMove",
                {
                    "gameId": game_id,
                    "move": move,
                    "expectedVersion": listed["game"].get("version", "0"),
                },
                token,
            )["game"]
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.ABORTED:  # a bot moved in between
                raise
    raise AssertionError("the game did not end")


# Bots that decide in milliseconds: these tests are about tables, not strength.
FAST_BOTS = {"TABLETOP_STORE_URL": "memory://", "TABLETOP_BOT_MS_PER_DECISION": "10"}


def stack(tmp_path, *games: str):
    """One service process per game and a gateway routing to them."""
    services = [start_process(f"services.{g}", FAST_BOTS, tmp_path / f"{g}.log") for g in games]
    routes = {
        f"TABLETOP_ROUTE_{g.upper()}": s.address for g, s in zip(games, services, strict=True)
    }
    return services, routes


def test_strangers_fill_a_glow_table_from_the_lobby_and_play_it_out(tmp_path):
    services, routes = stack(tmp_path, "glow")
    try:
        with running("gateway", routes, tmp_path / "gw.log") as gw:
            name = "tabletop.glow.v1.GlowService"
            wait_serving(gw.address, name)
            host = ReflectedClient(gw.address, name)
            created = host.call(
                "CreateGame",
                {"players": 3, "seats": [{"kind": "SEAT_KIND_OPEN"}] * 3},
            )
            game_id = created["game"]["gameId"]
            assert "seatTokens" not in created  # nobody's seat: the host only set the table
            players: dict[int, tuple[ReflectedClient, str]] = {}
            for person in ["Ann", "Bo", "Cy"]:
                lobby = host.call("ListGames", {"status": "GAME_STATUS_WAITING"})
                assert game_id in [g["gameId"] for g in lobby["games"]]
                assert lobby["waitingTables"] == 1
                me = ReflectedClient(gw.address, name)  # a client of its own
                joined = me.call("JoinGame", {"gameId": game_id, "playerName": person})
                seat = joined["seatToken"].get("seat", 0)
                players[seat] = (me, joined["seatToken"]["token"])
                assert joined["game"]["seats"][seat]["playerName"] == person
            assert sorted(players) == [0, 1, 2]
            lobby = host.call("ListGames", {"status": "GAME_STATUS_IN_PROGRESS"})
            (shown,) = [g for g in lobby["games"] if g["gameId"] == game_id]
            assert [s["playerName"] for s in shown["seats"]] == ["Ann", "Bo", "Cy"]
            assert (
                host.call("ListGames", {"status": "GAME_STATUS_WAITING"}).get("waitingTables", 0)
                == 0
            )
            final = play_out(players, game_id, random.Random(1))
            assert final["outcome"]["reason"]
            catalog = gw_catalog(gw.address)
            assert catalog["glow"].get("tablesWaiting", 0) == 0
            for client, _ in players.values():
                client.close()
            host.close()
    finally:
        for s in services:
            s.stop()


def gw_catalog(address: str) -> dict[str, dict]:
    client = ReflectedClient(address, "tabletop.gateway.v1.CatalogService")
    try:
        return {g["name"]: g for g in client.call("ListGames", {})["games"]}
    finally:
        client.close()


def test_a_resigned_shen_seat_is_played_by_the_bot_and_cannot_win(tmp_path):
    services, routes = stack(tmp_path, "shen")
    try:
        with running("gateway", routes, tmp_path / "gw.log") as gw:
            name = "tabletop.shen.v1.ShenService"
            wait_serving(gw.address, name)
            client = ReflectedClient(gw.address, name)
            created = client.call("CreateGame", {"players": 4, "options": {"roundLimit": 40}})
            game_id = created["game"]["gameId"]
            tokens = {t.get("seat", 0): t["token"] for t in created["seatTokens"]}
            resigned = client.call("Resign", {"gameId": game_id}, tokens[1])
            assert resigned["game"]["seats"][1]["state"] == "SEAT_STATE_GIVEN_UP"
            assert "outcome" not in resigned["game"]
            humans = {s: (client, t) for s, t in tokens.items() if s != 1}
            final = play_out(humans, game_id, random.Random(2))
            assert 1 not in final["outcome"].get("winners", [])
            history = client.call("GetHistory", {"gameId": game_id, "pageSize": 1000})
            by_zombie = [
                t for t in history["turns"] if t.get("seat") == 1 and t["moveText"] != "@resign"
            ]
            assert by_zombie
            assert all(any(e["kind"] == "bot_move" for e in t["events"]) for t in by_zombie)
            client.close()
    finally:
        for s in services:
            s.stop()


def test_an_untouched_clocked_game_moves_on_its_own_and_a_restart_fires_once(tmp_path):
    env = {
        "TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/clock.db",
        "TABLETOP_CLOCK_INTERVAL_SECONDS": "0.1",
    }
    name = "tabletop.channeling.v1.ChannelingService"
    service = start_process("services.channeling", env, tmp_path / "one.log")
    client = ReflectedClient(service.address, name)
    created = client.call("CreateGame", {"players": 2, "timeControl": {"perDecision": "1s"}})
    game_id = created["game"]["gameId"]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if int(client.call("GetGame", {"gameId": game_id})["game"].get("version", 0)) >= 2:
            break
        time.sleep(0.1)
    client.close()
    service.popen.send_signal(signal.SIGKILL)
    service.popen.wait()
    killed_at = time.time()
    time.sleep(3.0)  # three deadlines' worth while it is down
    again = start_process("services.channeling", env, tmp_path / "two.log")
    try:
        client = ReflectedClient(again.address, name)
        # Wait for the overdue deadline's move (the restart's first sweep fires it), then
        # until any catch-up moves fired with it would be in the log too. A fixed 0.6 s
        # wait was too short for a loaded restart's first sweep, or long enough for the
        # next deadline's own move, a whole decision (1 s) after the first.
        deadline = time.monotonic() + 60
        while True:
            turns = client.call("GetHistory", {"gameId": game_id, "pageSize": 1000})["turns"]
            after_kill = [t for t in turns if _seconds(t["appliedAt"]) > killed_at]
            if after_kill and time.time() > _seconds(after_kill[0]["appliedAt"]) + BURST:
                break
            assert time.monotonic() < deadline, "the overdue deadline never fired"
            time.sleep(0.1)
        client.close()
    finally:
        again.stop()
    assert all(t["events"][0]["kind"] == "timeout" for t in turns)
    first = _seconds(after_kill[0]["appliedAt"])
    fired = [t for t in after_kill if _seconds(t["appliedAt"]) < first + BURST]
    assert len(fired) == 1, after_kill  # the overdue deadline, once; not one per second down


# Moves fired together by one sweep land within this of each other; the clock's next
# deadline comes a whole decision (1 s) after a move.
BURST = 0.5


def _seconds(stamp: str) -> float:
    from google.protobuf import timestamp_pb2

    ts = timestamp_pb2.Timestamp()
    ts.FromJsonString(stamp)
    return ts.ToNanoseconds() / 1e9
