"""Setup: options, Places of Power, Monuments, essences, first player, the first-game deal,
the draft, the Mage choice and the Magic Items in reverse order."""

from __future__ import annotations

import copy

import pytest

import services.resarcana.engine as E
from services.kit.engine import BadOptions, IllegalMove, NotYourDecision, replay
from services.kit.testing import assert_refused_unchanged
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.state import ACTIONS, DRAFT, ITEM, MAGE
from tests.resarcana.helpers import ANNE, BOB, check_invariants, cid, play, texts


@pytest.mark.parametrize(
    "players, options",
    [
        (1, E.Options()),
        (3, E.Options()),
        (2, E.Options(setup="solo")),
        (2, E.Options(places="sideways")),
        (2, E.Options(victory_points=-1)),
        (2, E.Options(first_player=2)),
        (2, E.Options(round_limit=-1)),
        (2, E.Options(collect_in_turn_order="yes")),  # type: ignore[arg-type]
    ],
)
def test_options_it_cannot_honour_are_refused(players: int, options: E.Options) -> None:
    with pytest.raises(BadOptions):
        E.new_game(1, players, options)


def test_options_round_trip_through_a_dict() -> None:
    options = E.Options(setup="first_game", places="random", round_limit=9)
    assert E.Options.from_dict(options.to_dict()) == options
    with pytest.raises(BadOptions):
        E.Options.from_dict({"colour": "red"})


def test_first_game_setup() -> None:
    state = E.new_game(4, 2, E.Options(setup="first_game"))
    check_invariants(state)
    assert state.target_vp == 7
    assert sorted(state.places) == sorted(cid(s) for s in ("circle-of-the-druids", "dwarven-forge"))
    assert len(state.monument_display) == 2 and len(state.monument_deck) == 5
    start_cards = {c for c in CONTENT.artifacts if CONTENT[c].start}
    mages = set()
    for seat in state.seats:
        assert seat.pool == [1, 1, 1, 1, 1]  # one of each essence, Gold included
        assert CONTENT[seat.mage].start
        mages.add(seat.mage)
        assert len(seat.hand) == 3 and set(seat.hand) <= start_cards
        assert len(seat.deck) == 5 and not set(seat.deck) & start_cards
    assert len(mages) == 2
    # The second player chooses a Magic Item first, then the First Player.
    assert state.phase == ITEM
    assert E.to_act(state) == (1 - state.first_player,)
    assert len(E.legal_moves(state, 1 - state.first_player)) == 5


def test_magic_items_are_chosen_in_reverse_order_then_round_one_begins() -> None:
    state = E.new_game(4, 2, E.Options(setup="first_game", first_player=ANNE))
    error = assert_refused_unchanged(E, state, ANNE, E.parse_move("item research"), NotYourDecision)
    assert error.reason == "NOT_YOUR_DECISION"
    play(state, BOB, "item research")
    assert E.to_act(state) == (ANNE,)
    assert "item research" not in texts(E.legal_moves(state, ANNE))
    error = assert_refused_unchanged(E, state, ANNE, E.parse_move("item research"), IllegalMove)
    assert error.rule == "Setup"
    play(state, ANNE, "item alchemy")
    # Round 1: nothing to choose in Collect (Research, Alchemy, Smith, Enchantress), so the
    # First Player's first action is up.
    assert state.round == 1 and state.phase == ACTIONS and E.to_act(state) == (ANNE,)
    assert len(state.items) == 3


def test_places_of_power_amber_or_a_random_side_each() -> None:
    amber = {cid("circle-of-the-druids"), cid("dwarven-forge")}
    seen = set()
    for seed in range(40):
        state = E.new_game(seed, 2, E.Options(places="random"))
        tiles = [CONTENT[c].tile for c in state.places]
        assert sorted(tiles) == [1, 2], "one side of each tile"
        seen.update(state.places)
        assert set(E.new_game(seed, 2, E.Options(places="amber")).places) == amber
    assert seen == set(CONTENT.places), "every side comes up"
    # "auto": amber for the first game, random for the full game.
    assert set(E.new_game(1, 2, E.Options(setup="first_game")).places) == amber
    assert any(set(E.new_game(seed, 2, E.Options()).places) != amber for seed in range(10))


def test_first_player_comes_from_the_seed_unless_chosen() -> None:
    firsts = {E.new_game(seed, 2, E.Options()).first_player for seed in range(20)}
    assert firsts == {0, 1}
    assert E.new_game(3, 2, E.Options(first_player=1)).first_player == 1


def test_the_same_seed_sets_up_the_same_game() -> None:
    a = E.new_game(11, 2, E.Options())
    b = E.new_game(11, 2, E.Options())
    assert a == b
    assert a != E.new_game(12, 2, E.Options())


def _draft_all(state: E.State, pick: int = 0) -> None:
    while state.phase == DRAFT:
        for seat in E.to_act(state):
            play(state, seat, str(E.legal_moves(state, seat)[pick]))


def test_full_game_draft() -> None:
    state = E.new_game(8, 2, E.Options())
    assert state.target_vp == 10 and state.phase == DRAFT
    # Each has 2 Mages to look at and 8 face-down Artifacts; both draft at once.
    assert E.to_act(state) == (0, 1)
    for seat in state.seats:
        assert len(seat.mage_options) == 2
        assert len(seat.draft_offer) == 2 and len(seat.draft_stack) == 6
    offers = [list(s.draft_offer) for s in state.seats]
    kept = offers[ANNE][1]
    given = offers[ANNE][0]
    play(state, ANNE, f"keep {CONTENT[kept].slug}")
    assert state.seats[ANNE].draft_kept == [kept]
    assert state.seats[ANNE].draft_given == [given]
    # The given card stays face down: Bob's view does not show it.
    assert CONTENT[given].slug not in repr(E.view(state, BOB))
    assert CONTENT[given].slug in repr(E.view(state, ANNE))
    # Four times: draw 2, keep 1, give 1.
    _draft_all(state)
    assert state.phase == MAGE
    for seat in (ANNE, BOB):
        me = state.seats[seat]
        assert len(me.hand) == 3 and len(me.deck) == 5
        assert len(me.gave) == 4
        assert set(me.gave) <= set(state.seats[1 - seat].hand + state.seats[1 - seat].deck)
    check_invariants(state)


def test_mage_choice_is_secret_until_both_reveal() -> None:
    state = E.new_game(8, 2, E.Options(first_player=BOB))
    _draft_all(state)
    anne_options = list(state.seats[ANNE].mage_options)
    chosen, other = anne_options
    play(state, ANNE, f"mage {CONTENT[chosen].slug}")
    assert E.to_act(state) == (BOB,)
    assert CONTENT[chosen].slug not in repr(E.view(state, BOB))
    assert CONTENT[chosen].slug not in repr(E.view(state, None))
    assert E.view(state, ANNE).mage_choice == CONTENT[chosen].slug
    assert E.view(state, BOB).seats[ANNE].mage_chosen
    play(state, BOB, str(E.legal_moves(state, BOB)[0]))
    assert state.seats[ANNE].mage == chosen
    assert other in state.box
    assert E.view(state, BOB).seats[ANNE].mage == CONTENT[chosen].slug
    assert state.phase == ITEM and E.to_act(state) == (ANNE,)


def test_draft_refusals_leave_the_state_unchanged() -> None:
    state = E.new_game(8, 2, E.Options())
    stranger = next(c for c in CONTENT.artifacts if c not in state.seats[ANNE].draft_offer)
    error = assert_refused_unchanged(
        E, state, ANNE, E.parse_move(f"keep {CONTENT[stranger].slug}"), IllegalMove
    )
    assert error.rule == "Setup"


def test_replay_rebuilds_the_state() -> None:
    state = E.new_game(21, 2, E.Options())
    log = []
    for _ in range(60):
        seat = E.to_act(state)[-1]
        move = E.legal_moves(state, seat)[-1]
        E.apply(state, seat, move)
        log.append((seat, move))
    assert replay(E, 21, 2, E.Options(), log) == state
    assert copy.deepcopy(state) == state
