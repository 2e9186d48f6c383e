"""A pytest plugin printing the reliability tests' figures at the end of a run: calls
fuzzed per service, faults injected, moves acknowledged and lost.

Tests record them with ``record_property("reliability_calls", ...)`` or
``record_property("reliability_faults", ...)``; they travel with the test reports, so they
survive pytest-xdist, and this prints them once. ``tests/reliability/conftest.py`` loads
it; a run with pytest-xdist that starts above this folder (``make test``) loads it with
``-p tests.reliability.figures``, because there the conftest is only seen by the workers.
"""

from __future__ import annotations

from collections import defaultdict


def pytest_terminal_summary(terminalreporter, exitstatus, config) -> None:
    fuzz: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    answers: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
    faults: list[dict] = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            if getattr(report, "when", None) != "teardown":  # it holds every property
                continue
            for key, value in getattr(report, "user_properties", ()):
                if key == "reliability_calls":
                    counts = fuzz[(value["service"], value["via"])]
                    for name in ("fuzzed", "total"):
                        counts[name] += value[name]
                    counts["tests"] += 1
                    for answer, n in value.get("answers", {}).items():
                        answers[(value["service"], value["via"])][answer] += n
                elif key == "reliability_faults":
                    faults.append(value)
    if not fuzz and not faults:
        return
    write = terminalreporter.write_line
    terminalreporter.section("reliability figures")
    for (service, via), counts in sorted(fuzz.items()):
        write(
            f"fuzz {service} {via}: {counts['fuzzed']} hostile calls "
            f"({counts['total']} with the checks) in {counts['tests']} tests"
        )
        if config.getoption("verbose") > 0:
            seen = answers[(service, via)]
            write("  answers: " + ", ".join(f"{k}={v}" for k, v in sorted(seen.items())))
    for run in faults:
        write("faults: " + ", ".join(f"{k}={v}" for k, v in run.items() if not isinstance(v, dict)))
        for k, v in run.items():
            if isinstance(v, dict):
                write(f"  {k}: " + ", ".join(f"{a}={b}" for a, b in sorted(v.items())))
