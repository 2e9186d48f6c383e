"""The engine contract beyond random play: the legal moves are exactly the moves apply
accepts, refusals name a rule and change nothing, and nothing hidden leaks through
events, views or error messages."""

from __future__ import annotations

import copy
import random
import re

import pytest

from services.kit.engine import IllegalMove
from services.kit.testing import record_playthrough
from services.shrine import engine
from services.shrine.engine import (
    Accept,
    Block,
    Bonus,
    Claim,
    CompleteShape,
    Debt,
    Done,
    Draw,
    Keep,
    Move,
    Overwrite,
    Pass,
    Place,
    Refresh,
    Relocate,
    Reward,
    Search,
    Serpent,
    ShapeFields,
    Skip,
    Unlock,
    rulebook,
)
from services.shrine.engine.content import CONTENT, FIELDS
from services.shrine.engine.state import Phase
from tests.shrine.invariants import check_view

RULES = {v for k, v in vars(rulebook).items() if k.isupper()}


def candidates(state) -> list[Move]:
    """Every well-formed move of every kind (shape placements only for the card at hand)."""
    fields = range(FIELDS)
    out: list[Move] = [Pass(), Debt(), Refresh(), Search(), Accept()]
    out += [Done(), Skip(), Reward()]
    out += [k(p) for k in (Unlock, Serpent, Reward) for p in range(6)]
    out += [k(d) for k in (Draw, Bonus) for d in CONTENT.decks]
    out += [Keep(i) for i in (0, 1)]
    out += [CompleteShape(card) for card in CONTENT.shapes]
    out += [Claim(c) for c in range(6)]
    out += [Place(f) for f in fields]
    out += [Block(f, target=t) for f in fields for t in (False, True)]
    out += [Block(f, no_claim=True) for f in fields]
    out += [Overwrite(f, c) for f in fields for c in range(3)]
    out += [Relocate(f, c, t) for f in fields for c in range(3) for t in fields]
    if state.phase is Phase.SHAPE_AT:
        for mask in CONTENT.shapes[state.shape].images:
            out.append(ShapeFields(mask))
            out += [ShapeFields(mask, f) for f in fields if mask >> f & 1]
    return out


@pytest.mark.parametrize("shapes", [False, True])
def test_legal_moves_are_exactly_the_moves_apply_accepts(shapes: bool) -> None:
    """Every well-formed move of every kind, not the kit random play's sample of moves
    remembered from earlier decisions: each unlisted one is refused by a rule of the
    rulebook module, with no Code card named in the message."""
    options = engine.Options(radiant_shapes=shapes)
    for seed in range(6):
        state = engine.new_game(seed, 2, options)
        chooser = random.Random(seed)
        step = 0
        while engine.outcome(state) is None:
            seat = engine.to_act(state)[0]
            listed = engine.legal_moves(state, seat)
            if step % 4 == 0:
                legal = set(listed)
                codes = [CONTENT.codes[p.code].id for p in state.players]
                for move in candidates(state):
                    if move in legal:
                        engine.apply(copy.deepcopy(state), seat, move)
                        continue
                    try:
                        engine.apply(state, seat, move)
                    except IllegalMove as error:
                        assert error.rule in RULES, error.rule
                        assert not any(code in error.message for code in codes)
                    else:  # pragma: no cover - the failure message says it all
                        raise AssertionError(f"{move} was accepted but not listed")
                assert engine.legal_moves(state, seat) == listed  # refusals changed nothing
            engine.apply(state, seat, chooser.choice(listed))
            step += 1


def test_hidden_events_go_only_to_their_owner() -> None:
    """Shape cards drawn and kept are told to their owner; the others learn the count."""
    for seed in range(25):
        state = engine.new_game(seed, 2, engine.Options(radiant_shapes=True))
        chooser = random.Random(seed)
        while engine.outcome(state) is None:
            seat = engine.to_act(state)[0]
            move = chooser.choice(engine.legal_moves(state, seat))
            for event in engine.apply(state, seat, move):
                if event.kind in ("shape_drawn", "shapes_drawn", "shape_kept"):
                    if event.to is None:
                        assert not re.search(r"card \d|cards \d", event.text), event.text
                        assert "card" not in event.data and "cards" not in event.data
                    else:
                        assert event.to == frozenset({event.seat})
                assert event.text and "\n" not in event.text


def test_keep_move_names_a_position_not_a_card() -> None:
    """The move log is public: ``keep 0``/``keep 1`` says which of the two, not which card."""
    state = engine.new_game(9, 2, engine.Options(radiant_shapes=True))
    seat = state.current
    engine.apply(state, seat, engine.parse_move("draw 4"))
    assert [str(m) for m in engine.legal_moves(state, seat)] == ["keep 0", "keep 1"]


def test_views_show_each_seat_its_own_secrets_only() -> None:
    state = engine.new_game(12, 2, engine.Options(radiant_shapes=True))
    for seat in (0, 1, None):
        seen = engine.view(state, seat)
        check_view(state, seen, seat)
        for other in (0, 1):
            if other == seat:
                assert seen.players[other].code_card is not None
                assert len(seen.players[other].hand) == 4
            else:
                assert seen.players[other].code_card is None
                assert seen.players[other].hand is None
                assert seen.players[other].shapes_in_hand == 4
    assert engine.view(state, None).seat is None
    with pytest.raises(ValueError):
        engine.view(state, 2)


def test_views_are_frozen_and_deterministic() -> None:
    state = engine.new_game(12, 2, engine.Options(radiant_shapes=True))
    first = engine.view(state, 0)
    assert repr(first) == repr(engine.view(state, 0))
    assert hash(first.fields) == hash(engine.view(state, 0).fields)
    with pytest.raises(AttributeError):
        first.turn = 3  # type: ignore[misc]


def test_playthrough_text_never_shows_the_opponents_code_in_a_seat_view() -> None:
    text = record_playthrough(engine, 3, 2, engine.Options(radiant_shapes=True))
    state = engine.new_game(3, 2, engine.Options(radiant_shapes=True))
    sun_code, moon_code = (CONTENT.codes[p.code].id for p in state.players)
    for line in text.splitlines():
        if line.startswith("view[0]"):
            assert moon_code not in line
        elif line.startswith("view[1]"):
            assert sun_code not in line
        elif line.startswith("view[spectator]"):
            assert sun_code not in line and moon_code not in line
