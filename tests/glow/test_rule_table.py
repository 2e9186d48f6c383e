"""The typed moves and the rule table the kit's kernel drives."""

from __future__ import annotations

import ast
import dataclasses
import itertools
import pathlib
import random

import pytest

from services.glow import engine
from services.glow.engine import moves, rulebook, turn
from services.kit.engine import IllegalMove, MalformedMove
from services.kit.moves import TypedMove
from services.kit.testing import choose

from .helpers import started

# Values around every field's range: in range, its edges, out of range, not an int.
_VALUES = (-2, -1, 0, 1, 2, 4, 5, 7, 8, 29, 30, 46, 47, 100, 101, 107, 108, 999, 1000)
_ODD = (True, "1", 1.0, None)


def _samples(kind: type[moves.GlowMove]):
    fields = kind.__dataclass_fields__  # type: ignore[attr-defined]
    values = [_VALUES + _ODD] * len(fields)
    for combination in itertools.product(*values):
        yield kind(*combination)


def _round_trips(move: moves.GlowMove) -> bool:
    """The old well-formedness test: int fields whose text form parses back to the move."""
    if not all(isinstance(getattr(move, f), int) for f in type(move).__dataclass_fields__):
        return False
    try:
        text = str(move)
        return moves.parse_move(text) == move
    except (KeyError, IndexError, TypeError, MalformedMove):
        return False


@pytest.mark.parametrize("kind", moves.MOVE_TYPES, ids=lambda k: k.__name__)
def test_a_move_is_well_formed_exactly_when_its_text_form_parses_back(kind) -> None:
    """A field that is a bool is malformed even where it would print as its int (False
    as "resolve adventurer"): a bool is not a number of the game."""
    checked = 0
    for move in _samples(kind):
        values = [getattr(move, f) for f in kind.__dataclass_fields__]
        if any(isinstance(v, bool) for v in values):
            assert move.problem() is not None, repr(move)
        else:
            assert (move.problem() is None) == _round_trips(move), repr(move)
        checked += 1
    assert checked >= 1


def test_a_broken_problem_check_is_caught() -> None:
    """Control: a range check one too wide disagrees with the text form."""

    def too_wide(self) -> str | None:
        return None if 0 <= self.space <= moves.TRACK_SPACES else "out"

    caught = [m for m in _samples(moves.Take) if m.space == moves.TRACK_SPACES]
    assert caught and all(too_wide(m) is None and not _round_trips(m) for m in caught)


def test_kinds_have_distinct_numbers_words_and_hashes() -> None:
    assert [k.KIND for k in moves.MOVE_TYPES] == list(range(len(moves.MOVE_TYPES)))
    assert len({k.WORD for k in moves.MOVE_TYPES}) == len(moves.MOVE_TYPES)
    assert moves.Take(3) != moves.Bury(3) and hash(moves.Take(3)) != hash(moves.Bury(3))
    assert moves.Fix() == moves.Fix() and hash(moves.Fix()) == hash(moves.Fix())


def test_a_foreign_typed_move_is_malformed() -> None:
    class Jump(TypedMove):
        pass

    state = engine.new_game(1, 2)
    with pytest.raises(MalformedMove):
        engine.apply(state, 0, Jump())


def test_legal_moves_are_sorted_in_random_play() -> None:
    """The rows list their kinds in order and each decision its moves in order, so the
    kernel need not sort: every list seen in random play is already sorted."""
    seen = 0
    for seed, board in ((3, "province"), (4, "archipelago")):
        state = engine.new_game(seed, 3, engine.Options(board=board))
        rng = random.Random(seed)
        while engine.outcome(state) is None:
            for seat in engine.to_act(state):
                listed = engine.legal_moves(state, seat)
                assert listed == sorted(listed)
                assert len(set(listed)) == len(listed)
                seen += len(listed)
            seat, move = choose(engine, state, rng)
            engine.apply(state, seat, move)
    assert seen > 500


def _rows():
    yield from turn._ROWS.values()
    yield turn._SKETAL_DIE_AT_NOON
    yield turn._PROVINCE
    yield turn._ARCHIPELAGO


def test_every_decision_names_a_rule_of_the_rulebook_module() -> None:
    names = {v for k, v in vars(rulebook).items() if k.isupper()}
    rules = {d.rule for row in _rows() for d in row.values()}
    assert rules <= names
    assert set(turn._STAGE_RULES.values()) <= names
    kinds = {k for row in _rows() for k in row}
    assert kinds == set(moves.MOVE_TYPES), "every kind is some stage's decision"


def test_a_kind_in_the_row_with_no_move_now_is_refused_as_not_a_decision() -> None:
    """ "camp" is in the Province row but offered only right after entering a village."""
    state = started(3, 2)
    state.players[0].stage = turn.JOURNEY
    state.players[0].in_village = False
    state.players[0].done = False
    state.step = turn.AFTERNOON
    state.acting = turn.acting(state)
    with pytest.raises(IllegalMove) as refused:
        engine.apply(state, 0, moves.Camp())
    assert refused.value.rule == rulebook.PROVINCE_JOURNEY
    assert "'camp' is not a decision now (journey: " in str(refused.value)


def _every_move(kind: type[moves.GlowMove]) -> list[moves.GlowMove]:
    """Every well-formed move of a kind with the board's spots and islands (and more)."""
    fields = len(kind.__dataclass_fields__)  # type: ignore[attr-defined]
    if fields == 0:
        return [kind()]
    if kind is moves.Go:
        values = itertools.product(range(70), range(3))
    elif kind is moves.Sail:
        values = itertools.product(range(15), range(15))
    elif fields == 2:
        values = itertools.product(range(3), range(50))
    else:
        values = ((v,) for v in range(-1, 110))
    return [m for m in (kind(*v) for v in values) if m.problem() is None]


_EVERY = {kind: _every_move(kind) for kind in moves.MOVE_TYPES}


def _disagreements(state, seat: int, row) -> list[str]:
    """Moves whose decision's cheap ``allows`` check and its listing disagree."""
    out = []
    for kind, decision in row.items():
        if decision.allows is None:
            continue
        listed = set(decision.moves(state, seat))
        for move in _EVERY[kind]:
            if decision.allows(state, seat, move) != (move in listed):
                out.append(f"{move}: allows {move not in listed}")
    return out


@pytest.mark.parametrize(
    ("seed", "players", "board"), [(5, 2, "province"), (6, 4, "archipelago"), (7, 3, "province")]
)
def test_each_decisions_check_allows_exactly_the_moves_it_lists(seed, players, board) -> None:
    state = engine.new_game(seed, players, engine.Options(board=board))
    rng = random.Random(seed)
    checked: set[type] = set()
    while engine.outcome(state) is None:
        for seat in engine.to_act(state):
            row = turn.decisions(state, seat)
            assert _disagreements(state, seat, row) == []
            checked |= {k for k, d in row.items() if d.allows is not None}
        seat, move = choose(engine, state, rng)
        engine.apply(state, seat, move)
    assert len(checked) >= 10


def test_a_check_that_allows_too_much_is_caught() -> None:
    """Control: a Take check that forgets the empty spaces disagrees with the listing."""
    state = started(5, 3)
    seat = state.first
    engine.apply(state, seat, moves.Take(0))
    seat = engine.to_act(state)[0]
    row = turn.decisions(state, seat)
    broken = {moves.Take: dataclasses.replace(row[moves.Take], allows=lambda s, i, m: True)}
    assert _disagreements(state, seat, broken) == ["take 0: allows True"]


def test_the_turn_is_the_kits_kernel() -> None:
    """apply and legal_moves are the kernel's; no engine module writes its own."""
    assert engine.apply.__self__ is engine.ENGINE and engine.ENGINE.rules is engine.RULES
    assert engine.legal_moves.__self__ is engine.ENGINE
    root = pathlib.Path(engine.__file__).parent
    for path in root.rglob("*.py"):
        tree = ast.parse(path.read_text())
        names = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
        assert not names & {"apply", "legal_moves", "check_seat"}, path
