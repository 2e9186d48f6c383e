"""The scale and idle sections run end to end at their smallest size and print what they
measured (figures are never judged here: the machine is shared)."""

from __future__ import annotations

import contextlib

from bench import idle, scale
from bench.idle import ROOT


def test_the_scale_section_plays_with_spectators_and_reports_each_part():
    out = scale.section([(2, 3)], seconds=1.5, rounds=1)
    assert "errors" not in out, out.get("errors")
    (row,) = out["points"]
    assert row["games"] == 2 and row["watchers"] == 3
    assert row["moves"] > 0 and row["errors"] == {}
    assert set(row["us_per_move"]) == {"service", "gateway", "envoy"}
    assert row["us_per_move"]["service"] > 0
    # The one spectator of each game hears of every move (the window may cut one short).
    assert 0.8 <= row["spectator_messages_per_move"] <= 1.2, row
    text = "\n".join(scale.markdown(out))
    assert "| 2 | 3 |" in text


def test_a_point_that_cannot_be_set_up_is_reported_not_hidden(monkeypatch):
    """Control for the above: a failing point is listed with its error and no figures.
    The point fails before it calls anything, so no processes are started for it."""

    async def broken(*args, **kwargs):
        raise RuntimeError("no games today")

    @contextlib.contextmanager
    def no_stack(root, workdir):
        yield {}, "127.0.0.1:1"

    monkeypatch.setattr(scale, "point", broken)
    monkeypatch.setattr(scale.stacks, "stack", no_stack)
    out = scale.section([(1, 2)], seconds=0.5, rounds=1)
    assert out["points"] == []
    assert out["errors"] == [{"games": 1, "watchers": 2, "error": "RuntimeError: no games today"}]
    assert "not measured (RuntimeError: no games today)" in "\n".join(scale.markdown(out))


def test_the_idle_section_measures_each_tree_with_its_settings():
    roots = {"this tree": (ROOT, {}), "slow": (ROOT, {"TABLETOP_CLOCK_INTERVAL_SECONDS": "5"})}
    out = idle.section(roots, seconds=1.0, rounds=1)
    assert set(out["trees"]) == {"this tree", "slow"}
    assert out["settings"] == {"slow": {"TABLETOP_CLOCK_INTERVAL_SECONDS": "5"}}
    for tree in out["trees"].values():
        assert set(tree["ms_per_second"]) == set(idle.PARTS)
        assert all(v >= 0 for v in tree["ms_per_second"].values())
    assert "| slow |" in "\n".join(idle.markdown(out))


def test_players_with_a_think_time_move_fewer_times_a_second():
    """--scale-think: each player waits before each move; the same point closed loop
    (the control, the first test) moves many times more often in the same window."""
    out = scale.section([(2, 2)], seconds=2.0, rounds=1, think=1.0)
    assert "errors" not in out, out.get("errors")
    (row,) = out["points"]
    assert row["moves"] > 0
    # Two games, one player to act each, 0.5-1.5 s a move: at most about 4 a second.
    assert row["moves_per_second"] <= 5, row
    assert "each player thinking 1 s a move" in "\n".join(scale.markdown(out))
