"""The rule table the kit's kernel plays The Channeling from (engine/turn.py).

Each step that asks a decision has one entry: its moves, a cheap check, why a refused
move is refused (under the rulebook's name for the step), its effect and what follows.
These tests hold the table to what the engine promised before it moved onto the kernel:
the check accepts exactly the listed moves, refusals name the same rules with the same
texts, moves sort and print as they always did.
"""

from __future__ import annotations

import ast
import copy
import dataclasses
import doctest
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from services.channeling import engine
from services.channeling.engine import board, rulebook, turn
from services.channeling.engine.content import GLYPHS
from services.channeling.engine.moves import ChoosePath, FillGap, MoveDruid, PlayGlyph
from services.channeling.engine.state import DRUID, FILL, GLYPH, PATH
from services.kit.engine import IllegalMove
from services.kit.kernel import Decision, Kernel
from services.kit.testing import assert_refused_unchanged, choose

ENGINE_DIR = Path(engine.__file__).parent
RULE_NAMES = {v for k, v in vars(rulebook).items() if k.isupper() and isinstance(v, str)}
SEEDS = range(40)


def states(seeds: range = SEEDS) -> Iterator[engine.State]:
    """Every state of seeded random games (both Overchanneling readings) before each
    decision; the caller must not change it."""
    for seed in seeds:
        overchanneling = ("splendor", "vigor")[seed % 2]
        state = engine.new_game(seed, 2, engine.Options(overchanneling=overchanneling))
        rng = random.Random(seed)
        while engine.outcome(state) is None:
            yield state
            seat, move = choose(engine, state, rng)
            engine.apply(state, seat, move)


def candidates(state: engine.State) -> list[Any]:
    """Moves of the open step's kind well beyond the legal ones: every glyph, every
    Druid move on the grid, every shortest path from the moved Druid or to the stationary
    one (and between other cards), every cell to fill."""
    if state.step == GLYPH:
        return [PlayGlyph(g) for g in range(len(GLYPHS))]
    if state.step == DRUID:
        return [MoveDruid(o, t) for o in board.CELLS for t in board.CELLS]
    if state.step == PATH:
        assert state.moved is not None and state.stationary is not None
        ends = {(state.moved, c) for c in board.CELLS} | {
            (c, state.stationary) for c in board.CELLS
        }
        return [ChoosePath(p) for a, b in sorted(ends) for p in board.leyline_paths(a, b)]
    return [FillGap(c) for c in board.CELLS]


def check_agrees(decision: Decision, state: engine.State, seat: int) -> int:
    """The decision's cheap check allows exactly the moves it lists, and refuses every
    other under its own rule; the number of refusals checked."""
    listed = list(decision.moves(state, seat))
    refused = 0
    for move in candidates(state):
        allowed = decision.legal(state, seat, move)
        assert allowed == (move in listed), f"{move}: check says {allowed} at {state.step}"
        if not allowed:
            exc = decision.refusal(state, seat, move)
            assert exc.rule == decision.rule and exc.message
            refused += 1
    return refused


def test_the_engines_apply_and_legal_moves_are_the_kits_kernel():
    assert isinstance(engine.ENGINE, Kernel) and engine.ENGINE.rules is engine.RULES
    assert engine.apply.__self__ is engine.ENGINE and engine.apply.__func__ is Kernel.apply
    assert engine.legal_moves.__func__ is Kernel.legal_moves
    assert engine.public_move(PlayGlyph(0)) is True  # nothing of a move is secret here


def turn_of_its_own(source: str) -> set[str]:
    """What in a module's source would be a turn beside the kit's: a function named
    apply, legal_moves or check_seat, a call of the seat check, a sys.modules look-up."""
    found = {
        node.name
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.name in {"apply", "legal_moves", "check_seat"}
    }
    found |= {word for word in ("sys.modules", "check_seat") if word in source}
    return found


def test_no_module_of_the_engine_has_a_turn_of_its_own():
    modules = sorted(ENGINE_DIR.rglob("*.py"))
    assert len(modules) > 10
    for path in modules:
        assert not turn_of_its_own(path.read_text(encoding="utf-8")), path.name
    # The control: the old engine's seat-check workaround is found.
    old = "def apply(state, seat, move):\n    check_seat(sys.modules[__name__], state, seat)\n"
    assert turn_of_its_own(old) == {"apply", "check_seat", "sys.modules"}


def test_every_step_asks_one_decision_named_by_the_rulebook():
    assert set(turn.TABLE) == {GLYPH, DRUID, PATH, FILL}
    kinds = {kind for row in turn.TABLE.values() for kind in row}
    assert kinds == set(engine.RULES.move_types)
    rules = [decision.rule for row in turn.TABLE.values() for decision in row.values()]
    assert sorted(rules) == sorted(RULE_NAMES)  # each name used, and by one step only
    # The names are the texts refusals carried before: clients and logs read them.
    assert rules == [
        "1 - Play a Glyph Card",
        "2 - Move a Druid Token",
        "3 - Choose a Leyline Path",
        "6 - Acquire Magic Circle Cards for Splendor",
    ]


def test_each_decisions_check_allows_exactly_the_moves_it_lists():
    steps: dict[str, int] = dict.fromkeys(turn.TABLE, 0)
    refused = 0
    for state in states():
        (seat,) = engine.to_act(state)
        (decision,) = turn.TABLE[state.step].values()
        refused += check_agrees(decision, state, seat)
        steps[state.step] += 1
    assert all(steps.values()), f"a step never came up: {steps}"
    assert refused > 1000


def test_a_check_more_lenient_than_its_listing_is_caught():
    # The control for the test above: each decision with a check that allows anything.
    seen: set[str] = set()
    for state in states(range(10)):
        (seat,) = engine.to_act(state)
        (decision,) = turn.TABLE[state.step].values()
        if state.step in seen or set(candidates(state)) <= set(decision.moves(state, seat)):
            continue  # a step seen, or one where every candidate is legal
        seen.add(state.step)
        lenient = dataclasses.replace(decision, allows=lambda state, seat, move: True)
        with pytest.raises(AssertionError, match="check says True"):
            check_agrees(lenient, state, seat)
    assert seen == set(turn.TABLE)


def first_state_at(step: str) -> engine.State:
    return copy.deepcopy(next(s for s in states() if s.step == step))


ONE_OF_EACH: dict[str, Callable[[engine.State], Any]] = {
    GLYPH: lambda state: PlayGlyph(state.hands[state.current][0]),
    DRUID: lambda state: MoveDruid(state.druids[state.current][0], 0),
    PATH: lambda state: ChoosePath((0,)),
    FILL: lambda state: FillGap(0),
}
KIND_OF_STEP = {GLYPH: "PlayGlyph", DRUID: "MoveDruid", PATH: "ChoosePath", FILL: "FillGap"}


@pytest.mark.parametrize("step", sorted(turn.TABLE))
def test_a_move_of_another_step_breaks_the_open_steps_rule(step):
    state = first_state_at(step)
    (seat,) = engine.to_act(state)
    (rule,) = (d.rule for d in turn.TABLE[step].values())
    for other, make in ONE_OF_EACH.items():
        if other == step:
            continue
        exc = assert_refused_unchanged(engine, state, seat, make(state), IllegalMove)
        assert exc.rule == rule
        words = step.replace("_", " ")
        assert exc.message == f"this step is {words}, not {KIND_OF_STEP[other]}"


def test_moves_sort_by_step_then_fields_and_print_their_text_forms():
    moves = [
        FillGap(3),
        ChoosePath((4, 5)),
        MoveDruid(5, 1),
        PlayGlyph(7),
        ChoosePath((1, 5, 9)),
        MoveDruid(2, 9),
        FillGap(0),
        PlayGlyph(0),
    ]
    ordered = sorted(moves)
    assert ordered == [
        PlayGlyph(0),
        PlayGlyph(7),
        MoveDruid(2, 9),
        MoveDruid(5, 1),
        ChoosePath((1, 5, 9)),
        ChoosePath((4, 5)),
        FillGap(0),
        FillGap(3),
    ]
    assert [str(m) for m in ordered] == [
        f"glyph {GLYPHS[0]}",
        f"glyph {GLYPHS[7]}",
        "druid c1-b3",
        "druid b2-b1",
        "path b1-b2-b3",
        "path a2-b2",
        "fill a1",
        "fill d1",
    ]
    assert [engine.parse_move(str(m)) for m in ordered] == ordered


def test_listed_moves_are_well_formed_sorted_and_read_back_from_their_text():
    for state in states(range(10)):
        (seat,) = engine.to_act(state)
        listed = engine.legal_moves(state, seat)
        assert listed == sorted(listed)
        for move in listed:
            assert move.problem() is None
            assert engine.parse_move(str(move)) == move


def test_the_engine_packages_example_runs():
    failed, tried = doctest.testmod(engine, optionflags=doctest.ELLIPSIS)
    assert tried > 0 and failed == 0
