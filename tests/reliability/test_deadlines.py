"""Deadlines are law at every entry point (issue 25, finding 2).

The outside attack: SIGSTOP the service while a 4 s bank runs, SIGCONT at 9 s, and a
move at 9.08 s was accepted with a fresh clock and no timeout logged; at deadline + 18 s
ListMoves still offered the seat its moves. Here: that stopped clock against a service
process, then each entry point in this process on a clock the test moves (no sweep, no
alarm: only the call itself can land the timeout), with the control that the same calls
without the landing take the late move.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import grpc
import pytest
from google.protobuf import duration_pb2
from tabletop.common.v1 import table_pb2

from client.api import GameClient
from services.channeling import engine as channeling
from services.kit import table as tables
from services.kit.engine import GameOver, NotYourDecision
from services.kit.errors import AlreadyGivenUp, StaleVersion
from services.kit.games import GameManager
from services.kit.status import error_info
from services.kit.store import open_store
from services.kit.sweep import ClockSweep
from services.shen import engine as shen
from tests.support import running

ME = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)


def bank(seconds: int, action: int) -> table_pb2.TimeControl:
    return table_pb2.TimeControl(bank=duration_pb2.Duration(seconds=seconds), on_timeout=action)


async def refused(call) -> grpc.aio.AioRpcError:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    return caught.value


async def test_a_stopped_service_lands_the_timeout_before_the_move_that_comes_after_it(
    tmp_path: Path,
):
    # The bot worker started with the service, as deployed (the tests' default starts it
    # at the first bot decision: a process start the timeout's move would wait for).
    env = {"TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/stopped.db", "TABLETOP_BOT_WARM": "true"}
    with running("services.channeling", env, tmp_path / "service.log") as service:
        async with grpc.aio.insecure_channel(service.address) as channel:
            client = GameClient("channeling", channel)
            forfeit = await client.create(
                seats=[ME, ME], time_control=bank(4, table_pb2.TIMEOUT_ACTION_FORFEIT)
            )
            botted = await client.create(
                seats=[ME, ME], time_control=bank(4, table_pb2.TIMEOUT_ACTION_BOT_MOVES)
            )
            seat = forfeit.response.game.to_act[0]
            other = botted.response.game.to_act[0]
            listed = await client.moves(forfeit.game_id, forfeit.tokens[seat])
            mine = await client.moves(botted.game_id, botted.tokens[other])
            assert listed.moves and mine.moves
            os.kill(service.popen.pid, signal.SIGSTOP)
            try:
                await asyncio.sleep(5.0)  # the 4 s banks run out while it is stopped
            finally:
                os.kill(service.popen.pid, signal.SIGCONT)
            # A move right away, then the listing, then the game.
            resumed = time.monotonic()
            late = await refused(
                client.submit(forfeit.game_id, forfeit.tokens[seat], listed.moves[0])
            )
            first = time.monotonic() - resumed
            stale = await refused(
                client.submit(botted.game_id, botted.tokens[other], mine.moves[0], 0)
            )
            second = time.monotonic() - resumed
            after = await client.moves(forfeit.game_id, forfeit.tokens[seat])
            turns = await client.history(forfeit.game_id)
            bot_turns = await client.history(botted.game_id)
    # The forfeit landed first: the game is over, the move refused for it.
    assert late.code() == grpc.StatusCode.FAILED_PRECONDITION, late.details()
    assert error_info(late).reason == "GAME_OVER"
    assert not after.moves and after.game.outcome.reason == "RESIGNED"
    assert [e.kind for e in turns[0].events][:2] == ["timeout", "resigned"]
    assert len(turns) == 1
    # The bot's timeout move landed first: the move made against version 0 is stale.
    assert stale.code() == grpc.StatusCode.ABORTED, stale.details()
    info = error_info(stale)
    assert info.reason == "STALE_VERSION" and int(info.metadata["current_version"]) >= 1
    assert [e.kind for e in bot_turns[0].events][:2] == ["timeout", "bot_move"]
    assert bot_turns[0].seat == other
    print(
        f"stopped 5 s; the late moves were judged {first * 1000:.0f} ms (forfeit) and "
        f"{second * 1000:.0f} ms (the bot's move first) after SIGCONT"
    )


# --- each entry point, on a clock the test moves -------------------------------------------


class Now:
    def __init__(self) -> None:
        self.at = 1_000_000.0

    def __call__(self) -> float:
        return self.at


async def overdue(forfeit: bool, idle: float = 0.0):
    """A manager on a clock the test moves (no sweep runs, no alarm rings), and a
    two-seat table whose first seat to act is 1 s past its 4 s bank."""
    now = Now()
    m = GameManager(channeling, open_store("memory://"), clock=now, idle_seconds=idle)
    clock = tables.Clock(bank=4.0, forfeit=forfeit)
    plan = tables.Plan((tables.SeatPlan(tables.RESERVED), tables.SeatPlan(tables.RESERVED)), clock)
    game, tokens = await m.create(2, channeling.Options(), seed=3, plan=plan)
    gid = game.record.game_id
    snap, _ = await m.read(gid, None)
    seat = snap.to_act[0]
    _, moves, _ = await m.legal_moves(gid, tokens[seat])
    now.at += 5.0
    return m, gid, tokens, seat, moves[0]


@pytest.fixture(params=["landing", "control"])
def landing(request, monkeypatch) -> bool:
    """Each test below runs twice: as the service does, and with the landing at the
    entry points switched off (the old behaviour), where it must see the late move go
    through."""
    if request.param == "control":

        async def nothing(self, game):
            return 0

        monkeypatch.setattr(ClockSweep, "_land", nothing)
    return request.param == "landing"


async def test_a_move_after_its_deadline_is_judged_after_the_timeout(landing):
    m, gid, tokens, seat, move = await overdue(forfeit=True)
    if not landing:
        await m.submit(gid, tokens[seat], lambda: move, None, None)  # the old behaviour
        return
    with pytest.raises(GameOver):
        await m.submit(gid, tokens[seat], lambda: move, None, None)
    _, turns = await m.history(gid, None, 0, 10)
    assert [t.move_text for t in turns] == [tables.RESIGN]


async def test_a_stale_version_after_the_bots_timeout_move_is_aborted_with_the_new_one(landing):
    m, gid, tokens, seat, move = await overdue(forfeit=False)
    if not landing:
        await m.submit(gid, tokens[seat], lambda: move, 0, None)
        return
    with pytest.raises((StaleVersion, NotYourDecision)) as refused_:
        await m.submit(gid, tokens[seat], lambda: move, 0, None)
    if isinstance(refused_.value, StaleVersion):
        assert refused_.value.current >= 1
    _, turns = await m.history(gid, None, 0, 10)
    assert [e["kind"] for e in turns[0].events][:2] == ["timeout", "bot_move"]


async def test_list_moves_never_offers_moves_to_a_seat_whose_time_is_up(landing):
    m, gid, tokens, seat, _ = await overdue(forfeit=True)
    snap, moves, _ = await m.legal_moves(gid, tokens[seat])
    if not landing:
        assert moves  # the old behaviour: the late seat is offered its moves
        return
    assert moves == [] and snap.outcome is not None


async def test_resign_and_the_other_seat_are_judged_after_the_forfeit(landing):
    m, gid, tokens, seat, _ = await overdue(forfeit=True)
    if not landing:
        await m.resign(gid, tokens[seat])
        return
    with pytest.raises(GameOver):
        await m.resign(gid, tokens[1 - seat])  # the forfeit ended it: the other seat won
    snap, _ = await m.read(gid, None)
    assert snap.outcome.winners == (1 - seat,) and "forfeited on time" in snap.outcome.details[0]


async def test_a_seat_that_forfeited_in_a_longer_game_is_told_it_gave_up(landing):
    now = Now()
    m = GameManager(shen, open_store("memory://"), clock=now)
    clock = tables.Clock(per_decision=4.0, forfeit=True)
    plan = tables.Plan(tuple(tables.SeatPlan(tables.RESERVED) for _ in range(3)), clock)
    game, tokens = await m.create(3, shen.Options(), seed=2, plan=plan)
    gid = game.record.game_id
    snap, _ = await m.read(gid, None)
    seat = snap.to_act[0]
    _, moves, _ = await m.legal_moves(gid, tokens[seat])
    now.at += 5.0
    if not landing:
        await m.submit(gid, tokens[seat], lambda: moves[0], None, None)
        return
    with pytest.raises(AlreadyGivenUp):
        await m.submit(gid, tokens[seat], lambda: moves[0], None, None)
    snap, _ = await m.read(gid, None)
    assert snap.outcome is None and snap.seats[seat].state == tables.GIVEN_UP


async def test_a_read_after_the_deadline_starts_the_landing_without_waiting_for_it(landing):
    m, gid, _, seat, _ = await overdue(forfeit=False)
    snap, _ = await m.read(gid, None)
    assert snap.version == 0 and seat in snap.to_act  # the read itself wrote nothing
    for _ in range(100):
        await asyncio.sleep(0.01)
        snap, _ = await m.read(gid, None)
        if snap.version:
            break
    if not landing:
        assert snap.version == 0
        return
    assert snap.version >= 1  # landed right after, with no sweep and no other call
    _, turns = await m.history(gid, None, 0, 1)
    assert [e["kind"] for e in turns[0].events][:2] == ["timeout", "bot_move"]


async def test_a_join_after_the_waiting_time_finds_the_table_expired(landing):
    now = Now()
    m = GameManager(channeling, open_store("memory://"), clock=now, waiting_ttl=60.0)
    plan = tables.Plan((tables.SeatPlan(tables.RESERVED), tables.SeatPlan(tables.OPEN)))
    game, _ = await m.create(2, channeling.Options(), plan=plan)
    now.at += 61.0
    if not landing:
        await m.join(game.record.game_id, None, "Ann")  # the old behaviour: seated, started
        return
    with pytest.raises(GameOver):
        await m.join(game.record.game_id, None, "Ann")
    snap, _ = await m.read(game.record.game_id, None)
    assert snap.outcome.reason == "EXPIRED"
