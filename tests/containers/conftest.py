"""Container tests: skipped with the reason on a machine without Docker or without the
images; in CI (CI=true) the same condition fails the run instead."""

from __future__ import annotations

import pytest

from tests.containers.harness import IN_CI, engine_problem

_problem: list[str | None] = []


@pytest.fixture(autouse=True)
def docker_engine() -> None:
    if not _problem:
        _problem.append(engine_problem())
    problem = _problem[0]
    if problem is None:
        return
    if IN_CI:
        pytest.fail(f"CI=true and the container tests cannot run: {problem}", pytrace=False)
    pytest.skip(f"container tests skipped: {problem}")
