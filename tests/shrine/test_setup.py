"""Setup: the main play area and the player areas, all from the seed."""

from __future__ import annotations

import pytest

from services.kit.engine import BadOptions, IllegalMove, Options, replay
from services.kit.testing import assert_refused_unchanged, random_game
from services.shrine import engine
from services.shrine.engine import colours, rulebook
from services.shrine.engine.content import BOARD, CONTENT, PLAYER
from services.shrine.engine.state import Phase
from tests.shrine.invariants import check_state
from tests.shrine.scenario import game, play


@pytest.mark.parametrize("players", [0, 1, 3, 4])
def test_shrine_is_for_two_players(players: int) -> None:
    with pytest.raises(BadOptions):
        engine.new_game(1, players, engine.Options())


def test_bad_options_are_refused() -> None:
    with pytest.raises(BadOptions):
        engine.new_game(1, 2, engine.Options(radiant_shapes="yes"))  # type: ignore[arg-type]
    with pytest.raises(BadOptions):
        engine.new_game(1, 2, Options())  # another game's options
    with pytest.raises(BadOptions):
        engine.Options.from_dict({"radiant_shapes": True, "eternal_glyphs": True})
    assert engine.Options.from_dict({"radiant_shapes": True}) == engine.Options(radiant_shapes=True)
    assert engine.Options().to_dict() == {"radiant_shapes": False}


def test_game_info() -> None:
    assert engine.GAME.name == "shrine"
    assert (engine.GAME.min_players, engine.GAME.max_players) == (2, 2)
    assert engine.GAME.seat_names(2) == ("Sun", "Moon")
    assert engine.GAME.options_type is engine.Options


def test_player_areas() -> None:
    """8A every Treasure space covered; 10 four Treasures; 11 two Serpents; 12 three Block
    tokens; nothing passed or owed."""
    state = game(5)
    for player in state.players:
        assert player.treasure == 4
        assert player.powers == [p.spaces for p in PLAYER.powers]
        assert sum(player.powers) == 11
        assert player.serpents_removed == player.blocks_used == player.passes == player.debts == 0
    assert state.treasury == BOARD.coins - 2 * (11 + 4)
    check_state(state)


def test_code_cards_come_from_the_set_of_the_drawn_colours() -> None:
    """Step 7 and 9: one secret Code card each, from the set the two drawn Lenses name,
    never the same card; over many seeds every set is played."""
    seen_sets = set()
    for seed in range(200):
        state = game(seed)
        members = CONTENT.code_sets[state.code_set]
        sun, moon = (p.code for p in state.players)
        assert sun in members and moon in members and sun != moon
        seen_sets.add(state.code_set)
    assert seen_sets == set(range(6))


def test_the_lenses_drawn_for_the_code_set_go_back_to_the_pouch() -> None:
    state = game(9)
    assert sum(state.pouch) == 29 and state.offering >= 0  # only the Offering's Lens is out
    assert all(not stack for stack in state.lenses)


def test_starting_player_is_tossed_and_takes_the_first_turn() -> None:
    starters = set()
    for seed in range(40):
        state = game(seed)
        starters.add(state.starting)
        assert engine.to_act(state) == (state.starting,)
        assert state.turn == 1 and state.phase is Phase.UNLOCK
    assert starters == {0, 1}


def test_the_same_seed_sets_up_the_same_game() -> None:
    assert game(11) == game(11)
    assert game(11, shapes=True) == game(11, shapes=True)
    differ = [game(seed) for seed in range(8)]
    assert any(a != differ[0] for a in differ[1:])


def test_replay_rebuilds_the_live_state() -> None:
    for shapes in (False, True):
        options = engine.Options(radiant_shapes=shapes)
        played = random_game(engine, 21, 2, options)
        assert replay(engine, 21, 2, options, played.moves) == played.state


def test_radiant_shapes_setup() -> None:
    """Each player draws one Shape card from each deck; the 2-field deck goes back to the
    box; Proof tiles start empty."""
    state = game(4, shapes=True)
    for player in state.players:
        sizes = sorted(CONTENT.shapes[card].deck for card in player.hand)
        assert sizes == [2, 3, 4, 5]
        assert player.proof == [-1] * 12
    assert [len(deck) for deck in state.decks] == [8, 8, 8, 8]
    seat = state.current
    assert "draw 2" not in [str(m) for m in engine.legal_moves(state, seat)]
    error = assert_refused_unchanged(engine, state, seat, engine.parse_move("draw 2"), IllegalMove)
    assert error.rule == rulebook.ACQUIRING_SHAPES
    check_state(state)


def test_base_game_has_no_shape_cards() -> None:
    state = game(4)
    assert state.decks == [] and all(not p.hand for p in state.players)
    seat = state.current
    error = assert_refused_unchanged(engine, state, seat, engine.parse_move("draw 3"), IllegalMove)
    assert error.rule == rulebook.UNLOCK


def test_first_turn_refills_the_offering() -> None:
    state = game(2)
    assert state.offering in colours.BASIC
    play(state, state.current, "unlock rotation")
    assert state.phase is Phase.ACTION
