"""The access line written without json.dumps' calls per line (services/kit/logs.py) is
exactly json.dumps' text of the same fields in the same order, whatever the handler bound;
and the lines of calls that end together are flushed once the event loop has run them,
not one system call each."""

from __future__ import annotations

import asyncio
import datetime
import io
import json
import time
from typing import Any

import pytest
import structlog

from services.kit import logs

BOUND: list[dict[str, Any]] = [
    {},
    {"game_id": "g-1", "seat": 1, "request_id": "r-1"},
    # What a naive f-string would get wrong: quotes, backslashes, control and non-ASCII
    # characters in what a client sent (a game id, a request id).
    {"game_id": 'a"b\\c\n\t\x01', "request_id": "é中😀", "seat": 0},
    {"reason": "NOT_YOUR_TURN", "flag": True, "none": None, "ratio": 0.1, "big": 10**30},
    {"nested": {"a": [1, 2.5, "x"]}, "nan": float("nan"), "negative": -3},
    {"trace_id": "0" * 32, "span_id": "f" * 16},
    # A bound field named as one of the line's own: json.dumps keeps its first place.
    {"code": "bound", "game_id": "g-2", "event": "x"},
]


def _reference(bound: dict[str, Any], extra: dict[str, Any], stamp: str) -> str:
    """The line as AccessLog wrote it with json.dumps (its code before this change)."""
    line = dict(bound)
    line["method"] = "tabletop.glow.v1.GlowService/SubmitMove"
    line["code"] = "OK"
    line["latency_ms"] = 1.234
    line.update(extra)
    line["event"] = "rpc"
    line["level"] = "info"
    line["timestamp"] = stamp
    return json.dumps(line) + "\n"


@pytest.mark.parametrize("bound", BOUND)
@pytest.mark.parametrize("extra", [{}, {"sample": 10}])
def test_the_line_is_json_dumps_text_of_the_same_fields(bound, extra):
    before = datetime.datetime.now(datetime.UTC)
    text = logs._line(dict(bound), "tabletop.glow.v1.GlowService/SubmitMove", "OK", 1.234, extra)
    after = datetime.datetime.now(datetime.UTC)
    stamp = json.loads(text)["timestamp"]
    assert text == _reference(bound, extra, stamp)
    when = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert before - datetime.timedelta(milliseconds=1) <= when <= after
    assert stamp.endswith("Z")


def test_the_control_a_line_written_without_escaping_would_differ():
    """Control: the strings above are ones an unescaped line gets wrong, so the
    comparison with json.dumps would catch the escaping being lost."""
    bound = BOUND[2]
    naive = ", ".join(f'"{k}": "{v}"' for k, v in bound.items() if isinstance(v, str))
    proper = ", ".join(
        f"{json.dumps(k)}: {json.dumps(v)}" for k, v in bound.items() if isinstance(v, str)
    )
    assert naive != proper


def test_the_seconds_text_follows_the_clock(monkeypatch):
    """The second's text is kept between lines: a line in the next second has its own."""
    now = [1_796_000_000.25]
    monkeypatch.setattr(time, "time", lambda: now[0])
    first = logs._now()
    now[0] += 1.5
    second = logs._now()
    now[0] = 1_796_000_002.0
    third = logs._now()  # on the second: isoformat() writes no fraction
    for text, at in ((first, 1_796_000_000.25), (second, 1_796_000_001.75), (third, now[0])):
        # As the line had it: datetime's isoformat, in UTC, with a Z.
        reference = datetime.datetime.fromtimestamp(at, datetime.UTC).isoformat()
        assert text == reference.replace("+00:00", "Z")


class CountingOut(io.StringIO):
    flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        super().flush()


async def test_lines_of_calls_ending_together_are_flushed_once(monkeypatch):
    out = CountingOut()
    monkeypatch.setattr(logs, "_direct_json", True)
    monkeypatch.setattr(logs, "_info_enabled", True)
    monkeypatch.setattr("sys.stdout", out)
    access = logs.AccessLog()
    structlog.contextvars.clear_contextvars()
    for _ in range(5):
        access.record("tabletop.glow.v1.GlowService/GetGame", "OK", 0.001)
    assert out.flushes == 0  # not yet: the loop has not run what is ready
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert out.flushes == 1
    assert len(out.getvalue().splitlines()) == 5
    for line in out.getvalue().splitlines():
        assert json.loads(line)["event"] == "rpc"
    access.record("tabletop.glow.v1.GlowService/GetGame", "OK", 0.001)
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    assert out.flushes == 2


def test_outside_a_loop_a_line_is_flushed_at_once(monkeypatch):
    out = CountingOut()
    monkeypatch.setattr(logs, "_direct_json", True)
    monkeypatch.setattr(logs, "_info_enabled", True)
    monkeypatch.setattr("sys.stdout", out)
    logs.AccessLog().record("tabletop.glow.v1.GlowService/GetGame", "OK", 0.001)
    assert out.flushes == 1
