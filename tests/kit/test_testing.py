"""The kit's test helpers: how many random games a test plays in make test and make soak."""

from __future__ import annotations

from services.kit.testing import random_game_count


def test_random_game_count_is_quick_by_default_and_the_soak_count_when_set(monkeypatch):
    monkeypatch.delenv("TABLETOP_RANDOM_GAMES", raising=False)
    assert random_game_count(30) == 30
    assert random_game_count(30, most=100) == 30
    monkeypatch.setenv("TABLETOP_RANDOM_GAMES", "1000")
    assert random_game_count(30) == 1000
    # A capped test plays at most its cap in the soak.
    assert random_game_count(30, most=100) == 100
    monkeypatch.setenv("TABLETOP_RANDOM_GAMES", "5")
    assert random_game_count(30) == 5 and random_game_count(30, most=100) == 5
