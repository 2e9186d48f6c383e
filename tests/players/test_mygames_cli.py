"""The CLI's mygames and follow lines (client/mygames.py)."""

from __future__ import annotations

from tabletop.common.v1 import game_pb2
from tabletop.gateway.v1 import players_pb2

from client import mygames


def header(status=game_pb2.GAME_STATUS_IN_PROGRESS, to_act=(0,)) -> game_pb2.GameHeader:
    return game_pb2.GameHeader(
        game_id="abc123",
        game_type="channeling",
        status=status,
        to_act=list(to_act),
        seats=[game_pb2.Seat(index=0, name="Light"), game_pb2.Seat(index=1, name="Dark")],
    )


def test_a_your_turn_event_is_one_line_with_the_time_left():
    event = game_pb2.PlayerEvent(
        kind=game_pb2.PLAYER_EVENT_KIND_YOUR_TURN, game_type="channeling", game_id="abc123", seat=0
    )
    event.deadline.FromSeconds(1020)
    assert mygames.event_line(event, header(), now=1000.0) == (
        "your turn in channeling abc123 (Light), 20 s left"
    )
    event.ClearField("deadline")
    assert mygames.event_line(event, None) == "your turn in channeling abc123 (seat 0)"


def test_the_other_events():
    over = game_pb2.PlayerEvent(
        kind=game_pb2.PLAYER_EVENT_KIND_GAME_OVER, game_type="glow", game_id="g", seat=1
    )
    assert mygames.event_line(over, header()) == "game over: glow g (Dark)"
    offered = game_pb2.PlayerEvent(
        kind=game_pb2.PLAYER_EVENT_KIND_REMATCH_OFFERED, game_type="glow", game_id="g", seat=1,
        by_seat=0,
    )  # fmt: skip
    assert mygames.event_line(offered, header()) == "a rematch is offered in glow g (Dark) by Light"
    started = game_pb2.PlayerEvent(
        kind=game_pb2.PLAYER_EVENT_KIND_REMATCH_STARTED, game_type="glow", game_id="g",
        rematch_game_id="h",
    )  # fmt: skip
    assert mygames.event_line(started, header()).endswith(": h")


def test_my_games_lines():
    mine = players_pb2.MyGame(game_type="channeling", header=header(), seat=0, your_turn=True)
    mine.deadline.FromSeconds(1000 + 600)
    assert mygames.game_line(mine, now=1000.0) == (
        "your turn in channeling abc123 (Light), 10 min left"
    )
    theirs = players_pb2.MyGame(game_type="channeling", header=header(to_act=(1,)), seat=0)
    assert mygames.game_line(theirs) == "Dark to act in channeling abc123 (Light)"
    waiting = players_pb2.MyGame(
        game_type="channeling", header=header(game_pb2.GAME_STATUS_WAITING, ()), seat=0
    )
    assert mygames.game_line(waiting) == "waiting for players in channeling abc123 (Light)"
    assert mygames.left(mine.deadline, now=2000.0) == "time is up"
