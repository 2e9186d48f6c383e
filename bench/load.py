"""A closed-loop load generator: N concurrent callers, each waiting for its answer.

Calls per second and latency percentiles over a measured window after a warm-up. Each
caller owns its work (a game, a sequence of moves), so callers never contend with each
other the way two seats of one game would.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from typing import Any


@dataclass
class LoadFigures:
    target: str
    concurrency: int
    calls: int
    errors: int
    seconds: float
    calls_per_second: float
    p50_ms: float
    p99_ms: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


Worker = Callable[[], Awaitable[None]]


async def closed_loop(
    target: str,
    make_worker: Callable[[int], Awaitable[Worker]],
    concurrency: int,
    seconds: float,
    warmup: float = 0.5,
) -> LoadFigures:
    """Run ``concurrency`` workers; each call of a worker is one timed request."""
    workers = [await make_worker(i) for i in range(concurrency)]
    latencies: list[float] = []
    errors = 0
    measuring = False
    stop = False

    async def run(worker: Worker) -> None:
        nonlocal errors
        clock = time.perf_counter
        while not stop:
            t0 = clock()
            try:
                await worker()
            except Exception:
                if measuring:
                    errors += 1
                continue
            if measuring:
                latencies.append(clock() - t0)

    tasks = [asyncio.create_task(run(w)) for w in workers]
    await asyncio.sleep(warmup)
    measuring = True
    started = time.perf_counter()
    await asyncio.sleep(seconds)
    measuring = False
    elapsed = time.perf_counter() - started
    stop = True
    await asyncio.gather(*tasks, return_exceptions=True)
    latencies.sort()
    n = len(latencies)
    return LoadFigures(
        target=target,
        concurrency=concurrency,
        calls=n,
        errors=errors,
        seconds=round(elapsed, 3),
        calls_per_second=round(n / elapsed, 1),
        p50_ms=round(latencies[n // 2] * 1000, 3) if n else 0.0,
        p99_ms=round(latencies[min(n - 1, int(n * 0.99))] * 1000, 3) if n else 0.0,
    )
