"""Move values, their text forms and the malformed-move error."""

from __future__ import annotations

import pytest

from services.kit.engine import MalformedMove
from services.kit.testing import assert_refused_unchanged
from services.shrine import engine
from services.shrine.engine import (
    MOVE_TYPES,
    Block,
    Move,
    Overwrite,
    Place,
    Relocate,
    Reward,
    ShapeFields,
    Unlock,
    parse_move,
)
from tests.shrine.scenario import C, F, P, game

TEXTS = [
    "unlock rotation",
    "unlock relocating",
    "draw 4",
    "keep 0",
    "keep 1",
    "pass",
    "debt",
    "serpent overwriting",
    "refresh",
    "search",
    "accept",
    "place c2",
    "overwrite c2 red",
    "relocate b1 blue d3",
    "block b2",
    "block b2 target",
    "block b2 noclaim",
    "done",
    "shape 17",
    "at b1 b2 c2",
    "at b1 b2 c2 ignore c2",
    "claim purple",
    "reward treasure",
    "reward unlock inactive",
    "bonus 5",
    "skip",
]


@pytest.mark.parametrize("text", TEXTS)
def test_text_form_round_trips(text: str) -> None:
    move = parse_move(text)
    assert str(move) == text
    assert parse_move(str(move)) == move
    assert move.problem() is None


def test_fields_of_a_move() -> None:
    assert parse_move("relocate b1 blue d3") == Relocate(F("b1"), C("blue"), F("d3"))
    assert parse_move("at c2 b1 b2") == ShapeFields(
        (1 << F("b1")) | (1 << F("b2")) | (1 << F("c2"))
    )
    assert parse_move("reward unlock inactive") == Reward(P("inactive"))
    assert parse_move("reward treasure") == Reward()
    assert parse_move("  PLACE   C2 ") == Place(F("c2"))


@pytest.mark.parametrize(
    "text",
    [
        "",
        "fly",
        "place",
        "place z9",
        "place a1",  # a corner holds a dial, not a field
        "place c2 c3",
        "overwrite c2 green",  # Lenses are basic colours
        "keep 2",
        "draw 7",
        "shape 999",
        "at",
        "at b1 b1",
        "at b1 ignore c2",
        "reward unlock",
        "reward gold",
        "block b1 maybe",
        "block b1 noclaim target",
        "block b1 target noclaim",
        "block b1 noclaim noclaim",
        "claim gold",
        "unlock everything",
        "pass now",
    ],
)
def test_malformed_text_is_refused(text: str) -> None:
    with pytest.raises(MalformedMove):
        parse_move(text)


def test_each_block_text_names_its_own_claim() -> None:
    """The text forms are the format of stored games: ``block b2`` and ``block b2 target``
    keep their meaning (a claim), and the Block that claims nothing has a form of its own."""
    plain, target, nothing = (
        parse_move(t) for t in ("block b2", "block b2 target", "block b2 noclaim")
    )
    assert isinstance(plain, Block) and isinstance(target, Block) and isinstance(nothing, Block)
    assert (plain.target, plain.no_claim) == (False, False)
    assert (target.target, target.no_claim) == (True, False)
    assert (nothing.target, nothing.no_claim) == (False, True)
    assert len({plain, target, nothing}) == 3
    assert sorted([target, nothing, plain]) == [plain, nothing, target]


def test_moves_of_different_kinds_sort_by_the_order_of_the_turn() -> None:
    listed = [parse_move(t) for t in TEXTS]
    ordered = sorted(listed)
    kinds = [MOVE_TYPES.index(type(m)) for m in ordered]
    assert kinds == sorted(kinds)
    assert ordered[0] == parse_move("unlock rotation")
    assert ordered[-1] == parse_move("skip")


def test_moves_are_hashable_values() -> None:
    assert len({parse_move("place c2"), parse_move("place c2"), parse_move("place c3")}) == 2


@pytest.mark.parametrize(
    "move",
    [
        Place(12),
        Place(True),
        Place("c2"),  # type: ignore[arg-type]
        Overwrite(1, 5),
        Unlock(6),
        Block(1, target=1),  # type: ignore[arg-type]
        Block(1, no_claim=1),  # type: ignore[arg-type]
        Block(1, target=True, no_claim=True),  # claims a target, and nothing
        ShapeFields(0),
        ShapeFields(1, 3),
        Move(),  # the base of the kinds, no kind of decision itself
        "unlock rotation",
        None,
    ],
)
def test_apply_refuses_malformed_moves_and_changes_nothing(move: object) -> None:
    state = game(3)
    seat = engine.to_act(state)[0]
    assert_refused_unchanged(engine, state, seat, move, MalformedMove)


@pytest.mark.parametrize(
    ("kind", "args", "kwargs"),
    [
        (Place, (), {}),  # no field
        (Place, (1,), {"colour": 0}),  # place takes no colour
        (Place, (1,), {"no_claim": True}),  # only a Block claims
        (Unlock, (1, 2), {}),
    ],
)
def test_a_move_without_its_fields_or_with_another_kinds_cannot_be_built(
    kind: type, args: tuple, kwargs: dict
) -> None:
    """Each kind takes exactly its own fields: such a move never reaches ``apply``."""
    with pytest.raises(TypeError):
        kind(*args, **kwargs)
