"""The bot pool with real worker processes: decisions come back in their text form, the
event loop keeps serving while a search runs, a decision keeps to its time budget, and
a failure in a worker surfaces as the exception in the caller."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import subprocess
import sys
import time

import pytest

from services import registry
from services.kit.bots import pool as pool_module
from services.kit.bots.levels import decide_text
from services.kit.bots.pool import BotFailure, BotPool
from services.kit.engine import IllegalMove, NotYourDecision, replay
from services.kit.testing import random_game

BUDGET_MS = 300.0


def _glow_midgame():
    """A Glow state halfway through a seeded game: a search there never runs out of
    iterations within the budget, so the budget is what stops it."""
    engine = registry.by_name("glow").engine()
    game = random_game(engine, 5, 2)
    state = replay(engine, 5, 2, engine.Options(), game.moves[: len(game.moves) // 2])
    seat = engine.to_act(state)[0]
    return engine, state, seat


@pytest.fixture(scope="module")
def bot_pool():
    pool = BotPool(workers=1, ms_per_decision=BUDGET_MS)
    asyncio.run(pool.warm())
    yield pool
    pool.close()


def test_decisions_come_back_legal_in_their_text_form(bot_pool):
    async def run():
        for name in registry.names():
            engine = registry.by_name(name).engine()
            state = engine.new_game(3, engine.GAME.min_players, engine.GAME.options_type())
            seat = engine.to_act(state)[0]
            text = await bot_pool.decide(name, state, seat, "easy", seed=1)
            assert engine.parse_move(text) in engine.legal_moves(state, seat), name

    asyncio.run(run())


def _search_with_ticker(decide) -> tuple[str, float, list[float]]:
    """Run ``await decide()`` while a ticker coroutine sleeps 5 ms at a time; return the
    move, the seconds the decision took and the ticker's gaps."""

    async def run():
        gaps: list[float] = []
        searching = True

        async def ticker():
            last = time.perf_counter()
            while searching:
                await asyncio.sleep(0.005)
                now = time.perf_counter()
                gaps.append(now - last)
                last = now

        tick = asyncio.create_task(ticker())
        await asyncio.sleep(0.02)  # the ticker is running before the search starts
        started = time.perf_counter()
        text = await decide()
        spent = time.perf_counter() - started
        searching = False
        await tick
        return text, spent, gaps

    return asyncio.run(run())


def test_the_loop_keeps_serving_while_a_search_runs_and_the_budget_holds(bot_pool):
    engine, state, seat = _glow_midgame()
    text, spent, gaps = _search_with_ticker(
        lambda: bot_pool.decide("glow", state, seat, "hard", seed=2)
    )
    assert engine.parse_move(text) in engine.legal_moves(state, seat)
    # "hard" spends its whole budget here (its iteration cap is far off), so the loop
    # was tested against a full search, and the decision came back within budget + 200 ms.
    assert BUDGET_MS / 1000 <= spent < (BUDGET_MS + 200) / 1000, f"{spent:.3f} s"
    assert len(gaps) > 20, f"the ticker ran only {len(gaps)} times in {spent:.3f} s"
    # A search on the loop stalls it for the whole budget (the control below); the
    # scheduler of a loaded machine alone stalls it for tens of milliseconds (85 ms in a
    # loaded rehearsal), so the line between the two is half the budget, not 50 ms.
    assert max(gaps) < BUDGET_MS / 2 / 1000, f"the event loop stalled {max(gaps) * 1000:.0f} ms"

    # The control: the same search run on the loop itself stalls the ticker for about
    # the whole budget, so the measurement above would catch a pool that blocked.
    async def on_the_loop() -> str:
        return decide_text("glow", state, seat, "hard", 2, BUDGET_MS)

    _, _, blocked = _search_with_ticker(on_the_loop)
    assert max(blocked) >= 0.8 * BUDGET_MS / 1000, f"{max(blocked) * 1000:.0f} ms"


@pytest.mark.parametrize("gives_way", [True, False])
def test_a_search_that_gives_way_stops_once_the_flag_is_raised(bot_pool, gives_way):
    """A table of bots' search stops for a person waiting; the control, a search that
    does not give way (a person's bot, a timeout's move), takes its whole budget."""
    engine, state, seat = _glow_midgame()

    async def run() -> tuple[str, float]:
        bot_pool.give_way(False)
        started = time.perf_counter()
        asked = asyncio.ensure_future(
            bot_pool.decide("glow", state, seat, "hard", seed=3, gives_way=gives_way)
        )
        await asyncio.sleep(0.05)
        bot_pool.give_way(True)
        try:
            text = await asked
        finally:
            bot_pool.give_way(False)
        return text, time.perf_counter() - started

    text, spent = asyncio.run(run())
    assert engine.parse_move(text) in engine.legal_moves(state, seat)
    if gives_way:
        assert spent < BUDGET_MS / 2000, f"{spent:.3f} s"
    else:
        assert spent >= BUDGET_MS / 1000, f"{spent:.3f} s"


def test_a_timeouts_search_is_capped_below_the_levels_budget(bot_pool):
    engine, state, seat = _glow_midgame()

    async def run() -> tuple[str, float]:
        started = time.perf_counter()
        text = await bot_pool.decide("glow", state, seat, "hard", seed=4, cap_ms=BUDGET_MS / 10)
        return text, time.perf_counter() - started

    text, spent = asyncio.run(run())
    assert engine.parse_move(text) in engine.legal_moves(state, seat)
    assert spent < BUDGET_MS / 2000, f"{spent:.3f} s"  # uncapped: the budget (test above)


def test_a_failure_in_a_worker_raises_in_the_caller(bot_pool):
    engine = registry.by_name("channeling").engine()
    state = engine.new_game(seed=3)
    idle = 1 - engine.to_act(state)[0]

    async def run():
        with pytest.raises(NotYourDecision):
            await bot_pool.decide("channeling", state, idle, "hard", seed=1)
        with pytest.raises(ValueError, match="unknown bot level"):
            await bot_pool.decide("channeling", state, 0, "grandmaster")
        with pytest.raises(KeyError):
            await bot_pool.decide("chess", state, 0, "easy")
        # The pool still serves after a failure.
        seat = engine.to_act(state)[0]
        return await bot_pool.decide("channeling", state, seat, "easy", seed=1)

    assert engine.parse_move(asyncio.run(run())) in engine.legal_moves(state, 0)


def test_an_exception_that_cannot_travel_becomes_a_bot_failure(monkeypatch):
    # IllegalMove needs its rule to be rebuilt, which pickling does not carry.
    def illegal(*args):
        raise IllegalMove("no such move", rule="Move a Druid Token")

    with pytest.raises(TypeError):
        pickle.loads(pickle.dumps(IllegalMove("x", rule="r")))
    monkeypatch.setattr(pool_module, "decide_text", illegal)
    with pytest.raises(BotFailure, match="IllegalMove: no such move"):
        pool_module._decide_in_worker("channeling", pickle.dumps(None), 0, "easy", 1, 10.0, None)


def test_the_state_is_taken_when_the_decision_is_asked(bot_pool):
    # A move applied to the live state while the decision is under way (another seat's
    # simultaneous choice) does not reach the worker: the bot decides on what it was given.
    engine = registry.by_name("channeling").engine()
    state = engine.new_game(seed=3)
    seat = engine.to_act(state)[0]
    legal = engine.legal_moves(state, seat)

    async def run():
        decision = asyncio.ensure_future(bot_pool.decide("channeling", state, seat, "easy", seed=1))
        await asyncio.sleep(0)  # the call has been submitted
        engine.apply(state, seat, legal[0])
        return await decision

    assert engine.parse_move(asyncio.run(run())) in legal

    # The control: the live state handed to the executor as it is (no snapshot) reaches
    # the worker after the move on most tries, and the decision is wrong or refused.
    async def unsnapshotted(seed: int) -> bool:
        live = engine.new_game(seed=seed)
        mover = engine.to_act(live)[0]
        before = engine.legal_moves(live, mover)
        loop = asyncio.get_running_loop()
        decision = loop.run_in_executor(
            bot_pool._executor, decide_text, "channeling", live, mover, "easy", 1, 50.0
        )
        await asyncio.sleep(0)
        engine.apply(live, mover, before[0])
        try:
            return engine.parse_move(await decision) not in before
        except NotYourDecision:
            return True

    async def tries() -> int:
        return sum([await unsnapshotted(seed) for seed in range(10)])

    assert asyncio.run(tries()) > 0


def test_a_pool_closes_from_a_coroutine_and_refuses_decisions_after():
    engine = registry.by_name("channeling").engine()
    state = engine.new_game(seed=3)

    async def run():
        pool = BotPool(workers=1, ms_per_decision=50)
        await pool.warm()
        await pool.aclose()
        with pytest.raises(RuntimeError):
            await pool.decide("channeling", state, engine.to_act(state)[0], "easy")

    asyncio.run(run())


def test_a_pool_is_configured_sanely():
    assert pool_module.default_workers() >= 1
    with pytest.raises(ValueError):
        BotPool(workers=0)
    with pytest.raises(ValueError):
        BotPool(workers=1, ms_per_decision=0)


def test_workers_search_at_a_lower_cpu_priority_than_the_service(bot_pool):
    # The event loop serving every game goes first where cores are few.
    async def niceness() -> int:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(bot_pool._executor, os.nice, 0)

    ours = os.nice(0)
    assert asyncio.run(niceness()) == min(19, ours + pool_module.WORKER_NICENESS)


_ORPHAN_SCRIPT = """
import asyncio, sys
from services.kit.bots import pool as pool_module
pool_module.WATCH_PARENT = sys.argv[1] == "watch"
pool = pool_module.BotPool(workers=2)
asyncio.run(pool.warm())
# Every worker the executor started (warm() may have reached only some of them).
print(" ".join(map(str, sorted(pool._executor._processes))), flush=True)
sys.stdin.read()  # until killed
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _workers_left_by_a_killed_service(watch: str) -> list[int]:
    """The bot workers still alive 5 s after their service process was SIGKILLed."""
    service = subprocess.Popen(
        [sys.executable, "-c", _ORPHAN_SCRIPT, watch],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert service.stdout is not None
        pids = [int(p) for p in service.stdout.readline().split()]
        assert len(pids) == 2 and all(_alive(p) for p in pids)
    finally:
        service.kill()
        service.wait()
    deadline = time.monotonic() + 5 + pool_module.PARENT_POLL_SECONDS
    while time.monotonic() < deadline and any(_alive(p) for p in pids):
        time.sleep(0.1)
    left = [p for p in pids if _alive(p)]
    for pid in left:  # the control's orphans: not left running after the test
        os.kill(pid, signal.SIGKILL)
    return left


def test_workers_exit_when_their_service_is_killed():
    """A SIGKILLed service cannot stop its workers; they notice and exit by themselves.
    Control: without the parent watch the same workers outlive the service."""
    assert _workers_left_by_a_killed_service("watch") == []
    assert _workers_left_by_a_killed_service("no-watch") != []
