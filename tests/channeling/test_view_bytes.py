"""The codec's view bytes (codec.view_bytes): kept by the values they show, shared
between seats and versions, and always the bytes of the message built whole. And the
engine's reseat_view (one view a version built, the other seats' made from it): equal to
the view built for that seat, at every decision.

Every decision of random games, every seat and a spectator: view_bytes gives exactly
``view_to_proto(view).SerializeToString()``. The key of a kept view holds everything the
message shows (each field of the engine's view but the viewer, which the message does
not show); controls: a key that leaves out one shown field, or a cell kept without its
Druid, answers a later view with bytes of an earlier one, and the comparison sees it.
"""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from tabletop.channeling.v1 import channeling_pb2 as pb

from services.channeling import codec, engine
from services.kit.engine import Outcome
from services.kit.testing import choose

SEEDS = (1, 2, 3)


def _views(seed: int) -> list[Any]:
    """The views of every seat and a spectator after each decision of one game."""
    state = engine.new_game(seed, 2, engine.Options())
    rng = random.Random(seed)
    out = []
    while True:
        out += [engine.view(state, seat) for seat in (0, 1, None)]
        if engine.outcome(state) is not None:
            return out
        seat, move = choose(engine, state, rng)
        engine.apply(state, seat, move)


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    """Each test starts with nothing kept (and leaves the module's caches as it found
    them)."""
    monkeypatch.setattr(codec, "_view_bytes", type(codec._view_bytes)())
    monkeypatch.setattr(codec, "_cell_bytes", {})
    monkeypatch.setattr(codec, "_player_bytes", {})
    monkeypatch.setattr(codec, "_move_bytes", {})


@pytest.mark.parametrize("seed", SEEDS)
def test_view_bytes_are_those_of_the_message_built_whole(seed):
    views = _views(seed)
    assert len(views) > 100
    for view in views:
        assert codec.view_bytes(view) == codec.view_to_proto(view).SerializeToString()
    # And read back, the same message (the step of a finished game included).
    last = views[-1]
    assert pb.View.FromString(codec.view_bytes(last)).step == pb.STEP_GAME_OVER


def test_every_seat_of_a_version_is_shown_the_same_bytes():
    """The message holds nothing of the viewer: one serialization serves every seat."""
    state = engine.new_game(4, 2, engine.Options())
    first = codec.view_bytes(engine.view(state, 0))
    assert codec.view_bytes(engine.view(state, 1)) is first
    assert codec.view_bytes(engine.view(state, None)) is first


def test_the_key_holds_every_field_the_message_shows():
    """Each field of the engine's view but the viewer is in the key: changed alone, the
    bytes are built afresh and equal the message built whole."""
    state = engine.new_game(5, 2, engine.Options())
    view = engine.view(state, 0)
    codec.view_bytes(view)
    cell = view.cells[0]
    seat = view.seats[0]
    changes = {
        "current": 1 - view.current,
        "step": "move_druid" if view.step != "move_druid" else "play_glyph",
        "turn": view.turn + 1,
        "glyph": "other",
        "moved": "a1",
        "stationary": "b2",
        "row_glyphs": (*view.row_glyphs[1:], "x"),
        "col_glyphs": (*view.col_glyphs[1:], "x"),
        "cells": (cell._replace(light_cubes=cell.light_cubes + 1), *view.cells[1:]),
        "seats": (seat._replace(supply=seat.supply + 1), *view.seats[1:]),
        "deck_count": view.deck_count + 1,
        "gaps": ("c3",),
        "end_triggered_by": 1,
        "outcome": Outcome(scores=(1, 0), winners=(0,), reason="MOST_SPLENDOR"),
    }
    shown = {f.name for f in dataclasses.fields(view)} - {"viewer"}
    assert set(changes) == shown, "a field of the view this test does not change"
    for name, value in changes.items():
        changed = dataclasses.replace(view, **{name: value})
        assert codec.view_bytes(changed) == codec.view_to_proto(changed).SerializeToString(), name
        assert codec.view_bytes(changed) != codec.view_bytes(view), name


def test_the_control_a_key_without_a_shown_field_sends_an_earlier_view(monkeypatch):
    """Control: with the deck's count left out of the key, a view that differs only there
    is answered with the kept bytes of the other; the comparison above catches it."""
    full = codec.shown
    monkeypatch.setattr(codec, "shown", lambda view: full(view)[:-3] + full(view)[-2:])
    state = engine.new_game(6, 2, engine.Options())
    view = engine.view(state, 0)
    other = dataclasses.replace(view, deck_count=view.deck_count - 1)
    codec.view_bytes(view)
    assert codec.view_bytes(other) != codec.view_to_proto(other).SerializeToString()


def test_the_control_a_cell_kept_without_its_druid_shows_it_where_it_left(monkeypatch):
    """Control: a cell's bytes kept by a key without its Druid (here: by its name and
    cubes only) show a Druid that moved on, and the comparison with the message built
    whole catches it."""

    class Blind(dict[Any, bytes]):
        def _key(self, cell: Any) -> Any:
            return (cell[0], cell[4], cell[5])

        def get(self, cell: Any, default: Any = None) -> Any:
            return super().get(self._key(cell), default)

        def __setitem__(self, cell: Any, data: bytes) -> None:
            super().__setitem__(self._key(cell), data)

    monkeypatch.setattr(codec, "_cell_bytes", Blind())
    caught = 0
    for view in _views(SEEDS[0]):
        if codec.view_bytes(view) != codec.view_to_proto(view).SerializeToString():
            caught += 1
    assert caught > 0


def _reseats_equal(build: Any, seed: int) -> int:
    """Decisions of one game at which a view made with reseat_view from another seat's
    differs from the one ``build`` makes for that seat."""
    state = engine.new_game(seed, 2, engine.Options())
    rng = random.Random(seed)
    wrong = 0
    while True:
        for shown in (0, 1, None):
            for seat in (0, 1, None):
                built = build(state, seat)
                wrong += engine.reseat_view(build(state, shown), seat) != built
        if engine.outcome(state) is not None:
            return wrong
        seat, move = choose(engine, state, rng)
        engine.apply(state, seat, move)


@pytest.mark.parametrize("seed", SEEDS)
def test_a_reseated_view_is_the_view_built_for_that_seat(seed):
    assert _reseats_equal(engine.view, seed) == 0


def test_the_control_a_view_with_a_seats_secret_is_not_reseated_unseen():
    """Control: were a seat's view to hold something of its own (here each seat sees only
    its own hand), a view made from another seat's would show that seat's: the check
    above catches it."""

    def own_hands(state: Any, seat: int | None) -> Any:
        view = engine.view(state, seat)
        seats = tuple(s if i == seat else s._replace(hand=()) for i, s in enumerate(view.seats))
        return dataclasses.replace(view, seats=seats)

    assert _reseats_equal(own_hands, SEEDS[0]) > 0


def test_a_moves_kept_bytes_are_those_of_its_message():
    """codec.move_bytes, kept by the move's value, at every decision of a game: each
    legal move's bytes equal its message's, and equal moves of another kind never share."""
    state = engine.new_game(SEEDS[0], 2, engine.Options())
    rng = random.Random(SEEDS[0])
    listed = 0
    while engine.outcome(state) is None:
        seat = engine.to_act(state)[0]
        for move in engine.legal_moves(state, seat):
            assert codec.move_bytes(move) == codec.move_to_proto(move).SerializeToString()
            listed += 1
        seat, move = choose(engine, state, rng)
        engine.apply(state, seat, move)
    assert listed > 100
    glyph, gap = engine.PlayGlyph(0), engine.FillGap(0)
    assert codec.move_bytes(glyph) != codec.move_bytes(gap)
