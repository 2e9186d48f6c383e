"""A bot's search never holds its game: reads and a person's other calls go on meanwhile.

CI once saw GetGame on a Shén table time out (10 s) while the seat a person gave up
waited for the bot's first search (a worker starting on a loaded machine): the queue's
search ran under the game's lock, which every read takes. The search now runs on a copy
of the state, off the lock, and its move is applied if it still stands. Control: the
same search under the lock, as before, and the read waits for it.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from services.channeling import engine as channeling
from services.kit import table as tables
from services.kit.botmoves import BotMoves
from services.kit.games import GameManager
from services.kit.store import open_store

SEARCH = 2.0  # seconds the slow bot takes to decide


class SlowBots:
    """A bot pool whose every decision takes SEARCH seconds: the first legal move."""

    def __init__(self) -> None:
        self.asked = 0

    async def decide(self, game: str, state: Any, seat: int, level: str, **_: Any) -> str:
        self.asked += 1
        await asyncio.sleep(SEARCH)
        return str(channeling.legal_moves(state, seat)[0])


async def under_lock(self: BotMoves, game_id: str, gives_way: bool = False) -> bool:
    """The control: the queue's search made with the game's lock held (the old way)."""
    async with self.acting(game_id) as game:
        seat = self._bot_seat(game)
        if seat is None:
            return False
        moves = self.engine.legal_moves(game.state, seat)
        level = game.table.seats[seat].level
        move = await self._searched(game.state, seat, level, game.record.players, moves)
        await self._bot_move(game, seat, (), chosen=move)
        return self._bot_seat(game) is not None


@pytest.mark.parametrize("off_lock", [True, False], ids=["off-lock", "control-under-lock"])
async def test_a_read_during_a_bots_search_answers_at_once(off_lock, monkeypatch):
    if not off_lock:
        monkeypatch.setattr(BotMoves, "_one_bot_move", under_lock)
    bots = SlowBots()
    m = GameManager(channeling, open_store("memory://"), bots=bots)
    plan = tables.Plan((tables.SeatPlan(tables.RESERVED), tables.SeatPlan(tables.BOT, "", "hard")))
    try:
        game, tokens = await m.create(2, channeling.Options(), plan=plan)
        gid = game.record.game_id
        # The person plays until the bot is to act (a Channeling turn has several steps).
        while 1 not in (await m.read(gid, None))[0].to_act:
            _, moves, _ = await m.legal_moves(gid, tokens[0])
            await m.submit(gid, tokens[0], lambda mv=moves[0]: mv, None, None)
        while bots.asked == 0:
            await asyncio.sleep(0.01)
        started = time.monotonic()
        snap, _ = await m.read(gid, tokens[0])
        waited = time.monotonic() - started
        searched_at = snap.version
        if off_lock:
            assert waited < SEARCH / 4, f"the read waited {waited:.2f} s"
            assert 1 in snap.to_act  # the bot's move is not in yet
            await m.settle()
            after, _ = await m.read(gid, None)
            assert after.version > searched_at  # and its move lands after the search
        else:
            assert waited >= SEARCH / 2, f"the read waited only {waited:.2f} s"
    finally:
        await m.close()
