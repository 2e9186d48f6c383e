"""Glow's determinize hook: the kit's contract (check_determinize) at many moments of
random games for every seat and the spectator; the hidden parts really re-dealt and
nothing else touched; the result independent of the true hidden facts (the same state
under the same seed from any state the seat cannot tell from the true one, whether that
twin comes from the hook or is scrambled without it); play from a determinized state to
the end; and broken variants of the hook caught by these tests."""

from __future__ import annotations

import copy
import doctest
import functools
import importlib
import random
from collections import Counter
from collections.abc import Callable

import pytest

from services.glow import engine
from services.glow.engine import determinize
from services.glow.engine.content import COMPANIONS, DAYS, DICE, PACKS
from services.glow.engine.state import ADVENTURERS, State
from services.kit.determinize import check_determinize
from services.kit.engine import Rng
from services.kit.testing import choose, random_game

from .helpers import invariants, leak_check

CONFIGS = [(board, players) for board in ("province", "archipelago") for players in (2, 3, 4)]
# Random games whose moments the checks visit: one per configuration under make test;
# the soak-marked cases visit twenty (the count make test had before).
GAMES = len(CONFIGS)
GAME_COUNTS = [
    pytest.param(GAMES, id=f"{GAMES}-games"),
    pytest.param(20, id="20-games", marks=pytest.mark.soak),
]
POINTS = 6  # evenly spaced moments per game, from the first decision to the end
SEEDS = range(8)  # determinizations per (state, seat) in the re-deal checks

Hook = Callable[[State, "int | None", random.Random], State]


def _options(game: int) -> tuple[int, engine.Options]:
    board, players = CONFIGS[game % len(CONFIGS)]
    return players, engine.Options(board=board)


@functools.cache
def _moments(games: int = GAMES) -> tuple[State, ...]:
    """States of ``games`` random games (the configurations in turn): evenly spaced from
    the start to the end, plus the first moment a face-down spell is held and the first
    with a spell token in the box."""
    states: list[State] = []
    for game in range(games):
        players, options = _options(game)
        moves = random_game(engine, game, players, options).moves
        at = {round(k * len(moves) / (POINTS - 1)) for k in range(POINTS)}
        wanted = {"face_down": True, "boxed": True}
        state = engine.new_game(game, players, options)
        for i, (seat, move) in enumerate(moves):
            face_down = any(p.hidden_spells for p in state.players)
            boxed = bool(state.spell_box)
            if i in at or (face_down and wanted["face_down"]) or (boxed and wanted["boxed"]):
                states.append(copy.deepcopy(state))
                wanted["face_down"] &= not face_down
                wanted["boxed"] &= not boxed
            engine.apply(state, seat, move)
        assert engine.outcome(state) is not None
        states.append(copy.deepcopy(state))
    return tuple(states)


def _seats(state: State) -> list[int | None]:
    return [*range(state.n), None]


def _others(state: State, seat: int | None) -> list[int]:
    return [i for i in range(state.n) if i != seat]


def _unseen_spells(state: State, seat: int | None) -> list[int]:
    spells = state.spell_pile + state.spell_box
    for i in _others(state, seat):
        spells += state.players[i].hidden_spells
    return sorted(spells)


def _pack_of_each(cards: list[int]) -> list[str]:
    return [COMPANIONS[c].pack for c in cards]


def _with_true_hidden_parts(det: State, state: State, seat: int | None) -> State:
    """``det`` with the parts hidden from ``seat`` put back as they are in ``state``."""
    back = copy.copy(det)  # shallow: every hidden part below is replaced, not changed
    back.players = [copy.copy(p) for p in det.players]
    back.deck, back.box = list(state.deck), list(state.box)
    back.spell_pile, back.spell_box = list(state.spell_pile), list(state.spell_box)
    for i in _others(state, seat):
        back.players[i].hidden_spells = list(state.players[i].hidden_spells)
    for mine, true in zip(back.players, state.players, strict=True):
        mine.stream = true.stream
    back.rng = copy.deepcopy(state.rng)
    return back


def assert_redealt(state: State, seat: int | None, dets: list[State]) -> Counter[str]:
    """Each determinization differs from ``state`` only in what ``seat`` cannot see, keeps
    every hidden multiset (per pack for the companions, whose backs show the pack), and
    over the seeds every hidden part that could move did. Returns which parts moved."""
    moved: Counter[str] = Counter()
    for det in dets:
        assert _with_true_hidden_parts(det, state, seat) == state, "a visible part changed"
        assert det.rng != state.rng, "the generator was not re-seeded"
        assert [p.stream for p in det.players] != [p.stream for p in state.players]
        assert _pack_of_each(det.deck) == _pack_of_each(state.deck), "a deck card's back"
        for pack in PACKS:
            true = [c for c in state.deck + state.box if COMPANIONS[c].pack == pack]
            mine = [c for c in det.deck + det.box if COMPANIONS[c].pack == pack]
            assert sorted(mine) == sorted(true), f"pack {pack}: unseen companions"
        assert len(det.box) == len(state.box) and det.box == sorted(det.box)
        assert _unseen_spells(det, seat) == _unseen_spells(state, seat), "spell tokens"
        assert len(det.spell_pile) == len(state.spell_pile)
        assert len(det.spell_box) == len(state.spell_box)
        assert det.spell_box == sorted(det.spell_box)
        for i in _others(state, seat):
            assert len(det.players[i].hidden_spells) == len(state.players[i].hidden_spells)
        moved["deck"] += det.deck != state.deck
        moved["box"] += det.box != state.box
        moved["spell_pile"] += det.spell_pile != state.spell_pile
        moved["spell_box"] += det.spell_box != state.spell_box
        moved["face_down"] += any(
            det.players[i].hidden_spells != state.players[i].hidden_spells
            for i in _others(state, seat)
        )
    if state.step == ADVENTURERS:
        return moved  # nothing is dealt yet: the re-seeded generator deals it
    for pack in PACKS:
        places = sum(1 for c in state.deck if COMPANIONS[c].pack == pack)
        boxed = sum(1 for c in state.box if COMPANIONS[c].pack == pack)
        if places and places + boxed >= 2:
            assert moved["deck"], f"pack {pack}: the deck order was never re-dealt"
        if places and boxed:
            assert moved["box"], f"pack {pack}: the box was never re-dealt"
    unseen = _unseen_spells(state, seat)
    if len(unseen) >= 2 and len(unseen) > len(state.spell_box):
        assert moved["spell_pile"] or moved["face_down"], "face-down spells never re-dealt"
    if len(unseen) >= 2 and any(state.players[i].hidden_spells for i in _others(state, seat)):
        assert moved["face_down"], "another seat's face-down spell was never re-dealt"
    return moved


def _dets(hook: Hook, state: State, seat: int | None) -> list[State]:
    return [hook(state, seat, random.Random(s)) for s in SEEDS]


# ---- the contract --------------------------------------------------------------------


@pytest.mark.parametrize("games", GAME_COUNTS)
def test_the_contract_holds_at_every_moment_for_every_seat_and_the_spectator(games: int) -> None:
    moments = _moments(games)
    assert len(moments) >= games * POINTS
    checked = 0
    for state in moments:
        for seat in _seats(state):
            check_determinize(engine, state, seat)
            checked += 1
    assert checked >= games * POINTS * 3


@pytest.mark.parametrize("games", GAME_COUNTS)
def test_only_the_hidden_parts_are_redealt_and_every_hidden_multiset_is_kept(games: int) -> None:
    moved: Counter[str] = Counter()
    for state in _moments(games):
        for seat in _seats(state):
            moved += assert_redealt(state, seat, _dets(determinize, state, seat))
    # Every kind of hidden thing moved somewhere (the test is not vacuous).
    assert all(moved[part] for part in ("deck", "box", "spell_pile", "spell_box", "face_down"))


def test_a_seat_keeps_its_own_face_down_spell_and_the_others_are_redealt() -> None:
    held = [
        (state, seat)
        for state in _moments()
        for seat in range(state.n)
        if state.players[seat].hidden_spells
        and any(state.players[i].hidden_spells for i in _others(state, seat))
    ]
    assert held, "no moment with face-down spells in two seats"
    for state, seat in held:
        dets = _dets(determinize, state, seat)
        assert all(d.players[seat].hidden_spells == state.players[seat].hidden_spells for d in dets)
        # The spectator sees no face-down spell: the seat's own moves too.
        spectator = _dets(determinize, state, None)
        assert (
            any(
                d.players[seat].hidden_spells != state.players[seat].hidden_spells
                for d in spectator
            )
            or len(_unseen_spells(state, None)) < 2
        )


def _scramble(state: State, seat: int | None, rng: random.Random) -> State:
    """Another state ``seat`` cannot tell from ``state``, made without the hook: the
    hidden things shuffled starting from their true order (each deck place keeping its
    pack, the box three of each, every spell place its size), a new generator and new
    reroll keys. Before the deal nothing is dealt yet, so only the generator differs."""
    twin = copy.deepcopy(state)
    twin.rng = Rng(rng.getrandbits(64))
    for player in twin.players:
        player.stream = rng.getrandbits(64)
    if state.step == ADVENTURERS:
        return twin
    box: list[int] = []
    for pack in PACKS:
        places = [i for i, c in enumerate(twin.deck) if COMPANIONS[c].pack == pack]
        cards = [twin.deck[i] for i in places] + [c for c in twin.box if COMPANIONS[c].pack == pack]
        rng.shuffle(cards)
        for i, card in zip(places, cards, strict=False):
            twin.deck[i] = card
        box += cards[len(places) :]
    twin.box = sorted(box)
    others = [twin.players[i] for i in _others(state, seat)]
    spells = twin.spell_pile + twin.spell_box + [s for p in others for s in p.hidden_spells]
    rng.shuffle(spells)
    pile, boxed = len(twin.spell_pile), len(twin.spell_box)
    twin.spell_pile, twin.spell_box = spells[:pile], sorted(spells[pile : pile + boxed])
    spells = spells[pile + boxed :]
    for player in others:
        count = len(player.hidden_spells)
        player.hidden_spells, spells = spells[:count], spells[count:]
    return twin


def _dependent(
    hook: Hook, make_twin: Hook, twins: range, seeds: range, games: int = GAMES
) -> tuple[int, int]:
    """(pairs checked, pairs where ``hook`` told apart two states the seat cannot):
    for every moment of ``games`` games, seat and the spectator, ``hook(state, seat,
    Random(s))`` against ``hook(twin, seat, Random(s))``, each twin ``make_twin(state,
    seat, Random(t))``."""
    checked = failed = 0
    for state in _moments(games):
        for seat in _seats(state):
            mine = [hook(state, seat, random.Random(s)) for s in seeds]
            for t in twins:
                twin = make_twin(state, seat, random.Random(t))
                for s, det in zip(seeds, mine, strict=True):
                    checked += 1
                    failed += hook(twin, seat, random.Random(s)) != det
    return checked, failed


@pytest.mark.parametrize("games", GAME_COUNTS)
def test_the_result_depends_only_on_what_the_seat_sees(games: int) -> None:
    """Two states the seat cannot tell apart (the second a determinization of the first)
    give the same determinization under the same seed: a search never learns the truth."""
    checked, failed = _dependent(determinize, determinize, range(1000, 1002), range(3), games)
    assert failed == 0
    assert checked >= games * POINTS * 3 * 6


@pytest.mark.parametrize("games", GAME_COUNTS)
def test_states_scrambled_without_the_hook_give_the_same_determinization(games: int) -> None:
    """The same, with twins made independently of the hook (from the true order, not
    sorted): what the hook keeps is only what the seat sees."""
    pairs = redealt = 0
    for state in _moments(games)[::2]:
        for seat in _seats(state):
            twin = _scramble(state, seat, random.Random(7))
            assert engine.view(twin, seat) == engine.view(state, seat)
            assert _with_true_hidden_parts(twin, state, seat) == state, "a visible part moved"
            pairs += 1
            redealt += twin.deck != state.deck or twin.spell_pile != state.spell_pile
    assert redealt > pairs // 2, f"the scrambled twins hardly differ: {redealt} of {pairs}"
    checked, failed = _dependent(determinize, _scramble, range(2), range(2), games)
    assert failed == 0 and checked > 0


def test_play_continues_to_the_end_from_determinized_states() -> None:
    for game in range(6):
        players, options = _options(game)
        state = engine.new_game(game, players, options)
        rng = random.Random(game)
        while state.day < 4 or not any(p.hidden_spells for p in state.players):
            if state.day >= 6:
                break
            engine.apply(state, *choose(engine, state, rng))
        seat = (None, *range(players))[game % (players + 1)]
        det = determinize(state, seat, random.Random(game))
        invariants(det)
        decisions = 0
        while engine.outcome(det) is None:
            if decisions % 5 == 0:
                for viewer in _seats(det):
                    leak_check(det, engine.view(det, viewer), viewer)
            engine.apply(det, *choose(engine, det, rng))
            invariants(det)
            decisions += 1
        assert det.day == DAYS and decisions > 0
        assert engine.outcome(det) is not None and engine.to_act(det) == ()


def test_the_example_in_the_docstring_holds() -> None:
    module = importlib.import_module("services.glow.engine.determinize")
    result = doctest.testmod(module)
    assert result.attempted >= 3 and result.failed == 0


def test_a_bad_seat_is_refused() -> None:
    state = _moments()[1]
    with pytest.raises(ValueError, match="seats 0 to"):
        determinize(state, state.n, random.Random(0))


# ---- controls: broken hooks these tests catch ----------------------------------------


def _lazy(state: State, seat: int | None, rng: random.Random) -> State:
    """Copies and re-seeds, but leaves every hidden thing where it truly is."""
    det = copy.deepcopy(state)
    det.rng = Rng(rng.getrandbits(64))
    for player in det.players:
        player.stream = rng.getrandbits(64)
    return det


def _mixes_packs(state: State, seat: int | None, rng: random.Random) -> State:
    """Shuffles the deck and the box together, as if the backs did not show A and B."""
    det = determinize(state, seat, rng)
    unseen = sorted(det.deck + det.box)
    rng.shuffle(unseen)
    det.deck, det.box = unseen[: len(det.deck)], sorted(unseen[len(det.deck) :])
    return det


def _as_spectator(state: State, seat: int | None, rng: random.Random) -> State:
    """Re-deals for a spectator whatever the seat: the seat's own face-down spell moves."""
    return determinize(state, None, rng)


def _in_place(state: State, seat: int | None, rng: random.Random) -> State:
    """Forgets to copy first: re-deals the true state itself."""
    rng.shuffle(state.deck)
    state.rng = Rng(rng.getrandbits(64))
    return copy.deepcopy(state)


def _unseeded(state: State, seat: int | None, rng: random.Random) -> State:
    """Draws from a fresh generator instead of ``rng``: a search could not be replayed."""
    return determinize(state, seat, random.Random())


def _rerolls_dice(state: State, seat: int | None, rng: random.Random) -> State:
    """Also re-rolls the dice, whose faces are on the table."""
    det = determinize(state, seat, rng)
    det.faces = [rng.randrange(6) for _ in DICE]
    return det


def _unsorted(state: State, seat: int | None, rng: random.Random) -> State:
    """Shuffles the deck starting from its true order: the result then depends on it."""
    det = determinize(state, seat, rng)
    for pack in PACKS:
        places = [i for i, c in enumerate(state.deck) if COMPANIONS[c].pack == pack]
        cards = [state.deck[i] for i in places]
        rng.shuffle(cards)
        for i, card in zip(places, cards, strict=True):
            det.deck[i] = card
    return det


def _unsorted_spells(state: State, seat: int | None, rng: random.Random) -> State:
    """Shuffles the spell pile starting from its true order."""
    det = determinize(state, seat, rng)
    det.spell_pile = list(state.spell_pile)
    rng.shuffle(det.spell_pile)
    return det


def _mid_game_with_face_down_spells() -> tuple[State, int]:
    for state in _moments():
        for seat in range(state.n):
            if (
                state.players[seat].hidden_spells
                and len(state.spell_pile) >= 2
                and len(state.deck) >= 2
            ):
                return state, seat
    raise AssertionError("no moment where a seat holds a face-down spell")


@pytest.mark.parametrize(
    ("hook", "caught"),
    [
        (_as_spectator, "the seat's view changed"),
        (_in_place, "changed the state it was given"),
        (_unseeded, "the same seed gave a different state"),
        (_rerolls_dice, "the seat's view changed"),
    ],
)
def test_check_determinize_catches_a_broken_hook(
    hook: Hook, caught: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, seat = _mid_game_with_face_down_spells()
    check_determinize(engine, copy.deepcopy(state), seat)  # the real hook passes here
    monkeypatch.setattr(engine, "determinize", hook)
    with pytest.raises(AssertionError, match=caught):
        check_determinize(engine, copy.deepcopy(state), seat)


@pytest.mark.parametrize(
    ("hook", "caught"), [(_lazy, "never re-dealt"), (_mixes_packs, "a deck card's back")]
)
def test_the_redeal_check_catches_a_hook_that_hides_nothing_or_breaks_the_packs(
    hook: Hook, caught: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    state, seat = _mid_game_with_face_down_spells()
    monkeypatch.setattr(engine, "determinize", hook)
    check_determinize(engine, state, seat)  # the view alone cannot tell
    with pytest.raises(AssertionError, match=caught):
        assert_redealt(state, seat, _dets(hook, state, seat))


def test_the_redeal_check_catches_a_hook_that_changes_what_is_on_the_table() -> None:
    state, seat = _mid_game_with_face_down_spells()
    with pytest.raises(AssertionError, match="a visible part changed"):
        assert_redealt(state, seat, _dets(_rerolls_dice, state, seat))


@pytest.mark.parametrize("hook", [_unsorted, _unsorted_spells])
@pytest.mark.parametrize("make_twin", [determinize, _scramble])
def test_the_independence_checks_catch_a_hook_that_starts_from_the_true_order(
    hook: Hook, make_twin: Hook
) -> None:
    """A hook that shuffles the deck, or the spell pile, from its true order gives
    different states for twins the seat cannot tell apart: the checks above would fail."""
    checked, failed = _dependent(hook, make_twin, range(1000, 1001), range(1))
    assert failed > checked // 10, (failed, checked)
