"""Seeded random games to the end, with the invariants checked after every move."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import pytest

from services.channeling import engine
from services.channeling.engine.content import CARDS, CUBES_PER_COLOUR
from services.kit.testing import (
    assert_golden,
    check_random_game,
    random_game_count,
    record_playthrough,
)

# Games per Overchanneling reading: step 6 (the default) gets most of the quick run
# (make test: 120 and 40, in four blocks each; make soak: 1,000 each).
GAMES = {"splendor": random_game_count(120), "vigor": random_game_count(40)}
GOLDEN = Path(__file__).parent / "golden"


def invariants(state: engine.State) -> None:
    # Every card is in exactly one place: deck, grid or someone's acquired pile.
    placed = [c for c in state.grid if c is not None]
    everywhere = state.deck + placed + state.acquired[0] + state.acquired[1]
    assert sorted(everywhere) == sorted(c.id for c in CARDS), "cards not conserved"
    # Each colour's 50 cubes: supply, on cards, or kept as Overchanneling.
    for seat in (0, 1):
        on_cards = sum(cell[seat] for cell in state.cubes)
        total = state.supply[seat] + on_cards + state.overchanneling[seat]
        assert total == CUBES_PER_COLOUR, f"seat {seat} has {total} cubes"
        assert state.supply[seat] >= 0 and state.overchanneling[seat] >= 0
    for cell, (light, dark) in enumerate(state.cubes):
        assert light >= 0 and dark >= 0
        if state.step == "play_glyph":
            assert not (light and dark), "both colours left on a card after removal"
        if state.grid[cell] is None:
            assert light == dark == 0, "cubes on a gap"
    druids = state.druids[0] + state.druids[1]
    assert len(set(druids)) == 4, "two Druids on one card"
    assert all(state.grid[c] is not None or c in state.gaps or not state.deck for c in druids)
    assert sorted(state.hands[0] + state.played[0]) == list(range(8))
    assert sorted(state.hands[1] + state.played[1]) == list(range(8))


def leak_check(state: engine.State, seen: engine.View, seat: int | None) -> None:
    """The view must not depend on the deck's order or the generator: the only secrets."""
    if len(state.deck) > 1:
        other = copy.deepcopy(state)
        other.deck.reverse()
        other.rng.seed(12345)
        assert engine.view(other, seat) == seen, "the view depends on hidden information"
    text = repr(seen)
    assert "rng" not in text.lower() and "seed" not in text.lower()


@pytest.mark.parametrize("block", range(4))
@pytest.mark.parametrize("overchanneling", sorted(GAMES))
def test_random_games_reach_an_outcome_with_invariants(overchanneling, block):
    options = engine.Options(overchanneling=overchanneling)
    reasons: Counter[str] = Counter()
    seeds = range(block, GAMES[overchanneling], 4)
    for seed in seeds:
        played = check_random_game(
            engine, seed, 2, options, invariants=invariants, leak_check=leak_check
        )
        reasons[played.outcome.reason] += 1
        assert max(len(a) for a in played.state.acquired) >= 7
    assert sum(reasons.values()) == len(seeds)


@pytest.mark.parametrize("seed", [1, 2])
def test_golden_playthrough(seed):
    assert_golden(GOLDEN / f"seed{seed}.txt", record_playthrough(engine, seed, 2))
