"""A closed-loop load generator: N concurrent callers, each waiting for its answer.

Calls per second and latency percentiles over a measured window after a warm-up. Each
caller owns its work (a game, a sequence of moves), so callers never contend with each
other the way two seats of one game would. A worker times its own call and returns the
seconds it took, so whatever it does around the call (making a new game when one ends)
is not counted.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import grpc


@dataclass
class LoadFigures:
    target: str
    concurrency: int
    calls: int
    errors: int
    seconds: float
    calls_per_second: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    mean_ms: float
    error_codes: dict[str, int] = field(default_factory=dict)
    cpu_cores: dict[str, float] = field(default_factory=dict)  # process -> cores busy

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


Worker = Callable[[], Awaitable[float]]


def percentile(ordered: list[float], q: float) -> float:
    if not ordered:
        return 0.0
    return ordered[min(len(ordered) - 1, int(len(ordered) * q))]


async def closed_loop(
    target: str,
    make_worker: Callable[[int], Awaitable[Worker]],
    concurrency: int,
    seconds: float,
    warmup: float = 0.5,
    cpu: Callable[[], dict[str, float]] | None = None,
) -> LoadFigures:
    """Run ``concurrency`` workers; each call of a worker is one timed request.

    ``cpu`` returns CPU seconds used so far by the processes under test (by name); the
    figures then carry each one's share of a core over the measured window.
    """
    workers = [await make_worker(i) for i in range(concurrency)]
    latencies: list[float] = []
    codes: Counter[str] = Counter()
    measuring = False
    stop = False

    async def run(worker: Worker) -> None:
        while not stop:
            try:
                took = await worker()
            except Exception as exc:
                if measuring:
                    code = exc.code() if isinstance(exc, grpc.aio.AioRpcError) else None
                    codes[code.name if code is not None else type(exc).__name__] += 1
                await asyncio.sleep(0.001)  # a failing target must not spin the loop
                continue
            if measuring:
                latencies.append(took)

    tasks = [asyncio.create_task(run(w)) for w in workers]
    await asyncio.sleep(warmup)
    cpu_before = cpu() if cpu else {}
    measuring = True
    started = time.perf_counter()
    await asyncio.sleep(seconds)
    measuring = False
    elapsed = time.perf_counter() - started
    cpu_after = cpu() if cpu else {}
    stop = True
    await asyncio.gather(*tasks, return_exceptions=True)
    latencies.sort()
    n = len(latencies)
    return LoadFigures(
        target=target,
        concurrency=concurrency,
        calls=n,
        errors=sum(codes.values()),
        seconds=round(elapsed, 3),
        calls_per_second=round(n / elapsed, 1),
        p50_ms=round(percentile(latencies, 0.5) * 1000, 3),
        p90_ms=round(percentile(latencies, 0.9) * 1000, 3),
        p99_ms=round(percentile(latencies, 0.99) * 1000, 3),
        mean_ms=round(sum(latencies) / n * 1000, 3) if n else 0.0,
        error_codes=dict(codes),
        cpu_cores={k: round((cpu_after[k] - cpu_before[k]) / elapsed, 3) for k in cpu_after},
    )
