"""1) Recovery and Set-Up Phase: refresh, draw, and Shén counters with their captures."""

from __future__ import annotations

import pytest

from services.kit.engine import IllegalMove
from services.kit.testing import assert_refused_unchanged
from services.shen import engine
from services.shen.engine import Step
from services.shen.engine.rulebook import DRAW as R_DRAW
from services.shen.engine.rulebook import PHASES as R_PHASES
from services.shen.engine.rulebook import SHEN_COUNTER as R_SHEN

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


def fresh(players=2, **options):
    """Seat 0 to act in its Recovery Phase on a field holding only the Realm Stones
    (seat 0 on E3, seat 1 on E7, ...)."""
    state = started(players=players, **options)
    clear_field(state)
    state.active = 0
    state.step = Step.RECOVERY
    return state


def test_refresh_readies_own_avatars_at_the_start_of_the_turn():
    state = started()
    mine = put_avatar(state, 1, "tide_guard", "c6", ready=False)
    theirs = put_avatar(state, 0, "ember_scout", "c2", ready=False)
    do(state, "draw", "pass", "end")
    assert state.active == 1
    assert mine.ready and not theirs.ready


def test_draw_takes_the_top_card_and_rebuilds_an_empty_deck_from_the_discard_pile():
    state = fresh()
    player = state.players[0]
    top = player.deck[-1]
    events = do(state, "draw")
    assert top in player.hand and len(player.hand) == 7
    private = [e for e in events if e.kind == "drew"]
    assert private and private[0].to == frozenset({0})
    public = [e for e in events if e.kind == "drew_count"]
    assert public and public[0].to is None and engine.CARDS[top].id not in public[0].text

    state = fresh()
    player = state.players[0]
    player.discard, player.deck = player.deck, []
    before = sorted(player.discard)
    hand = list(player.hand)
    events = do(state, "draw")
    assert [e.kind for e in events][:1] == ["reshuffled"]
    (drawn,) = [c for c in player.hand if c not in hand] or [player.hand[0]]
    assert sorted([*player.deck, drawn]) == before and player.discard == []


def test_draw_is_refused_with_no_deck_and_no_discard_pile():
    state = fresh()
    state.players[0].deck.clear()
    assert "draw" not in texts(state)
    err = assert_refused_unchanged(engine, state, 0, mv("draw"), IllegalMove)
    assert err.rule == R_DRAW


def test_placing_a_counter_needs_an_empty_vertex():
    state = fresh()
    put_counters(state, 1, "C5")
    for text in ("shen C5", "shen E3"):  # a counter, a Realm Stone
        err = assert_refused_unchanged(engine, state, 0, mv(text), IllegalMove)
        assert err.rule == R_SHEN


def test_a_counter_needs_an_empty_vertex_next_to_it_or_its_association():
    state = fresh()
    # C5 surrounded by opponent counters: no empty neighbour, nothing of seat 0 around.
    put_counters(state, 1, "B5", "D5", "C4", "C6")
    assert "shen C5" not in texts(state)
    err = assert_refused_unchanged(engine, state, 0, mv("shen C5"), IllegalMove)
    assert err.rule == R_SHEN and "empty vertex" in err.message
    # With a chain of own counters reaching a liberty, the same vertex becomes legal.
    state = fresh()
    put_counters(state, 1, "B5", "C4", "C6")
    put_counters(state, 0, "D5", "E5")  # D5's chain: E5 has empty neighbours
    assert "shen C5" in texts(state)


def test_the_placement_rule_is_checked_before_captures():
    # Seat 0 fills C5 where it has no liberty, although the placement would capture the
    # lone counter at D5 (see README: readings).
    state = fresh()
    put_counters(state, 1, "B5", "C4", "C6", "D5")
    put_counters(state, 0, "D4", "D6", "E5")
    assert "shen C5" not in texts(state)


def capture_case(surround: list[str], victim: str):
    state = fresh()
    put_counters(state, 1, victim)
    put_counters(state, 0, *surround[:-1])
    hand = len(state.players[1].hand)
    events = do(state, f"shen {surround[-1]}")
    return state, events, hand


@pytest.mark.parametrize(
    ("where", "surround", "victim"),
    [
        ("middle", ["C4", "C6", "B5", "D5"], "C5"),
        ("edge", ["A4", "A6", "B5"], "A5"),
        ("corner", ["I2", "H1"], "I1"),
    ],
)
def test_a_surrounded_counter_is_captured_in_the_middle_on_the_edge_and_in_the_corner(
    where, surround, victim
):
    state, events, _ = capture_case(surround, victim)
    assert loc(victim) not in state.counters
    assert any(e.kind == "shen_removed" and "captured" in e.text for e in events)
    # "Players lose one card ... for every Shén counter removed": the owner chooses.
    assert engine.to_act(state) == (1,)
    assert state.tasks[-1] == ("lose", 1, 1)
    assert all(t.startswith("lose ") for t in texts(state))


def test_an_associated_chain_is_captured_whole_and_costs_a_card_per_counter():
    state = fresh()
    put_counters(state, 1, "C5", "D5")
    put_counters(state, 0, "B5", "C4", "C6", "D4", "D6")
    do(state, "shen E5")
    assert loc("C5") not in state.counters and loc("D5") not in state.counters
    assert state.tasks[-1] == ("lose", 1, 2)
    before = state.players[1].cards_left()
    do(state, texts(state)[0])
    do(state, texts(state)[0])
    assert state.players[1].cards_left() == before - 2
    assert len(state.players[1].removed) == 2
    assert state.step == Step.INFLUENCE and engine.to_act(state) == (0,)


def test_a_chain_with_a_liberty_is_not_captured():
    state = fresh()
    put_counters(state, 1, "C5", "D5")
    put_counters(state, 0, "B5", "C4", "C6", "D4")  # D6 stays empty
    do(state, "shen H8")
    assert state.counters[loc("C5")] == 1 and not state.tasks


def test_counters_associated_with_their_realm_stone_are_not_captured():
    # "...unless they are associated with their own realm stone. A Realm Stone counts as a
    # Shén counter but cannot be removed." Seat 1's stone E7 and its counter E6 are
    # surrounded, yet stay.
    state = fresh()
    put_counters(state, 1, "E6")
    put_counters(state, 0, "D6", "F6", "E5", "D7", "F7")
    # Everything around E7 and E6 is seat 0's but E8; fill it.
    do(state, "shen E8")
    assert state.counters[loc("E6")] == 1 and state.stones[loc("E7")] == 1
    assert not state.tasks


def test_captures_spare_teammates_and_take_every_opponent():
    state = fresh(players=4, teams=2)  # seats 0 and 2 against 1 and 3
    put_counters(state, 2, "C5")
    put_counters(state, 0, "B5", "C4", "C6")
    do(state, "shen D5")
    assert state.counters[loc("C5")] == 2  # a teammate's counter is not captured
    state = fresh(players=3)
    put_counters(state, 1, "C5")
    put_counters(state, 2, "G5")
    put_counters(state, 0, "B5", "C4", "C6", "G4", "G6", "H5")
    do(state, "shen D5")
    do(state, texts(state)[0])  # seat 1 loses its card
    assert state.step == Step.INFLUENCE
    state.step = Step.RECOVERY
    do(state, "shen F5")
    assert loc("G5") not in state.counters and state.tasks[-1] == ("lose", 2, 1)


def test_a_spirit_avatar_on_a_captured_counter_returns_to_its_owners_hand():
    state = fresh()
    put_counters(state, 1, "C5")
    spirit = put_avatar(state, 1, "tide_spirit_droplet", "C5")
    put_counters(state, 0, "B5", "C4", "C6")
    hand = list(state.players[1].hand)
    events = do(state, "shen D5")
    assert spirit.uid not in state.avatars and loc("C5") not in state.at
    assert sorted([*hand, card("tide_spirit_droplet")]) == state.players[1].hand
    assert any(e.kind == "avatar_returned" for e in events)


def test_recovery_offers_draw_or_placement_only():
    state = fresh()
    err = assert_refused_unchanged(engine, state, 0, mv("pass"), IllegalMove)
    assert err.rule == R_PHASES
    set_hand(state, 0, "ember_scout")
    err = assert_refused_unchanged(engine, state, 0, mv("play ember_scout"), IllegalMove)
    assert err.rule == R_PHASES


def test_with_nothing_to_draw_or_place_the_phase_passes():
    state = started(size=4, anchor_points=("a1",), stones=("B3", "D3"))
    # Fill every empty vertex with the other seat's counters where placement is legal.
    state.players[state.active].deck.clear()
    state.players[state.active].discard.clear()
    other = 1 - state.active
    for v in state.board.vertices:
        if v not in state.counters and v not in state.stones:
            state.counters[v] = other
    state.step = Step.RECOVERY
    from services.shen.engine.turn import carry_on as _advance

    _advance(state, [])
    assert state.step == Step.INFLUENCE


def two_associations_sharing_a_last_liberty(**options) -> engine.State:
    """Three players: seat 1's C5-C6 and seat 2's D5 touch each other, and D6 is the last
    empty vertex of both; seat 0 to place. (Realm Stones far off: E3, E8, H3.)"""
    state = started(players=3, stones=("E3", "E8", "H3"), **options)
    clear_field(state)
    state.active = 0
    state.step = Step.RECOVERY
    put_counters(state, 1, "C5", "C6")
    put_counters(state, 2, "D5")
    put_counters(state, 0, "B5", "C4", "B6", "C7", "D4", "E5")
    return state


def test_remove_any_opponents_shen_counters_that_are_now_surrounded_and_captured_all_at_once_with_three_players():  # noqa: E501
    # "Then remove any opponent's Shén counters that are now surrounded and captured": D6
    # takes the last liberty of both associations; removing one first would give the
    # other a liberty, so both are found on the board D6 leaves, then both go.
    state = two_associations_sharing_a_last_liberty()
    before = [state.players[s].cards_left() for s in (1, 2)]
    events = do(state, "shen D6")
    for victim in ("C5", "C6", "D5"):
        assert loc(victim) not in state.counters, victim
    removed = sorted(e.data["at"] for e in events if e.kind == "shen_removed")
    assert removed == ["C5", "C6", "D5"]
    # "Players lose one card ... for every Shén counter removed", in turn order.
    assert sorted(state.tasks) == [("lose", 1, 2), ("lose", 2, 1)]
    assert engine.to_act(state) == (1,)
    while state.tasks:
        do(state, texts(state)[0])
    assert [state.players[s].cards_left() for s in (1, 2)] == [before[0] - 2, before[1] - 1]
    assert state.step == Step.INFLUENCE and engine.to_act(state) == (0,)


def test_games_stored_before_captures_at_once_replay_removing_one_association_at_a_time():
    # Stored rows have no captures_at_once; they replay under the rule they were played by
    # (ShenOptions.STORED_BEFORE): the association met first goes, and the other, given a
    # liberty by its removal, stays. The control above shows the fixed rule differs.
    stored = engine.Options(round_limit=40).to_dict()
    del stored["captures_at_once"]
    old = engine.Options.from_dict(stored)
    assert old.captures_at_once is False and old.round_limit == 40
    state = two_associations_sharing_a_last_liberty(**{"captures_at_once": False})
    do(state, "shen D6")
    left = {name: state.counters.get(loc(name)) for name in ("C5", "C6", "D5")}
    # The Spirit Path from D6 meets D5 first (links in vertex order), so seat 2's D5 goes
    # and seat 1's pair breathes through the vertex it leaves.
    assert left == {"C5": 1, "C6": 1, "D5": None}
    assert state.tasks == [("lose", 2, 1)]
    assert engine.Options.from_dict(engine.Options().to_dict()).captures_at_once is True
