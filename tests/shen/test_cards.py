"""2) Celestial Influence Phase: costs, Avatars, Spirit Avatars, Items, instants, Remains."""

from __future__ import annotations

import pytest

from services.kit.engine import IllegalMove
from services.kit.testing import assert_refused_unchanged
from services.shen import engine
from services.shen.engine import Step
from services.shen.engine.rulebook import COMBAT as R_COMBAT
from services.shen.engine.rulebook import PLAY as R_PLAY

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


def influence(players=2, **options):
    """Seat 0 (ember; stone E3) in its Celestial Influence Phase, field cleared but for
    the stones; seat 1 is tide (stone E7)."""
    state = started(players=players, **options)
    clear_field(state)
    state.active = 0
    state.step = Step.INFLUENCE
    return state


def targets(state):
    return [t for t in texts(state)]


def test_an_avatar_needs_its_power_cost_in_shen_around_the_space():
    # Ember Warrior costs 2. Around d3 seat 0 has the Realm Stone (E3) and D3 once placed.
    state = influence()
    set_hand(state, 0, "ember_warrior")
    assert texts(state) == ["pass"]
    err = assert_refused_unchanged(engine, state, 0, mv("play ember_warrior"), IllegalMove)
    assert err.rule == R_PLAY
    put_counters(state, 0, "D3")
    do(state, "play ember_warrior")
    # d3's corners D3 E3 D4 E4 hold two; d2's hold D3 E3 too: both spaces qualify.
    assert texts(state) == ["target d2", "target d3"]
    do(state, "target d3")
    avatar = state.avatars[state.at[loc("d3")]]
    assert avatar.card == card("ember_warrior") and avatar.owner == 0
    # "Manifested Avatars enter play Exhausted".
    assert not avatar.ready
    assert state.step == Step.COMMAND and texts(state) == ["end"]


def test_a_card_outside_the_home_realm_needs_one_more_shen():
    state = influence()
    set_hand(state, 0, "tide_guard")  # cost 2, tide: 3 for the ember player
    put_counters(state, 0, "D3")
    assert texts(state) == ["pass"]
    put_counters(state, 0, "D4")
    do(state, "play tide_guard")
    assert texts(state) == ["target d3"]


def test_a_four_cost_card_outside_the_home_realm_needs_a_way_to_add_shen():
    # "you cannot play a card with a four-power cost if it is not associated with your
    # Home Realm or you have a way to add additional Shén"
    state = influence()
    set_hand(state, 0, "tide_leviathan", "ember_warlord")
    put_counters(state, 0, "D3", "D4", "E4")  # d3: four of four
    assert texts(state) == ["play ember_warlord", "pass"]
    state.players[0].remains.append(card("grove_sacred_circle"))  # +1 Shén for cards
    assert "play tide_leviathan" in texts(state)


def test_a_spirit_avatar_manifests_on_a_vertex_counting_up_to_five():
    # Ember Spirit of Cinders costs 3: on and next to the vertex.
    state = influence()
    set_hand(state, 0, "ember_spirit_of_cinders")
    put_counters(state, 0, "D3", "C3")
    do(state, "play ember_spirit_of_cinders")
    # D3: itself, C3 and the stone E3 = 3. Other own counters (C3) see only 2.
    assert texts(state) == ["target D3"]
    do(state, "target D3")
    spirit = state.avatars[state.at[loc("D3")]]
    assert engine.CARDS[spirit.card].is_spirit and not spirit.ready


def test_items_equip_own_avatars_in_spaces_up_to_three_never_spirits():
    state = influence()
    put_counters(state, 0, "D3", "D4", "E4")
    warrior = put_avatar(state, 0, "ember_warrior", "d3")
    put_avatar(state, 0, "ember_spirit_wisp", "D4")
    put_avatar(state, 1, "tide_guard", "e3")
    set_hand(state, 0, "ember_flame_blade")
    do(state, "play ember_flame_blade")
    assert texts(state) == ["target d3"]  # not the Spirit on D4, not the opponent's e3
    do(state, "target d3")
    assert warrior.items == [card("ember_flame_blade")]
    view = engine.view(state, 1)
    (shown,) = [a for a in view.avatars if a.at == "d3"]
    assert shown.melee == 3 and shown.items == ("ember_flame_blade",)
    warrior.items = [card("ember_flame_blade")] * 3
    state.step = Step.INFLUENCE
    set_hand(state, 0, "ember_flame_blade")
    assert texts(state) == ["pass"]  # "An Avatar can have up to 3 equipped items."


def test_instants_resolve_and_go_to_the_discard_pile():
    state = influence()
    set_hand(state, 0, "tide_flow")  # draw 2, off-realm: 2 Shén around any one space
    assert texts(state) == ["pass"]
    put_counters(state, 0, "D3")
    deck = len(state.players[0].deck)
    do(state, "play tide_flow")
    assert len(state.players[0].deck) == deck - 2 and len(state.players[0].hand) == 2
    assert state.players[0].discard == [card("tide_flow")]
    assert state.step == Step.COMMAND


def test_combat_cards_are_not_played_in_the_influence_phase():
    state = influence()
    set_hand(state, 0, "ember_blazing_charge")
    put_counters(state, 0, "D3", "D4", "E4")
    assert texts(state) == ["pass"]
    err = assert_refused_unchanged(engine, state, 0, mv("play ember_blazing_charge"), IllegalMove)
    assert err.rule == R_PLAY and "combat" in err.message


def test_remains_in_play_stays_and_its_aura_applies():
    state = influence()
    set_hand(state, 0, "ember_forge_of_war")
    put_counters(state, 0, "D3")
    warrior = put_avatar(state, 0, "ember_warrior", "c5")
    do(state, "play ember_forge_of_war")
    assert state.players[0].remains == [card("ember_forge_of_war")]
    assert state.players[0].discard == []
    from services.shen.engine.pieces import trait

    assert trait(state, warrior, "melee") == 3


def test_place_shen_effect_places_and_captures():
    state = influence()
    set_hand(state, 0, "ember_kindling")
    put_counters(state, 1, "C5")
    put_counters(state, 0, "B5", "C4", "C6", "D4")  # D5: D4 is next to it -> 1 Shén
    do(state, "play ember_kindling")
    assert "target D5" in texts(state)
    do(state, "target D5")
    assert loc("C5") not in state.counters and state.tasks[-1] == ("lose", 1, 1)


def test_remove_shen_costs_the_owner_a_card_and_convert_returns_a_spirit():
    state = influence()
    set_hand(state, 0, "ember_scorched_earth")  # cost 3 at the vertex
    put_counters(state, 0, "D4", "F4")
    put_counters(state, 1, "E4", "D3")
    do(state, "play ember_scorched_earth")
    # E4's neighbours hold D4, F4 and the Realm Stone E3: 3. D3's hold only the stone.
    assert texts(state) == ["target E4"]
    do(state, "target E4")
    assert loc("E4") not in state.counters and state.tasks[-1] == ("lose", 1, 1)

    state = influence()
    state.players[0].realm = "gale"
    set_hand(state, 0, "gale_shear")
    put_counters(state, 0, "D4")
    put_counters(state, 1, "E4")
    spirit = put_avatar(state, 1, "tide_spirit_droplet", "E4")
    do(state, "play gale_shear", "target E4")
    assert state.counters[loc("E4")] == 0
    assert spirit.uid not in state.avatars and card("tide_spirit_droplet") in state.players[1].hand


def test_strike_gives_the_choice_of_avatar_or_cards_and_banish_removes():
    state = influence()
    set_hand(state, 0, "ember_fireball")  # strike 2, cost 2 at the target
    put_counters(state, 0, "D4")
    guard = put_avatar(state, 1, "tide_guard", "d3")
    do(state, "play ember_fireball", "target d3")
    assert engine.to_act(state) == (1,)
    assert texts(state) == ["remove avatar", "lose cards"]
    do(state, "lose cards")
    assert state.tasks[-1] == ("lose", 1, 2) and guard.uid in state.avatars

    state = influence()
    state.players[0].realm = "gale"
    set_hand(state, 0, "gale_lightning")
    put_counters(state, 0, "D3", "D4", "E4")
    guard = put_avatar(state, 1, "tide_guard", "d3")
    do(state, "play gale_lightning", "target d3")
    assert guard.uid not in state.avatars
    assert card("tide_guard") in state.players[1].removed


def test_drain_with_several_opponents_asks_which():
    state = influence(players=3)
    state.players[0].realm = "tide"
    set_hand(state, 0, "tide_undertow")
    put_counters(state, 0, "D3")
    do(state, "play tide_undertow")
    assert texts(state) == ["foe 1", "foe 2"]
    do(state, "foe 2")
    assert state.tasks[-1] == ("lose", 2, 2)


def test_recover_takes_from_the_top_of_the_discard_pile():
    state = influence()
    state.players[0].realm = "tide"
    set_hand(state, 0, "tide_reclaim")
    state.players[0].discard = [card("tide_guard"), card("tide_flow"), card("tide_swell")]
    put_counters(state, 0, "D3")
    do(state, "play tide_reclaim")
    assert state.players[0].hand == sorted([card("tide_flow"), card("tide_swell")])
    assert state.players[0].discard == [card("tide_guard"), card("tide_reclaim")]


@pytest.mark.parametrize("kind", ["avatar", "item"])
def test_avatar_and_item_cards_cannot_be_played_during_combat(kind):
    from services.shen.engine import combat

    state = influence()
    put_counters(state, 0, "D3", "D4", "E4")
    attacker = put_avatar(state, 0, "ember_warrior", "d3")
    defender = put_avatar(state, 1, "tide_guard", "d4")
    set_hand(
        state, 0, "ember_scout" if kind == "avatar" else "ember_flame_blade", "ember_blazing_charge"
    )
    state.step = Step.COMMAND
    combat.start(state, "melee", attacker.uid, loc("d3"), loc("d4"), 1, defender.uid, [])
    assert "play ember_blazing_charge" in texts(state)
    bad = "play ember_scout" if kind == "avatar" else "play ember_flame_blade"
    assert bad not in texts(state)
    err = assert_refused_unchanged(engine, state, 0, mv(bad), IllegalMove)
    assert err.rule == R_COMBAT and "can't be played during combat" in err.message


def test_a_conversion_costs_no_card_and_captures_nothing():
    state = influence()
    state.players[0].realm = "gale"
    set_hand(state, 0, "gale_shear")  # convert_shen, cost 2 at the vertex
    put_counters(state, 1, "C5", "D5")
    put_counters(state, 0, "B5", "C4", "C6", "D6", "E5")
    do(state, "play gale_shear", "target D5")
    # C5 is now surrounded by seat 0, but only a placement captures.
    assert state.counters[loc("D5")] == 0 and state.counters[loc("C5")] == 1
    assert not state.tasks
