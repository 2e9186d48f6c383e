"""Treasure Powers outside a placement, Feathered Serpents and Debt."""

from __future__ import annotations

import pytest

from services.kit.engine import IllegalMove
from services.kit.testing import assert_refused_unchanged
from services.shrine import engine
from services.shrine.engine import rulebook
from services.shrine.engine.content import BOARD, CONTENT, PLAYER
from services.shrine.engine.scoring import false_block_claims, field_value, tallies
from services.shrine.engine.state import Phase
from tests.shrine.invariants import check_state
from tests.shrine.scenario import (
    MOON,
    SUN,
    C,
    F,
    P,
    clear_board,
    code_colour,
    dials,
    face,
    game,
    match,
    mismatch,
    moves,
    play,
    put,
    step_three,
    unlock_powers,
)


def refused(state, seat, text):
    return assert_refused_unchanged(engine, state, seat, engine.parse_move(text), IllegalMove)


# -- Refreshing the Offering ----------------------------------------------------------------


def test_refreshing_draws_until_another_colour() -> None:
    for seed in range(12):
        state = game(seed)
        step_three(state, SUN, offering="red", treasure=2)
        unlock_powers(state, SUN, "refreshing")
        play(state, SUN, "refresh")
        assert state.offering != C("red")
        assert state.players[SUN].powers[P("refreshing")] == 1
        assert state.players[SUN].treasure == 1
        if state.phase is Phase.SEARCH:
            assert state.set_aside[C("red")] >= 1  # the old Lens waits to the side
            play(state, SUN, "accept")
        assert sum(state.set_aside) == 0 and state.phase is Phase.ACTION
        check_state(state)


def test_the_additional_treasure_looks_for_the_third_colour() -> None:
    state = game(3)
    step_three(state, SUN, offering="red", treasure=2)
    unlock_powers(state, SUN, "refreshing")
    play(state, SUN, "refresh")
    second = state.offering
    assert moves(state, SUN) == ["search", "accept"]
    play(state, SUN, "search")
    third = ({C("red"), C("yellow"), C("blue")} - {C("red"), second}).pop()
    assert state.offering == third
    assert state.players[SUN].powers[P("refreshing")] == 2 and state.players[SUN].treasure == 0
    assert state.powers_used == 1  # one power, paid twice
    check_state(state)


def test_no_additional_search_without_treasure() -> None:
    state = game(3)
    step_three(state, SUN, offering="red", treasure=1)
    unlock_powers(state, SUN, "refreshing")
    play(state, SUN, "refresh")
    assert state.phase is Phase.ACTION and sum(state.set_aside) == 0


def test_no_additional_search_when_the_pouch_lacks_the_third_colour() -> None:
    state = game(3)
    clear_board(state)
    for field in ("b1", "c1", "a2", "b2", "c2"):
        put(state, field, "blue", "blue")
    step_three(state, SUN, offering="red", treasure=2)
    unlock_powers(state, SUN, "refreshing")
    play(state, SUN, "refresh")
    assert state.offering == C("yellow")  # the only other colour left in the pouch
    assert state.phase is Phase.ACTION


def test_refreshing_needs_a_lens_of_another_colour_in_the_pouch() -> None:
    state = game(3)
    clear_board(state)
    for field in ("b1", "c1", "a2", "b2", "c2"):
        put(state, field, "blue", "blue")
    for field in ("d2", "a3", "b3", "c3", "d3"):
        put(state, field, "yellow", "yellow")
    step_three(state, SUN, offering="red", treasure=2)
    unlock_powers(state, SUN, "refreshing")
    assert refused(state, SUN, "refresh").rule == rulebook.REFRESHING


def test_a_blocked_power_cannot_be_activated() -> None:
    state = game(3)
    step_three(state, SUN, treasure=5)
    assert state.players[SUN].blocked(P("refreshing"))
    assert refused(state, SUN, "refresh").rule == rulebook.TREASURE_POWERS


# -- Treasure Acquisition and Field Blocking -------------------------------------------------


@pytest.mark.parametrize(("field", "price"), [("b1", 1), ("b2", 2)])
def test_blocking_costs_one_outer_two_central(field: str, price: int) -> None:
    state = game(4)
    clear_board(state)
    put(state, field, "red")
    step_three(state, SUN, treasure=price - 1)
    unlock_powers(state, SUN, "blocking")
    assert refused(state, SUN, f"block {field}").rule == rulebook.TREASURE_POWERS
    state.players[SUN].treasure += 1
    state.treasury -= 1
    play(state, SUN, f"block {field}")
    assert state.players[SUN].powers[P("blocking")] == price
    assert state.blocked_by[F(field)] == SUN


@pytest.mark.parametrize(
    ("lenses", "target", "gained"),
    [
        (("blue",), False, 1),  # the rulebook's example: 1 blue Lens, 1 Treasure
        (("blue", "blue"), False, 2),
        (("red", "yellow"), False, 3),
        (("blue",), True, 3),
        (("red", "yellow"), True, 5),
    ],
)
def test_blocking_pays_the_claimed_field_now(lenses, target, gained) -> None:
    state = game(4)
    clear_board(state)
    put(state, "a2", *lenses)
    step_three(state, SUN, treasure=1)
    unlock_powers(state, SUN, "blocking")
    play(state, SUN, "block a2 target" if target else "block a2")
    assert state.players[SUN].treasure == gained
    assert state.block_target[F("a2")] is target
    check_state(state)


def test_a_block_claim_is_paid_now_and_checked_at_the_end() -> None:
    """The opponent sees the claim, never the Code card: a false claim is accepted and
    costs 6 Treasures at the end."""
    state = game(4)
    clear_board(state)
    match(state, SUN, "b1")
    mismatch(state, SUN, "c1")
    step_three(state, SUN, treasure=2)
    unlock_powers(state, SUN, "blocking")
    play(state, SUN, "block b1")
    unlock_powers(state, SUN, "blocking")
    play(state, SUN, "block c1")
    assert false_block_claims(state, SUN) == [F("c1")]
    assert tallies(state)[SUN].false_claims == 1


def test_a_false_target_claim_is_a_false_claim() -> None:
    state = game(4)
    clear_board(state)
    card = state.players[SUN].code
    plain = next(f for f in ("b1", "c1", "a2", "d2") if not CONTENT.codes[card].targets[F(f)])
    match(state, SUN, plain)
    step_three(state, SUN, treasure=1)
    unlock_powers(state, SUN, "blocking")
    play(state, SUN, f"block {plain} target")
    assert false_block_claims(state, SUN) == [F(plain)]


def test_blocking_needs_a_lens_and_a_free_field_and_a_block_token() -> None:
    state = game(4)
    clear_board(state)
    for field in ("b1", "c1", "a2", "d2"):
        put(state, field, "red")
    step_three(state, SUN, treasure=9)
    unlock_powers(state, SUN)
    assert refused(state, SUN, "block b2").rule == rulebook.BLOCKING  # no Lens there
    play(state, SUN, "block b1")
    assert refused(state, SUN, "block b1").rule == rulebook.TREASURE_POWERS  # power blocked
    unlock_powers(state, SUN, "blocking")
    assert refused(state, SUN, "block b1").rule == rulebook.BLOCKING
    play(state, SUN, "block c1")
    unlock_powers(state, SUN, "blocking")
    play(state, SUN, "block a2")
    unlock_powers(state, SUN, "blocking")
    assert state.players[SUN].blocks_used == PLAYER.block_tokens
    assert refused(state, SUN, "block d2").rule == rulebook.BLOCKING
    assert moves(state, SUN, "block") == []


def test_blocking_after_placing_in_the_same_turn() -> None:
    state = game(4)
    clear_board(state)
    dials(state, a1="active")
    face(state, "a1", "b1")
    step_three(state, SUN, offering="red", treasure=1)
    unlock_powers(state, SUN, "blocking")
    play(state, SUN, "place b1")
    assert "block b1" in moves(state, SUN)
    play(state, SUN, "block b1")
    assert state.phase is Phase.AFTER


def test_place_a_block_token_on_a_field_containing_at_least_one_arcane_lens() -> None:
    """Rulebook: "Place one of your three Block tokens on a field containing at least one
    Arcane Lens ... If the color on the field matches the color on your Code card,
    immediately gain the corresponding amount of Treasure." A match is not needed to
    block: ``noclaim`` blocks a field the player does not claim, paying the power's price
    and gaining nothing."""
    state = game(4)
    clear_board(state)
    shown = mismatch(state, SUN, "a2")
    put(state, "b2", "red")
    step_three(state, SUN, treasure=3)
    unlock_powers(state, SUN, "blocking")
    assert moves(state, SUN, "block") == [
        "block a2",
        "block a2 noclaim",
        "block a2 target",
        "block b2",
        "block b2 noclaim",
        "block b2 target",
    ]
    events = play(state, SUN, "block a2 noclaim")
    assert state.players[SUN].treasure == 3 - 1  # the outer price, and nothing gained
    assert state.players[SUN].powers[P("blocking")] == 1
    assert state.blocked_by[F("a2")] == SUN and state.players[SUN].blocks_used == 1
    assert state.block_no_claim[F("a2")] and not state.block_target[F("a2")]
    assert events[0].text == f"Sun blocked a2 ({shown}), claiming nothing: no Treasure (paid 1)"
    assert events[0].data["gained"] == 0 and events[0].data["no_claim"] is True
    assert "a2" not in " ".join(moves(state, SUN))  # "can no longer be interacted with"
    check_state(state)


def test_a_block_that_claims_nothing_needs_what_every_block_needs() -> None:
    state = game(4)
    clear_board(state)
    put(state, "b2", "red")
    step_three(state, SUN, treasure=1)
    assert refused(state, SUN, "block b2 noclaim").rule == rulebook.TREASURE_POWERS  # blocked
    unlock_powers(state, SUN, "blocking")
    assert refused(state, SUN, "block c2 noclaim").rule == rulebook.BLOCKING  # no Lens there
    assert refused(state, SUN, "block b2 noclaim").rule == rulebook.TREASURE_POWERS  # costs 2


def test_validate_blocked_fields_a_block_that_claims_nothing_is_no_claim() -> None:
    """End of the game: "Validate Blocked Fields ... If a mistake is discovered (the field
    color does not match the player's Code card), the player must pay a penalty of 6
    Treasures." A Block that claimed nothing made no claim to validate: no penalty, and
    (like every blocked field) it is not scored. The control claims the same field."""
    results = {}
    for claim in ("noclaim", ""):
        state = game(4)
        clear_board(state)
        match(state, MOON, "a2")  # Moon's colour there, so never Sun's (the cards differ)
        assert code_colour(state, SUN, "a2") != code_colour(state, MOON, "a2")
        step_three(state, SUN, treasure=1)
        unlock_powers(state, SUN, "blocking")
        play(state, SUN, f"block a2 {claim}".strip())
        results[claim or "claim"] = (false_block_claims(state, SUN), tallies(state), state)
    nothing, nothing_tally, _ = results["noclaim"]
    claimed, claimed_tally, claimed_state = results["claim"]
    gained = field_value(claimed_state.lenses[F("a2")])
    assert nothing == [] and nothing_tally[SUN].false_claims == 0
    assert claimed == [F("a2")] and claimed_tally[SUN].false_claims == 1  # the control
    assert nothing_tally[SUN].total == 0  # paid 1, gained nothing, no penalty
    assert claimed_tally[SUN].total == gained - PLAYER.false_claim_penalty
    # the field was denied to Moon, whose Code card it matches: not scored at the end
    assert nothing_tally[MOON].fields == 0 and nothing_tally[MOON].area == 1


def test_a_block_that_claims_nothing_on_a_matching_field_gains_nothing() -> None:
    """Nothing is claimed, so nothing is gained, even where the Code card matches; the field
    still counts in the largest contiguous area."""
    state = game(4)
    clear_board(state)
    match(state, SUN, "a2")
    step_three(state, SUN, treasure=1)
    unlock_powers(state, SUN, "blocking")
    play(state, SUN, "block a2 noclaim")
    tally = tallies(state)[SUN]
    assert state.players[SUN].treasure == 0
    assert tally.false_claims == 0 and tally.fields == 0 and tally.area == 1


# -- Feathered Serpents -----------------------------------------------------------------------


def test_a_serpent_unlocks_an_extra_power_in_step_three() -> None:
    state = game(5)
    step_three(state, SUN, treasure=0)
    treasury = state.treasury
    assert moves(state, SUN, "serpent") == [f"serpent {p.key}" for p in PLAYER.powers]
    play(state, SUN, "serpent relocating")
    assert not state.players[SUN].blocked(P("relocating"))
    assert state.treasury == treasury + 2
    play(state, SUN, "serpent rotation")
    assert moves(state, SUN, "serpent") == []
    assert refused(state, SUN, "serpent inactive").rule == rulebook.FEATHERED_SERPENTS
    assert tallies(state)[SUN].serpents == 1  # both removed: 1 Treasure at the end


def test_a_serpent_can_unlock_a_power_used_this_turn() -> None:
    """Reading: the Serpent unlocks any blocked power, also one already used this turn."""
    state = game(5)
    clear_board(state)
    put(state, "b1", "red")
    put(state, "c1", "red")
    step_three(state, SUN, treasure=2)
    unlock_powers(state, SUN, "blocking")
    play(state, SUN, "block b1")
    assert state.players[SUN].blocked(P("blocking"))
    play(state, SUN, "serpent blocking")
    play(state, SUN, "block c1")
    assert state.players[SUN].blocks_used == 2


def test_a_serpent_only_unlocks_a_blocked_power() -> None:
    state = game(5)
    step_three(state, SUN)
    unlock_powers(state, SUN, "rotation")
    assert refused(state, SUN, "serpent rotation").rule == rulebook.FEATHERED_SERPENTS


# -- Running Out of Treasure --------------------------------------------------------------------


def test_debt_gives_two_now_and_costs_three_at_the_end() -> None:
    state = game(6)
    step_three(state, SUN, treasure=0)
    for taken in (1, 2, 3):
        play(state, SUN, "debt")
        assert state.players[SUN].treasure == 2 * taken
    assert moves(state, SUN, "debt") == []
    assert refused(state, SUN, "debt").rule == rulebook.RUNNING_OUT
    assert tallies(state)[SUN].debts == 9
    check_state(state)


def test_treasure_powers_spent_stay_on_the_board_until_unlocked() -> None:
    """A used power is blocked again by the Treasures paid on it."""
    state = game(6)
    clear_board(state)
    dials(state, a1="active")
    face(state, "a1", "b1")
    step_three(state, SUN, treasure=1)
    unlock_powers(state, SUN, "rotation")
    play(state, SUN, "place a2")
    play(state, SUN, "done")
    assert state.players[SUN].blocked(P("rotation"))
    assert BOARD.dials[0].corner == "a1"


def test_refreshing_only_before_placing() -> None:
    state = game(3)
    clear_board(state)
    dials(state, a1="active")
    face(state, "a1", "b1")
    step_three(state, SUN, offering="red", treasure=3)
    unlock_powers(state, SUN, "refreshing")
    play(state, SUN, "place b1")
    assert refused(state, SUN, "refresh").rule == rulebook.PLACE_OR_PASS


def test_debt_with_treasure_in_hand() -> None:
    """Reading: a Debt token may be taken at any decision of step 3, not only when the
    Treasure has run out."""
    state = game(6)
    step_three(state, SUN, treasure=4)
    assert "debt" in moves(state, SUN)
    play(state, SUN, "debt")
    assert state.players[SUN].treasure == 6
