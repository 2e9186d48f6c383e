"""The command-line client's table commands, run as a person runs them: ``python -m
client ...`` as a process, through a gateway in front of Glow and The Channeling (each a
process of its own). What the client prints is checked against what the services say
(GetGame, GetHistory over gRPC), not against itself.
"""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grpc
import pytest
from tabletop.common.v1 import game_pb2, table_pb2

from client.api import bearer
from services import registry
from tests.support import ROOT, Process, start_process, wait_serving

GAMES = ("glow", "channeling")
TOKEN_LINE = re.compile(r"^  seat (\d+) \(([^)]*)\): (\S+)$", re.M)
ANSI = re.compile(r"\033\[[0-9;]*m")


@dataclass
class Stack:
    gateway: Process
    services: list[Process]


@contextlib.contextmanager
def gateway_stack(logs: Path, service_env: dict[str, str]) -> Iterator[Stack]:
    """Each game of GAMES as a process with ``service_env``, and a gateway before them."""
    started: list[Process] = []
    try:
        routes = {}
        for name in GAMES:
            env = {"TABLETOP_STORE_URL": "memory://", "TABLETOP_ACCESS_LOG": "false", **service_env}
            process = start_process(f"services.{name}", env, logs / f"{name}.log")
            started.append(process)
            routes[f"TABLETOP_ROUTE_{name.upper()}"] = process.address
        gateway = start_process(
            "gateway", {"TABLETOP_ACCESS_LOG": "false", **routes}, logs / "gw.log"
        )
        started.append(gateway)
        for name in GAMES:
            wait_serving(gateway.address, registry.by_name(name).service_name, timeout=30)
        yield Stack(gateway, started[:-1])
    finally:
        for process in reversed(started):
            if process.popen.poll() is None:
                process.popen.kill()
                process.popen.wait(10)


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[Stack]:
    # Bots decide fast: these are tests, not play.
    with gateway_stack(
        tmp_path_factory.mktemp("cli-tables"), {"TABLETOP_BOT_MS_PER_DECISION": "20"}
    ) as running:
        yield running


def cli(
    stack: Stack,
    *argv: str,
    token: str | None = None,
    stdin: str = "",
    timeout: float = 60,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess:
    """``python -m client`` through the gateway; ``token`` goes in TABLETOP_TOKEN, ``env``
    adds to the environment."""
    environ = {k: v for k, v in os.environ.items() if k not in ("TABLETOP_TOKEN", "TABLETOP_KEY")}
    environ["TABLETOP_TARGET"] = stack.gateway.address
    if token is not None:
        environ["TABLETOP_TOKEN"] = token
    environ.update(env or {})
    done = subprocess.run(
        [sys.executable, "-m", "client", *argv],
        cwd=ROOT,
        env=environ,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    done.stdout = ANSI.sub("", done.stdout)
    return done


def ok(done: subprocess.CompletedProcess) -> str:
    assert done.returncode == 0, f"exited {done.returncode}:\n{done.stderr}\n{done.stdout[-3000:]}"
    return done.stdout


def refused(done: subprocess.CompletedProcess, code: str, reason: str) -> None:
    """The command failed, saying the status and the reason (ErrorInfo) on stderr."""
    assert done.returncode != 0, done.stdout
    assert f"{code} {reason}: " in done.stderr, done.stderr


def rpc(stack: Stack, game: str, method: str, token: str | None = None, **fields: Any) -> Any:
    """One call straight through the gateway, to check what the client printed."""
    entry = registry.by_name(game)
    pb2 = entry.pb2()
    with grpc.insecure_channel(stack.gateway.address) as channel:
        call = channel.unary_unary(
            f"/{entry.service_name}/{method}",
            request_serializer=getattr(pb2, f"{method}Request").SerializeToString,
            response_deserializer=getattr(pb2, f"{method}Response").FromString,
        )
        return call(getattr(pb2, f"{method}Request")(**fields), metadata=bearer(token), timeout=30)


def created(stdout: str) -> tuple[str, dict[int, str]]:
    """The game id and the seat tokens ``create`` (or ``join``) printed."""
    game_id = re.search(r"^game (\S+?):?(?: |$)", stdout, re.M).group(1)
    return game_id, {int(s): t for s, _, t in TOKEN_LINE.findall(stdout) if t not in ("open",)}


def lobby_row(stdout: str, game_id: str) -> str | None:
    return next((ln for ln in stdout.splitlines() if ln.startswith(game_id)), None)


def test_without_table_options_create_is_as_before(stack):
    out = ok(cli(stack, "create", "glow", "--players", "3"))
    game_id, tokens = created(out)
    assert sorted(tokens) == [0, 1, 2] and len(out.splitlines()) == 4
    header = rpc(stack, "glow", "GetGame", game_id=game_id).game
    assert header.status == game_pb2.GAME_STATUS_IN_PROGRESS
    assert not header.HasField("time_control")
    for seat, token in tokens.items():  # each printed token opens its own seat
        assert rpc(stack, "glow", "GetGame", token, game_id=game_id).game.viewer == seat


def test_an_open_table_fills_up_in_the_lobby_and_a_player_resigns(stack):
    out = ok(cli(stack, "create", "glow", "--players", "3", "--open", "2", "--name", "Ann"))
    game_id, tokens = created(out)
    assert list(tokens) == [0], "only the reserved seat's token is printed"
    assert "waiting for 2 more players to join" in out

    lobby = ok(cli(stack, "lobby", "glow", "--status", "waiting"))
    row = lobby_row(lobby, game_id)
    assert row is not None and "waiting" in row
    assert "Ann (taken), Player 2 (open), Player 3 (open)" in row
    waiting = rpc(stack, "glow", "ListGames").waiting_tables
    assert f"{waiting} table{'s' if waiting != 1 else ''} waiting for players" in lobby
    games = ok(cli(stack, "games")).splitlines()
    assert next(ln for ln in games if ln.startswith("glow ")).endswith(f"  {waiting} waiting")

    bob = ok(cli(stack, "join", "glow", game_id, "--name", "Bob", "--seat", "2"))
    assert "Bob takes seat 2 (Player 3)" in bob and "shown only this once" in bob
    cy = ok(cli(stack, "join", "glow", game_id, "--name", "Cy"))
    assert "Cy takes seat 1 (Player 2)" in cy and "the game has started" in cy
    tokens |= created(bob)[1] | created(cy)[1]
    header = rpc(stack, "glow", "GetGame", game_id=game_id).game
    assert [s.player_name for s in header.seats] == ["Ann", "Cy", "Bob"]
    assert header.status == game_pb2.GAME_STATUS_IN_PROGRESS
    for seat, token in tokens.items():
        assert rpc(stack, "glow", "GetGame", token, game_id=game_id).game.viewer == seat

    assert lobby_row(ok(cli(stack, "lobby", "glow", "--status", "waiting")), game_id) is None
    row = lobby_row(ok(cli(stack, "lobby", "glow", "--status", "in_progress")), game_id)
    assert (
        row is not None and "in progress" in row and "Ann (taken), Cy (taken), Bob (taken)" in row
    )

    # A seat that is taken, and a seat number beyond the table: refused, nothing changed.
    refused(
        cli(stack, "join", "glow", game_id, "--name", "Dee", "--seat", "1"),
        "FAILED_PRECONDITION",
        "SEAT_NOT_OPEN",
    )
    version = rpc(stack, "glow", "GetGame", game_id=game_id).game.version

    # Cy resigns with the token from TABLETOP_TOKEN; a three-seat table plays on.
    resigned = ok(cli(stack, "resign", "glow", game_id, token=tokens[1]))
    assert "Cy resigned" in resigned and "the game goes on" in resigned
    header = rpc(stack, "glow", "GetGame", game_id=game_id).game
    assert header.seats[1].state == table_pb2.SEAT_STATE_GIVEN_UP
    assert header.version > version
    row = lobby_row(ok(cli(stack, "lobby", "glow", "--status", "in_progress")), game_id)
    assert "Cy (given up)" in row
    refused(
        cli(stack, "resign", "glow", game_id, token=tokens[1]),
        "FAILED_PRECONDITION",
        "ALREADY_GIVEN_UP",
    )
    # --token wins over TABLETOP_TOKEN: Ann's token on the command line, Cy's in the env.
    assert "Ann resigned" in ok(
        cli(stack, "resign", "glow", game_id, f"--token={tokens[0]}", token=tokens[1])
    )


def test_without_a_token_resign_says_where_one_comes_from(stack):
    """Control for TABLETOP_TOKEN: with neither it nor --token, nothing is sent."""
    out = ok(cli(stack, "create", "channeling"))
    game_id, _ = created(out)
    done = cli(stack, "resign", "channeling", game_id)
    assert done.returncode != 0 and "TABLETOP_TOKEN" in done.stderr
    assert rpc(stack, "channeling", "GetGame", game_id=game_id).game.version == 0


def test_a_waiting_seat_can_be_left_and_taken_again(stack):
    game_id, _ = created(ok(cli(stack, "create", "channeling", "--open", "1")))
    joined = ok(cli(stack, "join", "channeling", game_id, "--name", "Bob"))
    assert "the game has started" in joined
    refused(
        cli(stack, "leave", "channeling", game_id, token=created(joined)[1][1]),
        "FAILED_PRECONDITION",
        "GAME_STARTED",
    )
    game_id, _ = created(ok(cli(stack, "create", "glow", "--players", "3", "--open", "2")))
    joined = created(ok(cli(stack, "join", "glow", game_id, "--name", "Bob")))[1]
    left = ok(cli(stack, "leave", "glow", game_id, token=joined[1]))
    assert "waiting for 2 more players" in left
    header = rpc(stack, "glow", "GetGame", game_id=game_id).game
    assert header.seats[1].state == table_pb2.SEAT_STATE_OPEN
    refused(cli(stack, "show", "glow", game_id, token=joined[1]), "UNAUTHENTICATED", "BAD_TOKEN")
    again = ok(cli(stack, "join", "glow", game_id, "--name", "Dee", "--seat", "1"))
    assert "Dee takes seat 1 (Player 2)" in again
    assert rpc(stack, "glow", "GetGame", game_id=game_id).game.seats[1].player_name == "Dee"


def test_bad_table_options_are_refused_with_their_reason(stack):
    done = cli(stack, "create", "glow", "--players", "3", "--open", "2", "--bots", "2")
    assert done.returncode != 0 and "the game has 3 seats" in done.stderr
    refused(
        cli(stack, "create", "glow", "--open", "1", "--per-decision", "1e12"),
        "INVALID_ARGUMENT",
        "BAD_OPTIONS",
    )
    refused(
        cli(stack, "create", "glow", "--open", "1", "--forfeit"), "INVALID_ARGUMENT", "BAD_OPTIONS"
    )
    refused(
        cli(stack, "join", "glow", "no-such-game", "--name", "Bob"), "NOT_FOUND", "GAME_NOT_FOUND"
    )
    refused(
        cli(stack, "lobby", "glow", "--page-token", "forged.token"),
        "INVALID_ARGUMENT",
        "BAD_PAGE_TOKEN",
    )


def test_the_lobby_pages_with_the_token_it_prints(stack):
    for _ in range(3):
        ok(cli(stack, "create", "channeling", "--open", "1"))
    first = ok(cli(stack, "lobby", "channeling", "--status", "waiting", "--page-size", "2"))
    token = re.search(r"^next page: --page-token=(\S+)$", first, re.M).group(1)
    second = ok(
        cli(
            stack,
            "lobby",
            "channeling",
            "--status",
            "waiting",
            "--page-size",
            "2",
            f"--page-token={token}",
        )
    )
    ids = lambda out: {ln.split()[0] for ln in out.splitlines()[1:] if "waiting  " in ln}  # noqa: E731
    assert len(ids(first)) == 2 and ids(second) and not ids(first) & ids(second)
    listed = rpc(stack, "channeling", "ListGames", status=game_pb2.GAME_STATUS_WAITING, page_size=4)
    assert [g.game_id for g in listed.games][:3] == [
        ln.split()[0] for ln in (first + second).splitlines() if "waiting  " in ln
    ][:3]


def test_interactive_play_against_a_bot_to_the_end(stack):
    out = ok(
        cli(
            stack,
            "create",
            "channeling",
            "--bots",
            "1",
            "--level",
            "easy",
            "--name",
            "Ann",
            "--bank",
            "600",
            "--increment",
            "5",
            "--per-decision",
            "120",
        )
    )
    game_id, tokens = created(out)
    header = rpc(stack, "channeling", "GetGame", game_id=game_id).game
    assert header.time_control.bank.seconds == 600 and header.time_control.increment.seconds == 5
    assert header.time_control.on_timeout == table_pb2.TIMEOUT_ACTION_BOT_MOVES
    started = time.monotonic()
    done = cli(
        stack,
        "play",
        "channeling",
        game_id,
        "--interactive",
        f"--token={tokens[0]}",
        stdin="0\n" * 400,
        timeout=90,
    )
    out = ok(done)
    final = rpc(stack, "channeling", "GetGame", game_id=game_id).game
    assert final.status == game_pb2.GAME_STATUS_FINISHED, out[-2000:]
    assert f"game over: {final.outcome.reason}" in out
    assert ("you won" if 0 in final.outcome.winners else "you did not win") in out
    # Names, states and clocks of both seats; Ann's deadline as a countdown.
    first = re.search(
        r"0 Light +Ann \(taken\) +bank 10:00  to act, (\d+):(\d\d) left  \(you\)", out
    )
    assert first, out[:3000]
    # The countdown runs to the deadline (120 s per decision), not to the end of the bank.
    assert 100 <= int(first.group(1)) * 60 + int(first.group(2)) <= 120
    assert re.search(r"1 Dark +Bot \(easy\) \(bot\) +bank 10:00", out)
    # Every move of Ann's was asked for and made once; every move of the bot's shown.
    turns = rpc(stack, "channeling", "GetHistory", game_id=game_id, page_size=1000).turns
    mine = [t for t in turns if t.seat == 0]
    assert out.count("your move (number or text): ") == len(mine)
    for turn in turns:
        name = header.seats[turn.seat].name
        assert f"v{turn.version} {name}: {turn.move_text}" in out
    assert time.monotonic() - started < 60


def test_interactive_play_takes_a_move_by_text_and_leaves_at_end_of_input(stack):
    game_id, tokens = created(ok(cli(stack, "create", "channeling", "--bots", "1")))
    listed = rpc(stack, "channeling", "ListMoves", tokens[0], game_id=game_id)
    label = listed.labels[-1]
    out = ok(
        cli(
            stack,
            "play",
            "channeling",
            game_id,
            "--interactive",
            token=tokens[0],
            stdin=f"no such move\n{label}\n",
        )
    )
    assert "'no such move' is none of the moves above" in out
    assert "stdin closed" in out
    turns = rpc(stack, "channeling", "GetHistory", game_id=game_id).turns
    assert turns[0].seat == 0 and turns[0].move_text == label
    # Nothing but the one move was sent: the game waits for Ann again, or for the bot.
    assert sum(t.seat == 0 for t in turns) == 1


class Interactive:
    """``play --interactive`` with its stdin kept open, its output read as it comes."""

    def __init__(self, stack: Stack, game: str, game_id: str, token: str) -> None:
        env = {**os.environ, "TABLETOP_TARGET": stack.gateway.address, "TABLETOP_TOKEN": token}
        self.popen = subprocess.Popen(
            [sys.executable, "-m", "client", "play", game, game_id, "--interactive"],
            cwd=ROOT,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        self.output = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while chunk := os.read(self.popen.stdout.fileno(), 4096):
            self.output += chunk

    @property
    def text(self) -> str:
        return ANSI.sub("", self.output.decode(errors="replace"))

    def wait_for(self, needle: str, count: int = 1, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while self.text.count(needle) < count:
            assert time.monotonic() < deadline, f"no {needle!r} x{count} in:\n{self.text[-2000:]}"
            time.sleep(0.05)

    def send(self, line: str) -> None:
        self.popen.stdin.write(line.encode() + b"\n")
        self.popen.stdin.flush()

    def close(self) -> int:
        self.popen.stdin.close()
        code = self.popen.wait(20)
        self._reader.join(5)
        return code


def test_interactive_play_waits_for_the_table_to_fill(stack):
    """Started on a waiting table, the seat follows the joins (WatchGame) and is asked
    for its move once the last seat is taken."""
    game_id, tokens = created(
        ok(cli(stack, "create", "channeling", "--open", "1", "--name", "Ann"))
    )
    player = Interactive(stack, "channeling", game_id, tokens[0])
    try:
        player.wait_for("waiting for 1 more player to join")
        assert "your move" not in player.text
        ok(cli(stack, "join", "channeling", game_id, "--name", "Bob"))
        player.wait_for("your move (number or text): ")
        assert re.search(r"v1 Dark: @join", player.text), player.text[-2000:]
        assert re.search(r"1 Dark +Bob \(taken\)", player.text)
    finally:
        code = player.close()
    assert code == 0 and "stdin closed" in player.text


@pytest.mark.parametrize("game_id", ["-AbCdEfGhIjKlMnO", "--bCdEfGhIjKlMnO"])
def test_a_game_id_that_begins_with_a_dash_is_a_game_id(stack, game_id):
    """Game ids are base64url: one in 64 begins with '-', which must not be read as an
    option (argparse would refuse the command line and exit 2)."""
    for argv in (
        ("show", "glow", game_id),
        ("join", "glow", game_id, "--name", "Bob"),
        ("play", "glow", game_id, "--token=abc", "3"),
        ("resign", "glow", game_id, "--token=abc"),
    ):
        done = cli(stack, *argv)
        assert done.returncode == 1, done.stderr
        assert done.stderr.startswith("NOT_FOUND GAME_NOT_FOUND: ") and game_id in done.stderr


def test_a_token_that_begins_with_a_dash_is_a_token(stack, monkeypatch):
    """Seat tokens are base64url too: one in 64 begins with '-' (CI's rehearsal drew one,
    and `play GAME ID --token -x... 1` exited 2 on argparse's "expected one argument").
    The token is sent: the service answers about it, not argparse. Control: without the
    joining, argparse refuses the command line."""
    from client import __main__ as cli_main

    game_id, _ = created(ok(cli(stack, "create", "glow", "--players", "2")))
    argv = ("play", "glow", game_id, "--token", "-AbCdEfGhIjKlMnOpQrStUv", "3")
    done = cli(stack, *argv)
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith("UNAUTHENTICATED BAD_TOKEN: "), done.stderr
    # The control, in process: the words argparse would have seen before.
    monkeypatch.setattr(cli_main, "join_opaque_values", lambda words, options: list(words))
    with pytest.raises(SystemExit) as refused:
        cli_main.main(["--target", stack.gateway.address, *argv])
    assert refused.value.code == 2


# --- what the commands print ------------------------------------------------------------


def test_create_prints_the_players_name_on_their_seats_token_line(stack):
    out = ok(cli(stack, "create", "glow", "--players", "3", "--open", "1", "--name", "Ann"))
    game_id, tokens = created(out)
    header = rpc(stack, "glow", "GetGame", game_id=game_id).game
    for seat in (0, 1):
        name = header.seats[seat].name
        assert f"  seat {seat} ({name}, Ann): {tokens[seat]}" in out
    joined = ok(cli(stack, "join", "glow", game_id, "--name", "Bob"))
    assert f"  seat 2 ({header.seats[2].name}, Bob): " in joined
    # The control: without --name no player name is given, and the line is as it was.
    out = ok(cli(stack, "create", "glow", "--players", "2"))
    game_id, tokens = created(out)
    header = rpc(stack, "glow", "GetGame", game_id=game_id).game
    assert f"  seat 0 ({header.seats[0].name}): {tokens[0]}" in out


def test_the_lobby_shows_each_games_clock_options_and_result(stack):
    clocked, _ = created(
        ok(
            cli(
                stack,
                "create",
                "channeling",
                "--open",
                "1",
                "--per-decision",
                "90",
                "--bank",
                "1800",
                "--increment",
                "10",
                "--option",
                "overchanneling=OVERCHANNELING_BEYOND_VIGOR",
            )
        )
    )
    finished, tokens = created(ok(cli(stack, "create", "channeling")))
    rpc(stack, "channeling", "Resign", tokens[1], game_id=finished)
    out = ok(cli(stack, "lobby", "channeling", "--page-size", "50"))
    assert out.splitlines()[0].split() == [
        "game", "status", "players", "seats", "clock", "created", "result", "options"
    ]  # fmt: skip
    for game_id in (clocked, finished):
        header = rpc(stack, "channeling", "GetGame", game_id=game_id).game
        row = lobby_row(out, game_id)
        for key, value in header.options.items():
            assert f"{key}={value}" in row, row
        assert header.HasField("time_control") == (game_id == clocked)
        if header.status == game_pb2.GAME_STATUS_FINISHED:
            winners = [header.seats[w].name for w in header.outcome.winners]
            assert f"{header.outcome.reason}: {', '.join(winners)} won" in row, row
    # The clock asked for: 90 s a decision, a bank of 1800 s with 10 s a move, the bot
    # moving for a seat out of time.
    assert "  1m30s a decision, bank 30m +10s, bot  " in lobby_row(out, clocked)
    assert "  -  " in lobby_row(out, finished)  # no clock
    assert "overchanneling=vigor" in lobby_row(out, clocked)
    assert "RESIGNED: Light won" in lobby_row(out, finished)


def test_watch_names_the_seats_as_history_does(stack):
    out = ok(cli(stack, "bot", "channeling", "--bot-seed", "4", "-v", timeout=120))
    game_id = re.search(r"^game (\S+)$", out, re.M).group(1)
    watched = ok(cli(stack, "watch", "channeling", game_id, "--from-version", "0"))
    history = ok(cli(stack, "history", "channeling", game_id))
    turn_lines = lambda text: [ln for ln in text.splitlines() if re.match(r"v\d+ ", ln)]  # noqa: E731
    assert turn_lines(watched) == turn_lines(history) != []
    assert not re.search(r"^v\d+ seat \d", watched, re.M)
    assert {ln.split()[1] for ln in turn_lines(watched)} == {"Light:", "Dark:"}


def test_a_reader_that_goes_away_ends_the_output_quietly(stack):
    """`client ... | head`: the pipe closes before the client writes; no traceback."""
    out = ok(cli(stack, "bot", "channeling", "--bot-seed", "5", timeout=120))
    game_id = re.search(r"^game (\S+)$", out, re.M).group(1)

    def closed_early(argv: list[str]) -> subprocess.CompletedProcess:
        env = {**os.environ, "TABLETOP_TARGET": stack.gateway.address}
        reader, writer = os.pipe()
        os.close(reader)  # the reader is gone before anything is written
        try:
            return subprocess.run(
                argv, cwd=ROOT, env=env, stdout=writer, stderr=subprocess.PIPE, text=True,
                timeout=60,
            )  # fmt: skip
        finally:
            os.close(writer)

    for command in (["history", "channeling", game_id], ["lobby", "channeling"], ["games"]):
        done = closed_early([sys.executable, "-m", "client", *command])
        assert done.stderr == "" and done.returncode == 0, (command, done.stderr)
    # The control: a Python program that prints without that care fails loudly here.
    done = closed_early([sys.executable, "-c", "print('x' * 100_000)"])
    assert "BrokenPipeError" in done.stderr


def test_a_move_when_it_is_not_the_seats_decision_says_whose_it_is(stack):
    game_id, tokens = created(ok(cli(stack, "create", "channeling", "--name", "Ann")))
    done = cli(stack, "play", "channeling", game_id, "0", token=tokens[1])
    assert done.returncode == 1
    assert done.stderr.strip() == "'0' not sent: it is not this seat's decision now (to act: " \
        "Light (Ann (taken)))"  # fmt: skip
    assert rpc(stack, "channeling", "GetGame", game_id=game_id).game.version == 0
    # The control: the seat to act plays the same answer.
    ok(cli(stack, "play", "channeling", game_id, "0", token=tokens[0]))
    assert rpc(stack, "channeling", "GetGame", game_id=game_id).game.version == 1
