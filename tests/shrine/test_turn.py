"""The turn: refilling, unlocking, passing, deactivating and the end-of-turn checks."""

from __future__ import annotations

from services.kit.engine import GameOver, IllegalMove, NotYourDecision
from services.kit.testing import assert_refused_unchanged, random_game
from services.shrine import engine
from services.shrine.engine import rulebook
from services.shrine.engine.content import BOARD, PLAYER
from services.shrine.engine.scoring import tallies
from services.shrine.engine.state import Phase
from tests.shrine.invariants import check_state
from tests.shrine.scenario import (
    MOON,
    SUN,
    D,
    P,
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


def refused(state, seat, text, error=IllegalMove):
    return assert_refused_unchanged(engine, state, seat, engine.parse_move(text), error)


def test_unlock_a_treasure_power_returns_its_treasure_to_the_treasury() -> None:
    state = game(1)
    seat = state.current
    assert moves(state, seat) == [f"unlock {p.key}" for p in PLAYER.powers]
    treasury = state.treasury
    play(state, seat, "unlock overwriting")
    assert state.players[seat].powers[P("overwriting")] == 0
    assert state.treasury == treasury + 2
    assert state.phase is Phase.ACTION


def test_only_a_blocked_power_can_be_unlocked() -> None:
    state = game(1)
    seat = state.current
    unlock_powers(state, seat, "rotation")
    assert "unlock rotation" not in moves(state, seat)
    assert refused(state, seat, "unlock rotation").rule == rulebook.UNLOCK


def test_step_two_is_skipped_when_nothing_is_blocked() -> None:
    state = game(1)
    seat = state.current
    play(state, seat, "unlock rotation")
    unlock_powers(state, 1 - seat)
    play(state, seat, "pass")
    assert state.current == 1 - seat and state.phase is Phase.ACTION


def test_only_the_player_to_act_decides() -> None:
    state = game(1)
    other = 1 - state.current
    assert engine.legal_moves(state, other) == []
    error = refused(state, other, "unlock rotation", NotYourDecision)
    assert isinstance(error, NotYourDecision)
    refused(state, None, "unlock rotation", NotYourDecision)


def test_pass_at_most_twice_and_without_powers() -> None:
    state = game(1)
    seat = state.current
    play(state, seat, "unlock rotation")
    active = list(state.active)
    offering = state.offering
    play(state, seat, "pass")
    assert state.players[seat].passes == 1
    assert state.active == active  # steps 4 and 5 are skipped
    assert state.current == 1 - seat
    assert state.offering == offering  # the Offering keeps its Lens: nothing to refill
    step_three(state, seat)
    play(state, seat, "pass")
    step_three(state, seat)
    assert "pass" not in moves(state, seat)
    assert refused(state, seat, "pass").rule == rulebook.PASS
    # passing twice costs 1 Treasure at the end
    assert tallies(state)[seat].passes == 1


def test_no_pass_after_a_treasure_power() -> None:
    state = game(1)
    clear_board(state)
    put(state, "b1", "red")
    step_three(state, SUN, treasure=3)
    unlock_powers(state, SUN, "blocking")
    play(state, SUN, "block b1")
    assert "pass" not in moves(state, SUN)
    assert refused(state, SUN, "pass").rule == rulebook.PASS


def test_serpents_and_debt_do_not_prevent_a_pass() -> None:
    state = game(1)
    step_three(state, SUN, treasure=0)
    play(state, SUN, "debt")
    play(state, SUN, "serpent relocating")
    assert "pass" in moves(state, SUN)


def test_deactivate_the_dial_used() -> None:
    state = game(2)
    clear_board(state)
    dials(state, a1="active", d1="active", d4="active", a4="active")
    face(state, "a1", "b1")
    step_three(state, SUN, treasure=0)
    play(state, SUN, "place b1")
    play(state, SUN, "done")
    assert state.active == [False, True, True, True]


def test_all_dials_inactive_reactivates_all_but_the_one_used() -> None:
    state = game(2)
    clear_board(state)
    dials(state, a1="active", d1="inactive", d4="inactive", a4="inactive")
    face(state, "a1", "b1")
    step_three(state, SUN, treasure=0)
    play(state, SUN, "place b1")
    play(state, SUN, "done")
    assert state.active == [False, True, True, True]


def test_a_dial_with_no_valid_field_leaves_for_the_progress_track() -> None:
    """The used dial with no valid field left goes to the topmost free space of the game
    progress track, and its player takes the Treasure printed there."""
    state = game(3)
    clear_board(state)
    put(state, "b1", "red", "red")
    put(state, "b2", "blue", "blue")
    put(state, "a2", "yellow")
    dials(state, a1="active", d1="active", d4="active", a4="active")
    face(state, "a1", "a2")
    step_three(state, SUN, offering="yellow", treasure=0)
    treasury = state.treasury
    play(state, SUN, "place a2")
    play(state, SUN, "done")
    assert state.track == [D("a1")]
    assert state.players[SUN].treasure == BOARD.track[0]
    assert state.treasury == treasury - BOARD.track[0]
    assert engine.view(state, None).dials[D("a1")].side == "removed"
    assert engine.outcome(state) is None
    check_state(state)


def test_a_dial_with_a_valid_field_stays() -> None:
    state = game(3)
    clear_board(state)
    put(state, "b1", "red", "red")
    face(state, "a1", "b1")
    dials(state, a1="active")
    step_three(state, SUN, offering="yellow", treasure=0)
    play(state, SUN, "place b2")
    play(state, SUN, "done")
    assert state.track == []


def test_the_game_ends_when_the_third_dial_leaves() -> None:
    state = game(3)
    clear_board(state)
    state.track = [D("d1"), D("d4")]
    put(state, "b1", "red", "red")
    put(state, "b2", "blue", "blue")
    put(state, "a2", "yellow")
    dials(state, a1="active", a4="active")
    face(state, "a1", "a2")
    step_three(state, SUN, offering="red", treasure=0)
    events = play(state, SUN, "place a2")
    events += play(state, SUN, "done")
    assert state.track == [D("d1"), D("d4"), D("a1")]
    assert state.players[SUN].treasure == BOARD.track[2]
    final = engine.outcome(state)
    assert final is not None and state.phase is Phase.OVER
    assert engine.to_act(state) == ()
    assert any(e.kind == "game_end" for e in events)
    refused(state, MOON, "pass", GameOver)
    assert engine.legal_moves(state, SUN) == engine.legal_moves(state, MOON) == []


def test_a_finished_random_game_refuses_every_move() -> None:
    played = random_game(engine, 5, 2, engine.Options())
    for seat in (SUN, MOON):
        refused(played.state, seat, "pass", GameOver)


def test_unlocking_is_not_optional() -> None:
    """Reading: step 2 is a step of the turn, not an option; with a power blocked, one is
    unlocked (with Radiant Shapes, drawing Shape cards may replace it)."""
    state = game(1)
    seat = state.current
    assert "skip" not in moves(state, seat)
    assert refused(state, seat, "skip").rule == rulebook.UNLOCK


def test_only_the_dial_used_leaves_the_board() -> None:
    """Reading: the end-of-turn check looks at the dial just used. A dial whose last valid
    field was blocked by a Treasure Power stays (it can still be used by Overwriting)."""
    state = game(3)
    clear_board(state)
    put(state, "b1", "red", "red")
    put(state, "b2", "blue", "blue")
    put(state, "a2", "yellow")
    dials(state, a1="active", d1="active", d4="active", a4="active")
    step_three(state, SUN, offering="red", treasure=1)
    unlock_powers(state, SUN, "blocking")
    play(state, SUN, "block a2")  # a1 has no valid field left, but it was not used
    face(state, "d1", "d2")
    play(state, SUN, "place d2")
    play(state, SUN, "done")
    assert state.track == []
    assert state.active[D("a1")]
