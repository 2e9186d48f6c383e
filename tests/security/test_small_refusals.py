"""The small findings of issue 25 (7) and the kit's two of issue 30 (5), each refused as
it should be now, each case one that the code before took or answered otherwise.

- a Duration whose nanos are outside -999,999,999..999,999,999, or of the other sign
  than its seconds, is INVALID_ARGUMENT, as protobuf's own JSON mapping refuses it
  (before: 2e9 nanos counted as two more seconds);
- a person may not be named like the service's bot, "Bot (hard)" in any case, spacing or
  width (before: any name went);
- a move when it is not the seat's turn is PERMISSION_DENIED NOT_YOUR_DECISION with a
  plain message, whatever the move, and changes nothing (before: a move the codec could
  not read was refused as malformed first);
- a given-up seat shows no bot level once the game is over (no bot plays it then), and
  does while the bot plays it.
"""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import duration_pb2
from tabletop.common.v1 import table_pb2

from client.api import GameClient
from services.kit import table as tables
from services.kit.status import error_info
from tests.support import service_in_process

ME = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)
OPEN = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_OPEN)


@pytest.fixture
async def client():
    async with service_in_process("channeling") as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            yield GameClient("channeling", channel)


async def refused(call, code: grpc.StatusCode, reason: str) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() == code, caught.value.details()
    assert error_info(caught.value).reason == reason, caught.value.details()
    return caught.value


BAD_DURATIONS = [
    (0, 2_000_000_000),
    (0, 1_500_000_000),
    (5, -500_000_000),
    (-5, 500_000_000),
    (0, -1_000_000_000),
]


@pytest.mark.parametrize("seconds,nanos", BAD_DURATIONS)
@pytest.mark.parametrize("field", ["per_decision", "bank", "increment"])
async def test_a_duration_protobuf_would_refuse_is_refused(client, field, seconds, nanos):
    control = table_pb2.TimeControl(bank=duration_pb2.Duration(seconds=60))
    getattr(control, field).CopyFrom(duration_pb2.Duration(seconds=seconds, nanos=nanos))
    error = await refused(
        client.create(seats=[ME, ME], time_control=control),
        grpc.StatusCode.INVALID_ARGUMENT,
        "BAD_OPTIONS",
    )
    assert f"time_control.{field}" in error.details()


async def test_control_a_duration_with_nanos_in_range_is_taken(client):
    control = table_pb2.TimeControl(
        per_decision=duration_pb2.Duration(seconds=5, nanos=500_000_000)
    )
    created = await client.create(seats=[ME, ME], time_control=control)
    clock = created.response.game.time_control
    assert clock.per_decision.seconds == 5 and clock.per_decision.nanos == 500_000_000


BOT_LIKE = ["Bot (hard)", "bot(easy)", "BOT ( Medium )", "Bot\u00a0(x)", "Ｂｏｔ (hard)", "Bot ()"]


@pytest.mark.parametrize("name", BOT_LIKE)
async def test_a_person_may_not_pass_for_a_bot(client, name):
    table = await client.create(seats=[ME, OPEN])
    error = await refused(
        client.join(table.game_id, name), grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST"
    )
    assert "bot" in error.details()
    named = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED, player_name=name)
    await refused(
        client.create(seats=[named, OPEN]), grpc.StatusCode.INVALID_ARGUMENT, "BAD_REQUEST"
    )
    assert tables.looks_like_a_bot(name)


@pytest.mark.parametrize("name", ["Robot (hard)", "Bottom (left)", "Bot", "Abbot (x)", "Bo"])
async def test_control_names_that_only_resemble_a_bots_are_taken(client, name):
    table = await client.create(seats=[ME, OPEN])
    joined = await client.join(table.game_id, name)
    assert joined.game.seats[1].player_name == name and not tables.looks_like_a_bot(name)


async def test_a_move_out_of_turn_is_not_your_decision_whatever_the_move(client):
    game = await client.create(2, seed=4)
    header = (await client.get(game.game_id)).game
    acting = header.to_act[0]
    idle = 1 - acting
    move = (await client.moves(game.game_id, game.tokens[acting])).moves[0]
    listed = await client.moves(game.game_id, game.tokens[idle])
    assert list(listed.moves) == [] and listed.game.to_act == header.to_act
    for sent in (move, client.pb2.Move()):  # a legal move of the other seat; an empty one
        error = await refused(
            client.submit(game.game_id, game.tokens[idle], sent),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_DECISION",
        )
        assert error.details() == "it is not this seat's decision now"
    assert (await client.get(game.game_id)).game.version == header.version


async def test_a_given_up_seat_shows_no_bot_level_once_the_game_is_over(client):
    game = await client.create(2)
    over = (await client.resign(game.game_id, game.tokens[0])).game
    assert over.seats[0].state == table_pb2.SEAT_STATE_GIVEN_UP
    assert over.seats[0].bot_level == table_pb2.BOT_LEVEL_UNSPECIFIED
    (listed,) = [g for g in (await client.lobby()).games if g.game_id == game.game_id]
    assert listed.seats[0].state == table_pb2.SEAT_STATE_GIVEN_UP
    assert listed.seats[0].bot_level == table_pb2.BOT_LEVEL_UNSPECIFIED


async def test_control_a_given_up_seat_the_bot_plays_shows_its_level():
    async with service_in_process("shen") as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            shen = GameClient("shen", channel)
            game = await shen.create(3)
            on = (await shen.resign(game.game_id, game.tokens[0])).game
    assert on.seats[0].state == table_pb2.SEAT_STATE_GIVEN_UP and not on.outcome.reason
    assert on.seats[0].bot_level == table_pb2.BOT_LEVEL_MEDIUM
