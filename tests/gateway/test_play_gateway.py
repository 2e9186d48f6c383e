"""Play through the gateway, as deployed: a game service process and ``python -m gateway``
(Envoy on the data path by default, or the Python router with
TABLETOP_GATEWAY_DATA_PATH=python), on The Channeling.

- A seeded game played over Play through the gateway ends as it does in process: the same
  turns, the same final view. With Envoy, Play goes to the game's cluster (Envoy's own
  counts say so), not through the Python side; with the Python router, it is relayed.
- The service killed (SIGKILL) with a move in flight: the session ends with the status
  the data path gives (docs/design.md, "Play: a seat's session"); restarted on the same
  store, a new session from the last version seen resends the move with its request_id,
  and it is applied once; nothing acknowledged is lost.
- Each move is admitted by a per-client rate: the service's, of the client the gateway
  names (the gateway's bucket never sees a message of a stream). As deployed (make run,
  deploy/k8s) the services hold the gateway's per-client numbers for that.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import signal
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from client.api import FINISHED, GameClient
from gateway.proxy import binary
from services import registry
from services.kit.status import error_info
from tests.reliability.test_faults import stable_port
from tests.service.test_play import SEED, Session, closing, play, served
from tests.support import Process, running, wait_serving

GAME = registry.by_name("channeling")
needs_envoy = pytest.mark.skipif(binary() is None, reason="no Envoy binary")
DATA_PATHS = [pytest.param("envoy", marks=needs_envoy), pytest.param("python")]
SEATS = 2
ACKNOWLEDGED = 6  # moves answered before the kill


def routes(address: str) -> dict[str, str]:
    """Route only the one game: the other routes empty (their defaults are not running)."""
    return {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES} | {
        f"TABLETOP_ROUTE_{GAME.name.upper()}": address
    }


def service_env(tmp_path: Path, port: int) -> dict[str, str]:
    return {
        "TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/games.db",
        "TABLETOP_PORT": str(port),
        "TABLETOP_ALLOW_SEED": "true",
        "TABLETOP_ACCESS_LOG": "false",
        # As deployed (deploy/k8s): only the gateway reaches the service.
        "TABLETOP_TRUST_FORWARDED_FOR": "true",
    }


@contextlib.contextmanager
def stack(
    tmp_path: Path,
    data_path: str,
    gateway: dict[str, str] | None = None,
    service: dict[str, str] | None = None,
) -> Iterator[tuple[Process, Process, int]]:
    """(the service, the gateway in front of it, the service's port: fixed, for a restart)."""
    port = stable_port()
    env = {**service_env(tmp_path, port), **(service or {})}
    with running(GAME.package, env, tmp_path / "svc.log") as svc:
        wait_serving(svc.address, GAME.service_name)
        env = {
            **routes(svc.address),
            "TABLETOP_GATEWAY_DATA_PATH": data_path,
            "TABLETOP_HEALTH_INTERVAL_SECONDS": "0.2",
            "TABLETOP_ACCESS_LOG": "false",
            **(gateway or {}),
        }
        with running("gateway", env, tmp_path / "gw.log") as gw:
            wait_serving(gw.address, GAME.service_name)
            yield svc, gw, port


async def played(channel: grpc.aio.Channel) -> tuple[list[Any], bytes, Any]:
    """A seeded game played to its end by one session per seat: (the turns, as a
    spectator's history holds them but for their times; the final view's bytes; the
    outcome)."""
    client = GameClient(GAME.name, channel, timeout=30)
    created = await client.create(SEATS, seed=SEED)
    sessions = [
        await Session.open(channel, GAME.name, created.game_id, token) for token in created.tokens
    ]
    with closing(sessions):
        await play(sessions, random.Random(SEED), 0, None)
        for opened in sessions:
            assert await opened.ended() == grpc.StatusCode.OK
    final = (await client.get(created.game_id)).game
    assert final.status == FINISHED
    turns = []
    for turn in await client.history(created.game_id):
        turn.ClearField("applied_at")
        turns.append(turn)
    view = (await client.get(created.game_id)).view.SerializeToString()
    return turns, view, final.outcome


def envoy_stats(gw: Process, pattern: str) -> dict[str, int]:
    """Envoy's counters whose names match ``pattern`` (its admin address is in the
    gateway's serving line)."""
    admin = next(
        json.loads(line)["envoy_admin"]
        for line in gw.lines()
        if line.startswith("{") and json.loads(line).get("event") == "serving"
    )
    url = f"http://{admin}/stats?format=json&filter={pattern}"
    with urllib.request.urlopen(url, timeout=10) as reply:
        stats = json.loads(reply.read())["stats"]
    return {s["name"]: s["value"] for s in stats if "value" in s}


def metric(gw: Process, line_start: str) -> float:
    with urllib.request.urlopen(f"http://127.0.0.1:{gw.metrics_port}/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(line_start + " "):
                return float(line.rsplit(" ", 1)[1])
    return 0.0


PLAY_STARTED = (
    f'grpc_client_started_total{{grpc_method="Play",grpc_service="{GAME.service_name}",'
    'grpc_type="bidi_stream"}'
)


@pytest.mark.parametrize("data_path", DATA_PATHS)
async def test_a_game_over_play_through_the_gateway_ends_as_in_process(tmp_path, data_path):
    async with served(GAME.name) as (_, _, channel):
        expected = await played(channel)
    with stack(tmp_path, data_path) as (_, gw, _):
        async with grpc.aio.insecure_channel(gw.address) as channel:
            assert await played(channel) == expected
        if data_path == "envoy":
            # Envoy counted both sessions on the game's cluster, none on the Python side's.
            play = f"grpc.{GAME.service_name}.Play.total"
            deadline = time.monotonic() + 30  # Envoy counts a stream once it has ended
            while (counted := envoy_stats(gw, r"\.Play\.total$")).get(
                f"cluster.{GAME.name}.{play}"
            ) != SEATS and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            assert counted.get(f"cluster.{GAME.name}.{play}") == SEATS, counted
            assert f"cluster.control.{play}" not in counted, counted
        else:
            assert metric(gw, PLAY_STARTED) == SEATS  # the Python router relayed each


def stopped(pid: int) -> bool:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "T"


@pytest.mark.parametrize("data_path", DATA_PATHS)
async def test_a_service_killed_with_a_move_in_flight_loses_nothing_and_applies_it_once(
    tmp_path, data_path
):
    """The move in flight is sent while the service is paused (SIGSTOP), so no answer can
    have come when SIGKILL lands. Observed ends (docs/design.md): INTERNAL with Envoy on
    the data path (it can only reset the stream), UNAVAILABLE through the Python router.
    The client then does what the contract says: a new session from its last version,
    the unanswered move sent again with its request_id."""
    with stack(tmp_path, data_path) as (svc, gw, port):
        async with grpc.aio.insecure_channel(gw.address) as channel:
            client = GameClient(GAME.name, channel, timeout=30)
            created = await client.create(SEATS, seed=SEED)
            gid = created.game_id
            sessions = [await Session.open(channel, GAME.name, gid, t) for t in created.tokens]
            rng = random.Random(SEED)
            log: list[Any] = []
            with closing(sessions):
                version = await play(sessions, rng, 0, ACKNOWLEDGED, log)
                header = (await sessions[0].at(version)).game
                seat = header.to_act[0]
                mine = await sessions[seat].at(version)
                in_flight = sessions[seat].move(rng.choice(list(mine.moves)), version, "in-flight")
                svc.popen.send_signal(signal.SIGSTOP)
                while not stopped(svc.popen.pid):
                    await asyncio.sleep(0.01)
                answered = len(sessions[seat].answers)
                await sessions[seat].send(in_flight)
                svc.popen.kill()
                svc.popen.wait(30)
                ends = [await opened.ended() for opened in sessions]
                assert len(sessions[seat].answers) == answered  # the move is unanswered
            expected = (
                grpc.StatusCode.INTERNAL if data_path == "envoy" else grpc.StatusCode.UNAVAILABLE
            )
            assert ends == [expected] * SEATS, ends
            if data_path == "python":  # the router's status carries its reason
                reasons = {error_info(opened.error).reason for opened in sessions}
                assert reasons == {"BACKEND_UNAVAILABLE"}
            seen = max(v.game.version for v in sessions[seat].views)
            assert seen == version

            # The service back on its store, where it was; the client resumes.
            env = service_env(tmp_path, port)
            with running(GAME.package, env, tmp_path / "svc-again.log") as again:
                await asyncio.to_thread(wait_serving, again.address, GAME.service_name)
                resumed = await until_open(channel, gid, created.tokens[seat], seen)
                with closing([resumed]):
                    assert resumed.views[0].game.version == seen
                    answer = await resumed.answer(in_flight)
                    assert answer.request_id == "in-flight"
                    assert answer.WhichOneof("result") == "accepted", answer
                    assert answer.accepted.game.version == version + 1
                    # Sent once more (its answer lost too, say): its first turn, once.
                    twice = await resumed.answer(in_flight)
                    assert twice.accepted.turn == answer.accepted.turn
                    # Every acknowledged move is there, as its answer said, and this one once.
                    seen_by = [await client.history(gid, token) for token in created.tokens]
                    for history in seen_by:
                        assert [t.version for t in history] == list(range(1, version + 2))
                    assert seen_by[seat][-1] == answer.accepted.turn
                    for mover, _, acknowledged in log:
                        turn = acknowledged.accepted.turn
                        assert seen_by[mover][turn.version - 1] == turn
                    assert (await client.get(gid)).game.version == version + 1


async def until_open(
    channel: grpc.aio.Channel, game_id: str, token: str, from_version: int
) -> Session:
    """A session from ``from_version``, opened again while the gateway answers UNAVAILABLE
    (until its health checks have seen the restarted backend)."""
    deadline = time.monotonic() + 60
    while True:
        opening = Session(channel, GAME.name, token)
        try:
            await opening.send(opening.watch(game_id, True, from_version))
        except grpc.aio.AioRpcError:
            # The call ended before the write: grpc then reports the write's failure
            # (INTERNAL, "Internal error from Core") in place of the status it ended with.
            opening.close()
            assert time.monotonic() < deadline, "no session opened in 60 s"
            await asyncio.sleep(0.1)
            continue
        try:
            await opening.until(lambda s=opening: s.views, "the first update")
            return opening
        except AssertionError:
            code = await opening.call.code()
            opening.close()
            if code != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


# --- each move admitted by a per-client rate ---------------------------------------------

BURST = 10  # a client address's bucket, hardly refilled during a test (RATE)
RATE = "0.01"
BEYOND = 3  # moves sent past the burst
LIMITED = {"TABLETOP_RATE_PER_CLIENT": RATE, "TABLETOP_BURST_PER_CLIENT": str(BURST)}


async def moves_past_the_burst(
    channel: grpc.aio.Channel, client: GameClient
) -> tuple[list[Any], str]:
    """A session per seat, then BURST + BEYOND moves; returns their answers, and the
    game's id."""
    created = await client.create(SEATS, seed=SEED)
    sessions = [await Session.open(channel, GAME.name, created.game_id, t) for t in created.tokens]
    rng = random.Random(SEED)
    answers: list[Any] = []
    version = 0
    with closing(sessions):
        for _ in range(BURST + BEYOND):
            seat = (await sessions[0].at(version)).game.to_act[0]
            mine = await sessions[seat].at(version)
            move = sessions[seat].move(rng.choice(list(mine.moves)), version, f"r{version}")
            answers.append(await sessions[seat].answer(move))
            version += answers[-1].WhichOneof("result") == "accepted"
    return answers, created.game_id


def get_request(game_id: str) -> Any:
    return GAME.pb2().GetGameRequest(game_id=game_id)


@pytest.mark.parametrize("data_path", DATA_PATHS)
async def test_moves_through_the_gateway_are_admitted_by_the_services_rate_per_client(
    tmp_path, data_path
):
    """The service's bucket of the client the gateway names (x-forwarded-for, trusted as
    deployed) admits each move on Play: past it, RATE_LIMITED answers, the game as it was."""
    with stack(tmp_path, data_path, service=LIMITED) as (svc, gw, _):
        async with grpc.aio.insecure_channel(gw.address) as channel:
            answers, game_id = await moves_past_the_burst(
                channel, GameClient(GAME.name, channel, timeout=30)
            )
        # The game read at the service as another client (its own bucket).
        async with grpc.aio.insecure_channel(svc.address) as direct:
            get = GameClient(GAME.name, direct)._method("GetGame")
            request = get_request(game_id)
            reply = await get(request, metadata=[("x-forwarded-for", "10.9.9.9")], timeout=30)
    results = [a.WhichOneof("result") for a in answers]
    accepted = results.count("accepted")
    # The opening calls took from the bucket too: fewer than BURST moves got through.
    assert results == ["accepted"] * accepted + ["refused"] * (len(results) - accepted)
    assert 0 < accepted <= BURST - 3 and reply.game.version == accepted
    for answer in answers[accepted:]:
        assert answer.refused.reason == "RATE_LIMITED"
        assert answer.refused.metadata["limit"] == "rate_per_client"
        assert int(answer.refused.metadata["retry_after_ms"]) >= 1


def deployed_service_limits() -> list[dict[str, str]]:
    """A game service's per-client settings as each way of deploying it sets them: make
    run (services/run.py) and the manifests (deploy/k8s)."""
    from deploy.k8s import generate
    from services import run

    deployment = next(d for d in generate.game_resources(GAME) if d["kind"] == "Deployment")
    env = deployment["spec"]["template"]["spec"]["containers"][0]["env"]
    manifest = {e["name"]: e["value"] for e in env if "value" in e}
    return [run.behind_gateway({}), manifest]


def gateway_defaults() -> dict[str, str]:
    from gateway.server import settings

    return {s.env: s.default for s in settings()}


def test_as_deployed_the_services_hold_the_gateways_per_client_limits():
    """Envoy sends a Play session straight to its game, and a move is a message on it that
    no proxy counts: as deployed, each service applies the gateway's per-client rate,
    burst and streams itself (keyed by the client the gateway names, trusted), so the
    moves and sessions of one client are held to the gateway's numbers. The test above
    shows the service's bucket refusing moves through the gateway."""
    front = gateway_defaults()
    keys = ("TABLETOP_RATE_PER_CLIENT", "TABLETOP_BURST_PER_CLIENT",
            "TABLETOP_STREAMS_PER_CLIENT", "TABLETOP_AUTH_FAILURES_PER_CLIENT")  # fmt: skip
    assert all(float(front[k]) > 0 for k in keys), front  # the gateway limits each
    for deployed in deployed_service_limits():
        assert {k: deployed.get(k) for k in keys} == {k: front[k] for k in keys}, deployed
        assert deployed.get("TABLETOP_TRUST_FORWARDED_FOR") == "true", deployed


def test_the_deployed_limits_check_sees_a_service_without_them(monkeypatch):
    """The control: with the services' rate left at its default (0, off), as before Play
    needed it, the check above fails."""
    from services import run

    monkeypatch.setattr(
        run, "PER_CLIENT", {k: v for k, v in run.PER_CLIENT.items() if "RATE" not in k}
    )
    with pytest.raises(AssertionError):
        test_as_deployed_the_services_hold_the_gateways_per_client_limits()
