"""The kit's test helpers: how many random games a test plays in make test and make soak,
the out-of-range check every engine's random play runs (shown to catch each fault it is
meant to catch, on small toy engines), and ``check_random_game`` itself: the Channeling's
engine passes it, and the same engine with one thing broken fails the check meant for it."""

from __future__ import annotations

import copy
import dataclasses
import random
import re
from dataclasses import dataclass, field

import pytest

from services.channeling import engine as channeling
from services.channeling.engine.content import GLYPHS
from services.kit.engine import (
    EngineError,
    IllegalMove,
    MalformedMove,
    NotYourDecision,
    Rng,
)
from services.kit.testing import (
    OUT_OF_RANGE,
    MovePool,
    check_out_of_range_refused,
    check_random_game,
    out_of_range_variants,
    random_game,
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


# --- check_random_game, on the Channeling's engine with one thing broken ------------------
#
# Each broken engine is the real one with one method replaced; check_random_game must fail
# it with the message of the check meant for that fault, while the real engine passes.


class Channeling:
    """The Channeling's engine as an object whose methods a subclass may break."""

    GAME = channeling.GAME

    def new_game(self, seed, players, options):
        return channeling.new_game(seed, players, options)

    def legal_moves(self, state, seat):
        return channeling.legal_moves(state, seat)

    def apply(self, state, seat, move):
        return channeling.apply(state, seat, move)

    def view(self, state, seat):
        return channeling.view(state, seat)

    def outcome(self, state):
        return channeling.outcome(state)

    def to_act(self, state):
        return channeling.to_act(state)

    def parse_move(self, text):
        return channeling.parse_move(text)


def deck_hidden(state, seen, seat) -> None:
    """The Channeling's secrets are the deck's order and the generator: the view must not
    change when they do."""
    other = copy.deepcopy(state)
    other.deck.reverse()
    other.rng.seed(12345)
    assert channeling.view(other, seat) == seen, "the view depends on hidden information"


class Unsorted(Channeling):
    def legal_moves(self, state, seat):
        return super().legal_moves(state, seat)[::-1]


class Duplicated(Channeling):
    def legal_moves(self, state, seat):
        listed = super().legal_moves(state, seat)
        return listed[:1] + listed


class IdleSeatHasMoves(Channeling):
    """Lists the acting seat's moves for the other seat too."""

    def legal_moves(self, state, seat):
        return super().legal_moves(state, state.current)


class DarkHasNoMoves(Channeling):
    def legal_moves(self, state, seat):
        return [] if seat == 1 else super().legal_moves(state, seat)


class GlyphTextMisread(Channeling):
    """Reads ``glyph <name>`` as the next glyph along."""

    def parse_move(self, text):
        move = super().parse_move(text)
        if isinstance(move, channeling.PlayGlyph):
            return channeling.PlayGlyph((move.glyph + 1) % len(GLYPHS))
        return move


def _out_of_range(move) -> bool:
    values = [getattr(move, f.name) for f in dataclasses.fields(move)]
    flat = [v for value in values for v in (value if isinstance(value, tuple) else (value,))]
    return any(v < -1 or v >= 10**6 for v in flat)


class AcceptsOutOfRange(Channeling):
    """Takes a move with an argument out of range for a pass: nothing happens."""

    def apply(self, state, seat, move):
        return [] if _out_of_range(move) else super().apply(state, seat, move)


class RefusalChangesState(Channeling):
    """Refuses as it should, but after counting the attempt as a turn."""

    def apply(self, state, seat, move):
        try:
            return super().apply(state, seat, move)
        except EngineError:
            state.turn += 1
            raise


class IllegalRefusalChangesState(Channeling):
    """Only a refusal by a rule (not a malformed move, not a seat out of turn) changes the
    state: the out-of-range and out-of-turn probes cannot see it, the unlisted ones must."""

    def apply(self, state, seat, move):
        try:
            return super().apply(state, seat, move)
        except IllegalMove:
            state.turn += 1
            raise


class OutOfTurnRefusalChangesState(Channeling):
    """Refuses a seat out of turn, but only after passing the turn to it."""

    def apply(self, state, seat, move):
        try:
            return super().apply(state, seat, move)
        except NotYourDecision:
            state.current = seat
            raise


class MovesOutOfTurn(Channeling):
    """Carries a move sent by a seat with nothing to decide, as if the right seat sent it."""

    def apply(self, state, seat, move):
        acting = self.to_act(state)
        if acting and seat not in acting:
            seat = acting[0]
        return super().apply(state, seat, move)


class AcceptsUnlisted(Channeling):
    """Swallows a move the rules forbid now: no error, nothing happens."""

    def apply(self, state, seat, move):
        try:
            return super().apply(state, seat, move)
        except IllegalMove:
            return []


class RefusesHighestListed(Channeling):
    """Refuses the last of several listed moves."""

    def apply(self, state, seat, move):
        listed = super().legal_moves(state, seat)
        if len(listed) > 1 and move == listed[-1]:
            raise IllegalMove("refused", rule="Play a Glyph Card")
        return super().apply(state, seat, move)


class ShowsTopCard(Channeling):
    """The view's deck count is the top card's id: the deck's order leaks."""

    def view(self, state, seat):
        seen = super().view(state, seat)
        return dataclasses.replace(seen, deck_count=state.deck[-1] if state.deck else 0)


class ReseedsOnReplay(Channeling):
    """Every game after the first gets a generator seeded from a call count, not the seed
    alone (the Channeling draws only at setup, so play goes on the same)."""

    def __init__(self):
        self.games = 0

    def new_game(self, seed, players, options):
        state = super().new_game(seed, players, options)
        self.games += 1
        if self.games > 1:
            state.rng = Rng(self.games)
        return state


class AcceptsAfterTheEnd(Channeling):
    def apply(self, state, seat, move):
        if self.outcome(state) is not None:
            return []
        return super().apply(state, seat, move)


class NeverEnds(Channeling):
    """Never reports the outcome: once the game is over nobody is to act."""

    def outcome(self, state):
        return None


@pytest.mark.parametrize(
    ("broken", "complaint"),
    [
        (Unsorted, re.escape("legal moves not in sorted order")),
        (Duplicated, re.escape("duplicate legal moves")),
        (IdleSeatHasMoves, re.escape("seat 1 is not to act but has moves")),
        (DarkHasNoMoves, re.escape("seat 1 is to act but has no legal move")),
        (GlyphTextMisread, re.escape("text form of PlayGlyph(")),
        (AcceptsOutOfRange, re.escape("(out of range) was accepted")),
        (RefusalChangesState, re.escape("changed the state")),
        (IllegalRefusalChangesState, r"\(not listed for seat \d\) changed the state"),
        (OutOfTurnRefusalChangesState, re.escape("decision 0: a refused move changed the state")),
        (MovesOutOfTurn, re.escape("seat 1 moved out of turn")),
        (AcceptsUnlisted, r"was accepted for seat \d but is not listed"),
        (RefusesHighestListed, re.escape("is listed for seat 0 but apply refused it: IllegalMove")),
        (ShowsTopCard, re.escape("the view depends on hidden information")),
        (ReseedsOnReplay, re.escape("replay differs from the live state")),
        (AcceptsAfterTheEnd, re.escape("a move was accepted after the end")),
        (NeverEnds, re.escape("no outcome and nobody to act")),
    ],
    ids=lambda value: value.__name__ if isinstance(value, type) else "",
)
def test_a_broken_engine_fails_the_check_meant_for_its_fault(broken, complaint):
    with pytest.raises(AssertionError, match=complaint):
        for seed in range(3):
            check_random_game(broken(), seed, 2, leak_check=deck_hidden)


def test_a_game_without_an_outcome_within_max_decisions_fails():
    # A Channeling game takes about a hundred decisions; thirty are not enough.
    with pytest.raises(AssertionError, match=re.escape("seed 0: no outcome after 30 decisions")):
        check_random_game(Channeling(), 0, 2, max_decisions=30)


class Counting(Channeling):
    """The real engine, counting what apply accepts and refuses."""

    def __init__(self):
        self.accepted = 0
        self.refused: dict[str, int] = {}

    def apply(self, state, seat, move):
        try:
            events = super().apply(state, seat, move)
        except EngineError as exc:
            name = type(exc).__name__
            self.refused[name] = self.refused.get(name, 0) + 1
            raise
        self.accepted += 1
        return events


@pytest.mark.parametrize("overchanneling", ["splendor", "vigor"])
def test_the_real_engine_passes_and_every_kind_of_probe_was_tried(overchanneling):
    options = channeling.Options(overchanneling=overchanneling)
    counting = Counting()
    played = [
        check_random_game(counting, seed, 2, options, leak_check=deck_hidden) for seed in range(8)
    ]
    decisions = sum(p.decisions for p in played)
    # Listed moves tried on copies come on top of the moves played (and replayed).
    assert counting.accepted > 2 * decisions
    # Moves remembered from earlier decisions were offered and refused by a rule.
    assert counting.refused["IllegalMove"] > 0
    assert counting.refused["MalformedMove"] > 0  # the out-of-range variants
    assert counting.refused["NotYourDecision"] > 0  # the out-of-turn probe
    assert counting.refused["GameOver"] == len(played)  # one move after each end


def test_the_checks_do_not_change_the_game_random_play_plays():
    for seed in range(5):
        checked = check_random_game(channeling, seed, 2)
        plain = random_game(channeling, seed, 2)
        assert checked.moves == plain.moves and checked.state == plain.state


def test_every_listed_move_is_tried_every_accept_every_th_deep_check():
    def tried(accept_every: int) -> int:
        counting = Counting()
        played = check_random_game(counting, 4, 2, accept_every=accept_every)
        return counting.accepted - 2 * played.decisions  # less the moves played and replayed

    assert tried(1) > tried(4) > tried(1000) > 0  # 1000: the first deep check only


def test_the_move_pool_remembers_distinct_moves_and_forgets_the_oldest_first():
    pool = MovePool(size=3)
    pool.remember(["a", "b", "a", "c"])
    assert len(pool) == 3
    pool.remember(["d"])  # "b" is now the oldest ("a" was seen again after it)
    assert sorted(pool.sample(random.Random(0), 10, exclude=[])) == ["a", "c", "d"]
    assert sorted(pool.sample(random.Random(0), 10, exclude=["c"])) == ["a", "d"]
    assert len(pool.sample(random.Random(0), 2, exclude=[])) == 2


def test_an_illegal_move_must_name_the_rule_it_breaks():
    class NamesNoRule(Channeling):
        def apply(self, state, seat, move):
            try:
                return super().apply(state, seat, move)
            except IllegalMove as exc:
                raise IllegalMove(exc.message, rule="") from exc

    with pytest.raises(AssertionError, match="named no rule"):
        for seed in range(3):
            check_random_game(NamesNoRule(), seed, 2)


def test_an_unlisted_move_failing_with_a_bare_error_is_reported():
    class KeyErrorOnUnlisted(Channeling):
        def apply(self, state, seat, move):
            listed = super().legal_moves(state, seat)
            if listed and move not in listed and not _out_of_range(move):
                raise KeyError(str(move))
            return super().apply(state, seat, move)

    with pytest.raises(AssertionError, match="raised KeyError"):
        for seed in range(3):
            check_random_game(KeyErrorOnUnlisted(), seed, 2)


def test_a_refused_move_must_be_refused_with_an_engine_error_of_the_right_kind():
    class OutOfTurnIsIllegal(Channeling):
        def apply(self, state, seat, move):
            if seat not in self.to_act(state) and self.outcome(state) is None:
                raise IllegalMove("wait your turn", rule="Turn order")
            return super().apply(state, seat, move)

    with pytest.raises(AssertionError, match="raised IllegalMove: wait your turn; expected Not"):
        check_random_game(OutOfTurnIsIllegal(), 0, 2)
