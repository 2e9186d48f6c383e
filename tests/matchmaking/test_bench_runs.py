"""bench/matchmaking.py, run briefly so it cannot rot: figures come out; their values are
never asserted (benchmarks are not tests)."""

from __future__ import annotations

from bench import matchmaking


def test_the_bench_prints_its_figures(capsys) -> None:
    matchmaking.main(
        ["--players", "40", "--seconds", "5", "--rating-games", "20", "--population-rounds", "10"]
    )
    out = capsys.readouterr().out
    for text in ("channeling/2p", "glow/4p", "shen/2v2", "shen/3v3", "µs", "tables/cpu s", "p90"):
        assert text in out


def test_every_simulated_player_is_matched_once() -> None:
    shape = matchmaking._shape("channeling", "2p")
    figures = matchmaking.simulate(shape, players=60, seconds=5.0, seed=3)
    assert figures.matched == 60 and figures.tables == 30
    assert len(figures.waits) == 60 and min(figures.waits) >= 0
