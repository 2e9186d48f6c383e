"""Evening – End of Round and Resetting, and End of Game."""

from __future__ import annotations

import copy
import random

from services.glow import engine
from services.glow.engine.content import (
    BLACK_DIE,
    ELEMENTS,
    MEETING_TRACK,
    SPACE_OF_ELEMENT,
    SYMBOL,
)
from services.glow.engine.dice import symbol
from services.glow.engine.rules.evening import evening
from services.glow.engine.scoring import final_count
from services.kit.engine import GameOver
from services.kit.testing import assert_refused_unchanged, random_game

from .helpers import give, own_die, set_faces, shows, started


def _through_first_evening(seed: int, players: int):
    state = started(seed, players)
    rng = random.Random(seed)
    while True:
        seats = engine.to_act(state)
        seat = rng.choice(seats)
        move = rng.choice(engine.legal_moves(state, seat))
        before = copy.deepcopy(state)
        engine.apply(state, seat, move)
        if state.day == 2:
            return before, state


def test_evening_reset() -> None:
    for seed in range(15):
        before, after = _through_first_evening(seed, 3)
        small = sorted(d for p in before.players for d in p.small_dice)
        assert all(p.small_dice == [] for p in after.players)
        for space, dice in enumerate(after.track_dice):
            for die in dice:
                assert symbol(after, die) in ELEMENTS, "-2 and footprints are rerolled"
                assert symbol(after, die) == MEETING_TRACK[space]
        on_track = sorted(d for space in after.track_dice for d in space)
        stayed = sorted(d for space in before.track_dice for d in space)
        assert on_track == sorted(small + stayed)
        assert after.track == before.deck[:5] and len(after.deck) == len(before.deck) - 5
        for space in range(5):
            extra = 0 if after.track_dice[space] else 1
            assert after.track_footprints[space] == before.track_footprints[space] + extra
        assert after.first == (before.first + 1) % 3


def _evening_with(options: engine.Options, seed: int) -> tuple:
    """Seat 0 holds a small green die showing rock, a small purple one showing a footprint
    and the black die showing -2; seat 1 a small blue one showing fire. Then the Evening."""
    state = started(seed, 2, options=options)
    green, purple = own_die(state, 0, "green"), own_die(state, 0, "purple")
    blue = own_die(state, 1, "blue")
    state.pool.remove(BLACK_DIE)
    state.players[0].small_dice = sorted([*state.players[0].small_dice, BLACK_DIE])
    set_faces(state, {green: "rock", purple: "footprint", BLACK_DIE: "curse", blue: "fire"})
    evening(state)
    space = {d: s for s, dice in enumerate(state.track_dice) for d in dice}
    return state, space, green, purple, blue


def test_evening_each_player_places_their_small_dice_on_the_space_of_the_colour_shown() -> None:
    """Evening 1: "each player places their small dice on the meeting track spaces of the
    corresponding color to the result on the dice, including the small black die.
    Important: if a die indicates a -2 burst-of-light result or a footprint symbol, it
    must be rerolled until it indicates a color"."""
    rock, fire = SPACE_OF_ELEMENT[SYMBOL["rock"]], SPACE_OF_ELEMENT[SYMBOL["fire"]]
    rerolled_black, rerolled_purple = set(), set()
    for seed in range(40):
        state, space, green, purple, blue = _evening_with(engine.Options(), seed)
        assert shows(state, green) == "rock" and space[green] == rock, "placed as shown"
        assert shows(state, blue) == "fire" and space[blue] == fire, "placed as shown"
        for die, seen in ((purple, rerolled_purple), (BLACK_DIE, rerolled_black)):
            assert symbol(state, die) in ELEMENTS, "a -2 or a footprint is rerolled"
            assert MEETING_TRACK[space[die]] == symbol(state, die)
            seen.add(space[die])
    assert len(rerolled_purple) > 1 and len(rerolled_black) > 1, "the reroll is a real roll"


def test_evening_dice_showing_a_colour_are_not_rerolled() -> None:
    state = started(3, 2)
    green = own_die(state, 0, "green")
    set_faces(state, {green: "water"})
    before = state.rng.getstate()
    evening(state)
    assert green in state.track_dice[SPACE_OF_ELEMENT[SYMBOL["water"]]]
    assert state.rng.getstate() == before, "no die was rolled"


def test_evening_games_stored_before_the_fix_replay_with_every_small_die_rolled_again() -> None:
    stored = engine.Options.from_dict({"board": "province"})
    assert stored.evening == "roll" and engine.Options().evening == "shown"
    assert engine.Options.from_dict(engine.Options().to_dict()) == engine.Options()
    moved = 0
    for seed in range(40):
        state, space, green, *_ = _evening_with(stored, seed)
        assert MEETING_TRACK[space[green]] == symbol(state, green), "still on its colour"
        moved += space[green] != SPACE_OF_ELEMENT[SYMBOL["rock"]]
    assert moved > 10, "the old rule rolls the die left showing rock again"


def test_the_game_ends_after_day_eight() -> None:
    played = random_game(engine, 3, 2, engine.Options(board="archipelago"))
    state = played.state
    assert state.day == 8 and state.deck == [] and engine.to_act(state) == ()
    assert engine.legal_moves(state, 0) == []
    exc = assert_refused_unchanged(engine, state, 0, played.moves[-1][1], GameOver)
    assert exc.reason == "GAME_OVER"
    assert engine.view(state, None).outcome == played.outcome


def test_tie_break_on_reroll_tokens_then_shared_victory() -> None:
    state = started(1, 3, adventurers=("taetyss", "noctiluca", "orium"))  # 0 bursts each
    for p in state.players:
        p.score, p.footprints, p.fireflies = 30, 0, 0
        p.rerolls = 0
    state.players[1].rerolls = 2
    outcome, _ = final_count(copy.deepcopy(state))
    assert outcome.winners == (1,) and outcome.reason == "TIE_MOST_REROLL_TOKENS"
    state.players[0].rerolls = 2
    outcome, _ = final_count(copy.deepcopy(state))
    assert outcome.winners == (0, 1) and outcome.reason == "SHARED_VICTORY"
    state.players[2].score = 31
    outcome, _ = final_count(state)
    assert outcome.winners == (2,) and outcome.reason == "MOST_BURSTS_OF_LIGHT"


def test_firefly_bonus_and_islands() -> None:
    state = started(1, 2, board="archipelago", adventurers=("taetyss", "noctiluca"))
    give(state, 0, 1)  # Likyar: 2 fireflies
    give(state, 0, 3)  # Torke: none
    give(state, 1, 2)  # Thoape: none
    state.players[0].boats = [4, 5, 9, 11]
    state.players[1].boats = [0, 0, 0, 0]
    for p in state.players:
        p.score, p.footprints, p.fireflies = 10, 0, 0
    outcome, _ = final_count(state)
    assert outcome.scores[0] == 10 + 10 + (5 + 4 + 8 + 3)
    assert outcome.scores[1] == 10, "1 companion, no firefly: no bonus"


def test_card_losses_never_take_the_score_below_zero() -> None:
    state = started(1, 2, adventurers=("taetyss", "noctiluca"))
    give(state, 0, 22)  # Dvol: -5
    state.players[0].score = 2
    state.players[0].fireflies = 1
    outcome, _ = final_count(state)
    assert outcome.scores[0] == 10, "0 after the cards, then the firefly bonus"


def test_no_companion_still_earns_the_firefly_bonus() -> None:
    state = started(1, 2, adventurers=("taetyss", "noctiluca"))
    for p in state.players:
        p.score, p.footprints, p.fireflies = 10, 0, 0
    give(state, 1, 2)  # Thoape: no firefly
    outcome, _ = final_count(state)
    assert outcome.scores == (20, 10)
