"""Move text forms, malformed moves, and what views show."""

from __future__ import annotations

import doctest

import pytest

from services.glow import engine
from services.glow.engine import moves as moves_module
from services.glow.engine.moves import FOOT, FREE, USE_DIE, ChooseAdventurer, Go
from services.kit.engine import MalformedMove
from services.kit.moves import TypedMove
from services.kit.testing import random_game

TEXTS = [
    "adventurer moloch",
    "take 0",
    "black stay",
    "black 4",
    "die red",
    "bury 3",
    "reroll token",
    "reroll track",
    "reroll lumipili 45",
    "fix",
    "pay lumipili 18",
    "pick 29",
    "roll",
    "face footprint",
    "ready",
    "resolve adventurer",
    "resolve 46",
    "resolve spell 7",
    "raise none",
    "raise 12",
    "lose 3",
    "cancel hidden",
    "cancel 5",
    "go 12 die",
    "go 12 foot",
    "go 12",
    "camp",
    "sail 0 10",
    "end",
]


@pytest.mark.parametrize("text", TEXTS)
def test_text_forms_round_trip(text: str) -> None:
    assert str(engine.parse_move(text)) == text


@pytest.mark.parametrize(
    "text",
    [
        "",
        "take",
        "take 5",
        "take -1",
        "take 01",
        "take  1",
        "jump 1",
        "adventurer bob",
        "reroll lumipili",
        "pick 30",
        "face wood",
        "resolve spell 8",
        "go 3 swim",
        "sail 1",
        "ready now",
        "die black2",
        7,
    ],
)
def test_malformed_text(text) -> None:
    with pytest.raises(MalformedMove):
        engine.parse_move(text)


def test_moves_of_different_kinds_sort() -> None:
    listed = sorted(engine.parse_move(t) for t in TEXTS)
    assert listed[0] == engine.parse_move("adventurer moloch")
    assert listed[-1] == engine.parse_move("end")
    assert Go(3, FREE) < Go(3, USE_DIE) < Go(3, FOOT) < Go(4, FREE)
    assert len({hash(m) for m in listed}) == len(listed)


class _Jump(TypedMove):
    """A move of no kind Glow knows."""


def test_apply_refuses_malformed_moves() -> None:
    state = engine.new_game(1, 2)
    for bad in (None, "adventurer eoles", _Jump(), ChooseAdventurer(42)):
        with pytest.raises(MalformedMove):
            engine.apply(state, 0, bad)


def test_views_are_deterministic_and_hide_the_deck() -> None:
    played = random_game(engine, 11, 3, engine.Options())
    text = repr(engine.view(played.state, 1))
    assert text == repr(engine.view(played.state, 1))
    assert "deck=0" in text and "Rng" not in text


def test_doctests() -> None:
    attempted = 0
    for module in (engine, moves_module, engine.rules.setup):
        result = doctest.testmod(module)
        assert result.failed == 0
        attempted += result.attempted
    assert attempted >= 4
