"""The clock at rest (issue 29): a process that owns its store polls it every 5 s, not
every 0.5 s, and loses no timeliness for it.

Its games ring alarms at every due time: a deadline (as before), and now a waiting
table's expiry and the idle time after the last person's move. Here no sweep runs at all
(real time, a manager with its alarms and nothing else), so what lands is the alarms'
doing. Control: with the alarm set only at deadlines (the behaviour before), neither
table ends while the same time passes. And the poll's default follows the store.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from services.channeling import engine as channeling
from services.kit import server
from services.kit import table as tables
from services.kit.games import GameManager
from services.kit.store import open_store
from services.kit.sweep import ClockSweep

TTL = 1.0  # a waiting table's life, and the idle time, in this test
WAIT = 6.0  # generous: far past both, on a loaded machine


def plan(*kinds: str) -> tables.Plan:
    return tables.Plan(tuple(tables.SeatPlan(k, "", "medium") for k in kinds), None)


def deadlines_only(self: ClockSweep, game) -> float | None:  # the alarm before this change
    return None if self.outcome(game) is not None else game.table.due_at(self.clock())


@pytest.mark.parametrize("alarms", ["every due time", "deadlines only"])
async def test_waiting_and_idle_tables_end_on_their_alarms_without_a_sweep(alarms, monkeypatch):
    if alarms == "deadlines only":
        monkeypatch.setattr(ClockSweep, "_rings_at", deadlines_only)
    m = GameManager(channeling, open_store("memory://"), waiting_ttl=TTL, idle_seconds=TTL,
                    alarms=True)  # fmt: skip
    await m.start()
    try:
        started = time.time()
        waiting, _ = await m.create(2, channeling.Options(), plan=plan("reserved", "open"))
        idle, _ = await m.create(2, channeling.Options(), plan=plan("reserved", "reserved"))
        ids = {"waiting": waiting.record.game_id, "idle": idle.record.game_id}
        ended: dict[str, float] = {}
        # Looked at in the store: a read through the manager would start the landing.
        while len(ended) < 2 and time.time() < started + WAIT:
            for name, game_id in ids.items():
                record = await m.store.load(game_id)
                if name not in ended and record is not None and record.finished_at is not None:
                    ended[name] = time.time() - started
            await asyncio.sleep(0.05)
        logged = {name: await m.store.moves(game_id) for name, game_id in ids.items()}
    finally:
        await m.stop_clock()
        await m.close()
    print(f"{alarms}: ended after {ended}")
    if alarms == "every due time":
        assert set(ended) == {"waiting", "idle"}
        assert min(ended.values()) >= TTL  # not before its time
        assert [r.move for r in logged["waiting"]] == [tables.EXPIRE]
        assert [r.move for r in logged["idle"]] == [tables.ABANDON]
    else:  # the control: nothing rang, nothing polled, both tables still stand
        assert ended == {}
        assert logged == {"waiting": [], "idle": []}


def test_the_clock_polls_its_store_quickly_only_when_replicas_share_it():
    assert server.clock_interval("", shared=True) == server.CLOCK_INTERVAL_SHARED == 0.5
    assert server.clock_interval(" ", shared=False) == server.CLOCK_INTERVAL_OWN == 5.0
    assert server.clock_interval("0.2", shared=False) == 0.2  # an explicit value wins
    assert server.clock_interval("7", shared=True) == 7.0
    for wrong in ("0", "-1", "soon", "inf", "nan"):
        with pytest.raises(SystemExit, match="TABLETOP_CLOCK_INTERVAL_SECONDS"):
            server.clock_interval(wrong, shared=False)
