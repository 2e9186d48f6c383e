"""The Channeling's rules, step by step, as the rulebook gives them."""

from __future__ import annotations

import copy
import itertools
from math import comb

import pytest

from services.channeling import engine
from services.channeling.engine import board
from services.channeling.engine.content import CARD_BY_ID, CARDS, GLYPH_INDEX, GLYPHS
from services.channeling.engine.moves import ChoosePath, FillGap, MoveDruid, PlayGlyph
from services.channeling.engine.state import (
    BEYOND_SPLENDOR,
    BEYOND_VIGOR,
    DARK,
    DRUID,
    FILL,
    GLYPH,
    LIGHT,
    PATH,
)
from services.channeling.engine.steps.play_glyph import glyph_line
from services.kit.engine import BadOptions, GameOver, IllegalMove, MalformedMove, NotYourDecision
from services.kit.testing import assert_refused_unchanged

C = board.parse_cell


def new(seed: int = 1) -> engine.State:
    return engine.new_game(seed, 2, engine.Options())


def card_with(vigor: int, splendor: int | None = None) -> int:
    return next(
        c.id for c in CARDS if c.vigor == vigor and (splendor is None or c.splendor == splendor)
    )


def glyph_for_row(state: engine.State, r: int) -> int:
    return state.row_glyphs[r]


def glyph_for_col(state: engine.State, c: int) -> int:
    return state.col_glyphs[c]


# --- Setup -----------------------------------------------------------------------------


def test_setup_deals_sixteen_cards_and_labels_every_line_with_a_green_glyph():
    state = new(3)
    assert len(state.grid) == 16 and None not in state.grid
    assert len(state.deck) == len(CARDS) - 16
    assert sorted(state.grid + state.deck) == sorted(c.id for c in CARDS)
    assert sorted(state.row_glyphs + state.col_glyphs) == list(range(8))
    assert state.hands == [list(range(8)), list(range(8))]
    assert state.supply == [50, 50]
    assert engine.to_act(state) == (LIGHT,)  # Play begins with Light.


def test_druids_start_on_the_centre_four_with_colours_diagonal():
    state = new()
    light, dark = state.druids
    assert sorted(light + dark) == sorted(board.CENTRE)
    for a, b in (light, dark):
        # Diagonally across: different row and different column.
        assert board.row(a) != board.row(b) and board.col(a) != board.col(b)


def test_setup_is_random_by_seed_and_repeatable():
    assert new(5) == new(5)
    layouts = {(tuple(new(s).grid), new(s).row_glyphs) for s in range(20)}
    assert len(layouts) == 20


def test_only_two_players():
    with pytest.raises(BadOptions):
        engine.new_game(1, 3, engine.Options())


# --- 1 - Play a Glyph Card -------------------------------------------------------------


def test_playing_a_glyph_lays_it_down_and_the_eighth_returns_the_hand():
    state = new()
    for i in range(8):
        seat = state.current
        glyph = engine.legal_moves(state, seat)[0]
        hand_before = len(state.hands[seat])
        engine.apply(state, seat, glyph)
        if i < 7 or hand_before > 1:
            assert glyph.glyph not in state.hands[seat]
            assert state.played[seat][-1] == glyph.glyph
        # finish the turn with the first legal choices
        while state.current == seat and state.result is None:
            engine.apply(state, seat, engine.legal_moves(state, seat)[0])
    # after 8 turns each seat has played 4 glyphs
    assert [len(h) for h in state.hands] == [4, 4]


def test_eighth_glyph_takes_all_glyphs_back():
    state = new()
    state.hands[LIGHT] = [GLYPH_INDEX["sun"]]
    state.played[LIGHT] = [g for g in range(8) if g != GLYPH_INDEX["sun"]]
    events = engine.apply(state, LIGHT, PlayGlyph(GLYPH_INDEX["sun"]))
    assert state.hands[LIGHT] == list(range(8))
    assert state.played[LIGHT] == []
    assert [e.kind for e in events][:2] == ["glyph_played", "glyphs_returned"]


def test_a_glyph_not_in_hand_is_refused():
    state = new()
    state.hands[LIGHT].remove(0)
    exc = assert_refused_unchanged(engine, state, LIGHT, PlayGlyph(0), IllegalMove)
    assert exc.rule == "1 - Play a Glyph Card"


def test_out_of_turn_and_wrong_step_are_refused():
    state = new()
    assert_refused_unchanged(engine, state, DARK, PlayGlyph(0), NotYourDecision)
    exc = assert_refused_unchanged(engine, state, LIGHT, MoveDruid(5, 1), IllegalMove)
    assert "play glyph" in str(exc)
    assert_refused_unchanged(engine, state, LIGHT, "glyph sun", MalformedMove)


# --- 2 - Move a Druid Token -----------------------------------------------------------


def test_druid_moves_to_a_free_card_in_the_glyphs_line_only():
    state = new()
    glyph = glyph_for_row(state, 0)  # top row: a1..d1, no Druid there at setup
    engine.apply(state, LIGHT, PlayGlyph(glyph))
    assert state.step == DRUID
    moves = engine.legal_moves(state, LIGHT)
    targets = {m.target for m in moves}
    assert targets == set(board.row_cells(0))
    assert {m.origin for m in moves} == set(state.druids[LIGHT])
    # Either Druid may go: the glyph names where it lands, not where it starts.
    assert len(moves) == 8


def test_druid_cannot_land_on_any_druid_or_leave_its_line():
    state = new()
    glyph = glyph_for_row(state, 1)  # row 2: b2 and c2 hold Druids
    engine.apply(state, LIGHT, PlayGlyph(glyph))
    targets = {m.target for m in engine.legal_moves(state, LIGHT)}
    assert targets == {C("a2"), C("d2")}
    origin = state.druids[LIGHT][0]
    dark_cell = state.druids[DARK][0]
    assert_refused_unchanged(engine, state, LIGHT, MoveDruid(origin, dark_cell), IllegalMove)
    outside = next(c for c in board.row_cells(3) if c not in targets)
    exc = assert_refused_unchanged(engine, state, LIGHT, MoveDruid(origin, outside), IllegalMove)
    assert exc.rule == "2 - Move a Druid Token"
    # Only one's own Druid moves.
    assert_refused_unchanged(engine, state, LIGHT, MoveDruid(dark_cell, C("a2")), IllegalMove)


def test_glyph_whose_line_is_full_is_not_playable_while_another_is():
    state = new()
    # All four Druids in row 1 (a1..d1): that row's glyph leaves no Druid move.
    state.druids = [[C("a1"), C("c1")], [C("b1"), C("d1")]]
    full = glyph_for_row(state, 0)
    assert PlayGlyph(full) not in engine.legal_moves(state, LIGHT)
    exc = assert_refused_unchanged(engine, state, LIGHT, PlayGlyph(full), IllegalMove)
    assert "no free card" in str(exc)


def test_when_no_glyph_leaves_a_move_any_glyph_is_played_and_the_turn_passes():
    state = new()
    state.druids = [[C("a1"), C("c1")], [C("b1"), C("d1")]]
    full = glyph_for_row(state, 0)
    state.hands[LIGHT] = [full]
    state.played[LIGHT] = [g for g in range(8) if g != full]
    assert engine.legal_moves(state, LIGHT) == [PlayGlyph(full)]
    events = engine.apply(state, LIGHT, PlayGlyph(full))
    assert "no_druid_move" in [e.kind for e in events]
    assert state.current == DARK and state.step == GLYPH
    assert state.druids == [[C("a1"), C("c1")], [C("b1"), C("d1")]]


# --- 3 - Choose a Leyline Path ----------------------------------------------------------


@pytest.mark.parametrize(
    ("start", "end"), [("a1", "d4"), ("a1", "c3"), ("d1", "a2"), ("b4", "c1"), ("a1", "b2")]
)
def test_every_shortest_leyline_path_is_offered(start, end):
    paths = board.leyline_paths(C(start), C(end))
    dr = abs(board.row(C(start)) - board.row(C(end)))
    dc = abs(board.col(C(start)) - board.col(C(end)))
    assert len(paths) == comb(dr + dc, dr)
    assert len(set(paths)) == len(paths)
    for path in paths:
        assert path[0] == C(start) and path[-1] == C(end)
        assert len(path) == dr + dc + 1  # not longer than necessary
        for a, b in itertools.pairwise(path):  # orthogonal steps only
            assert abs(board.row(a) - board.row(b)) + abs(board.col(a) - board.col(b)) == 1


def test_path_choice_is_a_move_listing_every_shortest_path_from_the_moved_druid():
    state = new()
    glyph = glyph_for_row(state, 0)
    engine.apply(state, LIGHT, PlayGlyph(glyph))
    light = state.druids[LIGHT]
    # Move the Druid that leaves a diagonal to the other one.
    move = next(
        m
        for m in engine.legal_moves(state, LIGHT)
        if board.col(m.target) != board.col(next(c for c in light if c != m.origin))
    )
    engine.apply(state, LIGHT, move)
    assert state.step == PATH
    other = next(c for c in state.druids[LIGHT] if c != move.target)
    listed = engine.legal_moves(state, LIGHT)
    assert [m.cells for m in listed] == list(board.leyline_paths(move.target, other))
    assert all(m.cells[0] == move.target for m in listed)
    exc = assert_refused_unchanged(
        engine, state, LIGHT, ChoosePath((move.target, other)), IllegalMove
    )
    assert exc.rule == "3 - Choose a Leyline Path"


def test_a_single_path_is_taken_without_asking():
    state = new()
    # Light Druids on b2 and c3; glyph of column b moves c3's Druid to b4? It must land
    # in column b: b1 or b4 (b2 holds a Druid, b3 Dark's).
    glyph = glyph_for_col(state, 1)
    engine.apply(state, LIGHT, PlayGlyph(glyph))
    engine.apply(state, LIGHT, MoveDruid(C("c3"), C("b4")))  # b4 -> b2: a straight line
    assert state.current == DARK and state.step == GLYPH


# --- 4 and 5 - Placing and removing Energy Cubes --------------------------------------


def scenario_straight(state: engine.State) -> None:
    """Light's Druids on a1 and d1 after a move along row 1; every card needs 7."""
    heavy = [c.id for c in CARDS if c.vigor == 7]
    for cell in board.CELLS:
        state.grid[cell] = heavy[cell % len(heavy)]


def test_three_cubes_on_the_moved_card_two_on_the_stationary_one_and_along():
    state = new()
    scenario_straight(state)
    state.druids = [[C("b2"), C("d1")], [C("c2"), C("b3")]]
    engine.apply(state, LIGHT, PlayGlyph(glyph_for_row(state, 0)))
    engine.apply(state, LIGHT, MoveDruid(C("b2"), C("a1")))  # path a1-b1-c1-d1
    assert state.cubes[C("a1")] == [3, 0]
    assert state.cubes[C("d1")] == [2, 0]
    assert state.cubes[C("b1")] == [1, 0] and state.cubes[C("c1")] == [1, 0]
    assert state.supply[LIGHT] == 50 - 7


def test_cubes_of_both_colours_cancel_in_pairs_and_return_to_supplies():
    state = new()
    scenario_straight(state)
    state.druids = [[C("b2"), C("d1")], [C("c2"), C("b3")]]
    state.cubes[C("b1")] = [0, 4]
    state.supply[DARK] -= 4
    engine.apply(state, LIGHT, PlayGlyph(glyph_for_row(state, 0)))
    events = engine.apply(state, LIGHT, MoveDruid(C("b2"), C("a1")))
    assert state.cubes[C("b1")] == [0, 3]  # one Light cube met one Dark cube
    assert state.supply == [50 - 7 + 1, 50 - 4 + 1]
    assert any(e.kind == "cubes_removed" and e.data["pairs"] == 1 for e in events)


def test_cancellation_leaves_only_one_colour():
    state = new()
    scenario_straight(state)
    state.druids = [[C("b2"), C("d1")], [C("c2"), C("b3")]]
    state.cubes[C("a1")] = [0, 2]
    state.supply[DARK] -= 2
    engine.apply(state, LIGHT, PlayGlyph(glyph_for_row(state, 0)))
    engine.apply(state, LIGHT, MoveDruid(C("b2"), C("a1")))
    assert state.cubes[C("a1")] == [1, 0]


# --- 6 - Acquire Magic Circle Cards -----------------------------------------------------


def test_a_card_reaching_its_vigor_is_acquired_splendor_cubes_return_rest_overchannel():
    state = new()
    scenario_straight(state)
    card = card_with(4, 4)
    state.grid[C("a1")] = card
    state.cubes[C("a1")] = [3, 0]  # +3 from the moved Druid = 6 >= Vigor 4
    state.supply[LIGHT] -= 3
    state.druids = [[C("b2"), C("d1")], [C("c2"), C("b3")]]
    engine.apply(state, LIGHT, PlayGlyph(glyph_for_row(state, 0)))
    top = state.deck[-1]
    events = engine.apply(state, LIGHT, MoveDruid(C("b2"), C("a1")))
    assert state.acquired[LIGHT] == [card]
    assert state.grid[C("a1")] == top  # replaced from the deck
    assert state.cubes[C("a1")] == [0, 0]
    assert state.overchanneling[LIGHT] == 6 - CARD_BY_ID[card].splendor
    acquired = next(e for e in events if e.kind == "card_acquired")
    assert acquired.data["returned"] == 4 and acquired.data["overchanneling"] == 2
    # Cubes: 50 = supply + on the grid + overchanneling
    on_grid = sum(c[LIGHT] for c in state.cubes)
    assert state.supply[LIGHT] + on_grid + state.overchanneling[LIGHT] == 50


def test_a_card_below_its_vigor_stays():
    state = new()
    scenario_straight(state)
    state.druids = [[C("b2"), C("d1")], [C("c2"), C("b3")]]
    engine.apply(state, LIGHT, PlayGlyph(glyph_for_row(state, 0)))
    engine.apply(state, LIGHT, MoveDruid(C("b2"), C("a1")))
    assert state.acquired[LIGHT] == []


def test_only_the_moving_player_acquires():
    state = new()
    scenario_straight(state)
    state.grid[C("d4")] = card_with(4)
    state.cubes[C("d4")] = [0, 6]  # Dark's cubes above Vigor, left from an odd position
    state.supply[DARK] -= 6
    state.druids = [[C("b2"), C("d1")], [C("c2"), C("b3")]]
    engine.apply(state, LIGHT, PlayGlyph(glyph_for_row(state, 0)))
    engine.apply(state, LIGHT, MoveDruid(C("b2"), C("a1")))
    assert state.acquired == [[], []]


def two_acquisitions(state: engine.State) -> None:
    scenario_straight(state)
    state.grid[C("a1")] = card_with(4)
    state.grid[C("d1")] = card_with(4, 5)
    state.cubes[C("a1")] = [2, 0]
    state.cubes[C("d1")] = [3, 0]
    state.supply[LIGHT] -= 5
    state.druids = [[C("b2"), C("d1")], [C("c2"), C("b3")]]
    engine.apply(state, LIGHT, PlayGlyph(glyph_for_row(state, 0)))
    engine.apply(state, LIGHT, MoveDruid(C("b2"), C("a1")))


def test_the_acquirer_chooses_the_replacement_order():
    state = new()
    two_acquisitions(state)
    assert state.step == FILL
    assert engine.legal_moves(state, LIGHT) == [FillGap(C("a1")), FillGap(C("d1"))]
    first, second = state.deck[-1], state.deck[-2]
    engine.apply(state, LIGHT, FillGap(C("d1")))
    assert state.grid[C("d1")] == first
    assert state.grid[C("a1")] == second  # the last gap fills without asking
    assert state.current == DARK


def test_fill_refuses_a_cell_that_is_not_a_gap():
    state = new()
    two_acquisitions(state)
    exc = assert_refused_unchanged(engine, state, LIGHT, FillGap(C("b1")), IllegalMove)
    assert exc.rule.startswith("6 -")


def test_empty_deck_leaves_gaps_that_take_no_druid_and_no_cubes():
    state = new()
    two_acquisitions_no_deck = copy.deepcopy(state)
    two_acquisitions_no_deck.deck = []
    state = two_acquisitions_no_deck
    two_acquisitions(state)
    assert state.grid[C("a1")] is None and state.grid[C("d1")] is None
    assert state.current == DARK  # no replacement choice to make
    # A Druid may not move onto a gap.
    state.druids[DARK] = [C("c2"), C("b3")]
    engine.apply(state, DARK, PlayGlyph(glyph_for_row(state, 0)))
    targets = {m.target for m in engine.legal_moves(state, DARK)}
    assert C("a1") not in targets and C("d1") not in targets


def test_empty_deck_with_more_gaps_than_cards_lets_the_acquirer_choose_where():
    state = new()
    state.deck = state.deck[-1:]
    two_acquisitions(state)
    assert state.step == FILL
    engine.apply(state, LIGHT, FillGap(C("a1")))
    assert state.grid[C("a1")] is not None and state.grid[C("d1")] is None
    assert state.deck == [] and state.current == DARK


def test_a_path_through_a_gap_puts_no_cubes_there():
    state = new()
    scenario_straight(state)
    state.grid[C("b1")] = None
    state.druids = [[C("b2"), C("d1")], [C("c2"), C("b3")]]
    engine.apply(state, LIGHT, PlayGlyph(glyph_for_row(state, 0)))
    engine.apply(state, LIGHT, MoveDruid(C("b2"), C("a1")))
    assert state.cubes[C("b1")] == [0, 0]
    assert state.supply[LIGHT] == 50 - 6


def test_a_short_supply_places_what_it_has_moved_card_first():
    state = new()
    scenario_straight(state)
    state.supply[LIGHT] = 4
    state.overchanneling[LIGHT] = 46  # the rest were kept earlier
    state.druids = [[C("b2"), C("d1")], [C("c2"), C("b3")]]
    engine.apply(state, LIGHT, PlayGlyph(glyph_for_row(state, 0)))
    engine.apply(state, LIGHT, MoveDruid(C("b2"), C("a1")))
    assert state.cubes[C("a1")][LIGHT] == 3
    assert state.cubes[C("d1")][LIGHT] == 1
    assert state.cubes[C("b1")][LIGHT] == 0 and state.supply[LIGHT] == 0


def acquire_with(state: engine.State, card: int, cubes_before: int) -> engine.Event:
    """Light moves a Druid onto a1 (3 cubes) holding ``card`` and ``cubes_before`` cubes."""
    scenario_straight(state)
    state.grid[C("a1")] = card
    state.cubes[C("a1")] = [cubes_before, 0]
    state.supply[LIGHT] -= cubes_before
    state.druids = [[C("b2"), C("d1")], [C("c2"), C("b3")]]
    engine.apply(state, LIGHT, PlayGlyph(glyph_for_row(state, 0)))
    events = engine.apply(state, LIGHT, MoveDruid(C("b2"), C("a1")))
    assert state.acquired[LIGHT] == [card]
    return next(e for e in events if e.kind == "card_acquired")


def with_overchanneling(reading: str) -> engine.State:
    return engine.new_game(1, 2, engine.Options(overchanneling=reading))


def test_step_6_places_splendor_many_cubes_back_into_their_supply_keeping_the_rest():
    # Vigor 4, Splendor 6, acquired with 7 cubes: 6 go back, 1 is an Overchanneling Cube.
    state = new()
    assert state.options.overchanneling == BEYOND_SPLENDOR  # step 6 is the default
    acquired = acquire_with(state, card_with(4, 6), 4)
    assert (acquired.data["returned"], acquired.data["overchanneling"]) == (6, 1)
    assert state.overchanneling[LIGHT] == 1
    assert state.supply[LIGHT] + sum(c[LIGHT] for c in state.cubes) + 1 == 50


def test_step_6_keeps_cubes_even_at_exactly_the_vigor_when_splendor_is_lower():
    # Vigor 6, Splendor 5, acquired with exactly 6 cubes: Splendor-many (5) go back.
    state = new()
    acquired = acquire_with(state, card_with(6, 5), 3)
    assert (acquired.data["returned"], acquired.data["overchanneling"]) == (5, 1)


def test_glossary_acquired_using_more_cubes_than_its_vigor_keeps_the_excess_cubes():
    # The same Vigor 4, Splendor 6 card with 7 cubes: the 3 beyond the Vigor are kept.
    state = with_overchanneling(BEYOND_VIGOR)
    acquired = acquire_with(state, card_with(4, 6), 4)
    assert (acquired.data["returned"], acquired.data["overchanneling"]) == (4, 3)
    assert state.overchanneling[LIGHT] == 3
    assert state.supply[LIGHT] + sum(c[LIGHT] for c in state.cubes) + 3 == 50


def test_glossary_a_card_acquired_with_exactly_its_vigor_leaves_no_overchanneling_cubes():
    state = with_overchanneling(BEYOND_VIGOR)
    acquired = acquire_with(state, card_with(6, 5), 3)
    assert (acquired.data["returned"], acquired.data["overchanneling"]) == (6, 0)
    assert state.overchanneling[LIGHT] == 0


def test_each_overchanneling_cube_reduces_the_players_splendor_by_one_under_either_reading():
    for reading, kept in ((BEYOND_SPLENDOR, 1), (BEYOND_VIGOR, 3)):
        state = with_overchanneling(reading)
        acquire_with(state, card_with(4, 6), 4)
        assert engine.view(state, None).seats[LIGHT].splendor == 6 - kept


def test_an_unknown_overchanneling_reading_is_refused():
    with pytest.raises(BadOptions):
        engine.new_game(1, 2, engine.Options(overchanneling="petals"))


def test_a_stored_game_without_the_overchanneling_key_plays_step_6():
    # Rows stored before the option existed hold {} (the options had no field then).
    assert engine.Options.from_dict({}).overchanneling == BEYOND_SPLENDOR
    assert "overchanneling" not in engine.Options.STORED_BEFORE
    for reading in (BEYOND_SPLENDOR, BEYOND_VIGOR):
        options = engine.Options(overchanneling=reading)
        assert engine.Options.from_dict(options.to_dict()) == options


# --- 7 - Check for Endgame and scoring --------------------------------------------------


def finish_turn(state: engine.State) -> None:
    seat = state.current
    while state.current == seat and state.result is None:
        engine.apply(state, seat, engine.legal_moves(state, seat)[0])


def test_seven_cards_trigger_the_end_and_the_other_player_gets_one_more_turn():
    state = new()
    state.acquired[LIGHT] = [c for c in state.deck[:6]]
    state.deck = state.deck[6:]
    two_acquisitions(state)  # Light acquires two more: 8 cards
    if state.step == FILL:
        engine.apply(state, LIGHT, engine.legal_moves(state, LIGHT)[0])
    assert state.end_triggered_by == LIGHT and state.result is None
    assert engine.to_act(state) == (DARK,)
    finish_turn(state)
    assert state.result is not None
    assert engine.to_act(state) == ()
    assert_refused_unchanged(engine, state, LIGHT, PlayGlyph(0), GameOver)


def test_the_extra_turn_goes_to_light_when_dark_triggers():
    state = new()
    state.current = DARK
    state.acquired[DARK] = [c for c in state.deck[:7]]
    state.deck = state.deck[7:]
    finish_turn(state)  # Dark's turn ends with seven cards
    assert state.end_triggered_by == DARK and state.current == LIGHT
    finish_turn(state)
    assert state.result is not None


def ended(state, light_cards, dark_cards, light_over=0, dark_over=0) -> engine.Outcome:
    state.acquired = [light_cards, dark_cards]
    state.overchanneling = [light_over, dark_over]
    state.end_triggered_by = DARK
    finish_turn(state)  # Light's last turn; nothing acquired with the first choices
    assert state.result is not None
    return state.result


def ids(*pairs: tuple[int, int]) -> list[int]:
    pool = list(CARDS)
    out = []
    for vigor, splendor in pairs:
        card = next(c for c in pool if c.vigor == vigor and c.splendor == splendor)
        pool.remove(card)
        out.append(card.id)
    return out


def test_most_splendor_after_overchanneling_wins():
    state = new()
    state.grid = [None] * 16  # nothing left to acquire on the last turn
    state.grid[C("a1")] = state.grid[C("b1")] = None
    state.druids = [[C("b2"), C("c3")], [C("c2"), C("b3")]]
    state.grid[C("a2")] = card_with(7)
    result = ended(state, ids((5, 7), (6, 7)), ids((4, 6), (5, 6)), light_over=3)
    assert result.scores == (11, 12)
    assert result.winners == (DARK,) and result.reason == "MOST_SPLENDOR"


def test_tie_goes_to_the_fewest_cards():
    state = new()
    state.grid = [None] * 16
    state.grid[C("a2")] = card_with(7)
    result = ended(state, ids((4, 4), (4, 4), (4, 4)), ids((6, 6), (6, 6)))
    assert result.scores == (12, 12)
    assert result.winners == (DARK,) and result.reason == "TIE_FEWEST_CARDS"


def test_tie_on_splendor_and_cards_goes_to_who_went_second():
    state = new()
    state.grid = [None] * 16
    state.grid[C("a2")] = card_with(7)
    result = ended(state, ids((5, 5), (6, 6)), ids((6, 6), (5, 5)))
    assert result.scores == (11, 11)
    assert result.winners == (DARK,) and result.reason == "TIE_WENT_SECOND"


# --- Arguments out of range: malformed at any step, the state unchanged ----------------


def test_play_a_glyph_card_refuses_glyph_99_as_malformed():
    state = new()
    exc = assert_refused_unchanged(engine, state, LIGHT, PlayGlyph(99), MalformedMove)
    assert str(exc) == f"glyph must be 0-7 ({', '.join(GLYPHS)}), not 99"


def test_play_a_glyph_card_refuses_glyph_minus_1_while_wind_is_in_hand():
    state = new()
    # -1 would wrap around to the last glyph, wind, which is in hand.
    assert GLYPHS[-1] == "wind" and GLYPH_INDEX["wind"] in state.hands[LIGHT]
    exc = assert_refused_unchanged(engine, state, LIGHT, PlayGlyph(-1), MalformedMove)
    assert "not -1" in str(exc) and "not in hand" not in str(exc)


@pytest.mark.parametrize("glyph", [8, -8, True, "wind", None])
def test_play_a_glyph_card_refuses_anything_but_a_glyph_index(glyph):
    state = new()
    exc = assert_refused_unchanged(engine, state, LIGHT, PlayGlyph(glyph), MalformedMove)
    assert f"not {glyph!r}" in str(exc)


def light_to_move_a_druid_to_row_1() -> engine.State:
    state = new()
    engine.apply(state, LIGHT, PlayGlyph(glyph_for_row(state, 0)))
    assert state.step == DRUID and C("a1") in {m.target for m in engine.legal_moves(state, 0)}
    return state


def test_move_a_druid_token_refuses_origin_minus_11_while_b2_holds_a_light_druid():
    state = light_to_move_a_druid_to_row_1()
    # -11 would wrap around to b2, where a Light Druid Token stands.
    assert board.NAMES[-11] == "b2" and C("b2") in state.druids[LIGHT]
    exc = assert_refused_unchanged(engine, state, LIGHT, MoveDruid(-11, C("a1")), MalformedMove)
    assert str(exc) == "origin must be a cell 0-15 (a1-d4), not -11"


@pytest.mark.parametrize(
    ("origin", "target", "wrong"),
    [(C("b2"), 16, "target"), (C("b2"), -16, "target"), (99, C("a1"), "origin")],
)
def test_move_a_druid_token_refuses_a_cell_off_the_grid(origin, target, wrong):
    state = light_to_move_a_druid_to_row_1()
    move = MoveDruid(origin, target)
    exc = assert_refused_unchanged(engine, state, LIGHT, move, MalformedMove)
    value = getattr(move, wrong)
    assert str(exc) == f"{wrong} must be a cell 0-15 (a1-d4), not {value}"


def light_to_choose_a_leyline_path() -> tuple[engine.State, tuple[int, ...]]:
    state = light_to_move_a_druid_to_row_1()
    engine.apply(state, LIGHT, MoveDruid(C("c3"), C("a1")))  # a1 to b2: two paths
    assert state.step == PATH
    return state, engine.legal_moves(state, LIGHT)[0].cells


@pytest.mark.parametrize("bad", [99, -1, -13])
def test_choose_a_leyline_path_refuses_a_path_with_a_cell_off_the_grid(bad):
    state, path = light_to_choose_a_leyline_path()
    move = ChoosePath((path[0], bad, path[-1]))
    exc = assert_refused_unchanged(engine, state, LIGHT, move, MalformedMove)
    assert str(exc) == f"each cell of a path must be a cell 0-15 (a1-d4), not {bad}"


@pytest.mark.parametrize("cells", [(), tuple(range(8)), [0, 1, 5]])
def test_choose_a_leyline_path_refuses_a_path_that_is_not_1_to_7_cells(cells):
    state, _ = light_to_choose_a_leyline_path()
    exc = assert_refused_unchanged(engine, state, LIGHT, ChoosePath(cells), MalformedMove)
    assert "1 to 7 cells" in str(exc)


@pytest.mark.parametrize("bad", [99, 16, -16])
def test_replacing_acquired_cards_refuses_a_fill_off_the_grid(bad):
    state = new()
    two_acquisitions(state)  # a1 and d1 are gaps; -16 would wrap around to a1
    assert state.step == FILL and board.NAMES[-16] == "a1" and C("a1") in state.gaps
    exc = assert_refused_unchanged(engine, state, LIGHT, FillGap(bad), MalformedMove)
    assert str(exc) == f"cell must be a cell 0-15 (a1-d4), not {bad}"


def test_out_of_range_arguments_are_refused_at_another_step_too():
    # The argument is checked before the step: PlayGlyph(99) while a Druid is to move.
    state = light_to_move_a_druid_to_row_1()
    assert_refused_unchanged(engine, state, LIGHT, PlayGlyph(99), MalformedMove)


# --- text forms --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["glyph river", "druid b2-b4", "path b4-c4-c3", "fill c3", "path a1"]
)
def test_text_forms_round_trip(text):
    assert str(engine.parse_move(text)) == text


@pytest.mark.parametrize(
    "text", ["", "glyph", "glyph lava", "druid b2", "druid e1-a1", "fill c3-c4", "jump a1", "path"]
)
def test_malformed_text_is_refused(text):
    with pytest.raises(MalformedMove):
        engine.parse_move(text)


def test_glyph_lines_cover_each_row_and_column_once():
    state = new(11)
    lines = {glyph_line(state, g) for g in range(len(GLYPHS))}
    expected = {board.row_cells(r) for r in range(4)} | {board.col_cells(c) for c in range(4)}
    assert lines == expected
