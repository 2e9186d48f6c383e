"""The observability tests need Debian's `prometheus` package (prometheus and promtool):
skipped with the reason where it is missing; in CI (CI=true) the same condition fails
the run instead, so CI never passes without running them."""

from __future__ import annotations

import os
import shutil

import pytest

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def tool(name: str) -> str:
    """The path of ``name``, or skip (fail in CI) when it is not installed."""
    found = shutil.which(name)
    if found is None:
        problem = f"{name} not found: apt-get install -y prometheus"
        if IN_CI:
            pytest.fail(f"CI=true and the observability tests cannot run: {problem}", pytrace=False)
        pytest.skip(problem)
    return found


@pytest.fixture
def promtool() -> str:
    return tool("promtool")


@pytest.fixture
def prometheus() -> str:
    return tool("prometheus")
