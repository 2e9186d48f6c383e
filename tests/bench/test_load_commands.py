"""The Locust load test as the README documents it.

- A player refused with RESOURCE_EXHAUSTED waits what the refusal's ErrorInfo says
  (``retry_after_ms``) and sends the same call again: it keeps its game instead of
  creating another at once (a control shows the old behaviour failing the same check).
- Every ``make load`` command of the README (and the one of the bug report) runs,
  shortened, against a real stack (the game services and the gateway as processes, with
  their default limits) and exits 0, with calls made and none failed.
"""

from __future__ import annotations

import asyncio
import csv
import os
import random
import re
import shlex
import subprocess
import time
from pathlib import Path

import grpc
import pytest

import bench.play
from bench.play import THINK_TIME, GamePlayer, ReportingInterceptor, think
from services import registry
from services.kit.limits import Limits
from tests.readme.stack import running_stack
from tests.support import gateway_in_process, service_in_process

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
SHORT = "8s"  # each command's DURATION here: long enough to play, short enough for CI
# The command of the bug report: 8 users through the gateway exceeded its per-client rate.
REPORTED = "make load GAME=channeling TARGET=127.0.0.1:50051 USERS=8 DURATION=20s"


def shell_blocks(text: str) -> list[str]:
    return re.findall(r"^```sh\n(.*?)^```", text, flags=re.S | re.M)


def load_commands() -> list[str]:
    """Every ``make load`` line of the README's shell blocks, as written (comment aside)."""
    found = []
    for block in shell_blocks(README.read_text()):
        for line in block.splitlines():
            if re.match(r"(\w+=\S+ )*make load\b", line):
                found.append(shlex.join(shlex.split(line, comments=True)))
    return found


def test_think_time_is_a_persons_and_spread_around_its_mean():
    assert THINK_TIME >= 1.0  # a person, not a loop
    assert think(2.0, 0.0) == 1.0 and think(2.0, 0.5) == 2.0 and think(2.0, 0.999) < 3.0
    assert think(0.0, 0.7) == 0.0


def play_like_locust(player: GamePlayer, games: int, seconds: float) -> int:
    """What a Locust user does (bench/locustfile.py GameUser.decide, no think time): step,
    and on a failed call go on (the player starts another game). Finished games."""
    finished = 0
    stop = time.monotonic() + seconds
    while finished < games and time.monotonic() < stop:
        try:
            if player.step() is not None:
                finished += 1
        except grpc.RpcError:
            continue
    return finished


async def rate_limited_play(
    monkeypatch, honour: bool, seconds: float
) -> tuple[int, list[dict], list, list]:
    """One channeling player with no think time through a gateway limited to 100 calls a
    second: (games finished, call events, waits advised by refusals, waits made)."""
    events: list[dict] = []
    advised: list[float | None] = []
    waits: list[float] = []
    original = bench.play.retry_after

    def recorded(error):
        advice = original(error) if honour else None
        advised.append(advice)
        return advice

    monkeypatch.setattr(bench.play, "retry_after", recorded)
    limits = Limits(rate_per_client=100, burst_per_client=1)
    async with (
        service_in_process("channeling") as svc,
        gateway_in_process({"channeling": [svc.address]}, limits=limits) as (port, _),
    ):

        def play() -> int:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as plain:
                channel = grpc.intercept_channel(
                    plain, ReportingInterceptor(lambda **event: events.append(event))
                )

                def sleep(seconds: float) -> None:
                    waits.append(seconds)
                    time.sleep(seconds)

                player = GamePlayer("channeling", channel, random.Random(3), sleep=sleep)
                return play_like_locust(player, games=1, seconds=seconds)

        finished = await asyncio.to_thread(play)
    return finished, events, advised, waits


async def test_a_rate_limited_player_waits_as_told_and_keeps_its_game(monkeypatch):
    finished, events, advised, waits = await rate_limited_play(monkeypatch, honour=True, seconds=30)
    refused = [e for e in events if e["context"]["code"] == "RESOURCE_EXHAUSTED"]
    creates = [e for e in events if e["name"].endswith("/CreateGame")]
    assert finished == 1
    assert refused, "the limit was never reached: this run proves nothing"
    assert len(advised) == len(refused) == len(waits)
    for advice, wait in zip(advised, waits, strict=True):
        assert advice is not None and 0 < advice <= 1.0  # from retry_after_ms, at 100/s
        assert advice <= wait <= advice * (1 + bench.play.JITTER)
    # One game created: its refused calls were waited out and sent again, not abandoned.
    assert sum(e["context"]["code"] == "OK" for e in creates) == 1
    assert all(e["context"]["code"] in ("OK", "RESOURCE_EXHAUSTED") for e in events)


async def test_control_a_player_that_does_not_wait_abandons_games_and_creates_more(monkeypatch):
    played = await rate_limited_play(monkeypatch, honour=False, seconds=4)
    finished, events, _advised, waits = played
    creates = [e for e in events if e["name"].endswith("/CreateGame")]
    created = sum(e["context"]["code"] == "OK" for e in creates)
    assert not waits
    assert created > finished  # the bug report's pattern: games left behind, new ones made


# --- the README's commands, shortened ----------------------------------------------------


def test_the_readme_documents_load_commands():
    commands = load_commands()
    assert len(commands) >= 3, commands
    assert any("GAME=all" in c for c in commands)


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    with running_stack(tmp_path_factory.mktemp("stack")) as running:
        yield running


def shortened(command: str, ports: dict[int, int]) -> str:
    """The command with DURATION=SHORT and its TARGET on the port the stack really has."""
    words = []
    for word in shlex.split(command):
        if word.startswith("DURATION="):
            word = f"DURATION={SHORT}"
        elif word.startswith("TARGET="):
            host, _, port = word.removeprefix("TARGET=").rpartition(":")
            word = f"TARGET={host}:{ports.get(int(port), int(port))}"
        words.append(word)
    return shlex.join(words)


@pytest.mark.parametrize("command", [*load_commands(), REPORTED])
def test_a_load_command_as_written_exits_0_with_no_failure(stack, command):
    game = re.search(r"GAME=(\S+)", command)
    label = (game.group(1) if game else "channeling").replace(",", "-")
    results = ROOT / "bench" / "results"
    stats = results / f"load-{label}_stats.csv"
    stats.unlink(missing_ok=True)
    env = {**os.environ}
    if not stack.on_documented_ports:  # the Makefile's default TARGET is the gateway's port
        env["TARGET"] = stack.gateway_address
    run = shortened(command, stack.ports)
    started = time.monotonic()
    done = subprocess.run(
        run, shell=True, cwd=ROOT, env=env, capture_output=True, text=True, timeout=180
    )
    seconds = time.monotonic() - started
    assert done.returncode == 0, f"{run} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    rows = list(csv.DictReader(stats.open()))
    total = next(r for r in rows if r["Name"] == "Aggregated")
    assert int(total["Request Count"]) > 0 and int(total["Failure Count"]) == 0, total
    games = registry.names() if label == "all" else label.split("-")
    for name in games:
        service = registry.by_name(name).service_name.rsplit(".", 1)[-1]
        assert any(r["Name"] == f"{service}/SubmitMove" for r in rows), (name, rows)
    level = re.search(r"TABLETOP_LOAD_LEVEL=(\w+)", command)
    if level:
        check_bot_tables(stack, games, level.group(1))
    print(f"{run}: {total['Request Count']} calls, {seconds:.1f} s")


def check_bot_tables(stack, games: list[str], level: str) -> None:
    """With ``--level`` the users' tables have seat 0 theirs and every other seat the
    service's bot at that level, and the bots moved (without it no seat is a bot's)."""
    from tabletop.common.v1 import table_pb2

    wanted = getattr(table_pb2, f"BOT_LEVEL_{level.upper()}")
    for name in games:
        lobby = _call(stack.gateway_address, name, "ListGames", page_size=100).games
        bot_tables = [
            h
            for h in lobby
            if h.seats[0].state != table_pb2.SEAT_STATE_BOT
            and all(
                s.state == table_pb2.SEAT_STATE_BOT and s.bot_level == wanted for s in h.seats[1:]
            )
        ]
        assert bot_tables, f"{name}: no table with the {level} bot in every other seat"
        moved = {
            turn.seat
            for h in bot_tables
            for turn in _call(
                stack.gateway_address, name, "GetHistory", game_id=h.game_id, page_size=1000
            ).turns
            if any(e.kind == "bot_move" for e in turn.events)
        }
        assert moved and 0 not in moved, f"{name}: bot moves by seats {moved}"


def _call(address: str, game: str, method: str, **fields):
    entry = registry.by_name(game)
    pb2 = entry.pb2()
    with grpc.insecure_channel(address) as channel:
        return channel.unary_unary(
            f"/{entry.service_name}/{method}",
            request_serializer=getattr(pb2, f"{method}Request").SerializeToString,
            response_deserializer=getattr(pb2, f"{method}Response").FromString,
        )(getattr(pb2, f"{method}Request")(**fields), timeout=30)
