"""The bench gives each game's evaluation cost (what the bots ask of every position their
search stops at): a figure the engine section prints and the report tables, measured
there instead of printed by a test that asserts nothing."""

from __future__ import annotations

import pytest

from bench import report
from bench.engine import configurations, evaluation_cost, measure
from services import registry


@pytest.mark.parametrize("name", registry.names())
def test_the_engine_section_times_the_evaluation_and_prints_it(name):
    engine = registry.by_name(name).engine()
    label, players, options = configurations(engine)[0]
    figures = measure(engine, players, options, label, seconds=0, min_games=1)
    assert figures.evaluate_us is not None and figures.evaluate_us > 0
    row = figures.as_dict()
    assert f"evaluate {row['evaluate_us']:>6.1f} µs" in report.engine_line(row)
    table = report.markdown({"engine": [row]})
    assert "µs/evaluation" in table and f"| {row['evaluate_us']:.1f} |" in table


def test_a_game_without_an_evaluation_has_no_figure():
    # The control: the figure is the game's hook timed, not a number made up without it.
    class NoHook:
        GAME = registry.by_name("channeling").engine().GAME

    assert evaluation_cost(NoHook(), 2, None) is None
    row = {
        "game": "x", "configuration": "2 players", "decisions_per_second": 1.0,
        "games_per_second": 1.0, "mean_decisions_per_game": 1.0, "median_decision_us": 1.0,
        "p99_decision_us": 1.0, "evaluate_us": None,
    }  # fmt: skip
    assert "evaluate" not in report.engine_line(row)
