"""Moves: the text forms, their exact inverse, ordering, and malformed moves."""

from __future__ import annotations

import pickle

import pytest

import services.resarcana.engine as E
from services.kit.engine import MalformedMove
from services.kit.testing import assert_refused_unchanged
from services.resarcana.engine.moves import DECK, Kind, Move
from tests.resarcana.helpers import ANNE, action_state, cid

EXAMPLES = {
    "keep gnosis": Move(Kind.KEEP, cid("gnosis")),
    "mage smith": Move(Kind.MAGE, cid("smith")),
    "item calm-elan": Move(Kind.ITEM, cid("calm-elan")),
    "gain elan": Move(Kind.GAIN, 0),
    "option 2": Move(Kind.OPTION, 2),
    "take white-swan": Move(Kind.TAKE, cid("white-swan")),
    "done": Move(Kind.DONE),
    "place crucible": Move(Kind.PLACE, cid("crucible")),
    "claim mystic-monastery": Move(Kind.CLAIM, cid("mystic-monastery")),
    "claim deck": Move(Kind.CLAIM, DECK),
    "claim circle-of-the-druids": Move(Kind.CLAIM, cid("circle-of-the-druids")),
    "discard gnosis": Move(Kind.DISCARD, cid("gnosis")),
    "power smith 2": Move(Kind.POWER, cid("smith"), 2),
    "pass": Move(Kind.PASS),
    "pay calm": Move(Kind.PAY, 2),
    "waive gold": Move(Kind.WAIVE, 4),
    "waive any": Move(Kind.WAIVE, 5),
    "turn white-swan": Move(Kind.TURN, cid("white-swan")),
    "straighten smith": Move(Kind.STRAIGHTEN, cid("smith")),
    "target dwarven-forge": Move(Kind.TARGET, cid("dwarven-forge")),
    "retrieve gnosis": Move(Kind.RETRIEVE, cid("gnosis")),
    "return dark-temple": Move(Kind.RETURN, cid("dark-temple")),
    "pile monuments": Move(Kind.PILE, 1),
    "pile artifacts": Move(Kind.PILE, 0),
    "monument deck": Move(Kind.MONUMENT, DECK),
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
    assert [m.kind for m in ordered] == sorted(m.kind for m in moves)
    assert Move(Kind.PAY, 0) < Move(Kind.PAY, 1) < Move(Kind.WAIVE, 0)


@pytest.mark.parametrize(
    "bad",
    [
        None,
        "pass",
        (12, 0, 0),
        Move(99),
        Move(Kind.PASS, 1),
        Move(Kind.GAIN, 7),
        Move(Kind.POWER, cid("smith"), 0),
        Move(Kind.PLACE, cid("smith")),
        Move(Kind.PLACE, 500),
        Move(Kind.CLAIM, -2),
        Move(Kind.PAY, 1.5),
    ],  # type: ignore[arg-type]
)
def test_apply_refuses_malformed_moves_unchanged(bad: object) -> None:
    state = action_state(hands=(["gnosis"], []))
    error = assert_refused_unchanged(E, state, ANNE, bad, MalformedMove)
    assert error.reason == "MALFORMED_MOVE"
