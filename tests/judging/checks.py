"""What the judged scenario asserts, as functions that return what is wrong (empty when
all is well), so that a control can feed them a broken case and see them object."""

from __future__ import annotations

import statistics


def strong_above_weak(shown: dict[str, int], strong: set[str]) -> list[str]:
    """The strong players' shown ratings end above the weak ones', by mean and median."""
    high = [v for p, v in shown.items() if p in strong]
    low = [v for p, v in shown.items() if p not in strong]
    if not high or not low:
        return [f"{len(high)} strong and {len(low)} weak players rated"]
    problems = []
    if statistics.mean(high) <= statistics.mean(low):
        problems.append(
            f"mean: strong {statistics.mean(high):.1f} <= weak {statistics.mean(low):.1f}"
        )
    if statistics.median(high) <= statistics.median(low):
        problems.append(
            f"median: strong {statistics.median(high)} <= weak {statistics.median(low)}"
        )
    return problems


def games_counted(counts: dict[str, int], finished: int, seats: int = 2) -> list[str]:
    """Every finished game counted once for each of its seats in the players' ratings."""
    total = sum(counts.values())
    return [] if total == seats * finished else [f"{total} games counted for {finished} played"]


def rebuild_equal(returncode: int, output: str) -> list[str]:
    """``rebuild --check`` found the stored standings equal to the replayed ones."""
    if returncode == 0 and "channeling: equal" in output:
        return []
    return [f"rebuild --check exited {returncode}: {output.strip()}"]
