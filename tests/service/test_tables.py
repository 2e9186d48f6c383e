"""Tables over real gRPC: every game has JoinGame, LeaveGame, Resign and ListGames, and
every bad request about them gets its status and reason and changes nothing."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from google.protobuf import duration_pb2, struct_pb2
from tabletop.common.v1 import game_pb2, table_pb2

from client.api import FINISHED, IN_PROGRESS, WAITING, GameClient
from services import registry
from services.kit.status import error_info
from tests.support import service_in_process

OPEN = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_OPEN)
MINE = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED, player_name="Ann")
BOT = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_BOT, bot_level=table_pb2.BOT_LEVEL_EASY)


@pytest.fixture(params=registry.names())
async def svc(request):
    async with service_in_process(request.param) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            yield running, GameClient(request.param, channel)


async def refused(coro, code: grpc.StatusCode, reason: str):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await coro
    assert caught.value.code() == code, caught.value.details()
    info = error_info(caught.value)
    assert info is not None and info.reason == reason, (info, caught.value.details())
    return caught.value


async def test_every_game_seats_strangers_and_starts_at_the_last_join(svc):
    _, client = svc
    created = await client.create(2, seats=[MINE, OPEN])
    assert [t.seat for t in created.response.seat_tokens] == [0]
    header = created.response.game
    assert header.status == WAITING and not header.to_act
    assert [s.state for s in header.seats] == [
        table_pb2.SEAT_STATE_TAKEN,
        table_pb2.SEAT_STATE_OPEN,
    ]
    assert header.seats[0].player_name == "Ann"
    joined = await client.join(created.game_id, "Bo")
    assert joined.seat_token.seat == 1 and joined.game.status == IN_PROGRESS
    assert joined.game.to_act and joined.game.seats[1].player_name == "Bo"
    assert joined.game.viewer == 1
    turns = await client.history(created.game_id)
    assert [e.kind for e in turns[-1].events] == ["player_joined", "game_started"]


async def test_moves_before_the_start_are_refused(svc):
    _, client = svc
    created = await client.create(2, seats=[MINE, OPEN])
    listed = await client.moves(created.game_id, created.tokens[0])
    assert list(listed.moves) == []  # nothing to decide before the start
    # A move the engine would take once started, refused now.
    joined_elsewhere = await client.create(2, seed=1)
    state = await client.get(joined_elsewhere.game_id)
    seat = state.game.to_act[0]
    move = (await client.moves(joined_elsewhere.game_id, joined_elsewhere.tokens[seat])).moves[0]
    if seat == 0:
        await refused(
            client.submit(created.game_id, created.tokens[0], move),
            grpc.StatusCode.FAILED_PRECONDITION,
            "GAME_NOT_STARTED",
        )
    after = await client.get(created.game_id)
    assert after.game.version == 0


async def test_bad_table_requests_get_their_reason_and_change_nothing(svc):
    _, client = svc
    created = await client.create(2, seats=[MINE, OPEN])
    gid = created.game_id
    bad = grpc.StatusCode.INVALID_ARGUMENT
    pre = grpc.StatusCode.FAILED_PRECONDITION
    await refused(
        client.call("JoinGame", game_id=gid, seat=0, player_name="X"), pre, "SEAT_NOT_OPEN"
    )
    await refused(client.call("JoinGame", game_id=gid, seat=7, player_name="X"), bad, "BAD_REQUEST")
    await refused(client.join(gid, "x" * 10_240), bad, "BAD_REQUEST")
    await refused(client.join(gid, ""), bad, "BAD_REQUEST")
    await refused(client.join(gid, "tab\there"), bad, "BAD_REQUEST")
    await refused(client.join("nope", "X"), grpc.StatusCode.NOT_FOUND, "GAME_NOT_FOUND")
    await refused(client.resign(gid, created.tokens[0]), pre, "GAME_NOT_STARTED")
    await refused(
        client.call("Resign", game_id=gid), grpc.StatusCode.UNAUTHENTICATED, "MISSING_TOKEN"
    )
    after = await client.get(gid)
    assert after.game.version == 0 and after.game.status == WAITING
    joined = await client.join(gid, "Bo")
    await refused(client.join(gid, "Cy"), pre, "SEAT_NOT_OPEN")
    await refused(client.leave(gid, joined.seat_token.token), pre, "GAME_STARTED")
    await client.resign(gid, joined.seat_token.token)
    await refused(client.resign(gid, joined.seat_token.token), pre, "GAME_OVER")
    await refused(client.join(gid, "Late"), pre, "GAME_OVER")


@pytest.mark.parametrize(
    "control",
    [
        table_pb2.TimeControl(per_decision=duration_pb2.Duration(seconds=0, nanos=500_000_000)),
        table_pb2.TimeControl(per_decision=duration_pb2.Duration(seconds=-5)),
        table_pb2.TimeControl(bank=duration_pb2.Duration(seconds=10**12)),
        table_pb2.TimeControl(increment=duration_pb2.Duration(seconds=5)),
        table_pb2.TimeControl(on_timeout=table_pb2.TimeoutAction.TIMEOUT_ACTION_FORFEIT),
        table_pb2.TimeControl(per_decision=duration_pb2.Duration(seconds=5), on_timeout=9),
    ],
    ids=["half-second", "negative", "absurd", "increment-alone", "no-time", "bad-action"],
)
async def test_time_controls_out_of_bounds_are_refused(control):
    async with service_in_process("channeling") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("channeling", channel)
            await refused(
                client.create(2, time_control=control),
                grpc.StatusCode.INVALID_ARGUMENT,
                "BAD_OPTIONS",
            )
            assert running.manager.in_progress == 0


async def test_a_time_control_is_shown_with_every_seats_deadline():
    async with service_in_process("channeling") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("channeling", channel)
            control = table_pb2.TimeControl(
                per_decision=duration_pb2.Duration(seconds=30),
                bank=duration_pb2.Duration(seconds=600),
                increment=duration_pb2.Duration(seconds=5),
            )
            created = await client.create(2, time_control=control)
            header = created.response.game
            shown = table_pb2.TimeControl()
            shown.CopyFrom(control)
            shown.on_timeout = table_pb2.TIMEOUT_ACTION_BOT_MOVES  # the default, filled in
            assert header.time_control == shown
            acting = header.to_act[0]
            seat = header.seats[acting]
            assert seat.bank.seconds == 600
            deadline = seat.deadline.ToNanoseconds() / 1e9
            assert deadline == pytest.approx(header.created_at.ToNanoseconds() / 1e9 + 30)
            other = header.seats[1 - acting]
            assert not other.HasField("deadline")


async def test_seats_naming_the_wrong_count_or_kind_are_refused():
    async with service_in_process("glow") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("glow", channel)
            bad = grpc.StatusCode.INVALID_ARGUMENT
            await refused(client.create(3, seats=[OPEN, OPEN]), bad, "BAD_OPTIONS")
            odd = table_pb2.SeatRequest(kind=7)
            await refused(client.create(2, seats=[odd, OPEN]), bad, "BAD_OPTIONS")
            named_open = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_OPEN, player_name="X")
            await refused(client.create(2, seats=[named_open, OPEN]), bad, "BAD_OPTIONS")
            # players 0 with seats: one per seat.
            made = await client.create(0, seats=[OPEN, OPEN, BOT])
            assert len(made.response.game.seats) == 3


async def test_the_lobby_filters_pages_and_refuses_forged_tokens():
    async with service_in_process("shen") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("shen", channel)
            made = []
            for i in range(7):
                options = {"round_limit": 40} if i % 2 else {}
                made.append(
                    await client.create(
                        3 if i < 5 else 2,
                        seats=[MINE, OPEN, OPEN][: 3 if i < 5 else 2],
                        options=options,
                    )
                )
            started = made[0]
            for _ in range(2):
                await client.join(started.game_id, "X")
            page = await client.lobby(status=game_pb2.GAME_STATUS_WAITING, page_size=2)
            assert page.waiting_tables == 6
            seen = [g.game_id for g in page.games]
            while page.next_page_token:
                # A newer table between pages does not shift the pages.
                await client.create(2, seats=[MINE, OPEN])
                page = await client.lobby(
                    status=game_pb2.GAME_STATUS_WAITING,
                    page_size=2,
                    page_token=page.next_page_token,
                )
                seen += [g.game_id for g in page.games]
            expected = [g.game_id for g in reversed(made[1:])]
            assert seen == expected  # newest first, each once, none skipped
            for header in (await client.lobby(page_size=100)).games:
                assert not header.to_act and not header.HasField("outcome")
            running_now = await client.lobby(status=game_pb2.GAME_STATUS_IN_PROGRESS)
            assert [g.game_id for g in running_now.games] == [started.game_id]
            assert [s.player_name for s in running_now.games[0].seats] == ["Ann", "X", "X"]
            two = await client.lobby(players=2)
            assert {g.game_id for g in two.games} >= {made[5].game_id, made[6].game_id}
            assert all(len(g.seats) == 2 for g in two.games)
            limited = await client.lobby(
                options=struct_pb2.Struct(fields={"round_limit": struct_pb2.Value(number_value=40)})
            )
            assert {g.game_id for g in limited.games} == {made[i].game_id for i in (1, 3, 5)}
            bad = grpc.StatusCode.INVALID_ARGUMENT
            first = await client.lobby(page_size=1)
            token = first.next_page_token
            await refused(
                client.lobby(page_size=1, page_token=token, players=3), bad, "BAD_PAGE_TOKEN"
            )
            await refused(
                client.lobby(page_size=1, page_token=token[:-1] + "x"), bad, "BAD_PAGE_TOKEN"
            )
            await refused(client.lobby(page_size=1, page_token="garbage"), bad, "BAD_PAGE_TOKEN")
            await refused(client.lobby(page_size=1000), bad, "BAD_REQUEST")
            await refused(client.lobby(players=9), bad, "BAD_REQUEST")
            await refused(client.lobby(status=42), bad, "BAD_REQUEST")
            unknown = struct_pb2.Struct(fields={"colour": struct_pb2.Value(string_value="red")})
            await refused(client.lobby(options=unknown), bad, "BAD_REQUEST")


async def test_a_two_player_resign_ends_the_game_with_the_other_side_winning(svc):
    _, client = svc
    created = await client.create(2)
    reply = await client.resign(created.game_id, created.tokens[1])
    assert reply.game.status == FINISHED
    assert reply.game.outcome.reason == "RESIGNED" and list(reply.game.outcome.winners) == [0]
    assert reply.game.seats[1].state == table_pb2.SEAT_STATE_GIVEN_UP
    assert reply.turn.move_text == "@resign"


async def test_a_table_of_bots_plays_itself_to_the_end_over_grpc():
    async with service_in_process("channeling") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("channeling", channel)
            created = await client.create(2, seats=[BOT, BOT])
            assert list(created.response.seat_tokens) == []
            for _ in range(200):
                state = await client.get(created.game_id)
                if state.game.status == FINISHED:
                    break
                await asyncio.sleep(0.05)
            assert state.game.status == FINISHED
            assert {s.state for s in state.game.seats} == {table_pb2.SEAT_STATE_BOT}
            assert state.game.seats[0].player_name == "Bot (easy)"


async def test_an_absurd_player_count_with_a_clock_is_refused_at_once():
    # Found by fuzzing: the seats were listed before the player count was checked, so
    # 2**31 - 1 players with a clock filled memory for minutes.
    async with service_in_process("shrine") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("shrine", channel, timeout=5)
            control = table_pb2.TimeControl(per_decision=duration_pb2.Duration(seconds=60))
            for players in (2**31 - 1, -(2**31), 3):
                await refused(
                    client.create(players, time_control=control),
                    grpc.StatusCode.INVALID_ARGUMENT,
                    "BAD_OPTIONS",
                )
