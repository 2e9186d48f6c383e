"""Bot decisions in worker processes, so a search never blocks the service's event loop.

Workers are started with the "spawn" context, never "fork": the service runs threads
(gRPC's, the store's), and a forked child inherits their locks in whatever state they
were. Each worker lowers its CPU priority and imports every engine when it starts
(``_start_worker``); ``warm()`` starts them all ahead of the first decision, so that
decision is not charged a process start. A worker exits by itself when its service dies
without stopping it (a SIGKILL gives no chance to), instead of living on as an orphan.

Searches for tables of bots alone give way: the pool holds one shared flag
(``give_way``) that the service raises while a person waits for a worker, and such a
search stops at its next check (after levels.YIELD_FLOOR_MS), its best move so far
taken; a person's bot or a timeout's move never gives way.

A decision that raises in a worker raises the same exception in the caller. An
exception that cannot travel between processes (one whose constructor pickling cannot
rebuild) is re-raised as :class:`BotFailure` carrying its type and message. A worker
that dies breaks the executor: the decision raises ``BrokenProcessPool`` and the pool
starts a fresh executor for the next one.
"""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import pickle
import secrets
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from services import registry
from services.kit.bots.clock import Flag
from services.kit.bots.levels import decide_text, level_of


class BotFailure(RuntimeError):
    """A decision failed in a worker with an exception that could not be sent back."""


def default_workers() -> int:
    """One less than the cores, at least one: the event loop keeps a core."""
    return max(1, (os.cpu_count() or 1) - 1)


# How much lower a worker's CPU priority is than the service's: a search is background
# work, and where cores are few (a pod's one, a laptop's two) the event loop serving
# every game should not wait for it.
WORKER_NICENESS = 10


# A worker whose service died without stopping it (SIGKILL, the OOM killer) notices
# within this many seconds that its parent changed, and exits: it is never left behind.
PARENT_POLL_SECONDS = 1.0
# Off only to show, in the tests, what the watch prevents.
WATCH_PARENT = True


# This worker's copy of the pool's give-way flag (shared memory, set at the start).
_GIVE_WAY: Flag | None = None


def _start_worker(parent: int | None, give_way: Flag | None = None) -> None:
    global _GIVE_WAY
    _GIVE_WAY = give_way
    os.nice(WORKER_NICENESS)  # raising one's own niceness needs no privilege
    if parent is not None:
        threading.Thread(target=_exit_without, args=(parent,), daemon=True).start()
    for name in registry.names():
        registry.by_name(name).engine()


def _exit_without(parent: int) -> None:
    """Exit once the parent is gone (the worker is then re-parented: getppid changes)."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(0)


def _ready() -> int:
    return os.getpid()


def _decide_in_worker(
    game_name: str,
    snapshot: bytes,
    seat: int,
    level: str,
    seed: int,
    ms: float | None,
    players: int | None,
    cap_ms: float | None = None,
    gives_way: bool = False,
) -> str:
    try:
        state = pickle.loads(snapshot)
        flag = _GIVE_WAY if gives_way else None
        return decide_text(game_name, state, seat, level, seed, ms, players, cap_ms, flag)
    except Exception as exc:
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:
            raise BotFailure(f"{type(exc).__name__}: {exc}") from None
        raise


class BotPool:
    """A process pool deciding bot moves; ``await decide(...)`` returns the move's text.

    ``workers`` defaults to one less than the cores (at least one); the service passes
    TABLETOP_BOT_WORKERS. ``ms_per_decision`` bounds each decision (the service passes
    TABLETOP_BOT_MS_PER_DECISION); the level takes its share of it (levels.py).
    """

    def __init__(self, workers: int | None = None, ms_per_decision: float = 500.0) -> None:
        if workers is not None and workers < 1:
            raise ValueError(f"a bot pool needs at least one worker, not {workers}")
        if ms_per_decision <= 0:
            raise ValueError(f"the time per decision must be positive, not {ms_per_decision}")
        self.workers = workers if workers is not None else default_workers()
        self.ms_per_decision = ms_per_decision
        self._context = multiprocessing.get_context("spawn")
        # One byte of shared memory every worker reads: raised, searches that may give
        # way stop (see give_way).
        self._give_way = self._context.RawValue("b", 0)
        self._executor = self._start()

    def _start(self) -> ProcessPoolExecutor:
        return ProcessPoolExecutor(
            max_workers=self.workers,
            mp_context=self._context,
            initializer=_start_worker,
            initargs=(os.getpid() if WATCH_PARENT else None, self._give_way),
        )

    def give_way(self, on: bool) -> None:
        """Raise (or lower) the flag: searches asked with ``gives_way`` stop now, their
        best move so far taken, so the next decision (a person's) starts at once."""
        self._give_way.value = 1 if on else 0

    async def warm(self) -> None:
        """Start every worker now (each imports the engines), not at the first decision."""
        loop = asyncio.get_running_loop()
        await asyncio.gather(
            *(loop.run_in_executor(self._executor, _ready) for _ in range(self.workers))
        )

    async def decide(
        self,
        game_name: str,
        state: Any,
        seat: int,
        level: str,
        *,
        seed: int | None = None,
        players: int | None = None,
        cap_ms: float | None = None,
        gives_way: bool = False,
    ) -> str:
        """``seat``'s move at ``level`` in the text form, decided in a worker.

        ``seed`` makes the decision reproducible; by default it is drawn from the
        system's generator (never derive it from the game's own seed). ``cap_ms`` bounds
        the search below the level's budget; with ``gives_way`` it stops early while the
        flag of :meth:`give_way` is raised. Decisions are handed to the workers first
        come, first served: one asked now waits only for those asked before it.
        """
        level_of(level)  # an unknown level fails here, not in a worker
        registry.by_name(game_name)
        seed = seed if seed is not None else secrets.randbits(64)
        # Taken now: the executor sends its arguments later, from another thread, and
        # the live state may take another seat's move meanwhile.
        snapshot = pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL)
        loop = asyncio.get_running_loop()
        executor = self._executor
        try:
            return await loop.run_in_executor(
                executor,
                _decide_in_worker,
                game_name,
                snapshot,
                seat,
                level,
                seed,
                self.ms_per_decision,
                players,
                cap_ms,
                gives_way,
            )
        except BrokenProcessPool:
            if self._executor is executor:
                self._executor = self._start()
            raise

    def close(self) -> None:
        """Stop the workers: queued decisions are cancelled, one under way is waited for
        (at most its budget). From a coroutine, ``await aclose()`` instead."""
        self._executor.shutdown(wait=True, cancel_futures=True)

    async def aclose(self) -> None:
        """``close()`` off the event loop, so a search being finished does not block it."""
        await asyncio.to_thread(self.close)
