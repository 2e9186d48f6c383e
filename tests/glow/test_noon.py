"""Noon – Resolve the Cards: conditions, repeated triggers, faces, spells and Cromaug."""

from __future__ import annotations

import pytest

from services.glow import engine
from services.glow.engine.content import BLACK_DIE, COMPANIONS, SYMBOL, parse_condition
from services.kit.arrival import arrival_orders, check_arrival_orders
from services.kit.engine import IllegalMove
from services.kit.testing import assert_refused_unchanged

from .helpers import at_noon, give, legal, own_die, play, started


def _counts(*symbols: str) -> list[int]:
    out = [0] * 8
    for s in symbols:
        out[SYMBOL[s]] += 1
    return out


@pytest.mark.parametrize(
    ("condition", "symbols", "times"),
    [
        ("rock", ["rock", "rock", "air"], 2),  # a single symbol, twice
        ("rock", ["air"], 0),
        ("fire fire", ["fire", "fire", "fire"], 1),  # a pair: each die once per card
        ("fire fire", ["fire"] * 4, 2),
        ("air rock", ["air", "air", "rock", "rock", "rock"], 2),
        ("same 2", ["footprint", "footprint"], 1),  # special faces count for identical pairs
        ("same 2", ["burst", "burst", "air", "air", "air"], 2),
        ("same 3", ["air"] * 3 + ["rock"] * 3, 2),
        ("same 4", ["air"] * 3 + ["rock"], 0),
        ("!nature", ["air", "air"], 1),  # crossed: once only
        ("!nature", ["nature"], 0),
        ("!nature !water", ["air", "water"], 0),
        ("!air !fire", ["rock"], 1),
        ("water !rock", ["water", "water"], 1),  # water and no rock, once
        ("water !rock", ["water", "rock"], 0),
        ("water !rock", ["air"], 0),
    ],
)
def test_conditions(condition: str, symbols: list[str], times: int) -> None:
    assert parse_condition(condition).times(_counts(*symbols)) == times


def test_repeated_triggers_but_skulls_once() -> None:
    state = started(6, 2, adventurers=("moloch", "eoles"))
    give(state, 0, 29)  # Tamnuca: rock -> +1 footprint
    give(state, 0, 46)  # Kapao: water water -> skull, +2 footprints
    player = state.players[0]
    small = [own_die(state, 0, c) for c in ("green", "blue", "azure", "red")]
    a, b = player.adventurer_dice
    faces = {a: "rock", b: "rock", small[0]: "rock", small[1]: "water", small[2]: "water"}
    faces[small[3]] = "water"
    faces.update({small[1]: "water"})
    at_noon(state, {0: faces})
    fp = player.footprints
    play(state, 0, "resolve 29")
    assert player.footprints == fp + 3, "triggered three times"
    play(state, 0, "resolve adventurer")  # Moloc'h: rock -> +1 footprint, thrice
    assert player.footprints == fp + 6
    play(state, 0, "resolve 46")
    assert player.footprints == fp + 8, "a skull applies once, whatever the dice"
    assert 46 in state.cemetery


def test_special_faces_act_at_once() -> None:
    state = started(6, 2, adventurers=("orium", "noctiluca"))
    yellow = state.players[0].adventurer_dice
    purple = state.players[1].adventurer_dice
    faces = {yellow[0]: "burst", yellow[1]: "burst", purple[0]: "footprint", purple[1]: "air"}
    at_noon(state, {0: faces})
    assert state.players[0].score == 16
    assert state.players[1].footprints == 2
    assert "resolve adventurer" in legal(state, 0), "two identical bursts trigger Orium"


def test_kaar_owner_is_immune_to_the_curse() -> None:
    state = started(6, 2)
    give(state, 0, 20)
    state.pool.remove(BLACK_DIE)
    state.players[0].small_dice.append(BLACK_DIE)
    a, b = state.players[0].adventurer_dice
    at_noon(state, {0: {BLACK_DIE: "curse", a: "air", b: "air"}})
    assert state.players[0].score == 10
    state = started(6, 2)
    give(state, 0, 20)
    state.pool.remove(BLACK_DIE)
    state.players[0].small_dice.append(BLACK_DIE)
    a, b = state.players[0].adventurer_dice
    at_noon(state, {0: {BLACK_DIE: "air", a: "air", b: "air"}})
    assert state.players[0].cancelled == []


def test_the_order_matters_when_a_sketal_leaves() -> None:
    """Oshra (no nature) triggers only after the Sketal's nature die has gone."""
    state = started(6, 2, adventurers=("pocana", "eoles"))
    give(state, 0, 15)  # Sketal: rock rock -> skull, +2; its green die
    give(state, 0, 9)  # Oshra: no nature -> +3
    player = state.players[0]
    green = player.sketal_dice[0][1]
    a, b, c = player.adventurer_dice
    at_noon(state, {0: {a: "rock", b: "rock", c: "fire", green: "nature"}})
    assert legal(state, 0) == ["resolve 15"]
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("resolve 9"), IllegalMove)
    assert exc.rule == "Noon – Resolve the Cards"
    play(state, 0, "resolve 15")
    assert legal(state, 0) == ["resolve 9"]
    play(state, 0, "resolve 9")
    assert player.score == 15


def test_a_resolved_card_is_not_resolved_twice() -> None:
    state = started(6, 2, adventurers=("moloch", "eoles"))
    give(state, 0, 4)  # Tamnuca A: rock -> +1
    give(state, 0, 29)  # Tamnuca B: rock -> +1 footprint
    a, b = state.players[0].adventurer_dice
    at_noon(state, {0: {a: "rock", b: "fire"}})
    play(state, 0, "resolve 4")
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("resolve 4"), IllegalMove)
    assert "already" in exc.message


def _xargok_state() -> tuple:
    state = started(6, 3, adventurers=("pocana", "eoles", "moloch"))
    give(state, 0, 10)  # Xar'gok
    give(state, 1, 25)  # Zzibelu, then
    give(state, 1, 5)  # Ladawa, the last recruit of seat 1
    a, b, c = state.players[0].adventurer_dice
    at_noon(state, {0: {a: "fire", b: "fire", c: "air"}})
    return state


def test_xargok_casts_face_down_spells_on_the_others() -> None:
    state = _xargok_state()
    events = play(state, 0, "resolve 10")
    assert 10 in state.cemetery
    assert [len(p.hidden_spells) for p in state.players] == [0, 1, 1]
    secret = state.players[1].hidden_spells[0]
    private = [e for e in events if e.to is not None]
    assert {tuple(e.to) for e in private} == {(1,), (2,)}
    assert all(e.data["spell"] in (secret, state.players[2].hidden_spells[0]) for e in private)
    assert engine.view(state, 1).players[1].own_face_down_spells == (secret,)
    for seat in (0, 2, None):
        seen = engine.view(state, seat).players[1]
        assert seen.own_face_down_spells == () and seen.face_down_spells == 1
    public = [e for e in events if e.to is None]
    assert all(str(secret) not in str(e.data.get("spell", "")) for e in public)


def test_a_spell_is_revealed_next_round_and_rides_on_the_last_recruit() -> None:
    state = _xargok_state()
    play(state, 0, "resolve 10")
    spell = state.players[1].hidden_spells[0]
    while engine.view(state, None).step != "morning":
        seat = engine.to_act(state)[0]
        play(state, seat, "end" if "end" in legal(state, seat) else legal(state, seat)[0])
    assert state.players[1].spells == [spell] and state.players[1].hidden_spells == []
    assert engine.view(state, 0).players[1].spells == (spell,)


def test_a_triggered_spell_sends_the_companion_under_it_away() -> None:
    state = started(6, 2, adventurers=("pocana", "eoles"))
    give(state, 0, 25)
    give(state, 0, 5)  # Ladawa: fire fire -> +4, the last recruit
    state.spell_pile.remove(4)
    state.players[0].spells = [4]  # fire fire -> -6 bursts
    a, b, c = state.players[0].adventurer_dice
    state.players[0].score = 20
    at_noon(state, {0: {a: "fire", b: "fire", c: "air"}})
    assert legal(state, 0) == ["resolve 5", "resolve spell 4"]
    play(state, 0, "resolve 5")  # benefit from Ladawa first
    assert state.players[0].score == 24
    play(state, 0, "resolve spell 4")
    assert state.players[0].score == 18
    assert 5 in state.cemetery and 4 in state.spell_box
    assert state.players[0].companions == [25]


def test_cromaug_brings_back_a_companion_who_can_act_at_once() -> None:
    state = started(6, 2, adventurers=("pocana", "eoles"))
    give(state, 0, 41)  # Cromaug: air -> skull, resurrect
    state.deck.remove(35) if 35 in state.deck else None
    for container in (state.box, state.track):
        if 35 in container:
            container[container.index(35)] = 0 if container is state.track else 35
            if container is state.box:
                container.remove(35)
    state.cemetery.append(35)  # Dvol: air -> +1
    state.cemetery.sort()
    a, b, c = state.players[0].adventurer_dice
    at_noon(state, {0: {a: "air", b: "fire", c: "fire"}})
    play(state, 0, "resolve 41")
    assert 41 in state.cemetery
    moves = legal(state, 0)
    assert moves[0] == "raise none" and "raise 35" in moves and "raise 41" not in moves
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("raise 41"), IllegalMove)
    assert exc.rule == "Cromaug"
    play(state, 0, "raise 35")
    assert state.players[0].companions[-1] == 35
    assert legal(state, 0) == ["resolve 35"]
    play(state, 0, "resolve 35")
    assert state.players[0].score == 11


def test_cromaug_raising_a_sketal_takes_its_die_for_the_next_round() -> None:
    state = started(6, 2, adventurers=("pocana", "eoles"))
    give(state, 0, 41)
    for container in (state.deck, state.box):
        if 16 in container:
            container.remove(16)
    if 16 in state.track:
        state.track[state.track.index(16)] = 0
    state.cemetery = sorted([*state.cemetery, 16])
    a, b, c = state.players[0].adventurer_dice
    at_noon(state, {0: {a: "air", b: "rock", c: "rock"}})
    play(state, 0, "resolve 41")
    play(state, 0, "raise 16")
    ((companion, die),) = state.players[0].sketal_dice
    assert companion == 16 and die not in state.players[0].rolled


def test_companion_names() -> None:
    assert COMPANIONS[41].name == "Cromaug" and COMPANIONS[10].name == "Xar'gok"


# ---- simultaneous Noon: nothing depends on whose move reaches the server first ---------


def _cromaug_and_a_rivals_sketal(options: engine.Options):
    """Seat 0 (Pocana) holds Cromaug and rolls an air; seat 1 (Eoles) holds Sketal 15
    (rock rock: +2 and to the cemetery, its green die back to the reserve pool) and rolls
    two rocks. Sketal 44 (any colour) waits in the cemetery."""
    state = started(6, 2, adventurers=("pocana", "eoles"), options=options)
    give(state, 0, 41)
    give(state, 1, 15)
    for companion in (44,):
        give(state, 0, companion)
        state.players[0].companions.remove(companion)
        state.cemetery = sorted([*state.cemetery, companion])
    (green,) = [d for _, d in state.players[1].sketal_dice]
    a, b, c = state.players[0].adventurer_dice
    e1, e2 = state.players[1].adventurer_dice
    at_noon(
        state, {0: {a: "air", b: "fire", c: "water"}, 1: {e1: "rock", e2: "rock", green: "fire"}}
    )
    assert engine.to_act(state) == (0, 1)
    return state, green


def _first_companion(seat: int, k: int, moves):
    """Resolve in the listed order; Cromaug takes the first companion it is offered."""
    raises = [m for m in moves if str(m).startswith("raise") and str(m) != "raise none"]
    return raises[0] if raises else moves[0]


def test_noon_simultaneously_cromaug_takes_from_the_cemetery_as_it_was_when_noon_began() -> None:
    """Noon: "Simultaneously, the players check one card after another"; Cromaug: "can take
    another companion of their choice from the cemetery". A companion a rival sends to the
    cemetery this same Noon fell at the same moment: it is not Cromaug's to take, whoever's
    move reaches the server first, and neither is the die a rival's Sketal puts back."""
    state, green = _cromaug_and_a_rivals_sketal(engine.Options())
    assert check_arrival_orders(engine, state, _first_companion) == 2 * 2
    play(state, 1, "resolve 15")
    assert 15 in state.cemetery and green in state.pool
    play(state, 0, "resolve 41")
    assert legal(state, 0) == ["raise none", "raise 44"], "not the rival's Sketal"
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("raise 15"), IllegalMove)
    assert exc.rule == "Cromaug" and "from another seat during this Noon" in exc.message
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("raise 41"), IllegalMove)
    assert "cannot take itself back" in exc.message
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("raise 3"), IllegalMove)
    assert "not in the cemetery" in exc.message
    play(state, 0, "raise 44")
    colours = legal(state, 0)
    assert colours and "die green" not in colours, "not the die the rival put back"
    exc = assert_refused_unchanged(engine, state, 0, engine.parse_move("die green"), IllegalMove)
    assert exc.rule == "The Sketals" and "put back by another seat" in exc.message


def test_noon_cromaug_may_take_back_a_companion_its_own_seat_sent_to_the_cemetery() -> None:
    """The seat's own resolutions come one after another, in the order it chooses."""
    state = started(6, 2, adventurers=("pocana", "eoles"))
    give(state, 0, 11)  # Briki: water water -> +1 footprint, to the cemetery
    give(state, 0, 41)
    give(state, 1, 15)
    a, b, c = state.players[0].adventurer_dice
    e1, e2 = state.players[1].adventurer_dice
    at_noon(state, {0: {a: "air", b: "water", c: "water"}, 1: {e1: "rock", e2: "rock"}})
    play(state, 1, "resolve 15")
    play(state, 0, "resolve 11")
    play(state, 0, "resolve 41")
    assert legal(state, 0) == ["raise none", "raise 11"]
    assert state.cemetery == [11, 15, 41]


def test_noon_the_old_rule_for_stored_games_lets_the_first_arrival_decide() -> None:
    stored = engine.Options.from_dict({"board": "province", "evening": "shown"})
    assert stored.simultaneous == "arrival" and engine.Options().simultaneous == "fixed"
    state, _ = _cromaug_and_a_rivals_sketal(stored)
    with pytest.raises(AssertionError, match="arrival order"):
        check_arrival_orders(engine, state, _first_companion)
    play(state, 1, "resolve 15")
    play(state, 0, "resolve 41")
    assert "raise 15" in legal(state, 0), "as stored games were played"


def test_noon_the_last_reroll_tokens_go_from_the_first_player_clockwise() -> None:
    """The reserve pool holds 44 reroll tokens; when it cannot give every seat what its
    cards earn at the same Noon, the tokens go from the first player clockwise."""
    for options, fixed in (
        (engine.Options(), True),
        (engine.Options(simultaneous="arrival"), False),
    ):
        state = started(6, 2, adventurers=("pocana", "eoles"), options=options)
        give(state, 0, 23)  # Okans: nature -> +1 burst, +1 reroll token
        give(state, 1, 1)  # Likyar: nature fire -> +1 burst, +1 reroll token
        held = [p.rerolls for p in state.players]
        state.reroll_pool = 1
        a, b, c = state.players[0].adventurer_dice
        e1, e2 = state.players[1].adventurer_dice
        at_noon(state, {0: {a: "nature", b: "fire", c: "water"}, 1: {e1: "nature", e2: "fire"}})
        played = arrival_orders(engine, state, lambda seat, k, moves: moves[0])
        gained = {
            tuple(p.rerolls - h for p, h in zip(arrival.state.players, held, strict=True))
            for arrival in played
        }
        if fixed:
            first = state.first
            assert gained == {tuple(int(s == first) for s in range(2))}
            assert all(arrival.state.reroll_pool == 0 for arrival in played)
        else:
            assert gained == {(1, 0), (0, 1)}, "the old rule: whoever arrives first"
