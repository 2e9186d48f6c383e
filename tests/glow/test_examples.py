"""The rulebook's own examples 1-6, each built as a scenario."""

from __future__ import annotations

from services.glow import engine
from services.glow.engine import dice
from services.glow.engine.content import COMPANIONS, DICE, REROLL_TOKENS, SYMBOL
from services.glow.engine.scoring import final_count

from .helpers import (
    at_afternoon,
    at_late_morning,
    at_noon,
    give,
    legal,
    own_die,
    play,
    shows,
    started,
)


def _taetyss(roll: list[str]) -> tuple:
    state = started(adventurers=("taetyss", "eoles"))
    give(state, 0, 18)  # a Lumipili: one reroll every round
    player = state.players[0]
    small = [own_die(state, 0, "azure"), own_die(state, 0, "blue")]
    dice_ids = player.adventurer_dice + small
    player.rerolls = 2
    state.reroll_pool = REROLL_TOKENS - 2 - state.players[1].rerolls
    at_late_morning(state, {0: dict(zip(dice_ids, roll, strict=True))})
    return state, dice_ids


def test_example_1_three_rerolls_turn_a_die_to_water() -> None:
    """Example 1, as printed: a companion's reroll and two tokens set an air die to water."""
    state, ids = _taetyss(["air", "water", "air", "water"])
    pool = state.reroll_pool
    assert "fix" in legal(state, 0)
    for text in ("fix", "pay lumipili 18", "pay token", "pay token", f"pick {ids[0]}"):
        play(state, 0, text)
    assert legal(state, 0) == [f"face {s}" for s in ("air", "water", "rock", "fire", "nature")]
    play(state, 0, "face water")
    player = state.players[0]
    assert shows(state, ids[0]) == "water"
    assert player.rerolls == 0 and state.reroll_pool == pool + 2
    assert player.lumipilis_used == [18]
    assert "reroll lumipili 18" not in legal(state, 0), "a Lumipili rerolls once a round"
    assert player.score == 10, "no score-track reroll was used"


def test_example_1_the_fix_triggers_taetyss_twice() -> None:
    """Example 1's aim (see README, Readings taken): one water short of two air-water pairs."""
    state, ids = _taetyss(["air", "water", "air", "air"])
    for text in ("fix", "pay lumipili 18", "pay token", "pay token", f"pick {ids[0]}"):
        play(state, 0, text)
    play(state, 0, "face water")
    play(state, 0, "ready")
    if 1 in engine.to_act(state):
        play(state, 1, "ready")
    assert engine.view(state, 0).step == "noon"
    rerolls_before = state.players[0].rerolls
    events = play(state, 0, "resolve adventurer")
    assert "x2" in events[0].text
    assert state.players[0].score == 10 + 3 * 2
    assert state.players[0].rerolls == rerolls_before + 2


def _stream_for(wanted: list[tuple[int, str]]) -> int:
    """The first reroll key whose rerolls give these dice these symbols, in order."""
    from services.glow.engine.state import Player, State

    for key in range(10_000):
        scratch = State(players=[Player(stream=key)], options=engine.Options(), rng=None)
        scratch.faces = [0] * len(DICE)
        if all(
            DICE[d].faces[dice.stream_roll(scratch.players[0], scratch, d)] == SYMBOL[s]
            for d, s in wanted
        ):
            return key
    raise AssertionError("no key found")


def test_example_2_two_score_track_rerolls_reach_four_air() -> None:
    state = started(adventurers=("pocana", "eoles"))
    give(state, 0, 17)  # a Sketal with a red large die
    give(state, 0, 19)  # Snarexe: four identical -> skull, +10
    player = state.players[0]
    sketal_die = player.sketal_dice[0][1]
    small = [own_die(state, 0, "green"), own_die(state, 0, "blue"), own_die(state, 0, "azure")]
    p1, p2, p3 = player.adventurer_dice
    faces = {p1: "water", p2: "air", p3: "air", sketal_die: "rock"}
    faces.update(zip(small, ["air", "nature", "rock"], strict=True))
    player.score = 12
    at_late_morning(state, {0: faces})
    player.stream = _stream_for([(sketal_die, "nature"), (p1, "air")])
    play(state, 0, "reroll track")
    assert player.score == 11, "back to the nearest reroll space"
    play(state, 0, f"pick {sketal_die}")
    play(state, 0, "roll")
    assert shows(state, sketal_die) == "nature"
    play(state, 0, "reroll track")
    assert player.score == 9
    play(state, 0, f"pick {p1}")
    play(state, 0, "roll")
    assert shows(state, p1) == "air"
    play(state, 0, "ready")
    if 1 in engine.to_act(state):
        play(state, 1, "ready")
    assert "resolve 19" in legal(state, 0)
    play(state, 0, "resolve 19")
    assert player.score == 19
    assert 19 in state.cemetery


def test_example_3_resolution_in_the_players_order() -> None:
    state = started(adventurers=("eoles", "taetyss"))
    give(state, 0, 15)  # Sketal, rock rock -> skull, +2; its die is green
    give(state, 0, 8)  # Donillilu, no water -> +1 reroll, +2
    player = state.players[0]
    green = player.sketal_dice[0][1]
    a1, a2 = player.adventurer_dice
    small = [own_die(state, 0, "red"), own_die(state, 0, "orange")]
    faces = {a1: "air", a2: "rock", small[0]: "air", small[1]: "rock", green: "fire"}
    at_noon(state, {0: faces})
    assert legal(state, 0) == ["resolve adventurer", "resolve 8", "resolve 15"]
    play(state, 0, "resolve adventurer")
    assert (player.score, player.fireflies) == (14, 2), "Eoles twice: 4 bursts, 2 fireflies"
    play(state, 0, "resolve 15")
    assert player.score == 16 and 15 in state.cemetery
    assert green in state.pool and green not in player.rolled, "the green die leaves"
    rerolls = player.rerolls
    play(state, 0, "resolve 8")
    assert player.score == 18 and player.rerolls == rerolls + 1
    assert not any(m.startswith("resolve") for m in legal(state, 0)), "nothing left to resolve"


def test_example_4_the_blue_company() -> None:
    state = started(adventurers=("taetyss", "pocana"))
    player = state.players[0]
    small = [own_die(state, 0, "azure"), own_die(state, 0, "red")]
    ids = player.adventurer_dice + small
    player.company = 45
    player.footprints = 1
    at_afternoon(state, {0: dict(zip(ids, ["air", "water", "air", "fire"], strict=True))})
    assert "go 60 die" in legal(state, 0)
    play(state, 0, "go 60 die")
    rerolls = player.rerolls
    assert "go 59" in legal(state, 0)
    play(state, 0, "go 59")
    # The reroll token is due now, and taken from the reserve pool when the step ends.
    assert player.footprints == 0 and player.rerolls_due == 1
    assert "camp" in legal(state, 0)
    play(state, 0, "go 57")
    assert player.company == 57 and player.encampment == 0
    assert player.done, "to go on they would need to not have a fire symbol"
    play(state, 1, "end")
    assert player.rerolls == rerolls + 1 and player.rerolls_due == 0


def test_example_4_the_red_boat() -> None:
    state = started(board="archipelago", adventurers=("taetyss", "pocana"))
    player = state.players[1]
    small = [own_die(state, 1, c) for c in ("azure", "green", "orange")]
    ids = player.adventurer_dice + small
    faces = ["air", "air", "air", "nature", "rock", "rock"]
    at_afternoon(state, {1: dict(zip(ids, faces, strict=True))})
    assert "sail 0 1" in legal(state, 1), "1 or 2 different symbols: air and rock"
    footprints = player.footprints
    play(state, 1, "sail 0 1")
    assert player.boats == [0, 0, 0, 1]
    assert player.footprints == footprints + 2
    assert player.done


def test_example_5_the_final_count_is_72() -> None:
    state = started(adventurers=("taetyss", "eoles"))
    player = state.players[0]
    for companion in (9, 18, 7, 39, 25, 41, 36):
        give(state, 0, companion)
    names = [COMPANIONS[c].name for c in player.companions]
    assert names == ["Oshra", "Lumipili", "Mindaroo", "Oshra", "Zzibelu", "Cromaug", "Okanios"]
    player.score, player.encampment, player.fireflies, player.footprints = 60, 5, 1, 3
    outcome, _ = final_count(state)
    assert outcome.scores[0] == 72
    assert "cards +4" in outcome.details[0] and "journey +5" in outcome.details[0]
    assert "fireflies +0" in outcome.details[0] and "footprints +3" in outcome.details[0]


def test_example_6_the_black_die_cancels_the_other_air_dice() -> None:
    state = started(adventurers=("pocana", "eoles"))
    player = state.players[0]
    black = own_die(state, 0, "black")
    small = [own_die(state, 0, c) for c in ("green", "blue", "azure")]
    others = player.adventurer_dice + small
    faces = dict(zip(others, ["fire", "air", "air", "rock", "air", "nature"], strict=True))
    faces[black] = "air"
    before = player.score
    at_noon(state, {0: faces})
    assert sorted(player.cancelled) == sorted(d for d in others if faces[d] == "air")
    counted = [shows(state, d) for d in dice.counted(player)]
    assert sorted(counted) == ["air", "fire", "nature", "rock"]
    assert player.score == before


def test_example_6_the_minus_two_face() -> None:
    state = started(adventurers=("pocana", "eoles"))
    player = state.players[0]
    black = own_die(state, 0, "black")
    faces = {black: "curse"}
    faces.update(dict.fromkeys(player.adventurer_dice, "fire"))
    at_noon(state, {0: faces})
    assert player.score == 8 and player.cancelled == []
