"""Scoring, the largest contiguous area, the end-game checklist and the winner."""

from __future__ import annotations

from services.shrine import engine
from services.shrine.engine import colours
from services.shrine.engine.content import BOARD, CONTENT
from services.shrine.engine.scoring import (
    field_score,
    final_outcome,
    largest_area,
    matches,
    tallies,
)
from services.shrine.engine.state import Phase, State
from tests.shrine.scenario import (
    MOON,
    SUN,
    F,
    clear_board,
    dials,
    face,
    game,
    match,
    mismatch,
    moves,
    play,
    put,
    set_treasure,
    step_three,
    unlock_powers,
)


def with_code(state: State, seat: int, card: int) -> None:
    """Give ``seat`` this Code card, and the other player another card of its set."""
    state.code_set = CONTENT.codes[card].set
    state.players[seat].code = card
    other = next(i for i in CONTENT.code_sets[state.code_set] if i != card)
    state.players[1 - seat].code = other


def test_rulebook_scoring_example() -> None:
    """Field A shows blue where the Code card wants purple: nothing. Field B shows blue
    with a single Lens, a match on a target: 1 + 2 = 3. Field C shows orange, a complex
    colour: 3."""
    blue, purple, orange = (colours.BY_NAME[c] for c in ("blue", "purple", "orange"))

    def fields_of(card) -> tuple[list[int], list[int], list[int]]:
        every = range(12)
        return (
            [f for f in every if card.colours[f] == purple],
            [f for f in every if card.colours[f] == blue and card.targets[f]],
            [f for f in every if card.colours[f] == orange and not card.targets[f]],
        )

    index = next(i for i, card in enumerate(CONTENT.codes) if all(fields_of(card)))
    a, b, c = fields_of(CONTENT.codes[index])
    state = game(1)
    clear_board(state)
    with_code(state, SUN, index)
    names = [BOARD.field_names[f] for f in (a[0], b[0], c[0])]
    put(state, names[0], "blue")
    put(state, names[1], "blue")
    put(state, names[2], "yellow", "red")
    assert field_score(state, SUN, a[0]) == 0
    assert field_score(state, SUN, b[0]) == 3
    assert field_score(state, SUN, c[0]) == 3
    assert tallies(state)[SUN].fields == 6


def test_field_values() -> None:
    """1 for one Lens, 2 for two matching Lenses, 3 for a complex colour; +2 on a target:
    "A single field can earn you between 1 to 5 Treasures"."""
    state = game(2)
    clear_board(state)
    card = CONTENT.codes[state.players[SUN].code]
    for field in range(12):
        clear_board(state)
        name = BOARD.field_names[field]
        match(state, SUN, name)
        wanted = colours.NAMES[card.colours[field]]
        value = 3 if wanted in ("orange", "green", "purple") else 1
        assert field_score(state, SUN, field) == value + (2 if card.targets[field] else 0)
        if value == 1:
            put(state, name, wanted)
            assert field_score(state, SUN, field) == 2 + (2 if card.targets[field] else 0)
        assert 1 <= field_score(state, SUN, field) <= 5


def test_rulebook_largest_area_example() -> None:
    """Sun has 6 matches, 4 of them connected orthogonally; Moon has 5, 3 connected. Sun
    has the larger area and earns 4 Treasures."""
    state = game(3)
    clear_board(state)
    for field in ("a2", "b2", "a3", "b3", "d2", "c4"):
        match(state, SUN, field)
    for field in ("c2", "c3", "d3", "b1", "b4"):
        match(state, MOON, field)
    assert sum(matches(state, SUN)) == 6 and sum(matches(state, MOON)) == 5
    sun, moon = tallies(state)
    assert (sun.area, moon.area) == (4, 3)
    assert (sun.area_bonus, moon.area_bonus) == (4, 0)


def test_largest_area_tie_awards_nobody() -> None:
    state = game(3)
    clear_board(state)
    for field in ("a2", "b2"):
        match(state, SUN, field)
    for field in ("c3", "d3"):
        match(state, MOON, field)
    sun, moon = tallies(state)
    assert (sun.area, moon.area) == (2, 2)
    assert sun.area_bonus == moon.area_bonus == 0


def test_diagonals_do_not_connect_but_areas_branch() -> None:
    grid = [False] * 12
    for field in ("b2", "c3"):
        grid[F(field)] = True
    assert largest_area(grid) == 1
    for field in ("c2", "b3", "a3", "d2"):
        grid[F(field)] = True
    assert largest_area(grid) == 6


def test_a_blocked_field_counts_in_the_area_but_is_not_scored_at_the_end() -> None:
    state = game(3)
    clear_board(state)
    for field in ("a2", "b2", "a3"):
        match(state, SUN, field)
    state.blocked_by[F("b2")] = SUN
    state.players[SUN].blocks_used = 1
    sun, _ = tallies(state)
    assert sun.area == 3
    assert sun.fields == field_score(state, SUN, F("a2")) + field_score(state, SUN, F("a3"))
    assert sun.false_claims == 0


def test_end_checklist_costs() -> None:
    """Debt 3 each, the second Pass and the second Serpent 1 each, 6 per false claim."""
    state = game(4)
    clear_board(state)
    set_treasure(state, SUN, 30)
    player = state.players[SUN]
    player.debts, player.passes, player.serpents_removed = 2, 2, 2
    mismatch(state, SUN, "b1")
    state.blocked_by[F("b1")] = SUN
    player.blocks_used = 1
    sun, _ = tallies(state)
    assert (sun.debts, sun.passes, sun.serpents, sun.false_claims) == (6, 1, 1, 1)
    assert sun.total == 30 - 6 - 1 - 1 - 6


def test_one_pass_and_one_serpent_cost_nothing() -> None:
    state = game(4)
    player = state.players[SUN]
    player.passes, player.serpents_removed = 1, 1
    sun, _ = tallies(state)
    assert (sun.passes, sun.serpents) == (0, 0)


def finished(sun: int, moon: int, starting: int = SUN) -> State:
    state = game(5)
    clear_board(state)
    set_treasure(state, SUN, sun)
    set_treasure(state, MOON, moon)
    state.starting = starting
    return state


def test_the_most_treasure_wins() -> None:
    result = final_outcome(finished(10, 5))
    assert (
        result.winners == (SUN,) and result.scores == (10, 5) and result.reason == "MOST_TREASURE"
    )
    assert final_outcome(finished(3, 8)).winners == (MOON,)


def test_a_tie_goes_to_the_player_who_moved_second() -> None:
    result = final_outcome(finished(7, 7, starting=SUN))
    assert result.winners == (MOON,) and result.reason == "TIE_SECOND_PLAYER"
    assert final_outcome(finished(7, 7, starting=MOON)).winners == (SUN,)


def test_both_lose_with_zero_or_fewer() -> None:
    state = finished(0, 2)
    state.players[MOON].debts = 1  # 2 - 3 = -1
    result = final_outcome(state)
    assert (
        result.scores == (0, -1)
        and result.winners == ()
        and result.reason == "BOTH_OUT_OF_TREASURE"
    )
    result = final_outcome(finished(0, 0))
    assert result.winners == ()


def test_running_out_of_treasure_loses() -> None:
    state = finished(2, 5)
    state.players[MOON].debts = 2  # 5 - 6 = -1
    result = final_outcome(state)
    assert result.winners == (SUN,) and result.reason == "OUT_OF_TREASURE"


def stuck(debts_left: int) -> State:
    """Sun, in step 2, with no Treasure, no Serpent, both Passes used, and a board where
    every placement needs a Treasure Power: the one active dial's fields are full."""
    state = game(6)
    clear_board(state)
    for field in ("b1", "b2", "a2"):
        put(state, field, "red", "red")
    dials(state, a1="active", d1="inactive", d4="inactive", a4="inactive")
    face(state, "a1", "b2")
    step_three(state, SUN, treasure=0)
    unlock_powers(state, SUN)
    player = state.players[SUN]
    player.debts = 3 - debts_left
    player.passes = 2
    player.serpents_removed = 2
    player.powers[0] = 1  # Dial Rotation still blocked: step 2 unlocks it
    state.treasury -= 1
    state.phase = Phase.UNLOCK
    return state


def test_a_player_who_can_neither_place_even_with_debt_nor_pass_loses_at_once() -> None:
    state = stuck(debts_left=0)
    events = play(state, SUN, "unlock rotation")
    result = engine.outcome(state)
    assert result is not None and result.reason == "NO_VALID_PLACEMENT"
    assert result.winners == (MOON,)
    assert any(e.kind == "lost" for e in events)
    assert engine.to_act(state) == ()


def test_a_player_who_can_place_by_taking_debt_does_not_lose() -> None:
    state = stuck(debts_left=1)
    play(state, SUN, "unlock rotation")
    assert engine.outcome(state) is None
    assert moves(state, SUN) == ["debt"]
    play(state, SUN, "debt")
    assert "place c2" in moves(state, SUN) or "place d2" in moves(state, SUN)


def test_blocking_your_last_valid_field_loses_at_once() -> None:
    state = game(7)
    clear_board(state)
    for field in ("b1", "a2"):
        put(state, field, "red", "red")
    put(state, "b2", "blue")
    dials(state, a1="active", d1="inactive", d4="inactive", a4="inactive")
    face(state, "a1", "b2")
    step_three(state, SUN, treasure=2)
    unlock_powers(state, SUN, "blocking")
    player = state.players[SUN]
    player.debts, player.passes, player.serpents_removed = 3, 2, 2
    play(state, SUN, "block b2")
    result = engine.outcome(state)
    assert (
        result is not None and result.reason == "NO_VALID_PLACEMENT" and result.winners == (MOON,)
    )


def test_a_player_who_can_only_relocate_does_not_lose() -> None:
    """Reading: Relocating puts a Lens on a valid field, so it counts as a placement for
    "unable to make a valid placement"."""
    state = game(6)
    clear_board(state)
    for field in ("b1", "b2", "a2"):
        put(state, field, "red", "red")
    dials(state, a1="active", d1="inactive", d4="inactive", a4="inactive")
    step_three(state, SUN, treasure=2)
    unlock_powers(state, SUN, "relocating")
    player = state.players[SUN]
    player.debts, player.passes, player.serpents_removed = 3, 2, 2
    state.phase = Phase.UNLOCK
    play(state, SUN, "unlock rotation")
    assert engine.outcome(state) is None
    assert moves(state, SUN, "place") == [] and moves(state, SUN, "relocate")
    assert set(m.split()[0] for m in moves(state, SUN)) == {"relocate"}
