"""Late Morning – Roll and Reroll Dice: every kind of reroll, and its limits."""

from __future__ import annotations

from services.glow import engine
from services.glow.engine.content import REROLL_SPACES, SCORE_TRACK_LENGTH
from services.kit.engine import IllegalMove, NotYourDecision
from services.kit.testing import assert_refused_unchanged

from .helpers import at_late_morning, give, legal, play, shows, started


def _ready(state, seat: int = 1) -> None:
    if seat in engine.to_act(state):
        play(state, seat, "ready")


def test_a_reroll_rerolls_one_or_two_dice_once() -> None:
    state = started(4, 2)
    player = state.players[0]
    player.rerolls, state.reroll_pool = 1, state.reroll_pool + state.players[0].rerolls - 1
    at_late_morning(state, {})
    a, b = player.rolled[:2]
    play(state, 0, "reroll token")
    assert player.rerolls == 0
    assert legal(state, 0) == [f"pick {d}" for d in player.rolled], "no roll before a pick"
    play(state, 0, f"pick {a}")
    assert f"pick {a}" not in legal(state, 0) and "roll" in legal(state, 0)
    before = list(state.faces)
    stream = player.stream
    play(state, 0, f"pick {b}")  # the second pick rolls both
    assert player.stream != stream
    changed = [d for d in range(30) if state.faces[d] != before[d]]
    assert set(changed) <= {a, b}
    assert player.stage != 7, "back to choosing: the reroll is spent"


def test_a_token_returns_to_the_reserve_pool() -> None:
    state = started(4, 2)
    at_late_morning(state, {})
    seat = next(s for s in range(2) if state.players[s].rerolls)
    pool = state.reroll_pool
    play(state, seat, "reroll token")
    assert state.reroll_pool == pool + 1


def test_a_lumipili_rerolls_once_per_round() -> None:
    state = started(4, 2)
    give(state, 0, 45)
    at_late_morning(state, {})
    assert "reroll lumipili 45" in legal(state, 0)
    play(state, 0, "reroll lumipili 45")
    play(state, 0, f"pick {state.players[0].rolled[0]}")
    play(state, 0, "roll")
    assert "reroll lumipili 45" not in legal(state, 0)
    exc = assert_refused_unchanged(
        engine, state, 0, engine.parse_move("reroll lumipili 45"), IllegalMove
    )
    assert exc.rule == "Late Morning – Roll and Reroll Dice"
    assert_refused_unchanged(engine, state, 0, engine.parse_move("reroll lumipili 18"), IllegalMove)


def test_score_track_rerolls_move_back_to_each_reroll_space_down_to_zero() -> None:
    state = started(4, 2)
    player = state.players[0]
    player.score = 8
    at_late_morning(state, {})
    scores = []
    while "reroll track" in legal(state, 0):
        play(state, 0, "reroll track")
        play(state, 0, f"pick {player.rolled[0]}")
        play(state, 0, "roll")
        scores.append(player.score)
    assert scores == [7, 5, 4, 3, 2, 1, 0]
    assert player.score == 0, "never below 0"


def test_no_score_track_reroll_after_going_round_the_track() -> None:
    state = started(4, 2)
    player = state.players[0]
    player.score = SCORE_TRACK_LENGTH + 5
    player.rerolls = 0
    state.reroll_pool = 44 - state.players[1].rerolls
    at_late_morning(state, {})
    assert 0 not in engine.to_act(state), "no reroll at all: nothing to decide"
    player.score = SCORE_TRACK_LENGTH - 1
    at_late_morning(state, {})
    play(state, 0, "reroll track")
    assert player.score == max(s for s in REROLL_SPACES if s < SCORE_TRACK_LENGTH - 1)


def test_three_rerolls_set_a_face_and_two_do_not() -> None:
    state = started(4, 2)
    player = state.players[0]
    player.score = 1  # one score-track reroll left
    player.rerolls = 1
    state.reroll_pool = 44 - 1 - state.players[1].rerolls
    at_late_morning(state, {})
    assert "fix" not in legal(state, 0)
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("fix"), IllegalMove)
    assert exc.rule == "Late Morning – Roll and Reroll Dice"
    give(state, 0, 18)
    at_late_morning(state, {})
    play(state, 0, "fix")
    assert legal(state, 0) == ["pay token", "pay track", "pay lumipili 18"]
    play(state, 0, "pay track")
    play(state, 0, "pay token")
    assert legal(state, 0) == ["pay lumipili 18"]
    play(state, 0, "pay lumipili 18")
    die = player.rolled[-1]
    play(state, 0, f"pick {die}")
    play(state, 0, "face nature")
    assert shows(state, die) == "nature"
    assert player.score == 0 and player.rerolls == 0


def test_the_result_is_fixed_once_ready() -> None:
    state = started(4, 2)
    at_late_morning(state, {})
    seat = next(iter(engine.to_act(state)))
    play(state, seat, "ready")
    assert seat not in engine.to_act(state) or engine.view(state, None).step != "late_morning"
    assert_refused_unchanged(
        engine, state, seat, engine.parse_move("reroll track"), NotYourDecision
    )


def test_the_roll_is_public_and_simultaneous() -> None:
    state = started(4, 3)
    at_late_morning(state, {})
    acting = engine.to_act(state)
    assert len(acting) >= 2, "several seats decide at once"
    for seat in acting:
        assert all(
            str(m).split()[0] in {"reroll", "fix", "ready"} for m in engine.legal_moves(state, seat)
        )
    seen = engine.view(state, None)
    assert all(len(p.rolled) >= 2 for p in seen.players)


def test_refusals_inside_a_fix() -> None:
    state = started(4, 2)
    give(state, 0, 18)
    player = state.players[0]
    at_late_morning(state, {})
    play(state, 0, "fix")
    rule = "Late Morning – Roll and Reroll Dice"
    for text in ("ready", f"pick {player.rolled[0]}", "roll"):
        exc = assert_refused_unchanged(engine, state, 0, engine.parse_move(text), IllegalMove)
        assert exc.rule == rule
    for text in ("pay track", "pay lumipili 18", "pay track"):
        play(state, 0, text)
    other = next(d for d in range(30) if d not in player.rolled)
    exc = assert_refused_unchanged(
        engine, state, 0, engine.parse_move(f"pick {other}"), IllegalMove
    )
    assert exc.rule == rule
    green = next(d for d in player.rolled if d in player.adventurer_dice)
    play(state, 0, f"pick {green}")
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("face burst"), IllegalMove)
    assert exc.rule == rule and "no such face" in exc.message
