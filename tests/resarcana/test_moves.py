"""Moves: the text forms, their exact inverse, ordering, and malformed moves."""

from __future__ import annotations

import pickle

import pytest

import services.resarcana.engine as E
from services.kit.engine import MalformedMove
from services.kit.testing import assert_refused_unchanged
from services.resarcana.engine.moves import (
    DECK,
    ChooseMage,
    ChooseOption,
    Claim,
    Discard,
    Done,
    Gain,
    GainMonument,
    Keep,
    Pass,
    PayEssence,
    Pile,
    Place,
    Retrieve,
    Return,
    Straighten,
    Take,
    TakeItem,
    Target,
    Turn,
    UsePower,
    Waive,
)
from tests.resarcana.helpers import ANNE, action_state, cid

EXAMPLES = {
    "keep gnosis": Keep(cid("gnosis")),
    "mage smith": ChooseMage(cid("smith")),
    "item calm-elan": TakeItem(cid("calm-elan")),
    "gain elan": Gain(0),
    "option 2": ChooseOption(2),
    "take white-swan": Take(cid("white-swan")),
    "done": Done(),
    "place crucible": Place(cid("crucible")),
    "claim mystic-monastery": Claim(cid("mystic-monastery")),
    "claim deck": Claim(DECK),
    "claim circle-of-the-druids": Claim(cid("circle-of-the-druids")),
    "discard gnosis": Discard(cid("gnosis")),
    "power smith 2": UsePower(cid("smith"), 2),
    "pass": Pass(),
    "pay calm": PayEssence(2),
    "waive gold": Waive(4),
    "waive any": Waive(5),
    "turn white-swan": Turn(cid("white-swan")),
    "straighten smith": Straighten(cid("smith")),
    "target dwarven-forge": Target(cid("dwarven-forge")),
    "retrieve gnosis": Retrieve(cid("gnosis")),
    "return dark-temple": Return(cid("dark-temple")),
    "pile monuments": Pile(1),
    "pile artifacts": Pile(0),
    "monument deck": GainMonument(DECK),
}


@pytest.mark.parametrize("text", sorted(EXAMPLES))
def test_text_form_and_parse_are_inverse(text: str) -> None:
    move = EXAMPLES[text]
    assert str(move) == text
    assert E.parse_move(text) == move
    assert hash(E.parse_move(text)) == hash(move)
    assert pickle.loads(pickle.dumps(move)) == move


@pytest.mark.parametrize(
    "text",
    [
        "",
        "jump",
        "pass now",
        "done 1",
        "gain mana",
        "pay",
        "power smith",
        "power smith 3",
        "power smith x",
        "power smith 01",
        "option 0",
        "option x",
        "option 01",
        "place smith",
        "place deck",
        "claim crucible",
        "mage crucible",
        "keep deck",
        "waive",
        "take research",
        "pile hand",
        "place  crucible",
        "PASS",
        "item smith",
        "target research",
    ],
)
def test_malformed_text_is_refused(text: str) -> None:
    with pytest.raises(MalformedMove):
        E.parse_move(text)


def test_moves_of_different_kinds_sort_together() -> None:
    moves = list(EXAMPLES.values())
    ordered = sorted(moves)
    assert ordered == sorted(ordered)
    assert [m.ORDER for m in ordered] == sorted(m.ORDER for m in moves)
    assert PayEssence(0) < PayEssence(1) < Waive(0)


@pytest.mark.parametrize(
    "bad",
    [
        None,
        "pass",
        (12, 0, 0),
        E.Move(),
        Gain(7),
        UsePower(cid("smith"), 0),
        Place(cid("smith")),
        Place(500),
        Claim(-2),
        PayEssence(1.5),  # type: ignore[arg-type]  # a float where an essence index goes
    ],
)
def test_apply_refuses_malformed_moves_unchanged(bad: object) -> None:
    state = action_state(hands=(["gnosis"], []))
    error = assert_refused_unchanged(E, state, ANNE, bad, MalformedMove)
    assert error.reason == "MALFORMED_MOVE"
