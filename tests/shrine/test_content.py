"""The content files: the properties the rulebook and issue 4 require of them."""

from __future__ import annotations

import itertools

from services.shrine.engine import colours
from services.shrine.engine.content import BOARD, CONTENT, PLAYER, POWER_KEYS, pattern_cells
from tests.shrine.scenario import F


def test_six_code_sets_of_six_cards() -> None:
    assert len(CONTENT.codes) == 36
    assert sorted(len(members) for members in CONTENT.code_sets) == [6] * 6
    assert len({card.id for card in CONTENT.codes}) == 36


def test_code_sets_are_named_by_the_two_drawn_lens_colours() -> None:
    """Setup step 7: the two Lenses drawn combine into the set's colour; every pair of
    basic colours leads to a set, and every set can be reached."""
    reachable = {colours.mix(a, b) for a in colours.BASIC for b in colours.BASIC}
    assert reachable == set(range(6))
    assert all(CONTENT.code_sets[colour] for colour in reachable)


def test_within_a_set_each_field_shows_each_colour_once() -> None:
    """Any two cards of a set differ on every field: across the set, each field shows
    each of the six colours exactly once (a Latin property)."""
    for members in CONTENT.code_sets:
        for field in range(12):
            shown = sorted(CONTENT.codes[i].colours[field] for i in members)
            assert shown == list(range(6))
        for a, b in itertools.combinations(members, 2):
            first, second = CONTENT.codes[a].colours, CONTENT.codes[b].colours
            assert all(x != y for x, y in zip(first, second, strict=True))


def test_each_code_card_shows_each_colour_on_two_fields() -> None:
    for card in CONTENT.codes:
        assert sorted(card.colours) == sorted(list(range(6)) * 2), card.id


def test_each_code_card_marks_one_outer_and_one_central_target() -> None:
    for card in CONTENT.codes:
        targets = [f for f in range(12) if card.targets[f]]
        assert len(targets) == 2, card.id
        assert sorted(BOARD.central[f] for f in targets) == [False, True], card.id


def test_the_board_has_eight_outer_and_four_central_fields() -> None:
    assert len(BOARD.field_names) == 12
    assert sum(BOARD.central) == 4
    assert [BOARD.field_names[f] for f in range(12) if BOARD.central[f]] == ["b2", "c2", "b3", "c3"]


def test_each_field_is_reached_by_exactly_one_corner_dial() -> None:
    """Four corner dials, each pointing at one of its three surrounding fields, which it
    sweeps outer, central, outer."""
    assert len(BOARD.dials) == 4
    swept = sorted(f for dial in BOARD.dials for f in dial.fields)
    assert swept == list(range(12))
    for dial in BOARD.dials:
        corner = (int(dial.corner[1]) - 1, "abcd".index(dial.corner[0]))
        for field in dial.fields:
            row, col = BOARD.coords[field]
            assert max(abs(row - corner[0]), abs(col - corner[1])) == 1, dial.corner
        assert [BOARD.central[f] for f in dial.fields] == [False, True, False]


def test_dials_start_pointing_around_the_board_in_a_circle() -> None:
    """Each arrow points along the edge towards the next corner, all the same way round."""
    corners = [dial.corner for dial in BOARD.dials]
    for index, dial in enumerate(BOARD.dials):
        start = dial.fields[dial.facing]
        nxt = corners[(index + 1) % 4]
        row, col = BOARD.coords[start]
        target_row, target_col = int(nxt[1]) - 1, "abcd".index(nxt[0])
        assert row == target_row or col == target_col, (dial.corner, BOARD.field_names[start])


def test_orthogonal_neighbours() -> None:
    assert sorted(BOARD.field_names[f] for f in BOARD.neighbours[F("b2")]) == [
        "a2",
        "b1",
        "b3",
        "c2",
    ]
    assert sorted(BOARD.field_names[f] for f in BOARD.neighbours[F("b1")]) == ["b2", "c1"]


def test_pouch_treasury_and_track() -> None:
    assert BOARD.lenses == 30 and BOARD.pouch == (10, 10, 10)
    assert BOARD.coins == 30 + 6 * 5
    assert len(BOARD.track) == 3  # the game ends when the third dial is on it
    assert min(BOARD.track) == 0  # "any Treasure printed": some space prints none
    assert BOARD.offering_spots == 1


def test_player_board_powers_and_prices() -> None:
    prices = {p.key: p.prices for p in PLAYER.powers}
    assert tuple(prices) == POWER_KEYS
    assert prices == {
        "rotation": (1,),
        "refreshing": (1, 1),
        "inactive": (1, 2),
        "blocking": (1, 2),
        "overwriting": (1, 2),
        "relocating": (2,),
    }
    assert PLAYER.starting_treasure == 4
    assert PLAYER.block_tokens == 3
    assert len(PLAYER.debt_costs) == 3 and set(PLAYER.debt_costs) == {3} and PLAYER.debt_gain == 2
    assert len(PLAYER.pass_costs) == 2 and sum(PLAYER.pass_costs) == 1
    assert len(PLAYER.serpent_costs) == 2 and sum(PLAYER.serpent_costs) == 1
    assert PLAYER.false_claim_penalty == 6 and PLAYER.largest_area_bonus == 4


def test_forty_shape_cards_in_four_decks_by_pattern_size() -> None:
    shapes = CONTENT.shapes.values()
    assert len(CONTENT.shapes) == 40
    assert CONTENT.decks == (2, 3, 4, 5) and CONTENT.setup_deck == 2
    for size in CONTENT.decks:
        deck = [s for s in shapes if s.deck == size]
        assert len(deck) == 10
        assert all(len(pattern_cells(s.pattern)) == size for s in deck)


def test_shape_rewards_and_bonus_draws() -> None:
    for shape in CONTENT.shapes.values():
        assert shape.treasure > shape.unlock_treasure >= 0, shape.id
        assert set(shape.bonus) <= {3, 4, 5}, shape.id  # the 2-field deck is setup only
    bonuses = [s.bonus for s in CONTENT.shapes.values()]
    assert any(len(b) == 1 for b in bonuses), "a bonus from an indicated deck"
    assert any(len(b) == 3 for b in bonuses), "a bonus from a deck of your choice"
    assert any(not b for b in bonuses)


def test_every_shape_fits_the_board_in_every_rotation_and_mirror() -> None:
    """The images of a pattern are closed under the board's symmetries where they fit."""
    for shape in CONTENT.shapes.values():
        assert shape.images, shape.id
        assert all(bin(mask).count("1") == shape.deck for mask in shape.images)
    domino = CONTENT.shapes[1]
    assert domino.pattern == ("XX",)
    assert len(domino.images) == 16  # 8 horizontal and 8 vertical pairs of the board
