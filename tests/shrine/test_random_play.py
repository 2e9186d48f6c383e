"""Random play to the end (OpenSpiel's habit): every configuration, with the invariants
after every move and the leak check on every view (kit ``check_random_game``)."""

from __future__ import annotations

import random

import pytest

from services.kit.testing import check_random_game, random_game_count
from services.shrine import engine
from services.shrine.engine.content import CONTENT
from tests.shrine.invariants import check_state, check_view

CONFIGURATIONS = {
    "base": engine.Options(),
    "radiant_shapes": engine.Options(radiant_shapes=True),
}
GAMES = random_game_count(50)  # per configuration: 1,000 in make soak


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_random_games_reach_an_outcome(name: str) -> None:
    options = CONFIGURATIONS[name]
    reasons: dict[str, int] = {}
    for seed in range(GAMES):
        played = check_random_game(
            engine, seed, 2, options, invariants=check_state, leak_check=check_view
        )
        assert played.outcome is not None
        reasons[played.outcome.reason] = reasons.get(played.outcome.reason, 0) + 1
    # random players reach the end of the duel, not only the early loss
    assert reasons.get("NO_VALID_PLACEMENT", 0) < GAMES
    assert sum(n for r, n in reasons.items() if r != "NO_VALID_PLACEMENT") > 0


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_random_legal_moves_ignore_every_code_card_and_hidden_hand(name: str) -> None:
    """A seat's legal moves may use only what that seat knows: swapping both Code cards
    for others of the set, and emptying the opponent's hand, changes none of them."""
    options = CONFIGURATIONS[name]
    for seed in range(max(5, GAMES // 10)):
        state = engine.new_game(seed, 2, options)
        chooser = random.Random(seed)
        members = CONTENT.code_sets[state.code_set]
        while engine.outcome(state) is None:
            seat = engine.to_act(state)[0]
            listed = engine.legal_moves(state, seat)
            real = [p.code for p in state.players]
            hand = state.players[1 - seat].hand
            state.players[0].code, state.players[1].code = chooser.sample(members, 2)
            state.players[1 - seat].hand = []
            assert engine.legal_moves(state, seat) == listed
            state.players[0].code, state.players[1].code = real
            state.players[1 - seat].hand = hand
            engine.apply(state, seat, chooser.choice(listed))
