"""Balance: a simple greedy player finishes games in the 4-6 rounds the rulebook expects.
Random play is slower (it spends at random and takes essences off its Places of Power);
its figures are printed."""

from __future__ import annotations

import statistics

import pytest

import services.resarcana.engine as E
from services.kit.testing import random_game_count
from tests.resarcana.bots import rounds_played

GAMES = random_game_count(30)


@pytest.mark.parametrize("setup", ["first_game", "draft"])
def test_greedy_games_last_four_to_six_rounds(setup: str) -> None:
    options = E.Options(setup=setup, round_limit=0)
    greedy = rounds_played(range(GAMES), options, ("greedy", "greedy"))
    random_rounds = rounds_played(
        range(GAMES), E.Options(setup=setup, round_limit=0), ("random", "random")
    )
    print(
        f"\n{setup}: greedy rounds median {statistics.median(greedy)} "
        f"(min {min(greedy)}, max {max(greedy)}); random median "
        f"{statistics.median(random_rounds)} (min {min(random_rounds)}, max {max(random_rounds)})"
    )
    assert 4 <= statistics.median(greedy) <= 6
    # Nine in ten games within 8 rounds (in 1,000 full games a rare one runs to 16, when
    # both players sit just under 10 VP with the Monuments gone).
    assert sorted(greedy)[int(len(greedy) * 0.9) - 1] <= 8
