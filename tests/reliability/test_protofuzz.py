"""The fuzz's own instruments: the message strategy reaches every kind of move of every
game, every field, enum numbers no enum defines and huge repeated fields; the near miss
and the metadata strategies do what they say."""

from __future__ import annotations

import pytest
from google.protobuf.descriptor import FieldDescriptor
from hypothesis import given
from hypothesis import strategies as st

from services import registry
from tests.reliability import protofuzz
from tests.reliability.harness import fixed_settings

GAMES = registry.names()


def collect(strategy: st.SearchStrategy, examples: int = 300) -> list:
    found: list = []

    @fixed_settings(examples)
    @given(strategy)
    def draw(value) -> None:
        found.append(value)

    draw()
    return found


@pytest.mark.parametrize("name", GAMES)
def test_every_kind_of_move_and_every_field_of_it_is_generated(name):
    move = registry.by_name(name).pb2().Move
    kinds = {f.name for f in move.DESCRIPTOR.oneofs_by_name["kind"].fields}
    moves = collect(protofuzz.messages(move.DESCRIPTOR), examples=20 * len(kinds))
    assert {m.WhichOneof("kind") for m in moves} == kinds | {None}
    fields = {
        f.full_name
        for kind in move.DESCRIPTOR.oneofs_by_name["kind"].fields
        for f in kind.message_type.fields
    }
    set_fields = {f.full_name for m in moves for _, f in protofuzz._leaves(m)}
    assert fields <= set_fields, sorted(fields - set_fields)


@pytest.mark.parametrize("name", GAMES)
def test_views_get_unknown_enum_numbers_and_huge_lists(name):
    view = registry.by_name(name).pb2().View
    enums = [f for f in view.DESCRIPTOR.fields if f.type == FieldDescriptor.TYPE_ENUM]
    lists = [f for f in view.DESCRIPTOR.fields if f.is_repeated]
    views = collect(protofuzz.messages(view.DESCRIPTOR), examples=50)
    if enums:
        known = {v.number for f in enums for v in f.enum_type.values}
        assert any(
            getattr(v, f.name) not in known for v in views for f in enums if not f.is_repeated
        )
    if lists:
        assert max(len(getattr(v, f.name)) for v in views for f in lists) >= 1000


def test_a_near_miss_changes_exactly_one_value():
    pb2 = registry.by_name(GAMES[0]).pb2()
    moves = [m for m in collect(protofuzz.messages(pb2.Move.DESCRIPTOR), 100) if m.ListFields()]
    donors = protofuzz.strings_in(moves)
    changed = 0
    for i, move in enumerate(moves):
        near = protofuzz.near_miss(move, [i, i // 3, i // 7], donors)
        changed += near != move
        assert near.WhichOneof("kind") == move.WhichOneof("kind")
    assert changed > len(moves) // 2


def test_tokens_in_metadata_are_resolved_when_the_call_is_made():
    own, replayed = ["own-token-0", "own-token-1"], ["their-token"]
    values = [
        value
        for md in collect(protofuzz.metadata(), 300)
        for _, value in protofuzz.resolve(md, own, replayed)
    ]
    texts = [v for v in values if isinstance(v, str)]
    assert "Bearer own-token-0" in texts or "Bearer own-token-1" in texts
    assert "Bearer their-token" in texts
    assert any(
        v.startswith("Bearer own-token") and v not in {f"Bearer {t}" for t in own} for v in texts
    )
    assert not any(isinstance(v, protofuzz.Token) for v in values)
