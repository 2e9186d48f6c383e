"""Game Setup and Morning – Recruit a Companion (with Sketals, Kaar and 2-player games)."""

from __future__ import annotations

import pytest

from services.glow import engine
from services.glow.engine.content import (
    BLACK_DIE,
    COLOUR,
    COMPANIONS,
    DICE,
    ELEMENTS,
    FOOTPRINT,
    MEETING_TRACK,
    PACKS,
    REROLL_TOKENS,
)
from services.glow.engine.dice import symbol
from services.glow.engine.moves import Bury, ChooseAdventurer, Take
from services.kit.engine import BadOptions, IllegalMove, MalformedMove, NotYourDecision
from services.kit.testing import assert_refused_unchanged

from .helpers import give, invariants, legal, play, started


@pytest.mark.parametrize("players", [2, 3, 4])
def test_setup(players: int) -> None:
    for seed in range(30):
        state = started(seed, players)
        invariants(state)
        assert all(p.score == 10 for p in state.players)
        assert len(state.box) == 6 and len(state.deck) == 35
        assert sorted(COMPANIONS[c].pack for c in state.box) == ["A"] * 3 + ["B"] * 3
        order = [COMPANIONS[c].pack for c in state.track + state.deck]
        assert order == ["A"] * 20 + ["B"] * 20, "pack A on pack B"
        right = (state.first - 1) % players
        assert [p.rerolls for p in state.players] == [
            2 if s == right else 0 for s in range(players)
        ]
        assert state.reroll_pool == REROLL_TOKENS - 2
        on_track = [d for space in state.track_dice for d in space]
        assert len(on_track) == 9 and BLACK_DIE not in on_track
        for space, dice in enumerate(state.track_dice):
            for die in dice:
                assert symbol(state, die) == MEETING_TRACK[space]
                assert symbol(state, die) != FOOTPRINT
            assert state.track_footprints[space] == (0 if dice else 1)
        pool = sorted(DICE[d].colour for d in state.pool)
        expected = ["green", "blue", "azure", "red", "orange", "black"]
        assert pool == sorted(COLOUR[c] for c in expected)
        assert state.spell_pile and sorted(state.spell_pile) == list(range(1, 8))


def test_first_player_is_random() -> None:
    firsts = {started(seed, 4).first for seed in range(40)}
    assert firsts == {0, 1, 2, 3}


def test_adventurers_are_chosen_in_turn_with_their_dice() -> None:
    state = engine.new_game(3, 3, engine.Options())
    assert engine.to_act(state) == (0,)
    assert len(legal(state, 0)) == 7
    play(state, 0, "adventurer pocana")
    assert "adventurer pocana" not in legal(state, 1)
    exc = assert_refused_unchanged(
        engine, state, 1, engine.parse_move("adventurer pocana"), IllegalMove
    )
    assert exc.rule == "Game Setup"
    assert_refused_unchanged(engine, state, 0, ChooseAdventurer(2), NotYourDecision)
    play(state, 1, "adventurer moloch")
    play(state, 2, "adventurer orium")
    pocana = state.players[0]
    assert [DICE[d].colour for d in pocana.adventurer_dice] == [COLOUR["red"]] * 3
    assert len(state.dice_box) == 15 - 7, "unused adventurers' dice stay in the box"
    assert engine.view(state, None).step == "morning"


@pytest.mark.parametrize(
    ("players", "options"),
    [(1, engine.Options()), (5, engine.Options()), (2, engine.Options(board="moon"))],
)
def test_bad_options(players: int, options) -> None:
    with pytest.raises(BadOptions):
        engine.new_game(1, players, options)


def test_options_round_trip() -> None:
    options = engine.Options(board="archipelago")
    assert engine.Options.from_dict(options.to_dict()) == options
    with pytest.raises(BadOptions):
        engine.Options.from_dict({"colour": "blue"})


def test_recruit_in_turn_order_with_dice_and_footprints() -> None:
    state = started(5, 3)
    first = state.first
    assert engine.to_act(state) == (first,)
    space = next(s for s in range(5) if state.track_dice[s])
    dice = list(state.track_dice[space])
    companion = state.track[space]
    play(state, first, f"take {space}")
    player = state.players[first]
    assert player.companions == [companion] and sorted(player.small_dice) == dice
    assert engine.to_act(state) == ((first + 1) % 3,), "clockwise"
    empty = next((s for s in range(5) if not state.track_dice[s] and state.track[s]), None)
    if empty is not None:
        seat = (first + 1) % 3
        play(state, seat, f"take {empty}")
        assert state.players[seat].footprints == 1


def test_taking_an_empty_space_is_refused() -> None:
    state = started(5, 3)
    first = state.first
    play(state, first, "take 0")
    nxt = (first + 1) % 3
    exc = assert_refused_unchanged(engine, state, nxt, Take(0), IllegalMove)
    assert exc.rule == "Morning – Recruit a Companion"
    assert_refused_unchanged(engine, state, first, Take(1), NotYourDecision)
    assert_refused_unchanged(engine, state, nxt, Take(9), MalformedMove)
    assert_refused_unchanged(engine, state, nxt, "take 1", MalformedMove)


def test_leftovers_go_to_the_cemetery_but_their_dice_stay() -> None:
    state = started(8, 3)
    seat = state.first
    for _ in range(3):
        play(state, seat, f"take {next(s for s in range(5) if state.track[s])}")
        if state.players[seat].stage == 4:  # a multicoloured Sketal asks for a colour
            play(state, seat, legal(state, seat)[0])
        seat = (seat + 1) % 3
    assert len(state.cemetery) == 2 and state.track == [0] * 5
    left = [d for space in state.track_dice for d in space]
    assert all(DICE[d].large is False for d in left)
    assert engine.view(state, None).step in ("late_morning", "noon", "afternoon")


def test_two_player_cemetery_pick() -> None:
    state = started(2, 2)
    first = state.first
    play(state, first, "take 0")
    assert engine.to_act(state) == (first,)
    assert legal(state, first) == [f"bury {s}" for s in range(1, 5)]
    exc = assert_refused_unchanged(engine, state, first, Bury(0), IllegalMove)
    assert exc.rule == "2-player games"
    buried = state.track[2]
    play(state, first, "bury 2")
    assert buried in state.cemetery
    assert engine.to_act(state) == (1 - first,)
    play(state, 1 - first, "take 1")
    assert len(state.cemetery) == 3, "the two left over also go"


def _morning_with(companion: int, space: int = 0, seed: int = 2) -> tuple:
    state = started(seed, 3)
    if companion in state.track:
        other = state.track.index(companion)
        state.track[other], state.track[space] = state.track[space], companion
        return state, state.first
    old = state.track[space]
    state.track[space] = companion
    for container in (state.deck, state.box):
        if companion in container:
            container.remove(companion)
    state.box.append(old)
    return state, state.first


def test_a_sketal_brings_its_large_die() -> None:
    state, first = _morning_with(16)  # Sketal with a blue die
    play(state, first, "take 0")
    ((companion, die),) = state.players[first].sketal_dice
    assert companion == 16 and DICE[die].colour == COLOUR["blue"] and DICE[die].large
    assert die not in state.pool


def test_the_multicoloured_sketal_chooses_a_pool_die() -> None:
    state, first = _morning_with(44)
    play(state, first, "take 0")
    assert legal(state, first) == [f"die {c}" for c in ("green", "blue", "azure", "red", "orange")]
    exc = assert_refused_unchanged(
        engine, state, first, engine.parse_move("die purple"), IllegalMove
    )
    assert exc.rule == "The Sketals"
    play(state, first, "die red")
    ((_, die),) = state.players[first].sketal_dice
    assert DICE[die].colour == COLOUR["red"]


def test_a_sketal_without_its_die_in_the_pool_gets_none() -> None:
    state, first = _morning_with(16)
    blue = next(d for d in state.pool if DICE[d].colour == COLOUR["blue"])
    state.pool.remove(blue)
    state.dice_box.append(blue)
    play(state, first, "take 0")
    assert state.players[first].sketal_dice == []


def test_kaar_rolls_the_black_die_onto_a_companion() -> None:
    for seed in range(10):
        state, first = _morning_with(20, seed=seed)
        play(state, first, "take 0")
        spaces = [s for s in range(5) if BLACK_DIE in state.track_dice[s]]
        assert len(spaces) == 1 and state.track[spaces[0]], "never an empty space"
        assert symbol(state, BLACK_DIE) in ELEMENTS
        assert MEETING_TRACK[spaces[0]] == symbol(state, BLACK_DIE)


def test_kaar_owner_may_move_the_black_die() -> None:
    state, first = _morning_with(21, space=1)
    give(state, first, 20)  # Kaar already in play
    state.pool.remove(BLACK_DIE)
    state.track_dice[1].append(BLACK_DIE)
    play(state, first, "take 1")
    assert legal(state, first) == ["black stay", "black 0", "black 2", "black 3", "black 4"]
    exc = assert_refused_unchanged(engine, state, first, engine.parse_move("black 1"), IllegalMove)
    assert exc.rule == "Kaar and the Curse of the Black Die"
    play(state, first, "black 3")
    assert BLACK_DIE in state.track_dice[3]
    assert BLACK_DIE not in state.players[first].small_dice
    assert 21 in state.players[first].companions


def test_without_kaar_the_black_die_comes_along() -> None:
    state, first = _morning_with(21, space=1)
    state.pool.remove(BLACK_DIE)
    state.track_dice[1].append(BLACK_DIE)
    play(state, first, "take 1")
    assert BLACK_DIE in state.players[first].small_dice


def test_packs_are_two() -> None:
    assert PACKS == ("A", "B")
