"""Afternoon – Continue Their Journey, on both sides of the board."""

from __future__ import annotations

from services.glow import engine
from services.glow.engine.content import ARCHIPELAGO, PROVINCE
from services.glow.engine.moves import FOOT, FREE, USE_DIE, Go, Sail
from services.kit.engine import IllegalMove, MalformedMove
from services.kit.testing import assert_refused_unchanged

from .helpers import at_afternoon, give, legal, own_die, play, started


def _company(spot: int, faces: list[str], footprints: int = 0, adventurers=("pocana", "eoles")):
    state = started(9, 2, adventurers=adventurers)
    player = state.players[0]
    ids = list(player.adventurer_dice)
    while len(ids) < len(faces):
        ids.append(own_die(state, 0, "green"))
    player.company = spot
    player.footprints = footprints
    at_afternoon(state, {0: dict(zip(ids, faces, strict=False))})
    return state, player, ids


def test_each_die_once_and_footprints_as_wild_cards() -> None:
    state, player, ids = _company(47, ["water", "fire", "fire"], footprints=1)
    assert legal(state, 0) == ["go 46 foot", "go 48 die", "go 48 foot", "end"]
    play(state, 0, "go 48 die")
    assert player.used == [ids[0]]
    assert "go 49 die" not in legal(state, 0), "the water die is used"
    play(state, 0, "go 49 foot")
    assert player.footprints == 0 and player.company == 49


def test_a_company_cannot_pass_the_same_space_twice_in_a_round() -> None:
    state, _, _ = _company(45, ["nature", "nature", "fire"])
    play(state, 0, "go 46 die")
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("go 45 die"), IllegalMove)
    assert exc.rule == "The Province of Shadows journey"
    assert "twice" in exc.message


def test_crossed_spaces_need_the_symbol_absent_or_a_footprint() -> None:
    state, _, _ = _company(8, ["water", "air", "air"], footprints=0)
    assert "go 9 die" in legal(state, 0)  # 9 needs air
    state, _, _ = _company(50, ["water", "nature", "rock"], footprints=1)
    assert "go 51 foot" in legal(state, 0) and "go 51" not in legal(state, 0)
    state, _, _ = _company(50, ["water", "air", "rock"], footprints=0)
    assert "go 51" in legal(state, 0)


def test_a_village_costs_footprints_or_cannot_be_entered() -> None:
    state, player, _ = _company(13, ["rock", "fire", "fire"], footprints=2)
    assert "go 14" not in legal(state, 0)
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("go 14"), IllegalMove)
    assert exc.rule == "The Province of Shadows journey"
    state, player, _ = _company(13, ["rock", "fire", "fire"], footprints=3)
    play(state, 0, "go 14")
    assert player.footprints == 0 and player.company == 14


def test_camping_in_a_village_ends_the_movement() -> None:
    state, player, _ = _company(4, ["water", "fire", "fire"], footprints=1)
    play(state, 0, "go 5")
    assert player.fireflies == 1 and player.footprints == 0
    assert "camp" in legal(state, 0)
    play(state, 0, "camp")
    assert player.encampment == 5 and player.done


def test_reserve_pool_and_loss_spaces_on_the_way() -> None:
    state, player, _ = _company(10, ["air", "fire", "fire"])
    play(state, 0, "go 11")  # 11: no water; +1 firefly on the way
    assert player.fireflies == 1
    player.score = 12
    state2, player2, _ = _company(11, ["rock", "fire", "fire"])
    player2.score = 3
    play(state2, 0, "go 12 die")  # -5 bursts on the way, never below 0
    assert player2.score == 0


def test_a_skull_space_takes_a_companion_or_a_spell() -> None:
    state = started(9, 2, adventurers=("pocana", "eoles"))
    give(state, 0, 25)
    give(state, 0, 29)
    state.spell_pile.remove(2)
    state.players[0].spells = [2]
    player = state.players[0]
    player.company = 15
    a, b, c = player.adventurer_dice
    at_afternoon(state, {0: {a: "air", b: "fire", c: "fire"}})
    play(state, 0, "go 16 die")
    assert legal(state, 0) == ["lose 25", "lose 29", "cancel 2"]
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("end"), IllegalMove)
    assert exc.rule == "Common rules for journeys"
    play(state, 0, "cancel 2")
    assert 2 in state.spell_box and player.spells == []
    assert player.companions == [25, 29]


def test_a_skull_space_with_a_face_down_spell() -> None:
    state = started(9, 2, adventurers=("pocana", "eoles"))
    give(state, 0, 25)
    state.spell_pile.remove(6)
    state.players[0].hidden_spells = [6]
    player = state.players[0]
    player.company = 15
    a, b, c = player.adventurer_dice
    at_afternoon(state, {0: {a: "air", b: "fire", c: "fire"}})
    play(state, 0, "go 16 die")
    assert legal(state, 0) == ["lose 25", "cancel hidden"]
    events = play(state, 0, "lose 25")
    assert 25 in state.cemetery and "skull" in events[0].text


def _boats(faces: list[str], boats=(0, 0, 0, 0), footprints: int = 0):
    state = started(9, 2, board="archipelago", adventurers=("pocana", "eoles"))
    player = state.players[0]
    ids = list(player.adventurer_dice)
    while len(ids) < len(faces):
        ids.append(own_die(state, 0, "green"))
    player.boats = list(boats)
    player.footprints = footprints
    at_afternoon(state, {0: dict(zip(ids, faces, strict=False))})
    return state, player


def test_archipelago_footprints_replace_missing_elements() -> None:
    state, player = _boats(["air", "water", "air"], footprints=1)
    assert "sail 0 3" in legal(state, 0), "3 different: 2, and a footprint"
    assert "sail 0 10" not in legal(state, 0), "4 different: 2 missing"
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("sail 0 10"), IllegalMove)
    assert exc.rule == "The Archipelago of Darkness journey"
    play(state, 0, "sail 0 3")
    assert player.footprints == 0 and player.fireflies == 2 and player.boats == [0, 0, 0, 3]
    assert player.done, "one boat, one island, each round"


def test_archipelago_no_two_boats_on_one_island_and_link_costs() -> None:
    state, player = _boats(["air", "water", "rock"], boats=(0, 0, 8, 9), footprints=1)
    moves = legal(state, 0)
    assert "sail 8 9" not in moves and "sail 9 8" not in moves
    assert "sail 9 10" in moves
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("sail 8 9"), IllegalMove)
    assert "several of their boats" in exc.message
    play(state, 0, "sail 9 10")
    assert player.footprints == 0 and player.boats == [0, 0, 8, 10]


def test_archipelago_skull_island() -> None:
    state, player = _boats(["air", "air", "air"], boats=(0, 0, 0, 1))
    give(state, 0, 25)
    assert "sail 1 2" in legal(state, 0)
    play(state, 0, "sail 1 2")
    assert legal(state, 0) == ["lose 25"]
    play(state, 0, "lose 25")
    assert player.companions == [] and player.done


def test_special_faces_do_not_count_as_different_elements() -> None:
    state = started(9, 2, board="archipelago", adventurers=("orium", "eoles"))
    a, b = state.players[0].adventurer_dice
    at_afternoon(state, {0: {a: "burst", b: "burst"}})
    assert "sail 0 1" not in legal(state, 0)


def test_a_skull_with_nothing_to_lose() -> None:
    state, player = _boats(["air", "air", "air"], boats=(0, 0, 0, 1))
    assert player.companions == [] and player.spells == []
    events = play(state, 0, "sail 1 2")
    assert player.done and "nothing to lose" in events[-1].text


def test_journey_refusals() -> None:
    state, _, _ = _company(45, ["nature", "nature", "fire"])
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("camp"), IllegalMove)
    assert exc.rule == "The Province of Shadows journey"
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("go 3 die"), IllegalMove)
    assert "not next to the company" in exc.message
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("sail 0 1"), IllegalMove)
    assert exc.rule == "The Province of Shadows journey"
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("lose 3"), IllegalMove)
    assert exc.rule == "The Province of Shadows journey"


# ---- spots and islands past the board: malformed, like any argument out of range --------


def test_a_spot_past_the_province_of_shadows_is_refused_as_malformed() -> None:
    """The text form takes spots 0-999; the Province has 61 (0-60). A spot past it is
    malformed with a message naming it, at a journey decision and at any other step, and
    the state is unchanged; a spot on the board the company cannot reach stays illegal."""
    last = len(PROVINCE.spots) - 1
    assert last == 60
    journey, _, _ = _company(45, ["nature", "nature", "fire"])
    elsewhere = started(9, 2)  # choosing adventurers: no journey now
    seat = engine.to_act(elsewhere)[0]
    for state, who in ((journey, 0), (elsewhere, seat)):
        for spot in (last + 1, 99, 500, 999):
            for pay in (FREE, USE_DIE, FOOT):
                exc = assert_refused_unchanged(engine, state, who, Go(spot, pay), MalformedMove)
                assert str(exc) == f"spot {spot} is not on The Province of Shadows (spots 0-60)"
        # Control: spots on the board are read by the rules, and refused as illegal.
        exc = assert_refused_unchanged(engine, state, who, Go(3, USE_DIE), IllegalMove)
        assert "not on" not in exc.message
    exc = assert_refused_unchanged(engine, journey, 0, Go(last, FREE), IllegalMove)
    assert "not next to the company" in exc.message


def test_an_island_past_the_archipelago_of_darkness_is_refused_as_malformed() -> None:
    """Islands 0-11: either end of a sail past them is malformed, on either board, with
    the state unchanged; control: a sail between islands of the board stays illegal."""
    last = len(ARCHIPELAGO.islands) - 1
    assert last == 11
    sailing, _ = _boats(["air", "water", "air"], footprints=1)
    province, _, _ = _company(45, ["nature", "nature", "fire"])
    for state in (sailing, province):
        for move, island in (
            (Sail(0, last + 1), last + 1),
            (Sail(last + 1, 1), last + 1),
            (Sail(50, 3), 50),
            (Sail(0, 999), 999),
        ):
            exc = assert_refused_unchanged(engine, state, 0, move, MalformedMove)
            assert str(exc) == (
                f"island {island} is not on The Archipelago of Darkness (islands 0-11)"
            )
        exc = assert_refused_unchanged(engine, state, 0, Sail(0, 10), IllegalMove)
        assert "not on" not in exc.message
