"""The service's background loops (services/kit/server.py: the clock's tick and the
finished-games sweep) go on through a store outage, and say so without a traceback: a
traceback in the logs means a bug (the fault tests look for them), an unavailable store
during a PostgreSQL restart does not."""

from __future__ import annotations

import asyncio

import pytest
from structlog.testing import capture_logs

from services.kit import server
from services.kit.errors import Unavailable
from services.kit.store import StoreError


class Flaky:
    """A manager whose sweeps fail with ``error`` the first time, then find nothing."""

    def __init__(self, error: Exception) -> None:
        self.error = error
        self.calls = 0

    async def _next(self) -> int:
        self.calls += 1
        if self.calls == 1:
            raise self.error
        return 0

    async def sweep(self) -> int:
        return await self._next()

    async def remove_finished(self, retention: float) -> list[str]:
        await self._next()
        return []


async def _run(loop_of, manager: Flaky) -> list[dict]:
    with capture_logs() as logs:
        task = asyncio.create_task(loop_of(manager))
        while manager.calls < 3:  # failed once, then went on
            await asyncio.sleep(0.005)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
    return logs


LOOPS = {
    "tick": lambda m: server.tick(m, 0.001),  # type: ignore[arg-type]
    "sweep": lambda m: server.sweep(m, 60, 0.001),  # type: ignore[arg-type]
}


@pytest.mark.parametrize("name", sorted(LOOPS))
@pytest.mark.parametrize(
    "outage", [Unavailable("the store is unavailable"), StoreError("postgresql: gone")]
)
async def test_a_store_outage_is_a_warning_without_a_traceback_and_the_loop_goes_on(name, outage):
    logs = await _run(LOOPS[name], Flaky(outage))
    (failed,) = [e for e in logs if "unavailable" in e["event"]]
    assert failed["log_level"] == "warning"
    assert "exc_info" not in failed


@pytest.mark.parametrize("name", sorted(LOOPS))
async def test_control_any_other_failure_is_an_error_with_its_traceback(name):
    logs = await _run(LOOPS[name], Flaky(ZeroDivisionError("a bug")))
    (failed,) = [e for e in logs if "failed" in e["event"]]
    assert failed["log_level"] == "error"
    assert failed.get("exc_info") is True
