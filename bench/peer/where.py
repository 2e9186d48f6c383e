"""Where a game service's time goes, from py-spy's collapsed stacks: each sample goes to
the kind of work of its innermost frame that names one (the rules, building messages,
the store, the access log and metrics, writing to watchers, auth and the interceptor,
other code of ours), or, with no frame of ours inside the event loop, to grpc.aio and
the loop themselves: the groups issue 29's levers are about."""

from __future__ import annotations

import re
from collections import Counter

from bench.profile import _LINE, _frame

# Tried on each frame from the innermost out; the first that matches decides.
KINDS: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "building view, header and turn messages",
        re.compile(
            r"/codec\.py|kit/wire\.py|kit/encoding\.py|engine/view\.py"
            r"|^handlers\.<locals>\.view "
        ),
    ),
    ("the rules (engine)", re.compile(r"/engine/|kit/kernel\.py|kit/moves\.py")),
    ("the store (SQLite append and its thread)", re.compile(r"kit/store/")),
    ("access log and metrics", re.compile(r"kit/logs\.py|kit/metrics\.py|structlog/|prometheus")),
    (
        "writing watch updates",
        re.compile(r"kit/watchers\.py|watch_game |_CountingContext\.write "),
    ),
    ("auth, limits and the interceptor", re.compile(r"kit/auth\.py|kit/limits\.py|interceptor")),
    ("handlers and the game manager (other code of ours)", re.compile(r"(services|gateway)/")),
)
LOOP = "grpc.aio and the event loop (no frame of ours)"
# The frames every sample of the process sits under: not work of their own.
OUTER = re.compile(r"<frozen runpy>|__main__\.py|kit/server\.py|gateway/server\.py|runners\.py")


def kind(stack: str) -> str:
    """The kind of work of one sample (its frames outermost first, ';'-separated)."""
    frames = [f for f in stack.split(";") if not OUTER.search(f)]
    for frame in reversed(frames):
        name, file = _frame(frame)
        text = f"{name} ({file})"
        for label, pattern in KINDS:
            if pattern.search(text):
                return label
    return LOOP


def where(raw: str) -> list[tuple[str, float]]:
    """Each kind's share of the samples, largest first."""
    counts: Counter[str] = Counter()
    for line in raw.splitlines():
        match = _LINE.match(line.strip())
        if match:
            counts[kind(match[1])] += int(match[2])
    total = sum(counts.values())
    return [(label, n / total) for label, n in counts.most_common()] if total else []
