"""Move values, their text forms and the errors for moves that are not well formed."""

from __future__ import annotations

import pytest

from services.kit.engine import MalformedMove
from services.kit.moves import TypedMove
from services.shen import engine
from services.shen.engine import (
    MOVE_TYPES,
    ClaimAnchorPoint,
    MoveStep,
    PlaceShenCounter,
    PlayCard,
)

from .helpers import card, loc, started

SAMPLES = [
    "stone C4",
    "draw",
    "shen A1",
    "play ember_scout",
    "target c4",
    "target C4",
    "foe 2",
    "claim a1",
    "siege a1 B2",
    "step c4 d5",
    "step C4 C5",
    "hold c4",
    "stop",
    "ability 0",
    "ranged f6",
    "remove avatar",
    "lose cards",
    "retreat c4",
    "lose hand tide_guard",
    "lose deck",
    "lose discard grove_uproot",
    "pass",
    "end",
]


@pytest.mark.parametrize("text", SAMPLES)
def test_text_form_round_trips(text):
    move = engine.parse_move(text)
    assert str(move) == text
    assert engine.parse_move(str(move)) == move
    assert hash(move) == hash(engine.parse_move(text))


def test_every_kind_has_a_sample():
    assert {type(engine.parse_move(t)) for t in SAMPLES} == set(MOVE_TYPES)


def test_fields_hold_locations_and_cards():
    assert engine.parse_move("step c4 d5") == MoveStep(loc("c4"), loc("d5"))
    assert engine.parse_move("play ember_scout") == PlayCard(card("ember_scout"))
    assert loc("a1") == 0 and loc("A1") == 256 and loc("b2") == 17


def test_moves_of_different_kinds_sort_by_kind_then_fields():
    moves = [engine.parse_move(t) for t in ("end", "pass", "step d5 c4", "step c4 d5", "draw")]
    assert [str(m) for m in sorted(moves)] == ["draw", "step c4 d5", "step d5 c4", "pass", "end"]


@pytest.mark.parametrize(
    "text",
    [
        "",
        "fly c4",
        "draw now",
        "stone c4",  # a space where a vertex is wanted
        "claim C4",  # a vertex where a space is wanted
        "play no_such_card",
        "step c4",
        "step c4 d5 e6",
        "target z9",
        "target c0",
        "target c04",
        "foe -1",
        "foe x",
        "lose",
        "lose hand",
        "Draw",
        " draw",
    ],
)
def test_malformed_text_is_refused(text):
    with pytest.raises(MalformedMove):
        engine.parse_move(text)


def test_parse_needs_a_string():
    with pytest.raises(MalformedMove):
        engine.parse_move(None)  # type: ignore[arg-type]


class _Foreign(TypedMove):
    """A typed move of some other game."""

    def sort_key(self):
        return (0,)


def test_apply_refuses_moves_that_are_not_well_formed():
    from services.kit.testing import assert_refused_unchanged

    state = started()
    seat = engine.to_act(state)[0]
    for bad in [
        ("draw",),  # a plain tuple, not a Move
        PlaceShenCounter(256 + 15 * 16 + 15),  # off an 8x8 field
        PlaceShenCounter(loc("c4")),  # a space for a vertex
        ClaimAnchorPoint(15 * 16 + 14),  # o15, off an 8x8 field, and not a decision now
        PlaceShenCounter("D4"),  # a field that is not a number (a kind takes its fields only)
        PlayCard(10_000),  # no such card
        _Foreign(),  # no such kind: a move of another game
    ]:
        assert_refused_unchanged(engine, state, seat, bad, MalformedMove)
