"""Powers: costs in parts, turning this or another component, any-essence costs, effects
and every special case the rulebook lists."""

from __future__ import annotations

import services.resarcana.engine as E
from services.kit.engine import IllegalMove
from services.kit.testing import assert_refused_unchanged
from services.resarcana.engine.state import OVER
from tests.resarcana.helpers import (
    ANNE,
    BOB,
    action_state,
    cid,
    event_texts,
    m,
    play,
    put_on,
    texts,
)


def refused(state: E.State, seat: int, text: str) -> IllegalMove:
    error = assert_refused_unchanged(E, state, seat, m(text), IllegalMove)
    assert isinstance(error, IllegalMove)
    return error


def vp(state: E.State, seat: int) -> int:
    return E.view(state, None).seats[seat].vp


def test_research_pays_one_essence_of_choice_and_draws() -> None:
    state = action_state(decks=(["cultist", "gnosis"], []), pools=((0, 1, 0, 1, 1), (0,) * 5))
    play(state, ANNE, "power research 1")
    assert texts(E.legal_moves(state, ANNE)) == ["pay life", "pay death", "pay gold"]
    events = play(state, ANNE, "pay gold")
    assert state.seats[ANNE].hand == [cid("gnosis")] and state.turned[cid("research")]
    assert "Player 1 draws Gnosis" in event_texts(events, ANNE)
    assert "Player 1 draws 1 card" in event_texts(events, BOB)


def test_a_draw_from_an_empty_pile_reshuffles_the_discard_pile() -> None:
    state = action_state(hands=(["cultist"], []), pools=((0, 0, 0, 0, 1), (0,) * 5))
    play(state, ANNE, "discard cultist", "gain calm", "gain calm")
    play(state, BOB, "pass", "item alchemy")
    events = play(state, ANNE, "power research 1")
    assert "pay gold" in texts(E.legal_moves(state, ANNE))
    events += play(state, ANNE, "pay gold")
    assert "Player 1 shuffles the discard pile into a new draw pile" in event_texts(events)
    assert state.seats[ANNE].hand == [cid("cultist")]


def test_any_essence_cost_with_a_forbidden_type_and_exact_count() -> None:
    # Crown of Command's 2nd power: 5 essences of your choice, no Gold -> a Monument.
    state = action_state(
        tableaus=(["crown-of-command"], []),
        pools=((3, 3, 3, 0, 9), (0,) * 5),
        monuments=(["dark-temple", "mystic-monastery"], ["well-of-memory"]),
    )
    play(state, ANNE, "power crown-of-command 2")
    for _ in range(5):
        listed = texts(E.legal_moves(state, ANNE))
        assert "pay gold" not in listed
        assert refused(state, ANNE, "pay gold").rule == "Cost"
        play(state, ANNE, listed[0])
    assert sum(state.seats[ANNE].pool[:4]) == 4 and state.seats[ANNE].pool[4] == 9
    assert texts(E.legal_moves(state, ANNE)) == [
        "monument deck",
        "monument dark-temple",
        "monument mystic-monastery",
    ]
    play(state, ANNE, "monument mystic-monastery")
    assert cid("mystic-monastery") in state.seats[ANNE].tableau
    assert state.monument_display == [cid("dark-temple"), cid("well-of-memory")]


def test_crown_of_command_can_take_the_face_down_top() -> None:
    state = action_state(
        tableaus=(["crown-of-command"], []),
        pools=((0, 0, 0, 0, 3), (0,) * 5),
        monuments=(["dark-temple"], ["well-of-memory", "sleeping-dragon"]),
    )
    play(state, ANNE, "power crown-of-command 1", "monument deck")
    assert cid("sleeping-dragon") in state.seats[ANNE].tableau
    assert state.monument_display == [cid("dark-temple")]


def test_turning_another_component_as_the_cost() -> None:
    # Grove of the Druids: turn a Creature (not itself) -> 1 Life + 1 Calm.
    state = action_state(tableaus=(["grove-of-the-druids", "white-swan", "black-cat"], []))
    play(state, ANNE, "power grove-of-the-druids 1")
    assert texts(E.legal_moves(state, ANNE)) == ["turn white-swan", "turn black-cat"]
    assert refused(state, ANNE, "turn grove-of-the-druids").rule == "Powers"
    play(state, ANNE, "turn black-cat")
    assert state.turned[cid("black-cat")] and not state.turned[cid("grove-of-the-druids")]
    assert state.seats[ANNE].pool == [0, 1, 1, 0, 0]
    play(state, BOB, "pass", "item alchemy")
    # The Grove is still straight, so its power can be used again: the Swan is left.
    events = play(state, ANNE, "power grove-of-the-druids 1")
    assert "Player 1 turns White Swan (Grove of the Druids)" in event_texts(events)
    assert "power grove-of-the-druids 1" not in texts(E.legal_moves(state, ANNE))
    assert refused(state, ANNE, "power grove-of-the-druids 1").rule == "Cost"


def test_a_power_needs_a_straight_component_even_if_it_does_not_turn_it() -> None:
    """Circle of the Druids: its 1st power turns it, so its 2nd (turn a Creature) waits
    until it is straightened, though that cost does not turn the Circle itself."""
    state = action_state(
        tableaus=(["circle-of-the-druids", "white-swan"], []), pools=((0, 0, 1, 0, 0), (0,) * 5)
    )
    play(state, ANNE, "power circle-of-the-druids 1")
    play(state, BOB, "pass", "item alchemy")
    assert "power circle-of-the-druids 2" not in texts(E.legal_moves(state, ANNE))
    assert refused(state, ANNE, "power circle-of-the-druids 2").rule == "Powers"
    assert vp(state, ANNE) == 1  # the Life on it (Bob took the token by passing first)


def test_turning_the_mage_as_part_of_a_cost() -> None:
    state = action_state(
        tableaus=(["sleeping-dragon"], []),
        mages=("smith", "enchantress"),
        pools=((1, 0, 0, 0, 0), (0,) * 5),
    )
    play(state, ANNE, "power smith 1")  # turns the Smith
    play(state, BOB, "pass", "item alchemy")
    assert "power sleeping-dragon 1" not in texts(E.legal_moves(state, ANNE))
    assert refused(state, ANNE, "power sleeping-dragon 1").rule == "Cost"


def test_mystic_spring_choice_and_mage_cost() -> None:
    state = action_state(tableaus=(["mystic-spring"], []), pools=((0, 0, 2, 0, 0), (0,) * 5))
    play(state, ANNE, "power mystic-spring 1")
    assert texts(E.legal_moves(state, ANNE)) == ["option 1", "option 2"]
    play(state, ANNE, "option 1")
    assert state.seats[ANNE].pool == [0, 0, 1, 0, 4]
    play(state, BOB, "pass", "item alchemy")
    # Its 2nd power turns the Mage, but the Spring itself is turned now.
    assert refused(state, ANNE, "power mystic-spring 2").rule == "Powers"
    state = action_state(tableaus=(["mystic-spring"], []))
    play(state, ANNE, "power mystic-spring 2")  # turn your Mage -> 2 Calm
    assert state.turned[cid("enchantress")] and not state.turned[cid("mystic-spring")]
    assert state.seats[ANNE].pool == [0, 0, 2, 0, 0]
    # The other side: any one essence.
    state = action_state(tableaus=(["mystic-spring"], []), pools=((0, 0, 1, 0, 0), (0,) * 5))
    play(state, ANNE, "power mystic-spring 1", "option 2", "gain death")
    assert state.seats[ANNE].pool == [0, 0, 0, 1, 0]


def test_placing_any_essences_on_a_component_one_at_a_time() -> None:
    state = action_state(mages=("smith", "enchantress"), pools=((0, 0, 0, 0, 1), (0,) * 5))
    play(state, ANNE, "power smith 2")
    for pick in ("gain life", "gain life", "gain death", "gain elan"):
        assert "gain gold" not in texts(E.legal_moves(state, ANNE))
        play(state, ANNE, pick)
    assert state.on[cid("smith")] == [1, 2, 0, 1, 0]
    assert state.seats[ANNE].pool == [0, 0, 0, 0, 0]


def test_essences_on_places_of_power_are_victory_points() -> None:
    # Dwarven Forge: its own 1 VP plus 1 VP for each essence on it.
    state = action_state(tableaus=(["dwarven-forge"], []), pools=((1, 0, 0, 0, 1), (0,) * 5))
    assert vp(state, ANNE) == 1 + 1
    play(state, ANNE, "power dwarven-forge 1")
    assert state.on[cid("dwarven-forge")] == [0, 0, 0, 0, 1]
    assert vp(state, ANNE) == 1 + 1 + 1
    # Turned components keep their victory points.
    assert state.turned[cid("dwarven-forge")]


def test_a_non_turning_power_can_be_used_again_each_time_an_action() -> None:
    state = action_state(tableaus=(["white-swan"], []), pools=((0, 0, 2, 0, 2), (0,) * 5))
    play(state, ANNE, "power white-swan 1", "pay gold")
    assert not state.turned[cid("white-swan")]
    assert E.to_act(state) == (BOB,)  # each use is a separate action
    play(state, BOB, "pass", "item alchemy")
    play(state, ANNE, "power white-swan 1")  # 1 Calm + the last Gold, no choice left
    assert state.on[cid("white-swan")] == [0, 4, 2, 0, 0]


def test_retrieve_from_your_discard_pile_or_nothing_happens() -> None:
    state = action_state(
        tableaus=(["well-of-memory"], []),
        hands=(["cultist", "gnosis"], []),
        pools=((0, 0, 0, 0, 2), (0,) * 5),
    )
    # Empty discard pile: the power may still be used; nothing happens.
    events = play(state, ANNE, "power well-of-memory 1")
    assert "retrieve a card: nothing to do" in event_texts(events)
    assert state.seats[ANNE].hand == [cid("cultist"), cid("gnosis")]
    state = action_state(
        tableaus=(["well-of-memory"], []),
        hands=(["cultist", "gnosis"], []),
        pools=((0, 0, 0, 0, 2), (0,) * 5),
    )
    play(state, ANNE, "discard cultist", "gain gold")
    play(state, BOB, "pass", "item alchemy")
    play(state, ANNE, "discard gnosis", "gain gold")
    play(state, ANNE, "power well-of-memory 1")  # 1 essence of choice: only Gold
    assert texts(E.legal_moves(state, ANNE)) == ["retrieve gnosis", "retrieve cultist"]
    play(state, ANNE, "retrieve cultist")
    assert state.seats[ANNE].hand == [cid("cultist")]


def test_discarding_as_part_of_a_cost_gains_no_essences() -> None:
    # Fortune Teller's 2nd power: turn + discard an Artifact -> retrieve an Artifact.
    state = action_state(tableaus=(["fortune-teller"], []), hands=(["cultist", "gnosis"], []))
    play(state, ANNE, "power fortune-teller 2")
    assert texts(E.legal_moves(state, ANNE)) == ["discard gnosis", "discard cultist"]
    play(state, ANNE, "discard gnosis")
    # The card retrieved need not be the one just discarded (here it is the only one).
    assert state.seats[ANNE].pool == [0, 0, 0, 0, 0]
    assert state.seats[ANNE].hand == [cid("cultist"), cid("gnosis")]


def test_fortune_teller_discards_any_card_not_only_the_drawn_one() -> None:
    state = action_state(
        tableaus=(["fortune-teller"], []),
        hands=(["cultist"], []),
        decks=(["revivify", "golden-key"], []),
    )
    play(state, ANNE, "power fortune-teller 1")
    assert texts(E.legal_moves(state, ANNE)) == [
        "discard cultist",
        "discard golden-key",
        "discard revivify",
    ]
    play(state, ANNE, "discard cultist")
    assert sorted(state.seats[ANNE].hand) == sorted([cid("golden-key"), cid("revivify")])
    assert state.seats[ANNE].discard == [cid("cultist")]
    assert state.seats[ANNE].pool == [0, 0, 0, 0, 0]


def test_elvish_heartwood_discards_to_pay_and_gains_nothing_for_it() -> None:
    state = action_state(tableaus=(["elvish-heartwood"], []), hands=(["cultist", "gnosis"], []))
    play(state, ANNE, "power elvish-heartwood 1", "discard cultist")
    assert state.seats[ANNE].pool == [0, 0, 0, 0, 0]
    assert state.on[cid("elvish-heartwood")] == [0, 1, 0, 0, 0]
    assert vp(state, ANNE) == 1 + 1 + 1  # its own, the Life on it, the token


def test_brass_bust_reorders_the_top_of_the_monument_deck() -> None:
    state = action_state(
        tableaus=(["brass-bust"], []),
        pools=((0, 0, 0, 0, 1), (0, 0, 0, 0, 4)),
        monuments=(
            ["dark-temple"],
            ["well-of-memory", "circle-of-stones", "grove-of-the-druids", "sleeping-dragon"],
        ),
        decks=(["cultist"], []),
    )
    play(state, ANNE, "power brass-bust 1")
    assert texts(E.legal_moves(state, ANNE)) == ["pile artifacts", "pile monuments"]
    events = play(state, ANNE, "pile monuments")
    assert "sleeping-dragon" in repr(E.view(state, ANNE).looking)
    assert E.view(state, BOB).looking == () and E.view(state, None).looking == ()
    assert any("Sleeping Dragon" in t for t in event_texts(events, ANNE))
    assert not any("Sleeping Dragon" in t for t in event_texts(events, BOB))
    assert texts(E.legal_moves(state, ANNE)) == [
        "return circle-of-stones",
        "return grove-of-the-druids",
        "return sleeping-dragon",
    ]
    play(state, ANNE, "return grove-of-the-druids", "return sleeping-dragon")
    # The first card returned ends on top.
    assert state.monument_deck[-3:] == ids_top_last(
        "circle-of-stones", "sleeping-dragon", "grove-of-the-druids"
    )
    play(state, BOB, "claim deck")
    assert cid("grove-of-the-druids") in state.seats[BOB].tableau


def ids_top_last(*slugs: str) -> list[int]:
    return [cid(s) for s in slugs]


def test_brass_bust_with_fewer_than_three_cards_draws_them_all() -> None:
    state = action_state(
        tableaus=(["brass-bust"], []),
        pools=((0, 0, 0, 0, 1), (0,) * 5),
        monuments=(["dark-temple"], ["well-of-memory"]),
    )
    play(state, ANNE, "power brass-bust 1")  # the only pile with cards: no decision
    # One card drawn, one returned: the only move, so no decision either.
    assert state.monument_deck == [cid("well-of-memory")] and state.looking == []


def test_brass_bust_on_your_draw_pile_returns_any_cards_from_hand() -> None:
    state = action_state(
        tableaus=(["brass-bust"], []),
        hands=(["cultist"], []),
        pools=((0, 0, 0, 0, 1), (0,) * 5),
        decks=(["revivify", "golden-key", "gnosis", "black-cat"], []),
        monuments=(["dark-temple"], []),
    )
    play(state, ANNE, "power brass-bust 1")  # only the draw pile: no Monument deck left
    assert len(state.seats[ANNE].hand) == 4
    listed = texts(E.legal_moves(state, ANNE))
    assert "return cultist" in listed  # not only the drawn cards
    play(state, ANNE, "return cultist", "return black-cat", "return golden-key")
    assert state.seats[ANNE].deck == ids_top_last("revivify", "golden-key", "black-cat", "cultist")
    assert sorted(state.seats[ANNE].hand) == sorted(ids_top_last("gnosis"))


def test_the_cultists_death_reaches_a_rival_who_has_passed() -> None:
    state = action_state(tableaus=(["cultist"], []), active=BOB)
    play(state, BOB, "pass", "item alchemy")
    play(state, ANNE, "power cultist 1", "gain life", "gain calm")
    assert state.seats[ANNE].pool == [0, 1, 1, 0, 0]
    assert state.seats[BOB].pool == [0, 0, 0, 1, 0]


def test_silver_key_gives_the_one_rival_gold() -> None:
    state = action_state(tableaus=(["silver-key"], []), pools=((0, 0, 0, 1, 0), (0,) * 5))
    play(state, ANNE, "power silver-key 1")
    assert state.seats[ANNE].pool == [0, 0, 0, 0, 2]
    assert state.seats[BOB].pool == [0, 0, 0, 0, 1]


def test_straighten_another_component_or_the_mage_not_itself() -> None:
    state = action_state(
        tableaus=(["black-cat", "gnosis"], []),
        mages=("smith", "enchantress"),
        pools=((1, 0, 1, 2, 0), (0,) * 5),
    )
    play(state, ANNE, "power gnosis 1")
    play(state, BOB, "pass", "item alchemy")
    play(state, ANNE, "power smith 1")
    play(state, ANNE, "power black-cat 1")
    assert texts(E.legal_moves(state, ANNE)) == ["straighten gnosis", "straighten smith"]
    assert refused(state, ANNE, "straighten black-cat").rule == "Powers"
    play(state, ANNE, "straighten smith")
    assert not state.turned[cid("smith")] and state.turned[cid("black-cat")]


def test_a_power_may_be_used_with_no_effect() -> None:
    state = action_state(tableaus=(["mystic-monastery"], []))
    assert not state.turned[cid("enchantress")]
    events = play(state, ANNE, "power mystic-monastery 1")
    assert state.turned[cid("mystic-monastery")]
    assert "choose a component to straighten: nothing to do" in event_texts(events)
    assert E.to_act(state) == (BOB,)


def test_solomons_key_uses_a_magic_item_from_the_display() -> None:
    state = action_state(
        tableaus=(["solomons-key"], []),
        items=("calm-elan", "alchemy"),
        pools=((0, 0, 0, 1, 0), (0,) * 5),
        decks=(["gnosis"], []),
    )
    play(state, ANNE, "power solomons-key 1")
    # Research is in the display; Calm/Elan and Life/Death have only Collect abilities.
    assert texts(E.legal_moves(state, ANNE)) == ["done", "power research 1"]
    play(state, ANNE, "power research 1")  # its cost's 1 essence: the only Death
    assert state.seats[ANNE].hand == [cid("gnosis")]
    assert not state.turned[cid("research")] and cid("research") in state.items


def test_solomons_key_straightens_your_magic_item() -> None:
    state = action_state(
        tableaus=(["solomons-key"], []),
        pools=((0, 0, 0, 0, 3), (0,) * 5),
        decks=(["gnosis", "cultist"], []),
    )
    play(state, ANNE, "power research 1")
    play(state, BOB, "pass", "item alchemy")
    play(state, ANNE, "power solomons-key 2")
    assert not state.turned[cid("research")]
    assert "power research 1" in texts(E.legal_moves(state, ANNE))


def test_magnum_opus_checks_victory_in_the_middle_of_a_round() -> None:
    state = action_state(tableaus=(["magnum-opus", "sleeping-dragon"], ["dark-temple"]))
    state.target_vp = 7
    events = play(state, ANNE, "power magnum-opus 1")  # 3 + 3 + the token = 7
    assert state.phase == OVER
    result = E.outcome(state)
    assert result is not None and result.winners == (ANNE,) and result.scores == (7, 1)
    assert any(e.kind == "victory_check" for e in events)


def test_circle_of_stones_check_below_the_target_changes_nothing() -> None:
    state = action_state(tableaus=(["circle-of-stones"], []))
    events = play(state, ANNE, "power circle-of-stones 1")
    assert [e.data["vp"] for e in events if e.kind == "victory_check"] == [[3, 0]]
    assert E.outcome(state) is None and E.to_act(state) == (BOB,)


def test_golden_key_takes_essences_from_a_component_of_either_player() -> None:
    state = action_state(
        tableaus=(["golden-key", "white-swan"], ["circle-of-the-druids"]),
        pools=((0, 0, 0, 0, 1), (0,) * 5),
    )
    put_on(state, "circle-of-the-druids", life=3)
    put_on(state, "white-swan", calm=1)
    assert vp(state, BOB) == 3
    play(state, ANNE, "power golden-key 1")
    assert texts(E.legal_moves(state, ANNE)) == ["target white-swan", "target circle-of-the-druids"]
    play(state, ANNE, "target circle-of-the-druids")
    assert state.seats[ANNE].pool == [0, 2, 0, 0, 0] and vp(state, BOB) == 1


def test_squared_circle_puts_the_paid_essence_on_a_turned_component() -> None:
    state = action_state(
        tableaus=(["squared-circle", "dwarven-forge"], []), pools=((1, 0, 0, 0, 2), (0,) * 5)
    )
    play(state, ANNE, "power dwarven-forge 1")
    play(state, BOB, "pass", "item alchemy")
    before = vp(state, ANNE)
    play(state, ANNE, "power squared-circle 1")  # pays its 1 Gold: the only essence
    assert texts(E.legal_moves(state, ANNE)) == [
        "target squared-circle",
        "target enchantress",
        "target dwarven-forge",
    ]
    play(state, ANNE, "target dwarven-forge")
    assert state.turned[cid("dwarven-forge")]
    assert state.on[cid("dwarven-forge")] == [0, 0, 0, 0, 2]
    assert vp(state, ANNE) == before + 1


def test_dragons_lair_turns_a_dragon() -> None:
    state = action_state(tableaus=(["dragons-lair", "fairy-dragon", "white-swan"], []))
    play(state, ANNE, "power dragons-lair 1")
    assert state.turned[cid("fairy-dragon")] and not state.turned[cid("white-swan")]
    assert state.on[cid("dragons-lair")] == [0, 0, 0, 0, 2]


def test_a_discount_on_creatures_only() -> None:
    state = action_state(
        mages=("beastcaller", "smith"),
        hands=(["white-swan", "gnosis"], []),
        pools=((0, 0, 2, 0, 0), (0,) * 5),
    )
    # The White Swan (2 Calm + 1 Life) is a Creature: 1 less. Gnosis (2 Calm) is not.
    assert "place white-swan" in texts(E.legal_moves(state, ANNE))
    play(state, ANNE, "place white-swan")  # the Life is waived, the only choice that works
    assert state.seats[ANNE].pool == [0, 0, 0, 0, 0]


def test_a_discount_applies_while_its_component_is_turned() -> None:
    """Abilities (Collect, discounts, VP) apply whether or not the component is turned."""
    state = action_state(
        mages=("beastcaller", "smith"),
        hands=(["white-swan"], []),
        pools=((0, 1, 2, 0, 0), (0,) * 5),
    )
    play(state, ANNE, "power beastcaller 1")  # turns the Beastcaller: pays the Life
    play(state, BOB, "pass", "item alchemy")
    assert state.turned[cid("beastcaller")]
    play(state, ANNE, "place white-swan")
    assert cid("white-swan") in state.seats[ANNE].tableau


def test_retrieving_never_reaches_the_rivals_discard_pile() -> None:
    state = action_state(
        tableaus=(["well-of-memory"], []),
        hands=([], ["cultist"]),
        pools=((0, 0, 0, 0, 2), (0,) * 5),
        active=BOB,
    )
    play(state, BOB, "discard cultist", "gain gold")
    events = play(state, ANNE, "power well-of-memory 1")
    assert "retrieve a card: nothing to do" in event_texts(events)
    assert state.seats[BOB].discard == [cid("cultist")] and state.seats[ANNE].hand == []


def test_a_discount_may_reduce_the_any_essence_part() -> None:
    # Solomon's Key costs 1 Gold + 1 any; the Robe's point may go to either part.
    state = action_state(
        hands=(["solomons-key"], []),
        items=("artisans-robe", "research"),
        pools=((0, 0, 1, 0, 1), (0,) * 5),
    )
    play(state, ANNE, "place solomons-key")
    assert texts(E.legal_moves(state, ANNE)) == ["waive gold", "waive any"]
    play(state, ANNE, "waive any")
    assert state.seats[ANNE].pool == [0, 0, 1, 0, 0]


def test_the_crucibles_placement_may_be_declined() -> None:
    state = action_state(hands=(["gnosis"], []), tableaus=(["crucible"], []))
    play(state, ANNE, "power crucible 2", "done")
    assert state.turned[cid("crucible")] and state.seats[ANNE].hand == [cid("gnosis")]
    assert E.to_act(state) == (BOB,)


def test_brass_bust_on_an_empty_draw_pile_reshuffles_first() -> None:
    state = action_state(
        tableaus=(["brass-bust"], []),
        hands=(["cultist", "gnosis"], []),
        pools=((0, 0, 0, 0, 1), (0,) * 5),
        monuments=(["dark-temple"], ["well-of-memory"]),
    )
    play(state, ANNE, "discard cultist", "gain calm", "gain calm")
    play(state, BOB, "pass", "item alchemy")
    events = play(state, ANNE, "power brass-bust 1")
    assert texts(E.legal_moves(state, ANNE)) == ["pay calm", "pay gold"]
    events += play(state, ANNE, "pay calm", "pile artifacts")
    assert "Player 1 shuffles the discard pile into a new draw pile" in event_texts(events)
    assert sorted(state.seats[ANNE].hand) == sorted([cid("cultist"), cid("gnosis")])
    play(state, ANNE, "return gnosis")
    assert state.seats[ANNE].deck == [cid("gnosis")]


def test_refusals_name_the_rule() -> None:
    state = action_state(hands=(["gnosis"], []), pools=((0, 0, 0, 0, 2), (0,) * 5))
    assert refused(state, ANNE, "pay gold").rule == "2. Actions"
    assert refused(state, ANNE, "straighten enchantress").rule == "2. Actions"
    play(state, ANNE, "pass")
    assert refused(state, ANNE, "pass").rule == "Passing"
    play(state, ANNE, "item alchemy")
    state = E.new_game(8, 2, E.Options())
    while state.phase == 0:
        for seat in E.to_act(state):
            play(state, seat, str(E.legal_moves(state, seat)[0]))
    stranger = next(c for c in E.legal_moves(state, BOB))
    assert refused(state, ANNE, str(stranger)).rule == "Setup"  # not one of her Mages
