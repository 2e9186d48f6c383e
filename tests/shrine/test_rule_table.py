"""The rule table: Shrine's decisions as the kit's kernel runs them.

``apply`` and ``legal_moves`` are the kernel's, over rules/steps.py; every decision is
filed under a rule name of rulebook.py; every kind of move is a decision of some step;
and the listed moves come in the moves' own sort order (the golden playthroughs list
them in it).
"""

from __future__ import annotations

import random

import pytest

from services.kit import kernel
from services.kit.engine import MalformedMove
from services.shrine import engine
from services.shrine.engine import MOVE_TYPES, Move, Phase, rulebook
from services.shrine.engine.rules.steps import STEP_TEXT, TABLE

RULE_NAMES = {value for name, value in vars(rulebook).items() if name.isupper()}


def test_apply_and_legal_moves_are_the_kernels() -> None:
    assert isinstance(engine.ENGINE, kernel.Kernel)
    assert engine.ENGINE.rules is engine.RULES
    assert engine.apply == engine.ENGINE.apply
    assert engine.legal_moves == engine.ENGINE.legal_moves
    assert engine.public_move == engine.RULES.public_move


def test_every_decision_is_filed_under_a_rule_of_the_rulebook() -> None:
    for phase, row in TABLE.items():
        for kind, decision in row.items():
            assert kind in MOVE_TYPES, (phase, kind)
            assert decision.rule in RULE_NAMES, (phase, kind, decision.rule)


def test_every_kind_of_move_is_a_decision_of_some_step_and_every_step_is_named() -> None:
    assert {kind for row in TABLE.values() for kind in row} == set(MOVE_TYPES)
    assert set(TABLE) == set(Phase) == set(STEP_TEXT)
    assert [kind.ORDER for kind in MOVE_TYPES] == list(range(len(MOVE_TYPES)))
    assert len({kind.WORD for kind in MOVE_TYPES}) == len(MOVE_TYPES)


def test_a_moves_kind_is_its_type() -> None:
    for text in ("place c2", "block b2 target", "reward treasure", "skip"):
        move = engine.parse_move(text)
        assert engine.RULES.kind(move) is type(move)


@pytest.mark.parametrize("shapes", [False, True])
def test_legal_moves_are_listed_in_the_moves_sort_order(shapes: bool) -> None:
    options = engine.Options(radiant_shapes=shapes)
    unsorted_seen = 0
    for seed in range(20):
        state = engine.new_game(seed, 2, options)
        chooser = random.Random(seed)
        while engine.outcome(state) is None:
            seat = engine.to_act(state)[0]
            listed = engine.legal_moves(state, seat)
            assert listed == sorted(listed), [str(m) for m in listed]
            assert len(set(listed)) == len(listed)
            # Control: the same check on the list turned round would fail.
            unsorted_seen += list(reversed(listed)) != sorted(reversed(listed))
            engine.apply(state, seat, chooser.choice(listed))
    assert unsorted_seen > 0


def test_moves_of_the_base_class_or_of_another_game_are_malformed() -> None:
    state = engine.new_game(3, 2, engine.Options())
    seat = engine.to_act(state)[0]
    for move in (Move(), ("place", 3), 3):
        with pytest.raises(MalformedMove):
            engine.apply(state, seat, move)
