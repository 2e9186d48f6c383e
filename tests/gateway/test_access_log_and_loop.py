"""The access line the gateway and the services write per call (sampled or not), and the
event loop setting they both read."""

from __future__ import annotations

import gc
import json
import os
from weakref import ref as weakref_to

import pytest
import structlog

from services.kit import config, logs
from services.kit.server import GC_THRESHOLD, loop_factory, tune_gc

METHOD = "tabletop.channeling.v1.ChannelingService/SubmitMove"


@pytest.fixture
def json_logs(capsys):
    """JSON logs as a process configures them, writing where capsys reads."""

    def configure() -> None:
        # Inside the test: pytest swaps stdout between setup and the call.
        logs.configure("info", "json")

    yield configure
    structlog.reset_defaults()
    logs._direct_json = False  # back to the in-process default: lines through structlog


def lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_every_call_has_its_line_with_what_the_handler_bound(json_logs, capsys):
    json_logs()
    access = logs.AccessLog()
    structlog.contextvars.bind_contextvars(game_id="g1", seat=1)
    try:
        access.record(METHOD, "OK", 0.0012345)
    finally:
        structlog.contextvars.clear_contextvars()
    (line,) = lines(capsys.readouterr().out)
    assert line["event"] == "rpc" and line["level"] == "info"
    assert (line["method"], line["code"], line["latency_ms"]) == (METHOD, "OK", 1.234)
    assert (line["game_id"], line["seat"]) == ("g1", 1)
    assert line["timestamp"].endswith("Z") and "sample" not in line


def test_the_line_is_the_one_structlog_would_write(json_logs, capsys):
    json_logs()
    structlog.get_logger("rpc").info("rpc", method=METHOD, code="OK", latency_ms=1.5)
    logs.AccessLog().record(METHOD, "OK", 0.0015)
    by_structlog, direct = lines(capsys.readouterr().out)
    by_structlog.pop("timestamp"), direct.pop("timestamp")
    assert direct == by_structlog


def test_sampling_keeps_one_in_n_successes_and_every_error(json_logs, capsys):
    json_logs()
    access = logs.AccessLog(sample=3)
    for _ in range(6):
        access.record(METHOD, "OK", 0.001)
    access.record(METHOD, "NOT_FOUND", 0.001)
    access.record(METHOD, "INTERNAL", 0.001)
    written = lines(capsys.readouterr().out)
    assert [r["code"] for r in written] == ["OK", "OK", "NOT_FOUND", "INTERNAL"]
    assert [r.get("sample") for r in written] == [3, 3, None, None]


def test_no_line_below_the_log_level(capsys):
    logs.configure("warning", "json")
    try:
        logs.AccessLog().record(METHOD, "OK", 0.001)
        assert capsys.readouterr().out == ""
    finally:
        structlog.reset_defaults()
        logs._direct_json, logs._info_enabled = False, True


def test_a_sample_below_one_is_refused():
    with pytest.raises(ValueError):
        logs.AccessLog(sample=0)


def test_the_event_loop_setting():
    uvloop = pytest.importorskip("uvloop")
    assert loop_factory("auto") is uvloop.new_event_loop
    assert loop_factory("uvloop") is uvloop.new_event_loop
    assert loop_factory("asyncio") is None
    with pytest.raises(config.ConfigError, match="TABLETOP_EVENT_LOOP"):
        loop_factory("trio")


class Node:
    next: object = None


@pytest.fixture
def collector():
    """The collector's settings as they were, back after the test."""
    before = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*before)


def test_the_collector_settings(collector):
    gc.unfreeze()
    tune_gc(GC_THRESHOLD, freeze=True)
    assert gc.get_threshold()[0] == GC_THRESHOLD
    frozen = gc.get_freeze_count()
    assert frozen > 10_000  # the modules and objects loaded so far, out of the walk
    # What a call allocates after the start is collected as before.
    cycle = Node()
    cycle.next = cycle
    gone = weakref_to(cycle)
    del cycle
    gc.collect()
    assert gone() is None and gc.get_freeze_count() == frozen


def test_zero_and_false_keep_pythons_collector(collector):
    gc.unfreeze()
    gc.set_threshold(700, 10, 10)
    tune_gc(0, freeze=False)
    assert gc.get_threshold() == (700, 10, 10) and gc.get_freeze_count() == 0


def test_a_negative_threshold_is_refused(collector):
    with pytest.raises(config.ConfigError, match="TABLETOP_GC_THRESHOLD"):
        tune_gc(-1, freeze=False)


def test_a_process_starts_with_the_collector_tuned(tmp_path):
    # The settings reach a real process: its --help lists them, and a bad one stops it
    # with one line naming the variable.
    import subprocess
    import sys

    shown = subprocess.run(
        [sys.executable, "-m", "services.channeling", "--help"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "TABLETOP_GC_THRESHOLD" in shown.stdout and "TABLETOP_GC_FREEZE" in shown.stdout
    bad = subprocess.run(
        [sys.executable, "-m", "services.channeling"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "TABLETOP_GC_THRESHOLD": "-5", "TABLETOP_PORT": "0"},
    )
    assert bad.returncode != 0
    assert bad.stderr.strip().splitlines()[-1].startswith("configuration error: TABLETOP_GC")
