"""The determinize hook: a seat's view, decisions and outcome never change, everything
hidden from it is really re-dealt (and only that), hidden cards move only among hidden
places of their own deck, the result depends only on what the seat sees and the seed,
and play goes on to the end from the states it makes.

The controls at the bottom hand these checks deliberately broken hooks, to show each
check fails when the guarantee it stands for is broken.
"""

from __future__ import annotations

import copy
import random
import types
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from services.kit.determinize import check_determinize
from services.kit.engine import Rng
from services.kit.testing import choose, random_game
from services.shrine import engine
from services.shrine.engine.content import CONTENT
from services.shrine.engine.determinize import _hidden_slots, _redeal_codes
from services.shrine.engine.state import Phase, State
from tests.shrine.invariants import check_state, check_view

CONFIGURATIONS = {
    "base": engine.Options(),
    "radiant_shapes": engine.Options(radiant_shapes=True),
}
SEATS = (0, 1, None)
GAMES = 12  # per configuration
EVERY = 23  # decisions between two sampled points of a game
# Steps where a Shape card is in a special place: the drawn pair, or revealed in hand.
SHAPE_STEPS = (Phase.KEEP, Phase.SHAPE_AT, Phase.SHAPE_CLAIM)

Hook = Callable[[State, int | None, random.Random], State]


def states(options: engine.Options, seed: int) -> Iterator[State]:
    """A seeded random game: its start, every EVERY-th decision, the first state of each
    Shape step, and its end (copies)."""
    state = engine.new_game(seed, 2, options)
    chooser = random.Random(seed)
    played, steps = 0, set()
    while True:
        special = state.phase in SHAPE_STEPS and state.phase not in steps
        if played % EVERY == 0 or special or engine.outcome(state) is not None:
            steps.add(state.phase)
            yield copy.deepcopy(state)
        if engine.outcome(state) is not None:
            return
        engine.apply(state, *choose(engine, state, chooser))
        played += 1


def all_states() -> Iterator[tuple[str, int, State]]:
    for name, options in sorted(CONFIGURATIONS.items()):
        for seed in range(GAMES):
            for state in states(options, seed):
                yield name, seed, state


# -- what a seat cannot see, described here independently of the hook ---------------------


def revealed(state: State) -> int:
    """The Shape card being completed: shown to all, still in its owner's hand."""
    return state.shape if state.shape in state.players[state.current].hand else -1


def hidden_shapes(state: State, seat: int | None) -> Counter[int]:
    """The Shape cards ``seat`` cannot see, wherever they lie."""
    cards = [card for deck in state.decks for card in deck]
    if seat != state.current:
        cards += state.drawn
    for other, player in enumerate(state.players):
        if other != seat:
            cards += [card for card in player.hand if card != revealed(state)]
    return Counter(cards)


def by_deck(cards: Counter[int]) -> dict[int, Counter[int]]:
    out: dict[int, Counter[int]] = {size: Counter() for size in CONTENT.decks}
    for card, n in cards.items():
        out[CONTENT.shapes[card].deck][card] += n
    return out


def codes_hidden(state: State, seat: int | None) -> list[int]:
    """Seats whose Code card ``seat`` cannot see: checked against the claims at the end."""
    return [] if state.result is not None else [s for s in (0, 1) if s != seat]


def with_hidden_of(det: State, true: State, seat: int | None) -> State:
    """``det`` with every hidden part put back as in ``true``: equal to ``true`` exactly
    when the hook changed nothing else."""
    back = copy.deepcopy(det)
    back.rng = copy.deepcopy(true.rng)
    for s in codes_hidden(true, seat):
        back.players[s].code = true.players[s].code
    back.decks = copy.deepcopy(true.decks)
    if seat != true.current:
        back.drawn = list(true.drawn)
    for s in (0, 1):
        if s != seat:
            back.players[s].hand = list(true.players[s].hand)
    return back


Changes = Counter[str]


def assert_redealt_in_hidden_parts(state: State, seat: int | None, dets: list[State]) -> Changes:
    """Each of ``dets`` differs from ``state`` only in what ``seat`` cannot see, keeps the
    hidden Shape cards of each deck among the hidden places (each place its size, each
    hand its count per deck), and deals Code cards of the set the seat could believe in.
    Returns which hidden parts some ``det`` changed, and asserts that a part with more
    than one possible arrangement changed for some seed."""
    changed: Changes = Counter()
    members = CONTENT.code_sets[state.code_set]
    hidden = hidden_shapes(state, seat)
    for det in dets:
        assert with_hidden_of(det, state, seat) == state, "a part the seat sees was changed"
        assert det.rng != state.rng, "the generator was not re-seeded"
        assert by_deck(hidden_shapes(det, seat)) == by_deck(hidden), "a hidden card changed deck"
        assert [len(d) for d in det.decks] == [len(d) for d in state.decks]
        assert len(det.drawn) == len(state.drawn)
        for s in (0, 1):
            mine, true = det.players[s].hand, state.players[s].hand
            assert mine == sorted(mine), "a hand is kept sorted"
            sizes = Counter(CONTENT.shapes[c].deck for c in mine)
            assert sizes == Counter(CONTENT.shapes[c].deck for c in true), "a hand's decks"
        if revealed(state) >= 0:
            assert revealed(state) in det.players[state.current].hand
        codes = [p.code for p in det.players]
        assert codes[0] != codes[1] and set(codes) <= set(members), "not a pair of the set"
        for s in codes_hidden(state, seat):
            changed["code"] += codes[s] != state.players[s].code
        changed["deck order"] += det.decks != state.decks
        changed["drawn pair"] += seat != state.current and det.drawn != state.drawn
        for s in (0, 1):
            if s != seat:
                changed["hand"] += det.players[s].hand != state.players[s].hand
        check_state(det)
    # With eight seeds, a part that can take several arrangements changes for one of them.
    if codes_hidden(state, seat):
        assert changed["code"], "no seed re-dealt a hidden Code card"
    rearrangeable = sum(hidden.values()) > 1 and any(
        len(cards) > 1 for cards in by_deck(hidden).values()
    )
    if rearrangeable:
        assert changed["deck order"] + changed["hand"] + changed["drawn pair"], (
            "no seed re-dealt the hidden Shape cards"
        )
    return changed


# -- (a) the contract, everywhere ---------------------------------------------------------


def test_the_kit_contract_holds_at_many_points_of_random_games() -> None:
    """24 random games, from the start to the end, for both seats and a spectator."""
    points = Counter[str]()
    for name, _, state in all_states():
        for seat in SEATS:
            for det in check_determinize(engine, state, seat, seeds=range(3), play=20):
                check_state(det)
                for viewer in SEATS:
                    check_view(det, engine.view(det, viewer), viewer)
        points[name] += 1
        points[state.phase.name] += 1
        points["over"] += state.result is not None
    assert points["base"] >= 5 * GAMES and points["radiant_shapes"] >= 5 * GAMES
    assert points["over"] == 2 * GAMES
    for phase in SHAPE_STEPS:
        assert points[phase.name] > 0, f"no state sampled in step {phase.name}"


# -- (b) hidden parts re-dealt, and only those --------------------------------------------


def test_everything_hidden_is_redealt_and_nothing_else() -> None:
    totals: Counter[str] = Counter()
    for _, _, state in all_states():
        for seat in SEATS:
            dets = [engine.determinize(state, seat, random.Random(s)) for s in range(8)]
            totals += assert_redealt_in_hidden_parts(state, seat, dets)
    # Each kind of hidden thing was seen re-dealt somewhere.
    for part in ("code", "deck order", "hand", "drawn pair"):
        assert totals[part] > 0, f"{part} was never re-dealt"


def test_the_seat_keeps_its_own_cards_and_the_revealed_shape() -> None:
    state = engine.new_game(3, 2, engine.Options(radiant_shapes=True))
    for seat in (0, 1):
        det = engine.determinize(state, seat, random.Random(5))
        assert det.players[seat].hand == state.players[seat].hand
        assert det.players[seat].code == state.players[seat].code
        assert det.players[1 - seat].code != state.players[seat].code
    # a Shape card on its way to completion stays where all have seen it
    seen = 0
    for _, _, state in all_states():
        if state.phase in (Phase.SHAPE_AT, Phase.SHAPE_CLAIM):
            for seat in SEATS:
                det = engine.determinize(state, seat, random.Random(seen))
                assert state.shape in det.players[state.current].hand
                seen += 1
    assert seen


def test_the_spectator_and_the_end_of_the_game() -> None:
    state = engine.new_game(4, 2, engine.Options(radiant_shapes=True))
    dets = [engine.determinize(state, None, random.Random(s)) for s in range(8)]
    assert any(d.players[0].hand != state.players[0].hand for d in dets)
    assert any(d.players[1].code != state.players[1].code for d in dets)
    # at the end the claims were checked against the Code cards: they stay
    *_, over = states(engine.Options(radiant_shapes=True), 4)
    assert over.result is not None
    for seat in SEATS:
        det = engine.determinize(over, seat, random.Random(1))
        assert [p.code for p in det.players] == [p.code for p in over.players]


def test_a_seat_that_is_no_seat_is_refused() -> None:
    state = engine.new_game(1, 2, engine.Options())
    before = copy.deepcopy(state)
    for seat in (2, -1, "0", True):
        with pytest.raises(ValueError):
            engine.determinize(state, seat, random.Random(0))  # type: ignore[arg-type]
    assert state == before


# -- (e) canonical: only what the seat sees, and the seed, decide the result ---------------

OUTER_SEEDS = (0, 1, 2)  # s: the seed of the determinization compared
INNER_SEEDS = (3, 4)  # t: seeds of states the seat cannot tell from the true one


def assert_canonical(hook: Hook, state: State, seat: int | None) -> int:
    """``hook(state, seat, Random(s)) == hook(hook(state, seat, Random(t)), seat,
    Random(s))``: the inner call makes a state that differs from ``state`` only in what
    ``seat`` cannot see, so an equal result shows the hook read nothing hidden. Returns
    how many of those inner states really differed from ``state``."""
    differed = 0
    twins = []
    for t in INNER_SEEDS:
        twin = hook(copy.deepcopy(state), seat, random.Random(t))
        twin.rng = copy.deepcopy(state.rng)  # differ in the hidden cards alone
        differed += twin != state
        twins.append(twin)
    for s in OUTER_SEEDS:
        det = hook(copy.deepcopy(state), seat, random.Random(s))
        for twin in twins:
            assert hook(twin, seat, random.Random(s)) == det, (
                f"seed {s}: the result depends on what seat {seat} cannot see"
            )
    return differed


def test_the_result_depends_only_on_what_the_seat_sees() -> None:
    """Over many points of 24 random games, both seats and a spectator."""
    checked = differed = 0
    for _, _, state in all_states():
        for seat in SEATS:
            differed += assert_canonical(engine.determinize, state, seat)
            checked += 1
    assert checked > 100
    # the twins were really different deals, most of the time
    assert differed > checked


def _from_true_order(state: State, seat: int | None, rng: random.Random) -> State:
    """Broken: shuffles each pool of hidden Shape cards starting from the true order."""
    det = copy.deepcopy(state)
    if det.result is None:
        _redeal_codes(det, seat, rng)
    slots = _hidden_slots(det, seat)
    for size in CONTENT.decks:
        here = [(cards, i) for cards, i in slots if CONTENT.shapes[cards[i]].deck == size]
        dealt = [cards[i] for cards, i in here]
        rng.shuffle(dealt)
        for (cards, i), card in zip(here, dealt, strict=True):
            cards[i] = card
    for player in det.players:
        player.hand.sort()
    det.rng = Rng(rng.getrandbits(64))
    return det


def test_the_canonical_check_catches_a_deal_from_the_true_order() -> None:
    state = _shape_state()
    assert_canonical(engine.determinize, state, 0)  # the real hook passes here
    check_determinize(_with_hook(_from_true_order), copy.deepcopy(state), 0)  # a fair hook
    with pytest.raises(AssertionError, match="cannot see"):
        assert_canonical(_from_true_order, state, 0)


# -- (d) play goes on to the end ----------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_random_play_reaches_an_outcome_from_determinized_states(name: str) -> None:
    """Mid-game, determinize for each seat and the spectator and play on at random to the
    end, with the invariants after every move and the leak check on every view."""
    options = CONFIGURATIONS[name]
    ended = 0
    for seed in range(4):
        moves = random_game(engine, seed, 2, options).moves
        state = engine.new_game(seed, 2, options)
        for seat, move in moves[: len(moves) // 2]:
            engine.apply(state, seat, move)
        assert engine.outcome(state) is None
        chooser = random.Random(seed)
        for seat in SEATS:
            det = engine.determinize(state, seat, random.Random(seed))
            check_state(det)
            played = 0
            while engine.outcome(det) is None:
                assert played < 2000, "no outcome after 2000 decisions"
                engine.apply(det, *choose(engine, det, chooser))
                check_state(det)
                if played % 5 == 0:
                    for viewer in SEATS:
                        check_view(det, engine.view(det, viewer), viewer)
                played += 1
            ended += 1
    assert ended == 4 * len(SEATS)


# -- (c) controls: broken hooks fail these checks -----------------------------------------


def _with_hook(hook: Hook) -> Any:
    """The Shrine engine with another determinize hook."""
    return types.SimpleNamespace(
        view=engine.view,
        legal_moves=engine.legal_moves,
        to_act=engine.to_act,
        outcome=engine.outcome,
        apply=engine.apply,
        determinize=hook,
    )


def _redeal_everything(state: State, seat: int | None, rng: random.Random) -> State:
    """Broken: shuffles every hand, the seat's own too."""
    det = engine.determinize(state, seat, rng)
    pool = [c for p in det.players for c in p.hand]
    rng.shuffle(pool)
    for player in det.players:
        player.hand, pool = sorted(pool[: len(player.hand)]), pool[len(player.hand) :]
    return det


def _in_place(state: State, seat: int | None, rng: random.Random) -> State:
    """Broken: re-deals the state it was given, then returns a copy."""
    det = engine.determinize(state, seat, rng)
    for mine, theirs in zip(state.players, det.players, strict=True):
        mine.code, mine.hand = theirs.code, list(theirs.hand)
    state.decks = copy.deepcopy(det.decks)
    return copy.deepcopy(det)


def _unseeded(state: State, seat: int | None, rng: random.Random) -> State:
    """Broken: draws from a generator of its own instead of ``rng``."""
    return engine.determinize(state, seat, random.Random())


def _lazy(state: State, seat: int | None, rng: random.Random) -> State:
    """Broken: claims to re-deal but only re-seeds the generator."""
    det = copy.deepcopy(state)
    det.rng = Rng(rng.getrandbits(64))
    return det


def _codes_only(state: State, seat: int | None, rng: random.Random) -> State:
    """Broken: re-deals the Code cards but leaves every Shape card where it truly is."""
    det = engine.determinize(state, seat, rng)
    det.decks, det.drawn = copy.deepcopy(state.decks), list(state.drawn)
    for mine, true in zip(det.players, state.players, strict=True):
        mine.hand = list(true.hand)
    return det


def _across_decks(state: State, seat: int | None, rng: random.Random) -> State:
    """Broken: deals the opponent's hand from any deck, keeping only its size."""
    det = engine.determinize(state, seat, rng)
    other = det.players[1 - (seat or 0)]
    pool = other.hand + [c for deck in det.decks for c in deck]
    rng.shuffle(pool)
    size = len(other.hand)
    other.hand = sorted(pool[:size])
    rest = pool[size:]
    for deck in det.decks:
        deck[:], rest = rest[: len(deck)], rest[len(deck) :]
    return det


def _own_code_to_opponent(state: State, seat: int | None, rng: random.Random) -> State:
    """Broken: deals the opponent the seat's own Code card."""
    det = engine.determinize(state, seat, rng)
    if seat is not None:
        det.players[1 - seat].code = det.players[seat].code
    return det


def _shape_state() -> State:
    state = engine.new_game(2, 2, engine.Options(radiant_shapes=True))
    chooser = random.Random(2)
    for _ in range(15):
        engine.apply(state, *choose(engine, state, chooser))
    return state


def _case(hook: Hook, failure: str) -> Any:
    return pytest.param(hook, failure, id=hook.__name__.strip("_"))


@pytest.mark.parametrize(
    ("hook", "failure"),
    [
        _case(_redeal_everything, "the seat's view changed"),
        _case(_in_place, "changed the state it was given"),
        _case(_unseeded, "the same seed gave a different state"),
    ],
)
def test_the_contract_check_catches_a_broken_hook(hook: Hook, failure: str) -> None:
    state = _shape_state()
    check_determinize(engine, state, 0)  # the real hook passes here
    with pytest.raises(AssertionError, match=failure):
        check_determinize(_with_hook(hook), copy.deepcopy(state), 0)


@pytest.mark.parametrize(
    ("hook", "failure"),
    [
        _case(_redeal_everything, "a part the seat sees was changed"),
        _case(_lazy, "no seed re-dealt a hidden Code card"),
        _case(_codes_only, "no seed re-dealt the hidden Shape cards"),
        _case(_across_decks, "deck"),
        _case(_own_code_to_opponent, "not a pair of the set"),
    ],
)
def test_the_redeal_check_catches_a_broken_hook(hook: Hook, failure: str) -> None:
    state = _shape_state()
    dets = [engine.determinize(state, 0, random.Random(s)) for s in range(8)]
    assert_redealt_in_hidden_parts(state, 0, dets)  # the real hook passes here
    dets = [hook(copy.deepcopy(state), 0, random.Random(s)) for s in range(8)]
    with pytest.raises(AssertionError, match=failure):
        assert_redealt_in_hidden_parts(state, 0, dets)
