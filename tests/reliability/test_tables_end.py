"""Every table ends (issue 25, finding 4): a clocked table nobody plays is abandoned.

The outside attack: with a 30-day per-decision clock and the bot moving on timeout, a
table held its place under TABLETOP_MAX_GAMES for years, because the idle rule skipped
games with a clock. Against a service process, with short clocks: a table whose every
person let two deadlines in a row pass (the bot moving for them) ends ABANDONED, and so
does a clocked table in which no person moved for TABLETOP_IDLE_GAME_SECONDS. Controls:
a table where one person keeps moving between the timeouts, and one where a person moved
within the idle time, both go on.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import grpc
from google.protobuf import duration_pb2
from tabletop.common.v1 import game_pb2, table_pb2

from client.api import GameClient
from tests.support import running

ME = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)
# Past the seconds the absent table takes: five one-second deadlines in Channeling (seat
# 0's three decisions, then seat 1's two), each landing up to the bot's TIMEOUT_WAIT_S
# late on a loaded machine (CI saw the first one alone take seconds before that cap).
IDLE = 12.0


def per_decision(seconds: int) -> table_pb2.TimeControl:
    return table_pb2.TimeControl(
        per_decision=duration_pb2.Duration(seconds=seconds),
        on_timeout=table_pb2.TIMEOUT_ACTION_BOT_MOVES,
    )


async def play_seat(client: GameClient, game_id: str, token: str, seat: int, until: float) -> int:
    """Move for ``seat`` whenever it is to act, until ``until``; the moves made."""
    made = 0
    while time.monotonic() < until:
        game = (await client.get(game_id)).game
        if game.status == game_pb2.GAME_STATUS_FINISHED:
            break
        if seat in game.to_act:
            listed = await client.moves(game_id, token)
            if listed.moves:
                try:
                    await client.submit(game_id, token, listed.moves[0], listed.game.version)
                    made += 1
                except grpc.aio.AioRpcError:
                    pass  # the other seat's timeout landed in between: look again
        await asyncio.sleep(0.1)
    return made


async def test_tables_nobody_plays_are_abandoned_and_tables_someone_plays_go_on(tmp_path: Path):
    env = {
        "TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/end.db",
        "TABLETOP_IDLE_GAME_SECONDS": str(IDLE),
        "TABLETOP_CLOCK_INTERVAL_SECONDS": "0.2",
        "TABLETOP_BOT_MS_PER_DECISION": "50",
        "TABLETOP_BOT_WARM": "true",
    }
    with running("services.channeling", env, tmp_path / "service.log") as service:
        async with grpc.aio.insecure_channel(service.address) as channel:
            client = GameClient("channeling", channel)
            started = time.monotonic()
            absent = await client.create(seats=[ME, ME], time_control=per_decision(1))
            played = await client.create(seats=[ME, ME], time_control=per_decision(1))
            idle = await client.create(seats=[ME, ME], time_control=per_decision(60))
            moved = await client.create(seats=[ME, ME], time_control=per_decision(60))
            # Seat 0 of ``played`` keeps moving; nobody else ever does, except one move
            # on ``moved`` half-way through the idle time.
            keep_playing = asyncio.create_task(
                play_seat(client, played.game_id, played.tokens[0], 0, started + IDLE + 2)
            )
            await asyncio.sleep(IDLE / 2)
            seat = (await client.get(moved.game_id)).game.to_act[0]
            listed = await client.moves(moved.game_id, moved.tokens[seat])
            await client.submit(moved.game_id, moved.tokens[seat], listed.moves[0])
            ends = {}
            while time.monotonic() < started + IDLE + 2:
                for name, game in (("absent", absent), ("idle", idle)):
                    header = (await client.get(game.game_id)).game
                    if name not in ends and header.status == game_pb2.GAME_STATUS_FINISHED:
                        ends[name] = time.monotonic() - started
                await asyncio.sleep(0.1)
            made = await keep_playing
            headers = {
                name: (await client.get(game.game_id)).game
                for name, game in (
                    ("absent", absent),
                    ("played", played),
                    ("idle", idle),
                    ("moved", moved),
                )
            }
            absent_turns = await client.history(absent.game_id)
            idle_turns = await client.history(idle.game_id)
    print(f"abandoned after {', '.join(f'{k} {v:.1f} s' for k, v in sorted(ends.items()))}")
    # Two deadlines in a row missed by every person: the bot moved, then the end.
    assert headers["absent"].outcome.reason == "ABANDONED"
    timeouts = [t for t in absent_turns if t.events and t.events[0].kind == "timeout"]
    assert len(timeouts) >= 4 and {t.seat for t in timeouts} == {0, 1}
    assert absent_turns[-1].move_text == "@abandon"
    assert "two deadlines" in absent_turns[-1].events[0].text
    assert ends["absent"] < IDLE  # not the idle rule's doing
    # No person's move for the idle time, under a 60 s clock that never ran out.
    assert headers["idle"].outcome.reason == "ABANDONED"
    assert [t.move_text for t in idle_turns] == ["@abandon"]
    assert IDLE <= ends["idle"] < IDLE + 2
    # Controls: a person played between seat 1's timeouts; a person moved within the idle.
    assert made >= 2
    assert headers["played"].status == game_pb2.GAME_STATUS_IN_PROGRESS
    assert headers["moved"].status == game_pb2.GAME_STATUS_IN_PROGRESS
