"""The reliability tests: their figures are printed at the end of the run."""

from __future__ import annotations

from tests.reliability import figures


def pytest_configure(config) -> None:
    if not config.pluginmanager.is_registered(figures):
        config.pluginmanager.register(figures, "tests.reliability.figures")
