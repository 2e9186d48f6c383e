"""Pre-Game: options, decks, the 2d6 roll, Realm Stones and their Shén counters."""

from __future__ import annotations

from collections import Counter

import pytest

from services.kit.engine import BadOptions, IllegalMove, NotYourDecision
from services.kit.testing import assert_refused_unchanged
from services.shen import engine
from services.shen.engine import POOL, Step
from services.shen.engine.rulebook import REALM_STONE as R_STONE
from services.shen.engine.state import roll_for_first

from .helpers import Dice, card, loc, mv, started, texts


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (1, {}),
        (7, {}),
        (2, {"size": 3}),
        (2, {"size": 16}),
        (2, {"anchor_points": ("a1", "a2", "a3", "a4", "a5", "a6", "a7")}),
        (2, {"anchor_points": ("a1", "a1")}),
        (2, {"anchor_points": ("i9",)}),
        (2, {"anchor_points": ("A1",)}),
        (2, {"deck_size": 39}),
        (2, {"deck_size": 61}),
        (2, {"realms": ("ember",)}),
        (2, {"realms": ("ember", "lava")}),
        (2, {"decks": ("",)}),
        (2, {"decks": ("ember_scout*40", "")}),  # more than four copies
        (2, {"decks": ("ember_scout*4", "")}),  # not the agreed size
        (2, {"decks": ("no_card*40", "")}),
        (2, {"teams": 2}),  # teams of one
        (3, {"teams": 2}),  # unequal teams
        (4, {"teams": 1}),
        (2, {"round_limit": -1}),
        (6, {"size": 4}),  # too small for six Realm Stones
    ],
)
def test_bad_options_are_refused(players, options):
    with pytest.raises(BadOptions):
        engine.new_game(1, players, engine.Options(**options))


def test_options_round_trip_through_a_dict():
    options = engine.Options(size=10, anchor_points=("a1", "e5"), teams=2, decks=("", "", "", ""))
    assert engine.Options.from_dict(options.to_dict()) == options


def test_ready_made_decks_have_forty_cards_of_at_least_twelve_kinds():
    assert len(POOL.realms) >= 4
    for realm in POOL.realms.values():
        assert len(realm.deck) == 40
        assert len(set(realm.deck)) >= 12
        assert all(engine.CARDS[c].realm == realm.id for c in realm.deck)


def test_each_seat_plays_its_realm_deck_and_deck_size_draws_on_the_reserve():
    state = engine.new_game(1, 4, engine.Options(deck_size=60))
    for seat, realm in enumerate(POOL.realm_order):
        assert state.players[seat].realm == realm
        assert len(state.players[seat].deck) == 60
        assert max(Counter(state.players[seat].deck).values()) <= POOL.max_copies
    state = engine.new_game(1, 2, engine.Options(deck_size=45, realms=("gale", "gale")))
    expected = sorted(POOL.realms["gale"].deck + POOL.realms["gale"].reserve[:5])
    assert sorted(state.players[0].deck) == expected


def test_a_deck_list_is_checked_against_the_pool_and_used():
    ids = [
        "tide_guard*4",
        "ember_scout*4",
        "grove_sprout*4",
        "gale_runner*4",
        "tide_flow*4",
        "ember_kindling*4",
        "grove_overgrowth*4",
        "gale_updraft*4",
        "tide_riptide*4",
        "grove_warden*4",
    ]
    state = engine.new_game(
        1, 2, engine.Options(decks=(", ".join(ids), ""), realms=("tide", "grove"))
    )
    assert Counter(state.players[0].deck)[card("gale_runner")] == 4
    assert len(state.players[0].deck) == 40
    assert state.players[0].realm == "tide"
    assert sorted(state.players[1].deck) == sorted(POOL.realms["grove"].deck)


def test_the_highest_2d6_goes_first_and_ties_reroll():
    # Rulebook: "Roll 2d6 and the player with the highest total goes first. In case of a
    # tie, reroll." Seats 0 and 2 tie on 9 and reroll; seat 1 (7) does not.
    rng = Dice([4, 5, 3, 4, 6, 3, 2, 2, 6, 6])
    first, rounds = roll_for_first(rng, 3)
    assert rounds == ((9, 7, 9), (4, 0, 12))
    assert first == 2


def test_first_rolls_come_from_the_seed():
    a, b = engine.new_game(11, 4), engine.new_game(11, 4)
    assert a.first_rolls == b.first_rolls and a.place_order == b.place_order
    last = a.first_rolls[-1]
    assert last[a.place_order[0]] == max(last)
    assert Counter(last)[max(last)] == 1


def test_realm_stones_are_set_anticlockwise_and_play_starts_with_the_last_clockwise():
    state = engine.new_game(5, 4)
    first = state.place_order[0]
    assert state.place_order == tuple((first - i) % 4 for i in range(4))
    stones = ["E3", "E7", "B5", "H5"]
    for i in range(4):
        seat = engine.to_act(state)[0]
        assert seat == state.place_order[i]
        for other in range(4):
            if other != seat:
                assert engine.legal_moves(state, other) == []
        engine.apply(state, seat, mv(f"stone {stones[i]}"))
    last = state.place_order[-1]
    assert state.active == last and state.step == Step.RECOVERY
    engine.apply(state, last, mv("draw"))
    engine.apply(state, last, mv("pass"))
    engine.apply(state, last, mv("end"))
    assert state.active == (last + 1) % 4  # clockwise


def test_four_counters_around_a_stone_and_fewer_on_the_border():
    # "Realm Stones and Shén counters can be placed on the outer border of the playing
    # field, but those vertexes only have 2 or 3 vertexes next to them."
    state = engine.new_game(3, 2, engine.Options(anchor_points=("d4",)))
    engine.apply(state, state.active, mv("stone A1"))  # a corner vertex: 2 neighbours
    assert sorted(v for v, s in state.counters.items()) == [loc("B1"), loc("A2")]
    engine.apply(state, state.active, mv("stone I5"))  # a border vertex: 3 neighbours
    assert sorted(v for v, s in state.counters.items() if s == state.stones[loc("I5")]) == sorted(
        [loc("H5"), loc("I4"), loc("I6")]
    )
    state = started()
    assert sum(1 for s in state.counters.values() if s == 0) == 4


def test_realm_stone_placement_rules():
    state = engine.new_game(3, 2)
    first = state.active
    engine.apply(state, first, mv("stone E5"))
    second = state.active
    legal = texts(state)
    # Not next to another Realm Stone, not on a counter, not on an Anchor Point's vertex.
    for text, why in [
        ("stone E6", "the vertex is not empty"),  # a Shén counter of the first stone
        ("stone E5", "the vertex is not empty"),
        ("stone B2", "Anchor Point"),  # a vertex of the anchor space a1
        ("stone H8", "Anchor Point"),  # a vertex of the anchor space h8
    ]:
        assert text not in legal
        err = assert_refused_unchanged(engine, state, second, mv(text), IllegalMove)
        assert err.rule == R_STONE and why in err.message
    assert "stone E7" in legal  # two apart: allowed, sharing the neighbour E6
    assert "stone C2" in legal and "stone A3" in legal
    assert_refused_unchanged(engine, state, first, mv("stone C2"), NotYourDecision)
    engine.apply(state, second, mv("stone E7"))
    # The shared neighbour keeps the first player's counter.
    assert state.counters[loc("E6")] == first
    assert state.counters[loc("E8")] == second


def test_next_to_a_realm_stone_is_refused():
    state = engine.new_game(3, 2, engine.Options(anchor_points=("a1",)))
    engine.apply(state, state.active, mv("stone E5"))
    # Every vertex next to E5 holds its counters, so the rule shows on a stone whose
    # neighbour lost its counter.
    del state.counters[loc("E6")]
    err = assert_refused_unchanged(engine, state, state.active, mv("stone E6"), IllegalMove)
    assert "next to another Realm Stone" in err.message


def test_hands_of_six_after_placement():
    state = started(players=3)
    for player in state.players:
        assert len(player.hand) == 6 and len(player.deck) == 34
        assert player.hand == sorted(player.hand)


def test_teams_alternate_placing_and_turns():
    # "players on each team should alternate placing their realm stones and taking turns"
    state = engine.new_game(2, 4, engine.Options(teams=2))
    teams = [state.players[s].team for s in state.place_order]
    assert all(teams[i] != teams[i + 1] for i in range(3))
    state = started(players=4, teams=2)
    order = []
    for _ in range(4):
        order.append(state.players[state.active].team)
        seat = state.active
        engine.apply(state, seat, mv("draw"))
        engine.apply(state, seat, mv("pass"))
        engine.apply(state, seat, mv("end"))
    assert all(order[i] != order[i + 1] for i in range(3))
