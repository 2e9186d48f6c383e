"""The determinize hook: only the deck's order (and the generator) may change.

The Channeling hides nothing but the order of the Magic Circle Card deck, from every seat
and from spectators alike, so a determinized state must equal the true one in every other
field, keep the deck's cards, and still play to the end; and, so that a bot cannot be
steered by the hidden order, it must not depend on that order at all.
"""

from __future__ import annotations

import copy
import dataclasses
import doctest
import importlib
import random
from collections import Counter
from collections.abc import Callable, Iterator
from math import factorial
from typing import Any

import pytest

from services.channeling import engine
from services.channeling.engine.state import DRUID, FILL, GLYPH, PATH
from services.kit.determinize import check_determinize
from services.kit.engine import Rng
from services.kit.testing import choose, random_game
from tests.channeling.test_random_play import invariants, leak_check

GAMES = 24
POINTS = 6  # evenly spaced states per game, the first and the last included
SEATS = (0, 1, None)
OPTIONS = [engine.Options(overchanneling=o) for o in ("splendor", "vigor")]

Hook = Callable[[engine.State, "int | None", random.Random], engine.State]


def game_states(seed: int) -> Iterator[engine.State]:
    """States of one random game: evenly spaced from setup to the outcome, and the first
    state at each step (a Fill step comes rarely enough to be missed by spacing alone).
    """
    options = OPTIONS[seed % 2]
    moves = random_game(engine, seed, 2, options).moves
    spaced = {round(i * len(moves) / (POINTS - 1)) for i in range(POINTS)}
    state = engine.new_game(seed, 2, options)
    steps_seen: set[str] = set()
    for index in range(len(moves) + 1):
        if index in spaced or state.step not in steps_seen:
            steps_seen.add(state.step)
            yield copy.deepcopy(state)
        if index < len(moves):
            engine.apply(state, *moves[index])


def mid_game(seed: int) -> engine.State:
    """A state halfway through a random game (the deck still holds several cards)."""
    moves = random_game(engine, seed, 2).moves
    state = engine.new_game(seed, 2)
    for seat, move in moves[: len(moves) // 2]:
        engine.apply(state, seat, move)
    assert len(state.deck) > 2 and state.result is None
    return state


def assert_redealt(hook: Hook, state: engine.State, seat: int | None, seeds: range) -> int:
    """Every result differs from ``state`` only in the deck's order and the generator, keeps
    the deck's cards, re-seeds the generator, and some seed re-orders a deck of two or more.
    Returns how many results had a deck order other than the true one.
    """
    reordered = 0
    for seed in seeds:
        det = hook(state, seat, random.Random(seed))
        assert sorted(det.deck) == sorted(state.deck), f"seed {seed}: deck cards not conserved"
        assert det.rng != state.rng, f"seed {seed}: the generator was not re-seeded"
        rest = dataclasses.replace(det, deck=state.deck, rng=state.rng)
        assert rest == state, f"seed {seed}: something besides the deck's order changed"
        reordered += det.deck != state.deck
    if len(state.deck) > 1:
        assert reordered, f"the deck of {len(state.deck)} was never re-ordered"
    return reordered


# --- the hook keeps its contract -----------------------------------------------------


def test_check_determinize_over_random_games() -> None:
    steps: Counter[str] = Counter()
    ended = checked = 0
    for seed in range(GAMES):
        for state in game_states(seed):
            steps[state.step] += 1
            ended += state.result is not None
            views = {s: engine.view(state, s) for s in SEATS}
            for seat in SEATS:
                for det in check_determinize(engine, state, seat):
                    invariants(det)
                    # Nothing is hidden from one seat and shown to another: every view holds.
                    assert {s: engine.view(det, s) for s in SEATS} == views
                    checked += 1
    assert ended == GAMES, "each game's last state (with its outcome) is checked"
    assert all(steps[step] >= GAMES for step in (GLYPH, DRUID, PATH)), steps
    assert steps[FILL] > 0, steps
    assert checked >= GAMES * POINTS * len(SEATS) * 4


def test_hidden_deck_is_redealt_and_conserved() -> None:
    hidden = reordered = 0
    for seed in range(GAMES):
        for state in game_states(seed):
            for seat in SEATS:
                reordered += assert_redealt(engine.determinize, state, seat, range(16)) > 0
                hidden += len(state.deck) > 1
    assert hidden > GAMES * POINTS, "the deck was hidden at many of the states checked"
    assert reordered == hidden


def with_deck_of(size: int) -> engine.State:
    """The first state of a random game whose deck holds ``size`` cards."""
    for seed in range(100):
        state = engine.new_game(seed, 2)
        rng = random.Random(seed)
        while state.result is None:
            if len(state.deck) == size:
                return state
            engine.apply(state, *choose(engine, state, rng))
    raise AssertionError(f"no random game had a deck of {size}")


def assert_uniform(hook: Hook, state: engine.State, per_order: int = 100) -> None:
    """Every order of the deck comes about equally often over the seeds (within five
    standard deviations of the mean count).
    """
    orders = factorial(len(state.deck))
    draws = per_order * orders
    counts = Counter(tuple(hook(state, 0, random.Random(s)).deck) for s in range(draws))
    assert len(counts) == orders, f"{len(counts)} of the {orders} deck orders came about"
    sd = (draws * (1 / orders) * (1 - 1 / orders)) ** 0.5
    assert all(abs(c - per_order) < 5 * sd for c in counts.values()), counts


def test_deck_order_is_uniform() -> None:
    assert_uniform(engine.determinize, with_deck_of(4))


def _cuts_the_deck(state: engine.State, seat: int | None, rng: random.Random) -> engine.State:
    """Cuts the deck at random instead of shuffling: each card is as likely on top, but
    only a few of the orders ever come about.
    """
    det = copy.deepcopy(state)
    cut = rng.randrange(len(det.deck))
    det.deck = det.deck[cut:] + det.deck[:cut]
    det.rng = Rng(rng.getrandbits(64))
    return det


def test_uniformity_check_catches_a_cut_deck() -> None:
    state = with_deck_of(4)
    assert_redealt(_cuts_the_deck, state, 0, range(16))
    with pytest.raises(AssertionError, match="of the 24 deck orders"):
        assert_uniform(_cuts_the_deck, state)


def test_future_draws_differ() -> None:
    state = mid_game(5)
    truth = copy.deepcopy(state.rng).random()
    futures = {engine.determinize(state, 1, random.Random(s)).rng.random() for s in range(8)}
    assert truth not in futures and len(futures) == 8


def test_a_seat_outside_the_game_is_refused() -> None:
    state = engine.new_game(seed=1)
    with pytest.raises(ValueError, match="seats 0 and 1"):
        engine.determinize(state, 2, random.Random(0))


def test_doctest() -> None:
    module = importlib.import_module("services.channeling.engine.determinize")
    result = doctest.testmod(module)
    assert result.attempted and not result.failed


# --- canonical: what the seat cannot see changes nothing --------------------------------


def twin(state: engine.State, rng: random.Random) -> engine.State:
    """``state`` with what no seat can see changed: another deck order and generator."""
    other = copy.deepcopy(state)
    rng.shuffle(other.deck)
    other.rng = Rng(rng.getrandbits(64))
    return other


def assert_canonical(
    hook: Hook, state: engine.State, seat: int | None, seeds: range = range(3)
) -> None:
    """Under the same seed, ``state`` and any state the seat cannot tell from it (one
    determinized with another seed, or a twin with another deck order and generator)
    give the same determinized state: a bot's search cannot depend on the hidden order.
    """
    for s in seeds:
        det = hook(state, seat, random.Random(s))
        for t in range(2):
            inner = hook(state, seat, random.Random(100 + t))
            assert hook(inner, seat, random.Random(s)) == det, (
                f"seeds {s}, {100 + t}: the hidden deck order showed through"
            )
        other = twin(state, random.Random(200 + s))
        assert hook(other, seat, random.Random(s)) == det, (
            f"seed {s}: the hidden deck order showed through (another order, same view)"
        )


def test_the_hidden_order_never_shows_through() -> None:
    checked = 0
    for seed in range(GAMES):
        for state in game_states(seed):
            for seat in SEATS:
                assert_canonical(engine.determinize, state, seat)
                checked += len(state.deck) > 1
    assert checked > GAMES * POINTS, "states with a deck to re-order were checked"


def _shuffles_the_true_order(
    state: engine.State, seat: int | None, rng: random.Random
) -> engine.State:
    """A uniform shuffle, but of the deck as it truly lies."""
    return _shuffle(state, rng)


@pytest.mark.parametrize("seat", SEATS)
def test_canonical_check_catches_a_shuffle_of_the_true_order(seat: int | None) -> None:
    state = mid_game(3)
    # It keeps every view, re-deals and is uniform: only the canonical check sees it.
    check_determinize(_WithHook(_shuffles_the_true_order), state, seat)
    assert_redealt(_shuffles_the_true_order, state, seat, range(16))
    assert_uniform(_shuffles_the_true_order, with_deck_of(4))
    with pytest.raises(AssertionError, match="the hidden deck order showed through"):
        assert_canonical(_shuffles_the_true_order, state, seat)


# --- play goes on from a determinized state ------------------------------------------


@pytest.mark.parametrize("seed", range(6))
def test_random_play_reaches_an_outcome_from_a_determinized_state(seed: int) -> None:
    state = mid_game(seed)
    seat = state.current if seed % 2 else None
    det = engine.determinize(state, seat, random.Random(seed))
    rng = random.Random(seed)
    decisions = 0
    while engine.outcome(det) is None:
        assert decisions < 1000, "no outcome after 1000 decisions"
        engine.apply(det, *choose(engine, det, rng))
        invariants(det)
        for viewer in SEATS:
            leak_check(det, engine.view(det, viewer), viewer)
        decisions += 1
    assert max(len(pile) for pile in det.acquired) >= 7


# --- controls: a broken hook is caught -----------------------------------------------


class _WithHook:
    """The engine with its determinize replaced."""

    def __init__(self, hook: Hook) -> None:
        self.determinize = hook

    def __getattr__(self, name: str) -> Any:
        return getattr(engine, name)


def _shuffle(state: engine.State, rng: random.Random) -> engine.State:
    det = copy.deepcopy(state)
    rng.shuffle(det.deck)
    det.rng = Rng(rng.getrandbits(64))
    return det


def _redeals_glyphs_too(state: engine.State, seat: int | None, rng: random.Random) -> engine.State:
    """Treats the seat's Glyph Cards as hidden: hand and played pile re-dealt."""
    det = _shuffle(state, rng)
    who = det.current if seat is None else seat
    glyphs = det.hands[who] + det.played[who]
    rng.shuffle(glyphs)
    size = len(det.hands[who])
    det.hands[who], det.played[who] = sorted(glyphs[:size]), glyphs[size:]
    return det


def _redeals_grid_cards(state: engine.State, seat: int | None, rng: random.Random) -> engine.State:
    """Treats the face-up grid as hidden: its cards re-dealt with the deck's."""
    det = _shuffle(state, rng)
    cells = [c for c, card in enumerate(det.grid) if card is not None]
    pool = [det.grid[c] for c in cells] + det.deck
    rng.shuffle(pool)
    for c in cells:
        det.grid[c] = pool.pop()
    det.deck = pool
    return det


def _shuffles_the_input(state: engine.State, seat: int | None, rng: random.Random) -> engine.State:
    rng.shuffle(state.deck)
    return _shuffle(state, rng)


def _unseeded(state: engine.State, seat: int | None, rng: random.Random) -> engine.State:
    return _shuffle(state, random.Random())


def _leaves_the_deck(state: engine.State, seat: int | None, rng: random.Random) -> engine.State:
    det = copy.deepcopy(state)
    det.rng = Rng(rng.getrandbits(64))
    return det


def _keeps_the_generator(state: engine.State, seat: int | None, rng: random.Random) -> engine.State:
    det = copy.deepcopy(state)
    rng.shuffle(det.deck)
    return det


def _duplicates_a_card(state: engine.State, seat: int | None, rng: random.Random) -> engine.State:
    det = _shuffle(state, rng)
    det.deck[0] = det.deck[-1]
    return det


@pytest.mark.parametrize(
    ("hook", "fault"),
    [
        (_redeals_glyphs_too, "the seat's view changed"),
        (_redeals_grid_cards, "the seat's view changed"),
        (_shuffles_the_input, "changed the state it was given"),
        (_unseeded, "the same seed gave a different state"),
    ],
)
@pytest.mark.parametrize("seat", SEATS)
def test_check_determinize_catches_a_broken_hook(hook: Hook, fault: str, seat: int | None) -> None:
    state = mid_game(3)
    with pytest.raises(AssertionError, match=fault):
        check_determinize(_WithHook(hook), state, seat)


@pytest.mark.parametrize(
    ("hook", "fault"),
    [
        (_leaves_the_deck, "never re-ordered"),
        (_keeps_the_generator, "not re-seeded"),
        (_duplicates_a_card, "deck cards not conserved"),
    ],
)
def test_redeal_check_catches_what_views_cannot_show(hook: Hook, fault: str) -> None:
    # These keep every view and pass check_determinize; only the re-deal check sees them.
    state = mid_game(3)
    check_determinize(_WithHook(hook), state, 0)
    with pytest.raises(AssertionError, match=fault):
        assert_redealt(hook, state, 0, range(16))


def test_controls_pass_the_true_hook() -> None:
    # The same state and checks with the real hook: the controls fail for their fault only.
    state = mid_game(3)
    for seat in SEATS:
        check_determinize(engine, state, seat)
        assert_redealt(engine.determinize, state, seat, range(16))
        assert_canonical(engine.determinize, state, seat)
    assert_uniform(engine.determinize, with_deck_of(4))
