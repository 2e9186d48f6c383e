"""``python -m client bot GAME --level L``, run as a person runs it, through a gateway in
front of The Channeling and Glow (each a process): seat 0 is played by the command at
random, every other seat by the service's bot at that level, to the end. What it prints
is checked against what the services say (GetGame, GetHistory), not against itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from tabletop.common.v1 import game_pb2, table_pb2

from tests.client.test_cli_tables import Stack, cli, gateway_stack, ok, rpc

STATE_BOT = table_pb2.SEAT_STATE_BOT


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[Stack]:
    # Real searches, kept short.
    env = {"TABLETOP_BOT_MS_PER_DECISION": "10", "TABLETOP_BOT_WORKERS": "1"}
    with gateway_stack(tmp_path_factory.mktemp("cli-bots"), env) as running:
        yield running


def game_id_of(stdout: str) -> str:
    return re.search(r"^game (\S+)$", stdout, re.M).group(1)


def history(stack: Stack, game: str, game_id: str) -> list[Any]:
    turns: list[Any] = []
    while True:
        reply = rpc(
            stack, game, "GetHistory", game_id=game_id, from_version=len(turns), page_size=1000
        )
        turns.extend(reply.turns)
        if not reply.turns or turns[-1].version >= reply.game.version:
            return turns


def bot_levels(turn: Any) -> list[str]:
    """The level of each ``bot_move`` event of a turn (none: a move sent by a client)."""
    return [e.data["level"] for e in turn.events if e.kind == "bot_move"]


@pytest.mark.parametrize(
    ("game", "level", "extra"),
    [("channeling", "hard", ()), ("glow", "easy", ("--players", "3"))],
)
def test_bot_with_a_level_plays_seat_zero_against_the_services_bots(stack, game, level, extra):
    out = ok(cli(stack, "bot", game, "--level", level, "--bot-seed", "3", *extra, timeout=120))
    game_id = game_id_of(out)
    header = rpc(stack, game, "GetGame", game_id=game_id).game
    assert header.status == game_pb2.GAME_STATUS_FINISHED
    players = len(header.seats)
    assert players == (int(extra[1]) if extra else 2)
    assert header.seats[0].state != STATE_BOT
    assert all(seat.state == STATE_BOT for seat in header.seats[1:])

    turns = history(stack, game, game_id)
    ours = [t for t in turns if t.seat == 0]
    theirs = [t for t in turns if t.seat != 0]
    assert ours and {t.seat for t in theirs} == set(range(1, players))
    assert all(bot_levels(t) == [] for t in ours), "seat 0 is the command's, not a bot's"
    assert all(bot_levels(t) == [level] for t in theirs), "every other seat is the bot's"
    assert f"{len(ours)} moves made by this bot" in out

    names = [header.seats[w].name for w in header.outcome.winners]
    assert f"game over: {header.outcome.reason}" in out
    assert f"winners: {', '.join(names) or 'nobody'}" in out


def test_without_a_level_bot_plays_every_seat_itself(stack):
    """The control: the random mode is unchanged, so no move is the service's bot's."""
    out = ok(cli(stack, "bot", "channeling", "--bot-seed", "3", timeout=120))
    game_id = game_id_of(out)
    header = rpc(stack, "channeling", "GetGame", game_id=game_id).game
    assert header.status == game_pb2.GAME_STATUS_FINISHED
    assert not any(seat.state == STATE_BOT for seat in header.seats)
    turns = history(stack, "channeling", game_id)
    assert {t.seat for t in turns} == {0, 1}
    assert all(bot_levels(t) == [] for t in turns)
    assert f"{len(turns)} moves made by this bot" in out


def test_a_level_is_for_a_new_table_only(stack):
    out = ok(cli(stack, "create", "channeling"))
    game_id = game_id_of(out.splitlines()[0] + "\n")
    done = cli(stack, "bot", "channeling", game_id, "--token", "x", "--level", "hard")
    assert done.returncode != 0 and "--level creates a new table" in done.stderr
    assert rpc(stack, "channeling", "GetGame", game_id=game_id).game.version == 0
