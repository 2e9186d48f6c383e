"""The kit's test helpers: how many random games a test plays in make test and make soak,
and the out-of-range check every engine's random play runs (shown to catch each fault it
is meant to catch, on small toy engines)."""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field

import pytest

from services.kit.engine import MalformedMove
from services.kit.testing import (
    OUT_OF_RANGE,
    check_out_of_range_refused,
    out_of_range_variants,
    random_game_count,
)


def test_random_game_count_is_quick_by_default_and_the_soak_count_when_set(monkeypatch):
    monkeypatch.delenv("TABLETOP_RANDOM_GAMES", raising=False)
    assert random_game_count(30) == 30
    assert random_game_count(30, most=100) == 30
    monkeypatch.setenv("TABLETOP_RANDOM_GAMES", "1000")
    assert random_game_count(30) == 1000
    # A capped test plays at most its cap in the soak.
    assert random_game_count(30, most=100) == 100
    monkeypatch.setenv("TABLETOP_RANDOM_GAMES", "5")
    assert random_game_count(30) == 5 and random_game_count(30, most=100) == 5


# --- check_out_of_range_refused, on toy engines ------------------------------------------
#
# A toy game: a hand of cards, each named in CARDS; ``Play(position)`` plays the card at
# that position in hand, ``Swap(positions)`` swaps two. The correct engine refuses every
# position off the hand as malformed; each broken one has one fault the check must find.

CARDS = ("sun", "moon", "star", "wind")


@dataclass(frozen=True)
class Play:
    position: int


@dataclass(frozen=True)
class Swap:
    positions: tuple[int, int]
    face_up: bool = False


@dataclass
class Table:
    hand: list[int] = field(default_factory=lambda: [0, 1, 2, 3])
    played: list[int] = field(default_factory=list)


def _positions(state: Table, move) -> tuple[int, ...]:
    return (move.position,) if isinstance(move, Play) else move.positions


def _carry(state: Table, move) -> list:
    if isinstance(move, Play):
        state.played.append(state.hand.pop(move.position))
    else:
        a, b = move.positions
        state.hand[a], state.hand[b] = state.hand[b], state.hand[a]
    return []


class Correct:
    @staticmethod
    def apply(state: Table, seat: int, move) -> list:
        for p in _positions(state, move):
            if isinstance(p, bool) or not 0 <= p < len(state.hand):
                raise MalformedMove(f"position must be 0-{len(state.hand) - 1}, not {p!r}")
        return _carry(state, move)


class WrapsNegative:
    """Checks only the upper end: a negative position plays a card from the back."""

    @staticmethod
    def apply(state: Table, seat: int, move) -> list:
        if any(p >= len(state.hand) for p in _positions(state, move)):
            raise MalformedMove("position past the hand")
        return _carry(state, move)


class RaisesIndexError:
    """Checks only the lower end: a position past the hand fails with a bare IndexError."""

    @staticmethod
    def apply(state: Table, seat: int, move) -> list:
        if any(p < 0 for p in _positions(state, move)):
            raise MalformedMove("negative position")
        names = [CARDS[state.hand[p]] for p in _positions(state, move)]
        assert names
        return _carry(state, move)


class ChangesStateFirst:
    """Refuses with the right error, but after it has laid a card down."""

    @staticmethod
    def apply(state: Table, seat: int, move) -> list:
        state.played.append(state.hand[0])
        return Correct.apply(state, seat, move)


class SwapUnchecked:
    """Right for Play, but Swap's positions are not checked (the second kind)."""

    @staticmethod
    def apply(state: Table, seat: int, move) -> list:
        if isinstance(move, Play):
            return Correct.apply(state, seat, move)
        return _carry(state, move)


def legal(state: Table) -> list:
    return [Play(i) for i in range(len(state.hand))] + [Swap((0, 1)), Swap((1, 2))]


def test_a_correct_engine_passes_the_out_of_range_check_with_one_move_of_each_kind():
    state = Table()
    before = copy.deepcopy(state)
    tried = check_out_of_range_refused(Correct, state, 0, legal(state))
    # One Play and one Swap are varied, not every listed move.
    assert tried == len(out_of_range_variants(Play(0))) + len(out_of_range_variants(Swap((0, 1))))
    assert tried == len(OUT_OF_RANGE) * 3  # Play's position, Swap's two positions
    assert state == before


@pytest.mark.parametrize(
    ("broken", "complaint"),
    [
        (WrapsNegative, "was accepted"),
        (RaisesIndexError, "raised IndexError"),
        (ChangesStateFirst, "changed the state"),
        (SwapUnchecked, "Swap(positions=(-2, 1)"),
    ],
)
def test_a_broken_engine_fails_the_out_of_range_check(broken, complaint):
    state = Table()
    with pytest.raises(AssertionError, match=re.escape(complaint)):
        check_out_of_range_refused(broken, state, 0, legal(state))


def test_out_of_range_variants_vary_each_integer_and_each_element_but_no_boolean():
    variants = out_of_range_variants(Swap((0, 1), face_up=True))
    assert variants == [Swap((bad, 1), True) for bad in OUT_OF_RANGE] + [
        Swap((0, bad), True) for bad in OUT_OF_RANGE
    ]


def test_a_sentinel_value_legal_now_is_not_taken_for_out_of_range():
    # A game where position -2 means something (say "the discard pile") and is listed.
    class MinusTwoIsTheDiscard:
        @staticmethod
        def apply(state: Table, seat: int, move) -> list:
            if move == Play(-2):
                state.played.append(-2)
                return []
            return Correct.apply(state, seat, move)

    state = Table()
    moves = [Play(-2), Play(0)]
    before = copy.deepcopy(state)
    tried = check_out_of_range_refused(MinusTwoIsTheDiscard, state, 0, moves)
    assert tried == len(OUT_OF_RANGE) - 1 and state == before
