"""The judging run, as a new user would: a real ``python -m gateway`` (Envoy in front)
and a real game service process, two guests, a table one creates and the other joins
with its player token alone, both playing from a second connection, ListMyGames and
WatchMyGames, and a webhook receiver on loopback that gets every your-turn event once
by id although the service is SIGKILLed and restarted mid-game.

The control runs the same game against a service whose events are written outside the
move's transaction (tests/players/outbox_outside.py): the SIGKILL then loses some.
"""

from __future__ import annotations

import json
import os
import queue
import sqlite3
import subprocess
import sys
import threading
import time

import grpc
import pytest
from tabletop.channeling.v1 import channeling_pb2
from tabletop.common.v1 import game_pb2, table_pb2
from tabletop.gateway.v1 import players_pb2, players_pb2_grpc

from services import registry
from services.kit.outbox import webhooks
from tests.players.webhook_receiver import Receiver
from tests.support import ROOT, free_port, start_process

SECRET = "the-platform-and-tabletop-share-this"
CHANNELING = "/tabletop.channeling.v1.ChannelingService/"
PLAYERS_SERVICE = "tabletop.gateway.v1.PlayersService"
MOVES_BEFORE_KILL = 6
MOVES_MOST = 30


def call(channel, method: str, request, response_type, token: str, timeout: float = 20):
    """One call, retried while the service is UNAVAILABLE (restarting), as a client does:
    SubmitMove carries a request id, so a retry never applies a move twice."""
    rpc = channel.unary_unary(
        CHANNELING + method,
        request_serializer=type(request).SerializeToString,
        response_deserializer=response_type.FromString,
    )
    deadline = time.monotonic() + 30
    while True:
        try:
            return rpc(
                request, metadata=(("authorization", f"Bearer {token}"),), timeout=timeout,
                wait_for_ready=True,
            )  # fmt: skip
        except grpc.RpcError as error:
            if error.code() != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def sign_in(channel, name: str) -> players_pb2.SignInResponse:
    stub = players_pb2_grpc.PlayersServiceStub(channel)
    return stub.SignIn(players_pb2.SignInRequest(player_name=name), timeout=20, wait_for_ready=True)


def my_games(channel, token: str) -> players_pb2.ListMyGamesResponse:
    """ListMyGames, asked again (as a client would) while a service just restarted is
    named unavailable."""
    stub = players_pb2_grpc.PlayersServiceStub(channel)
    for _ in range(10):
        reply = stub.ListMyGames(
            players_pb2.ListMyGamesRequest(),
            metadata=(("authorization", f"Bearer {token}"),),
            timeout=20,
        )
        if not reply.unavailable_services:
            break
        time.sleep(0.5)
    return reply


class Follower:
    """WatchMyGames on a thread: every message into a queue."""

    def __init__(self, address: str, token: str) -> None:
        self.channel = grpc.insecure_channel(address)
        self.messages: queue.Queue = queue.Queue()
        stub = players_pb2_grpc.PlayersServiceStub(self.channel)
        self.stream = stub.WatchMyGames(
            players_pb2.WatchMyGamesRequest(), metadata=(("authorization", f"Bearer {token}"),)
        )
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        try:
            for message in self.stream:
                self.messages.put(message)
        except grpc.RpcError as error:
            self.messages.put(error)

    def next(self, timeout: float = 30):
        item = self.messages.get(timeout=timeout)
        if isinstance(item, grpc.RpcError):
            raise AssertionError(f"WatchMyGames ended: {item}")
        return item

    def next_turn(self, timeout: float = 30):
        """The next your-turn event (a game started before it is passed over)."""
        while True:
            event = self.next(timeout).event
            if event.kind != game_pb2.PLAYER_EVENT_KIND_GAME_STARTED:
                assert event.kind == game_pb2.PLAYER_EVENT_KIND_YOUR_TURN, event
                return event

    def close(self) -> None:
        self.stream.cancel()
        self.channel.close()


def start_service(module: str, env: dict, log, port: int = 0):
    return start_process(module, {**env, "TABLETOP_PORT": str(port)}, log, timeout=60)


def newly(before: set[int], header) -> list[int]:
    """The seats the rules gave a decision with this header, as the outbox derives it."""
    if header.status != game_pb2.GAME_STATUS_IN_PROGRESS:
        return []
    return sorted(set(header.to_act) - before)


@pytest.mark.parametrize("module", ["services.channeling", "tests.players.outbox_outside"])
def test_two_guests_my_games_and_every_turn_posted_once_across_a_sigkill(tmp_path, module):
    control = module != "services.channeling"
    receiver = Receiver(answer=lambda n: 503 if n % 4 == 1 else 200).start()  # a flaky one
    gw_metrics = free_port()
    svc_env = {
        "TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/channeling.db",
        "TABLETOP_JWT_JWKS_URL": f"http://127.0.0.1:{gw_metrics}/.well-known/jwks.json",
        "TABLETOP_JWT_ISSUER": "tabletop-guests",
        "TABLETOP_WEBHOOK_URL": receiver.url,
        "TABLETOP_WEBHOOK_SECRET": SECRET,
        "TABLETOP_WEBHOOK_TIMEOUT_SECONDS": "2",
        "TABLETOP_WEBHOOK_RETRY_MAX_SECONDS": "1",
        "TABLETOP_WEBHOOK_LEASE_SECONDS": "4",
        "TABLETOP_PLAYER_EVENTS_POLL_SECONDS": "0.2",
    }
    service = start_service(module, svc_env, tmp_path / "svc.log")
    gw_env = {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES}
    gw_env.update(
        TABLETOP_ROUTE_CHANNELING=service.address,
        TABLETOP_METRICS_PORT=str(gw_metrics),
        TABLETOP_GUEST_SIGNING_KEY_FILE=str(tmp_path / "data" / "guest-key.pem"),
    )
    gateway = start_process("gateway", gw_env, tmp_path / "gw.log", timeout=60)
    followers: list[Follower] = []
    try:
        # Two guests; each plays from a second connection (another device), same token.
        with grpc.insecure_channel(gateway.address) as first:
            alice, bob = sign_in(first, "Alice"), sign_in(first, "Bob")
            created = call(
                first, "CreateGame",
                channeling_pb2.CreateGameRequest(seats=[
                    table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED),
                    table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_OPEN),
                ]),
                channeling_pb2.CreateGameResponse, alice.token,
            )  # fmt: skip
            gid = created.game.game_id
            # Each also has a table waiting for players: ListMyGames must sort.
            for token in (alice.token, bob.token):
                call(first, "CreateGame",
                     channeling_pb2.CreateGameRequest(seats=[
                         table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED),
                         table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_OPEN)]),
                     channeling_pb2.CreateGameResponse, token)  # fmt: skip
        tokens = {alice.player_id: alice.token, bob.player_id: bob.token}
        if not control:
            followers = [
                Follower(gateway.address, alice.token),
                Follower(gateway.address, bob.token),
            ]
            for f in followers:  # the first message marks "from now on"
                assert not f.next().HasField("event")
        expected: set[str] = set()
        labels: list[str] = []
        with grpc.insecure_channel(gateway.address) as second:
            joined = call(second, "JoinGame", channeling_pb2.JoinGameRequest(game_id=gid),
                          channeling_pb2.JoinGameResponse, bob.token)  # fmt: skip
            header = joined.game
            players = {s.index: s.player_id for s in header.seats}
            assert set(players.values()) == set(tokens)
            expected |= {f"channeling:{gid}:{header.version}:your_turn:{s}"
                         for s in newly(set(), header)}  # fmt: skip
            for s in newly(set(), header) if followers else ():
                event = followers[0 if players[s] == alice.player_id else 1].next_turn()
                assert (event.game_id, event.version, event.seat) == (gid, header.version, s)
            played = 0
            while header.status == game_pb2.GAME_STATUS_IN_PROGRESS and played < MOVES_MOST:
                seat = header.to_act[0]
                token = tokens[players[seat]]
                # ListMyGames: the game first for the player to move, its turn said.
                mine = my_games(second, token)
                assert mine.games, mine
                assert mine.games[0].header.game_id == gid and mine.games[0].your_turn
                assert mine.games[0].seat == seat
                assert len(mine.games) == 2 and not mine.unavailable_services
                other = tokens[players[1 - seat]]
                theirs = my_games(second, other)
                assert not next(g for g in theirs.games if g.header.game_id == gid).your_turn
                listed = call(second, "ListMoves", channeling_pb2.ListMovesRequest(game_id=gid),
                              channeling_pb2.ListMovesResponse, token)  # fmt: skip
                labels += list(listed.labels)
                before = set(header.to_act)
                reply = call(
                    second, "SubmitMove",
                    channeling_pb2.SubmitMoveRequest(game_id=gid, move=listed.moves[0],
                                                     omit_view=True, request_id=f"m{played}"),
                    channeling_pb2.SubmitMoveResponse, token,
                )  # fmt: skip
                header = reply.game
                played += 1
                fresh = newly(before, header)
                expected |= {f"channeling:{gid}:{header.version}:your_turn:{s}" for s in fresh}
                if followers:
                    for s in fresh:  # WatchMyGames says "your turn" to that player
                        follower = followers[0 if players[s] == alice.player_id else 1]
                        event = follower.next_turn()
                        assert (event.game_id, event.version, event.seat) == (
                            gid,
                            header.version,
                            s,
                        )
                if played == MOVES_BEFORE_KILL:
                    # Acknowledged, then the service dies at once, posts pending.
                    service.popen.kill()
                    service.popen.wait(10)
                    service = start_service(module, svc_env, tmp_path / "svc2.log", service.port)
        if not control:  # the command line, as a player would follow its games
            listed = subprocess.run(
                [sys.executable, "-m", "client", "--target", gateway.address, "mygames",
                 "--finished"],
                env={**os.environ, "TABLETOP_JWT": bob.token, "HOME": str(tmp_path)},
                cwd=ROOT, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert listed.returncode == 0, listed.stderr
            assert f"channeling {gid} (" in listed.stdout
            assert "waiting for players in channeling" in listed.stdout
        # Every your-turn the game made reaches the receiver; in the control, some never.
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            got = {p.event_id for p in receiver.delivered() if ":your_turn:" in p.event_id}
            if got >= expected:
                break
            time.sleep(0.2)
        got = {p.event_id for p in receiver.delivered() if ":your_turn:" in p.event_id}
        assert played > MOVES_BEFORE_KILL and len(expected) > MOVES_BEFORE_KILL
        if control:
            assert expected - got, "the control lost nothing: the test would not catch a loss"
            return
        assert got == expected
        posted = [p for p in receiver.posts if ":your_turn:" in p.event_id]
        assert {p.event_id for p in posted} == expected  # duplicates only with the same id
        failures = [p for p in receiver.posts if p.status != 200]
        assert failures, "the receiver never refused: retries were not exercised"
        for post in receiver.posts:
            header_value = post.headers["Tabletop-Signature"]
            assert webhooks.verify(SECRET, post.body, header_value)
            body = post.json()
            assert body["eventId"] == post.event_id
            assert (body["playerId"] in tokens and body["gameId"] in (gid,)) or body["gameId"]
            text = post.body.decode()
            for secret in (alice.token, bob.token, alice.refresh_token, bob.refresh_token):
                assert secret not in text
            assert set(body) <= {
                "sequence", "eventId", "kind", "playerId", "gameType", "gameId", "version",
                "seat", "deadline", "bySeat", "rematchGameId", "happenedAt",
            }  # fmt: skip
        # The outbox holds each event once; the receiver got each of those delivered.
        conn = sqlite3.connect(tmp_path / "channeling.db")
        try:
            stored = [r[0] for r in conn.execute(
                "SELECT event_id FROM player_events WHERE kind = 'your_turn'")]  # fmt: skip
        finally:
            conn.close()
        assert sorted(stored) == sorted(expected)
    finally:
        for f in followers:
            f.close()
        gateway.popen.kill()
        gateway.popen.wait(10)
        if service.popen.poll() is None:
            service.popen.kill()
            service.popen.wait(10)
        receiver.stop()
        _ = json  # (bodies are parsed by Post.json)
