"""Placement Rules and the Treasure Powers that bend them: Dial Rotation, Using an
Inactive Dial, Overwriting, Relocating."""

from __future__ import annotations

import pytest

from services.kit.engine import IllegalMove
from services.kit.testing import assert_refused_unchanged
from services.shrine import engine
from services.shrine.engine import rulebook
from services.shrine.engine.content import BOARD
from services.shrine.engine.state import Phase, State
from tests.shrine.invariants import check_state
from tests.shrine.scenario import (
    SUN,
    C,
    D,
    F,
    clear_board,
    dials,
    face,
    game,
    moves,
    play,
    put,
    step_three,
    unlock_powers,
)


def refused(state: State, seat: int, text: str) -> IllegalMove:
    error = assert_refused_unchanged(engine, state, seat, engine.parse_move(text), IllegalMove)
    assert isinstance(error, IllegalMove)
    return error


def placement_example() -> State:
    """The rulebook's placement example. The bottom right dial (d1, seen from Sun) points
    at its bottom left field B (c1), which holds two Lenses; C (c2) holds a blue Lens; D
    (d2) is two steps away; the top right dial (d4, E) is inactive, and so are the dials
    not shown. A yellow Lens waits in the Offering (A)."""
    state = game(1)
    clear_board(state)
    put(state, "c1", "red", "red")  # B
    put(state, "c2", "blue")  # C
    dials(state, a1="inactive", d1="active", d4="inactive", a4="inactive")
    face(state, "d1", "c1")
    step_three(state, SUN, offering="yellow", treasure=0)
    return state


def test_rulebook_placement_example_without_powers() -> None:
    """Rulebook: "This leaves you with only one valid option: rotating the bottom dial once and then
    placing the Yellow Lens at position C, where it would combine to form green."""
    state = placement_example()
    assert moves(state, SUN, "place") + moves(state, SUN, "overwrite") == ["place c2"]
    assert refused(state, SUN, "place c1").rule == rulebook.VALID_FIELD  # B holds two Lenses
    assert refused(state, SUN, "place d2").rule == rulebook.FREE_ROTATION  # D: one rotation only
    assert refused(state, SUN, "place d3").rule == rulebook.ACTIVE_DIAL  # E is inactive
    play(state, SUN, "place c2")
    assert state.lenses[F("c2")] == [C("blue"), C("yellow")]
    assert engine.view(state, None).fields[F("c2")].shows == "green"
    assert BOARD.dials[D("d1")].fields[state.facing[D("d1")]] == F("c2")
    check_state(state)


def test_rulebook_placement_example_with_dial_rotation() -> None:
    """Rulebook: "Perhaps it's time to consider using a Treasure Power": Dial Rotation reaches D."""
    state = placement_example()
    unlock_powers(state, SUN, "rotation")
    assert refused(state, SUN, "place d2").rule == rulebook.TREASURE_POWERS  # no Treasure
    state.players[SUN].treasure += 1
    state.treasury -= 1
    assert moves(state, SUN, "place") == ["place c2", "place d2"]
    play(state, SUN, "place d2")
    player = state.players[SUN]
    assert player.treasure == 0 and player.powers[0] == 1  # spent, and the power blocked
    assert state.facing[D("d1")] == BOARD.dials[D("d1")].fields.index(F("d2"))


def test_free_rotation_from_the_central_field_reaches_both_outer_fields() -> None:
    state = game(2)
    clear_board(state)
    dials(state, a1="active", d1="inactive", d4="inactive", a4="inactive")
    face(state, "a1", "b2")
    step_three(state, SUN, treasure=0)
    assert moves(state, SUN, "place") == ["place b1", "place a2", "place b2"]


def test_the_designated_field_needs_no_rotation() -> None:
    state = game(2)
    clear_board(state)
    dials(state, a1="active", d1="inactive", d4="inactive", a4="inactive")
    face(state, "a1", "a2")
    step_three(state, SUN, treasure=0)
    assert moves(state, SUN, "place") == ["place a2", "place b2"]


def test_a_field_with_a_block_token_is_not_valid() -> None:
    state = game(2)
    clear_board(state)
    put(state, "b2", "red")
    state.blocked_by[F("b2")] = 1
    state.players[1].blocks_used = 1
    dials(state, a1="active")
    face(state, "a1", "b2")
    step_three(state, SUN, treasure=9)
    unlock_powers(state, SUN)
    assert refused(state, SUN, "place b2").rule == rulebook.VALID_FIELD
    assert refused(state, SUN, "overwrite b2 red").rule == rulebook.VALID_FIELD
    assert refused(state, SUN, "relocate b2 red b1").rule == rulebook.RELOCATING


def test_no_placement_next_to_a_dial_that_left_the_board() -> None:
    state = game(2)
    clear_board(state)
    state.track.append(D("a1"))
    state.treasury -= 0
    step_three(state, SUN, treasure=9)
    unlock_powers(state, SUN)
    for field in ("b1", "b2", "a2"):
        assert refused(state, SUN, f"place {field}").rule == rulebook.DESIGNATED_FIELD


@pytest.mark.parametrize(("stacked", "price"), [(False, 1), (True, 2)])
def test_using_an_inactive_dial(stacked: bool, price: int) -> None:
    """1 Treasure to place on an empty field next to an inactive dial, 2 to stack."""
    state = game(3)
    clear_board(state)
    if stacked:
        put(state, "c4", "red")
    dials(state, a1="active", d4="inactive")
    face(state, "d4", "c4")
    step_three(state, SUN, offering="blue", treasure=price - 1)
    assert refused(state, SUN, "place c4").rule == rulebook.ACTIVE_DIAL  # power blocked
    unlock_powers(state, SUN, "inactive")
    assert refused(state, SUN, "place c4").rule == rulebook.TREASURE_POWERS
    state.players[SUN].treasure += 1
    state.treasury -= 1
    play(state, SUN, "place c4")
    assert state.players[SUN].treasure == 0 and state.players[SUN].powers[2] == price
    play(state, SUN, "done")
    assert not state.active[D("d4")]  # "If the dial is already inactive, do nothing."


def test_inactive_dial_with_dial_rotation_reaches_two_steps() -> None:
    state = game(3)
    clear_board(state)
    dials(state, a1="active", d4="inactive")
    face(state, "d4", "c4")
    step_three(state, SUN, offering="blue", treasure=2)
    unlock_powers(state, SUN, "inactive", "rotation")
    assert "place d3" in moves(state, SUN, "place")
    play(state, SUN, "place d3")
    assert state.players[SUN].powers[0] == 1 and state.players[SUN].powers[2] == 1


def test_overwriting_a_single_lens_replaces_it() -> None:
    state = game(4)
    clear_board(state)
    put(state, "b2", "red")
    dials(state, a1="active")
    face(state, "a1", "b2")
    step_three(state, SUN, offering="blue", treasure=1)
    unlock_powers(state, SUN, "overwriting")
    pouch_red = state.pouch[C("red")]
    play(state, SUN, "overwrite b2 red")
    assert state.lenses[F("b2")] == [C("blue")]
    assert state.pouch[C("red")] == pouch_red + 1  # the removed Lens goes to the pouch
    assert state.players[SUN].powers[4] == 1
    check_state(state)


@pytest.mark.parametrize("removed", ["red", "yellow"])
def test_overwriting_a_stack_removes_either_lens_and_stacks_on_the_other(removed: str) -> None:
    state = game(4)
    clear_board(state)
    put(state, "b2", "red", "yellow")
    dials(state, a1="active")
    face(state, "a1", "b2")
    step_three(state, SUN, offering="blue", treasure=1)
    unlock_powers(state, SUN, "overwriting")
    assert refused(state, SUN, f"overwrite b2 {removed}").rule == rulebook.TREASURE_POWERS
    assert refused(state, SUN, "place b2").rule == rulebook.VALID_FIELD
    state.players[SUN].treasure = 2
    state.treasury -= 1
    assert refused(state, SUN, "overwrite b2 blue").rule == rulebook.OVERWRITING
    play(state, SUN, f"overwrite b2 {removed}")
    kept = "yellow" if removed == "red" else "red"
    assert state.lenses[F("b2")] == [C(kept), C("blue")]
    assert state.players[SUN].powers[4] == 2


def test_overwriting_next_to_an_inactive_dial_prices_the_landing() -> None:
    """Overwriting a single Lens leaves an empty field (1 for the inactive dial); a stack
    leaves one Lens to stack on (2)."""
    state = game(4)
    clear_board(state)
    put(state, "c4", "red")
    put(state, "d3", "red", "blue")
    dials(state, a1="active", d4="inactive")
    face(state, "d4", "c3")
    step_three(state, SUN, offering="yellow", treasure=9)
    unlock_powers(state, SUN)
    play(state, SUN, "overwrite c4 red")
    assert state.players[SUN].powers[2] == 1 and state.players[SUN].powers[4] == 1
    state = game(4)
    clear_board(state)
    put(state, "d3", "red", "blue")
    dials(state, a1="active", d4="inactive")
    face(state, "d4", "c3")
    step_three(state, SUN, offering="yellow", treasure=9)
    unlock_powers(state, SUN)
    play(state, SUN, "overwrite d3 blue")
    assert state.players[SUN].powers[2] == 2 and state.players[SUN].powers[4] == 2
    assert state.lenses[F("d3")] == [C("red"), C("yellow")]


def test_relocating_moves_a_lens_instead_of_placing() -> None:
    """2 Treasures: a Lens from any field without a Block token (even one whose dial has
    left the board) to another valid field; the Offering keeps its Lens and no dial is
    used."""
    state = game(5)
    clear_board(state)
    put(state, "b1", "red", "blue")
    state.track.append(D("a1"))
    dials(state, d1="active", d4="active", a4="active")
    step_three(state, SUN, offering="yellow", treasure=2)
    unlock_powers(state, SUN, "relocating")
    assert refused(state, SUN, "relocate b1 yellow c3").rule == rulebook.RELOCATING
    assert refused(state, SUN, "relocate b1 red b1").rule == rulebook.RELOCATING
    active_before = list(state.active)
    play(state, SUN, "relocate b1 red c3")
    assert state.lenses[F("b1")] == [C("blue")] and state.lenses[F("c3")] == [C("red")]
    assert state.offering == C("yellow") and state.players[SUN].powers[5] == 2
    assert state.phase is Phase.AFTER
    play(state, SUN, "done")
    assert state.active == active_before  # no dial was used
    assert state.offering == C("yellow")  # refilling fills only an empty Offering
    check_state(state)


def test_relocating_needs_a_valid_destination() -> None:
    state = game(5)
    clear_board(state)
    put(state, "b1", "red")
    put(state, "c3", "red", "yellow")
    step_three(state, SUN, offering="yellow", treasure=2)
    unlock_powers(state, SUN, "relocating")
    assert refused(state, SUN, "relocate b1 red c3").rule == rulebook.VALID_FIELD
    assert "relocate c3 yellow b1" in moves(state, SUN, "relocate")


def test_one_placement_a_turn() -> None:
    state = game(6)
    clear_board(state)
    dials(state, a1="active")
    face(state, "a1", "b2")
    step_three(state, SUN, treasure=5)
    unlock_powers(state, SUN)
    play(state, SUN, "place b2")
    assert refused(state, SUN, "place b1").rule == rulebook.PLACE_OR_PASS
    assert refused(state, SUN, "relocate b2 yellow b1").rule == rulebook.PLACE_OR_PASS
    assert refused(state, SUN, "pass").rule == rulebook.PASS


def test_placement_is_mandatory() -> None:
    state = game(6)
    step_three(state, SUN)
    assert refused(state, SUN, "done").rule == rulebook.MANDATORY_PLACEMENT
