"""Losing cards, players running out, both ways to win, and the round limit."""

from __future__ import annotations

from services.kit.engine import GameOver, IllegalMove
from services.kit.testing import assert_refused_unchanged
from services.shen import engine
from services.shen.engine import Step
from services.shen.engine.rulebook import LOSE as R_LOSE
from services.shen.engine.turn import carry_on as _advance

from .helpers import (
    card,
    clear_field,
    do,
    loc,
    mv,
    put_avatar,
    put_counters,
    set_hand,
    started,
    texts,
)


def owing(players=2, seat=1, n=1, **options):
    """Seat 0's Claim, Move, and Attack Phase; ``seat`` owes ``n`` cards."""
    state = started(players=players, **options)
    clear_field(state)
    state.active = 0
    state.step = Step.COMMAND
    state.tasks.append(("lose", seat, n))
    return state


def test_the_loser_chooses_each_card_from_hand_deck_or_discard_pile():
    state = owing(n=3)
    p = state.players[1]
    set_hand(state, 1, "tide_guard", "tide_guard", "tide_flow")
    p.discard = [card("tide_swell"), card("tide_riptide")]
    assert engine.to_act(state) == (1,)
    assert texts(state) == [
        "lose hand tide_flow",
        "lose hand tide_guard",
        "lose deck",
        "lose discard tide_riptide",
        "lose discard tide_swell",
    ]
    top = p.deck[-1]
    do(state, "lose deck", "lose discard tide_swell", "lose hand tide_guard")
    assert p.removed == [top, card("tide_swell"), card("tide_guard")]
    assert p.hand == sorted([card("tide_guard"), card("tide_flow")])
    assert p.discard == [card("tide_riptide")]
    assert not state.tasks and engine.to_act(state) == (0,)
    # Lost cards are set aside face up: everyone sees them.
    assert engine.view(state, 0).players[1].removed == tuple(engine.CARDS[c].id for c in p.removed)


def test_a_card_not_held_cannot_be_chosen():
    state = owing()
    state.players[1].hand = [card("tide_flow")]
    err = assert_refused_unchanged(engine, state, 1, mv("lose hand tide_guard"), IllegalMove)
    assert err.rule == R_LOSE
    err = assert_refused_unchanged(engine, state, 1, mv("pass"), IllegalMove)
    assert err.rule == R_LOSE


def test_running_out_of_cards_puts_a_player_out_and_the_last_with_cards_wins():
    state = owing(n=5)
    p = state.players[1]
    p.hand, p.deck, p.discard = [card("tide_flow")], [card("tide_guard")], []
    put_avatar(state, 1, "tide_guard", "c6")
    do(state, "lose deck")
    assert engine.outcome(state) is None
    do(state, "lose hand tide_flow")
    result = engine.outcome(state)
    assert result.reason == "LAST_WITH_CARDS" and result.winners == (0,)
    assert state.players[1].out and loc("c6") not in state.at  # its Avatars leave
    assert engine.to_act(state) == ()
    assert_refused_unchanged(engine, state, 0, mv("end"), GameOver)


def test_an_out_player_is_skipped_and_play_goes_on_while_two_remain():
    state = owing(players=3, seat=1, n=1)
    p = state.players[1]
    p.hand, p.deck, p.discard = [card("tide_flow")], [], []
    do(state, "lose hand tide_flow")
    assert engine.outcome(state) is None and state.players[1].out
    do(state, "end")
    assert state.active == 2


def test_a_team_loses_only_when_none_of_its_players_has_cards():
    state = owing(players=4, teams=2, seat=1, n=1)  # seats 1 and 3 together
    p = state.players[1]
    p.hand, p.deck, p.discard = [card("tide_flow")], [], []
    do(state, "lose hand tide_flow")
    assert engine.outcome(state) is None
    q = state.players[3]
    q.hand, q.deck, q.discard = [card("gale_gust")], [], []
    state.tasks.append(("lose", 3, 1))
    do(state, "lose hand gale_gust")
    result = engine.outcome(state)
    assert result.reason == "LAST_WITH_CARDS" and result.winners == (0, 2)


def test_playing_the_last_card_as_an_avatar_leaves_no_cards():
    # "Previously played Avatar, Item, or Remains in Play cards do not count".
    state = started()
    clear_field(state)
    state.active, state.step = 0, Step.INFLUENCE
    p = state.players[0]
    p.deck, p.discard = [], []
    set_hand(state, 0, "ember_scout")
    put_counters(state, 0, "D3")
    do(state, "play ember_scout")
    assert engine.outcome(state) is None  # the card counts until it lands
    do(state, "target d3")
    assert engine.outcome(state).winners == (1,)


def test_an_instant_played_last_lands_in_the_discard_pile_and_still_counts():
    state = started()
    clear_field(state)
    state.active, state.step = 0, Step.INFLUENCE
    p = state.players[0]
    p.deck, p.discard = [], []
    set_hand(state, 0, "ember_kindling")
    put_counters(state, 0, "D3")
    do(state, "play ember_kindling", "target C3")
    assert engine.outcome(state) is None and p.discard == [card("ember_kindling")]


def test_nobody_with_cards_is_everyone_losing():
    state = owing()
    for p in state.players:
        p.hand, p.deck, p.discard = [], [], []
    state.tasks.clear()
    _advance(state, [])
    result = engine.outcome(state)
    assert result.reason == "NO_CARDS_LEFT" and result.winners == ()


def play_turns(state, n):
    for _ in range(n):
        seat = state.active
        if engine.outcome(state) is not None:
            return
        engine.apply(state, seat, mv("draw"))
        engine.apply(state, seat, mv("pass"))
        engine.apply(state, seat, mv("end"))


def test_the_round_limit_ends_the_game_with_its_tie_break():
    # Tie-break: most Anchor Points held, then most cards left.
    state = started(round_limit=2)
    state.claims[loc("a1")] = 1
    play_turns(state, 3)
    assert engine.outcome(state) is None
    play_turns(state, 1)
    result = engine.outcome(state)
    assert result.reason == "ROUND_LIMIT" and result.winners == (1,)
    assert all(p.turns == 2 for p in state.players)

    state = started(round_limit=1)
    state.players[0].deck.pop()
    state.players[0].removed.append(0)
    play_turns(state, 2)
    assert engine.outcome(state).winners == (1,)  # one card more

    state = started(round_limit=1)
    play_turns(state, 2)
    assert engine.outcome(state).winners == (0, 1)  # equal: a shared win


def test_a_default_game_has_no_round_limit_a_player_wins_when_they_claim_all_anchor_points_or_are_the_only_player_left_with_cards():  # noqa: E501
    # The rulebook ends a game only those two ways: a default game plays on past turn 40.
    state = started()
    assert state.options.round_limit == 0
    for p in state.players:
        p.turns = 40
    play_turns(state, 2)
    assert engine.outcome(state) is None
    assert [p.turns for p in state.players] == [41, 41]
    # ...until the rulebook ends it: here seat 1 is left without cards.
    state.step = Step.COMMAND
    state.tasks.append(("lose", 1, 1))
    p = state.players[1]
    p.hand, p.deck, p.discard = [card("tide_flow")], [], []
    do(state, "lose hand tide_flow")
    assert engine.outcome(state).reason == "LAST_WITH_CARDS"
    # Control: the house rule (round_limit 40) ends the same position at turn 41.
    limited = started(round_limit=40)
    for p in limited.players:
        p.turns = 40
    play_turns(limited, 1)
    assert engine.outcome(limited).reason == "ROUND_LIMIT"
