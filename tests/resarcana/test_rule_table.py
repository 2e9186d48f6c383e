"""The rule table the kit's kernel reads (engine/turn.py): every task that asks for a
decision has its row, each row's listing gives only moves of its own kind, and every
refusal names a rule of engine/rulebook.py."""

from __future__ import annotations

import copy
import random
import sys

import pytest

import services.resarcana.engine as E
from services.kit.engine import IllegalMove
from services.resarcana.engine import rulebook, turn
from services.resarcana.engine.task import Task

RULE_NAMES = {
    value for name, value in vars(rulebook).items() if name.isupper() and isinstance(value, str)
}


def _subclasses(cls: type[Task]) -> set[type[Task]]:
    """The task classes the engine's modules define (``dataclass(slots=True)`` leaves the
    class it replaced among the subclasses too: those are skipped)."""
    found = set()
    for sub in cls.__subclasses__():
        found |= _subclasses(sub)
        if getattr(sys.modules[sub.__module__], sub.__name__, None) is sub:
            found.add(sub)
    return found


def test_every_task_that_asks_for_a_decision_has_a_row() -> None:
    deciding = {t for t in _subclasses(Task) if t.LISTS}
    assert deciding == set(turn.TABLE)
    for task in turn.TABLE:
        assert not task.AUTO, task
        assert task.RULE in RULE_NAMES, f"{task.__name__} names no rule of the rulebook"
        orders = [kind.ORDER for kind in task.LISTS]
        assert orders == sorted(orders), f"{task.__name__} lists its kinds out of order"


def _sampled_states(seed: int, options: E.Options, every: int) -> list[E.State]:
    state = E.new_game(seed, 2, options)
    rng = random.Random(seed)
    found = []
    decisions = 0
    while E.outcome(state) is None:
        seat = rng.choice(E.to_act(state))
        if decisions % every == 0:
            found.append(copy.deepcopy(state))
        E.apply(state, seat, rng.choice(E.legal_moves(state, seat)))
        decisions += 1
    return found


@pytest.mark.parametrize("setup", ["first_game", "draft"])
def test_each_row_lists_only_its_own_kind(setup: str) -> None:
    for state in _sampled_states(3, E.Options(setup=setup), 3):
        for seat in E.to_act(state):
            listed = []
            for kind, decision in turn.decisions(state, seat).items():
                moves = list(decision.moves(state, seat))
                assert all(type(m) is kind for m in moves), (kind, moves)
                listed += moves
            assert listed == E.legal_moves(state, seat)


def test_every_refusal_names_a_rule_of_the_rulebook() -> None:
    """Moves seen anywhere in a game, tried at other points of it: whatever is refused as
    illegal names one of rulebook.py's rules, and leaves the state as it was."""
    seen_rules: set[str] = set()
    for setup in ("first_game", "draft"):
        for seed in range(3):
            states = _sampled_states(seed, E.Options(setup=setup), 5)
            pool = sorted({m for s in states for seat in (0, 1) for m in E.legal_moves(s, seat)})
            probe = random.Random(seed)
            for state in states:
                for seat in E.to_act(state):
                    legal = set(E.legal_moves(state, seat))
                    for move in probe.sample(pool, min(30, len(pool))):
                        if move in legal:
                            continue
                        before = copy.deepcopy(state)
                        with pytest.raises(IllegalMove) as refused:
                            E.apply(state, seat, move)
                        assert refused.value.rule in RULE_NAMES, refused.value.rule
                        assert state == before
                        seen_rules.add(refused.value.rule)
    # The probe reaches most of the rulebook (a check that it tries enough to mean it).
    assert len(seen_rules) >= len(RULE_NAMES) - 3, sorted(RULE_NAMES - seen_rules)


def missing_hooks(task: type[Task]) -> list[str]:
    """The hooks a task class leaves to Task's base, which raises: an AUTO task must
    define ``run``; a task in the rule table, ``play`` and ``refusal``."""
    needed = ["run"] if task.AUTO else ["play", "refusal"] if task in turn.TABLE else []
    return [hook for hook in needed if getattr(task, hook) is getattr(Task, hook)]


def test_every_task_defines_the_hooks_its_kind_needs() -> None:
    tasks = _subclasses(Task)
    assert {t for t in tasks if t.AUTO} and set(turn.TABLE) <= tasks
    assert {t.__name__: missing_hooks(t) for t in tasks if missing_hooks(t)} == {}


def test_control_a_task_without_its_hooks_is_found() -> None:
    class Silent(Task):
        AUTO = True

    assert missing_hooks(Silent) == ["run"]


def test_every_component_move_names_its_component() -> None:
    from services.resarcana.engine.moves import ComponentMove

    kinds = [k for k in ComponentMove.__subclasses__() if "WORD" in vars(k)]
    assert len(kinds) > 10
    assert [k.__name__ for k in kinds if k.named is ComponentMove.named] == []
