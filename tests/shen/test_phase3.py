"""3) Claim, Move, and Attack Phase: claims, Realm Stone attacks, movement, combat."""

from __future__ import annotations

import pytest

from services.kit.engine import IllegalMove
from services.kit.testing import assert_refused_unchanged
from services.shen import engine
from services.shen.engine import Step
from services.shen.engine.rulebook import CLAIM as R_CLAIM
from services.shen.engine.rulebook import MOVE as R_MOVE
from services.shen.engine.rulebook import SIEGE as R_SIEGE

from .helpers import (
    Dice,
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


def command(players=2, dice=(), **options):
    """Seat 0 (ember, stone E3) in its Claim, Move, and Attack Phase; seat 1 is tide
    (stone E7). Empty hands, so nobody is asked for combat cards unless a test deals."""
    state = started(players=players, **options)
    clear_field(state)
    for player in state.players:
        player.hand = []
    state.active = 0
    state.step = Step.COMMAND
    state.rng = Dice(list(dice))
    return state


def lose_all(state):
    """The seat owing cards loses them, first listed choice each time."""
    while state.tasks and state.tasks[-1][0] == "lose":
        do(state, texts(state)[0])


def avatar_at(state, name):
    return state.avatars[state.at[loc(name)]]


# --- claims --------------------------------------------------------------------------


def test_claim_an_anchor_point_with_a_ready_avatar_there_since_the_turn_began():
    state = command()
    scout = put_avatar(state, 0, "ember_scout", "a1")
    assert "claim a1" in texts(state)
    do(state, "claim a1")
    assert state.claims == {loc("a1"): 0} and not scout.ready
    assert not state.tasks  # the first Anchor Point costs nobody a card


def test_claim_is_refused_after_moving_there_this_turn():
    state = command()
    scout = put_avatar(state, 0, "ember_scout", "b2")
    do(state, "step b2 a1", "stop")
    assert scout.loc == loc("a1") and "claim a1" not in texts(state)
    scout2 = put_avatar(state, 0, "ember_scout", "a8")
    scout2.start = loc("a7")  # it came this turn by some other means
    err = assert_refused_unchanged(engine, state, 0, mv("claim a8"), IllegalMove)
    assert err.rule == R_CLAIM and "start of your turn" in err.message
    put_avatar(state, 0, "ember_scout", "c3")
    err = assert_refused_unchanged(engine, state, 0, mv("claim c3"), IllegalMove)
    assert "not an Anchor Point" in err.message


def test_claiming_a_third_anchor_point_costs_the_opponent_two_cards():
    # Rulebook: "when you claim a third anchor point, your opponent loses 2 cards".
    state = command()
    state.claims = {loc("a1"): 0, loc("h1"): 0, loc("h8"): 1}
    put_avatar(state, 0, "ember_scout", "a8")
    do(state, "claim a8")
    assert state.tasks[-1] == ("lose", 1, 2)
    state = command()
    state.claims = {loc("a1"): 0}
    put_avatar(state, 0, "ember_scout", "a8")
    do(state, "claim a8")
    assert state.tasks[-1] == ("lose", 1, 1)


def test_previously_claimed_anchor_points_can_be_claimed_by_other_players():
    state = command()
    state.claims = {loc("a1"): 1}
    put_avatar(state, 0, "ember_scout", "a1")
    do(state, "claim a1")
    assert state.claims[loc("a1")] == 0
    state.claims = {loc("a8"): 0}
    put_avatar(state, 0, "ember_scout", "a8")
    assert "claim a8" not in texts(state)


def test_with_several_opponents_the_claimer_chooses_who_loses():
    state = command(players=3)
    state.claims = {loc("a1"): 0}
    put_avatar(state, 0, "ember_scout", "a8")
    do(state, "claim a8")
    assert engine.to_act(state) == (0,) and texts(state) == ["foe 1", "foe 2"]
    do(state, "foe 2")
    assert state.tasks[-1] == ("lose", 2, 1)


def test_claiming_every_anchor_point_wins():
    state = command()
    state.claims = {loc("a1"): 0, loc("h1"): 0, loc("h8"): 0}
    put_avatar(state, 0, "ember_scout", "a8")
    do(state, "claim a8")
    result = engine.outcome(state)
    assert result is not None and result.reason == "ALL_ANCHOR_POINTS" and result.winners == (0,)
    assert engine.to_act(state) == ()


def test_a_team_wins_holding_every_anchor_point_together():
    state = command(players=4, teams=2)  # seats 0 and 2 together
    state.claims = {loc("a1"): 2, loc("h1"): 0, loc("h8"): 2}
    put_avatar(state, 0, "ember_scout", "a8")
    do(state, "claim a8")
    assert engine.outcome(state).winners == (0, 2)


# --- attacking a Realm Stone -----------------------------------------------------------


def test_an_attack_on_a_realm_stone_wins_without_dice_and_costs_attack_power_in_cards():
    state = command()
    put_avatar(state, 0, "ember_warrior", "d7", items=["ember_flame_blade"])  # melee 2+1
    assert "siege d7 E7" in texts(state)
    do(state, "siege d7 E7")
    assert state.tasks[-1] == ("lose", 1, 3)
    assert not avatar_at(state, "d7").ready


def test_a_realm_stone_attack_needs_the_avatar_there_since_the_turn_began():
    state = command()
    warrior = put_avatar(state, 0, "ember_warrior", "c6")
    do(state, "step c6 d6")
    assert "siege d6 E7" not in texts(state)
    warrior.start = -1
    state.step = Step.COMMAND
    state.mover = -1
    err = assert_refused_unchanged(engine, state, 0, mv("siege d6 E7"), IllegalMove)
    assert err.rule in (R_SIEGE, R_MOVE)


def test_combat_cards_and_wards_change_a_realm_stone_attack():
    state = command()
    state.players[1].realm = "grove"
    put_avatar(state, 0, "ember_warrior", "d7")
    put_counters(state, 0, "D7")
    set_hand(state, 0, "ember_blazing_charge")  # +2, cost 1 around d7 (D7)
    set_hand(state, 1, "grove_stone_skin")  # ward 3, cost 2 at E7: the stone + E6
    put_counters(state, 1, "E6")
    do(state, "siege d7 E7", "play ember_blazing_charge")
    assert engine.to_act(state) == (1,)
    do(state, "play grove_stone_skin")
    assert state.tasks[-1] == ("lose", 1, 1)  # 2 + 2 - 3


# --- movement --------------------------------------------------------------------------


def test_avatars_in_spaces_move_in_eight_directions_up_to_their_movement():
    state = command()
    put_avatar(state, 0, "ember_warrior", "d5")  # move 2
    steps = sorted(t for t in texts(state) if t.startswith("step d5"))
    assert steps == sorted(f"step d5 {s}" for s in ("c4", "d4", "e4", "c5", "e5", "c6", "d6", "e6"))
    do(state, "step d5 e6", "step e6 f7")
    # Movement spent: the Avatar's action is over (no ability, no ranged power).
    assert state.step == Step.COMMAND and avatar_at(state, "f7").ready
    assert not any(t.startswith("step f7") for t in texts(state))


def test_moving_does_not_exhaust_and_a_ranged_attack_may_follow():
    state = command(dice=[1, 1, 6, 6, 6])
    put_avatar(state, 0, "ember_archer", "b2")
    put_avatar(state, 1, "tide_guard", "b7")
    do(state, "step b2 b3", "stop")
    assert state.step == Step.AFTER_MOVE and "ranged b7" in texts(state)
    do(state, "ranged b7")
    assert not avatar_at(state, "b3").ready


def test_no_diagonal_step_between_spaces_on_either_side_of_a_realm_stone():
    # "Avatars cannot move onto a Realm Stone vertex or diagonally between spaces on either
    # side of one." d3 -> e2 passes E3, seat 0's own Realm Stone.
    state = command()
    put_avatar(state, 0, "ember_warrior", "d3")
    legal = texts(state)
    assert "step d3 e2" not in legal
    assert "step d3 e3" in legal and "step d3 e4" in legal and "step d3 c2" in legal
    err = assert_refused_unchanged(engine, state, 0, mv("step d3 e2"), IllegalMove)
    assert err.rule == R_MOVE


def test_spirit_avatars_walk_the_path_orthogonally_onto_their_own_counters():
    state = command()
    put_counters(state, 0, "C5", "D5", "D6")
    put_counters(state, 1, "E5")
    put_avatar(state, 0, "ember_spirit_wisp", "D5")
    steps = sorted(t for t in texts(state) if t.startswith("step D5"))
    assert steps == ["step D5 C5", "step D5 D6"]  # not E5 (opponent's), not D4 (empty)
    err = assert_refused_unchanged(engine, state, 0, mv("step D5 D4"), IllegalMove)
    assert err.rule == R_MOVE


def test_spirit_avatars_never_enter_a_realm_stone_vertex():
    state = command()
    put_counters(state, 0, "D3")
    put_avatar(state, 0, "ember_spirit_wisp", "D3")
    assert "step D3 E3" not in texts(state)


def test_an_exhausted_avatar_cannot_act_and_each_avatar_acts_once():
    state = command()
    put_avatar(state, 0, "ember_warrior", "d5", ready=False)
    assert texts(state) == ["end"]
    state = command()
    put_avatar(state, 0, "ember_warrior", "d5")
    do(state, "step d5 d6", "stop")
    assert texts(state) == ["end"]


def test_avatars_of_the_same_side_block_and_teammates_are_not_attacked():
    state = command(players=4, teams=2)
    put_avatar(state, 0, "ember_warrior", "d5")
    put_avatar(state, 0, "ember_scout", "d6")
    put_avatar(state, 2, "grove_warden", "e5")
    legal = texts(state)
    assert "step d5 d6" not in legal and "step d5 e5" not in legal


# --- ranged attacks --------------------------------------------------------------------


def ranged_case(dice, defender="tide_guard"):
    state = command(dice=dice)
    put_avatar(state, 0, "ember_archer", "b2")  # ranged 2
    put_avatar(state, 1, defender, "b6")  # tide guard: defence 3
    do(state, "hold b2", "ranged b6")
    return state


def test_ranged_attacks_reach_zero_to_four_spaces_not_the_spirit_path():
    state = command()
    put_avatar(state, 0, "ember_archer", "b2")
    put_avatar(state, 1, "tide_guard", "f6")  # 4 away diagonally
    put_avatar(state, 1, "tide_guard", "b7")  # 5 away
    put_counters(state, 1, "C3")
    put_avatar(state, 1, "tide_spirit_droplet", "C3")  # on a vertex
    do(state, "hold b2")
    assert texts(state) == ["ranged f6", "pass"]


def test_an_avatar_without_ranged_power_has_no_ranged_attack():
    state = command()
    put_avatar(state, 0, "ember_warrior", "b2")
    put_avatar(state, 1, "tide_guard", "b3")
    assert "hold b2" not in texts(state)


def test_ranged_tie_goes_to_the_defender_and_nobody_loses_cards():
    state = ranged_case([3, 3, 2, 2, 2])  # 6 against 6
    assert state.combat is None and not state.tasks
    assert avatar_at(state, "b6").owner == 1 and state.players[1].removed == []


def test_ranged_lower_attack_loses_nothing():
    state = ranged_case([1, 1, 2, 2, 2])
    assert not state.tasks and state.players[1].removed == []


def test_ranged_win_the_defender_chooses_cards_or_the_avatar():
    state = ranged_case([6, 5, 2, 2, 3])  # 11 against 7
    assert engine.to_act(state) == (1,) and texts(state) == ["remove avatar", "lose cards"]
    do(state, "lose cards")
    assert state.tasks[-1] == ("lose", 1, 2)
    state = ranged_case([6, 5, 2, 2, 3])
    do(state, "remove avatar")
    assert loc("b6") not in state.at and state.players[1].removed == [card("tide_guard")]
    assert not state.tasks


def test_ranged_double_removes_the_avatar_and_cards_are_still_lost():
    state = ranged_case([6, 6, 2, 2, 1])  # 12 against 5
    assert loc("b6") not in state.at and card("tide_guard") in state.players[1].removed
    assert state.tasks[-1] == ("lose", 1, 2)


# --- melee attacks ---------------------------------------------------------------------


def melee_case(dice, *, extra=None):
    state = command(dice=dice)
    put_avatar(state, 0, "ember_warrior", "d5")  # melee 2
    put_avatar(state, 1, "tide_guard", "e5")  # defence 3
    if extra:
        extra(state)
    do(state, "step d5 e5")
    return state


def test_melee_attacker_wins_the_defender_retreats_away_and_the_attacker_moves_in():
    state = melee_case([5, 4, 2, 2, 2])  # 9 against 6
    assert engine.to_act(state) == (1,) and texts(state) == ["remove avatar", "lose cards"]
    do(state, "lose cards")
    assert state.tasks[-1] == ("lose", 1, 2)  # the attacker's Melee Attack Power
    lose_all(state)
    assert avatar_at(state, "f5").card == card("tide_guard")  # away from the attack
    assert avatar_at(state, "e5").card == card("ember_warrior")
    assert not avatar_at(state, "e5").ready
    assert state.combat is None and engine.to_act(state) == (0,) and state.step == Step.COMMAND


def test_melee_defender_wins_the_attacker_stays_back_and_loses_defence_power():
    state = melee_case([1, 1, 1, 1, 1])  # 2 against 3
    assert engine.to_act(state) == (0,) and texts(state) == ["remove avatar", "lose cards"]
    do(state, "lose cards")
    assert state.tasks[-1] == ("lose", 0, 3)
    assert avatar_at(state, "d5").owner == 0 and avatar_at(state, "e5").owner == 1


def test_melee_tie_goes_to_the_defender():
    state = melee_case([2, 2, 1, 1, 2])  # 4 against 4
    assert state.combat.winner == 1
    do(state, "remove avatar")
    assert loc("d5") not in state.at and card("ember_warrior") in state.players[0].removed


def test_melee_double_removes_the_defeated_and_cards_are_still_lost():
    state = melee_case([6, 6, 1, 2, 3])  # 12 against 6
    assert card("tide_guard") in state.players[1].removed
    assert state.tasks[-1] == ("lose", 1, 2)
    lose_all(state)
    assert avatar_at(state, "e5").owner == 0


def test_melee_counts_a_die_per_shen_counter_around_each_side():
    state = melee_case(
        [1, 1, 1, 1, 1, 1, 1, 1],
        extra=lambda s: (put_counters(s, 0, "D5", "D6"), put_counters(s, 1, "F5")),
    )
    assert [len(r) for r in state.combat.rolls] == [4, 4]  # 2+2 attack, 3+1 defence


def test_a_defeated_defender_with_no_space_behind_goes_next_to_its_realm_stone():
    # f5 is taken: the Tide Guard is placed next to seat 1's Realm Stone (E7): d6, e6, d7
    # or e7, its owner's choice.
    state = melee_case([6, 5, 2, 2, 2], extra=lambda s: put_avatar(s, 0, "ember_scout", "f5"))
    do(state, "lose cards")
    lose_all(state)
    assert texts(state) == ["retreat d6", "retreat e6", "retreat d7", "retreat e7"]
    do(state, "retreat e7")
    assert avatar_at(state, "e7").card == card("tide_guard")
    assert avatar_at(state, "e5").owner == 0


def test_a_defender_on_the_edge_retreats_next_to_its_realm_stone():
    state = command(dice=[6, 5, 2, 2, 2])
    put_avatar(state, 0, "ember_warrior", "g5")
    put_avatar(state, 1, "tide_guard", "h5")
    for space in ("d6", "e6", "d7"):
        put_avatar(state, 1, "tide_skirmisher", space)
    do(state, "step g5 h5", "lose cards")
    lose_all(state)
    # One spot left next to E7: no question asked.
    assert avatar_at(state, "e7").card == card("tide_guard")


def test_a_defender_with_nowhere_to_go_is_removed():
    state = command(dice=[6, 5, 2, 2, 2])
    put_avatar(state, 0, "ember_warrior", "g5")
    put_avatar(state, 1, "tide_guard", "h5")
    for space in ("d6", "e6", "d7", "e7"):
        put_avatar(state, 1, "tide_skirmisher", space)
    do(state, "step g5 h5", "lose cards")
    lose_all(state)
    assert card("tide_guard") in state.players[1].removed
    assert avatar_at(state, "h5").owner == 0


def test_spirit_melee_the_winner_takes_the_vertex_and_converts_its_counter():
    state = command(dice=[6, 6, 6, 6, 1, 1, 1])
    put_counters(state, 0, "C5", "D5")
    put_counters(state, 1, "E5", "F5")
    put_avatar(state, 0, "ember_spirit_of_cinders", "D5")  # melee 2
    put_avatar(state, 1, "tide_spirit_droplet", "E5")  # defence 1
    do(state, "step D5 E5")
    # attack 2 + 2 counters (D5 and C5), defence 1 + 2 (E5 and F5): 24 against 3, double.
    assert [len(r) for r in state.last_roll] == [4, 3]
    assert card("tide_spirit_droplet") in state.players[1].removed
    lose_all(state)
    assert avatar_at(state, "E5").owner == 0 and state.counters[loc("E5")] == 0


def test_the_winning_avatar_may_use_an_ability_after_combat():
    state = command(dice=[3, 3, 2, 2, 3])
    state.players[1].realm = "grove"
    put_avatar(state, 0, "ember_warrior", "d5")
    put_avatar(state, 1, "grove_sprout", "e5")  # defence 2; Take Root: place_shen, cost 1
    put_counters(state, 1, "F5")
    do(state, "step d5 e5")
    # The defender won (6 against 7): the attacker loses cards or the Avatar first.
    do(state, "remove avatar")
    assert engine.to_act(state) == (1,) and texts(state)[-1] == "pass"
    assert "ability 0" in texts(state)
    do(state, "ability 0")
    assert texts(state) == ["target E5", "target E6", "target F6"]
    do(state, "target F6")
    assert state.counters[loc("F6")] == 1 and engine.to_act(state) == (0,)


def test_combat_cards_and_abilities_add_power_and_dice():
    state = command(dice=[1] * 11)
    state.players[0].hand = [card("ember_blazing_charge")]
    state.players[1].hand = [card("tide_guard")]
    put_counters(state, 0, "D5")
    put_avatar(state, 0, "ember_berserker", "d5")  # melee 3; Battle Fury +1, cost 2
    put_avatar(state, 1, "tide_guard", "e5")
    put_counters(state, 0, "D6")
    do(state, "step d5 e5")
    assert texts(state) == ["play ember_blazing_charge", "ability 0", "pass"]
    do(state, "play ember_blazing_charge", "ability 0")
    assert state.combat.power[0] == 3 and engine.to_act(state) == (1,)
    do(state, "pass")
    # 3 + 2 + 1 power, + 2 Shén dice (D5, D6) = 8 dice; the defender's 3.
    assert [len(r) for r in state.last_roll] == [8, 3]


def test_a_side_with_cards_in_hand_is_always_asked():
    state = command(dice=[6, 6, 1, 1, 1])
    state.players[1].hand = [card("tide_guard")]  # nothing playable, but asked
    put_avatar(state, 0, "ember_warrior", "d5")
    put_avatar(state, 1, "tide_guard", "e5")
    do(state, "step d5 e5")
    assert engine.to_act(state) == (1,) and texts(state) == ["pass"]


@pytest.mark.parametrize("kind", ["melee", "ranged"])
def test_the_attacker_is_exhausted(kind):
    state = command(dice=[1] * 10)
    archer = put_avatar(state, 0, "ember_archer", "d5")
    put_avatar(state, 1, "tide_guard", "e5")
    do(state, "step d5 e5" if kind == "melee" else "hold d5")
    if kind == "ranged":
        do(state, "ranged e5")
    assert not archer.ready


def test_a_combat_ability_does_not_exhaust_the_defender():
    state = command(dice=[6, 1, 1, 1, 1, 1, 1, 1])  # 7 against 6: the attacker wins
    state.players[1].realm = "grove"
    state.players[1].hand = [card("grove_entangle")]
    put_avatar(state, 0, "ember_warrior", "d5")
    treant = put_avatar(state, 1, "grove_treant", "e5")  # Bark Hide: ward 2, cost 2
    put_counters(state, 1, "E5", "F5")
    do(state, "step d5 e5")
    assert engine.to_act(state) == (1,) and "ability 0" in texts(state)
    do(state, "ability 0")
    assert state.combat.ward[1] == 2
    do(state, "pass")
    # 2 cards lost, less the ward of 2: nothing to lose, nothing to choose.
    assert not state.tasks and state.players[1].removed == []
    assert treant.ready and treant.loc == loc("f5")
