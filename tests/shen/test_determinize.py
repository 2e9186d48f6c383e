"""The determinize hook: a seat cannot tell the state it returns from the true one, and
everything hidden from that seat (deck order, other hands, the generator) is re-dealt,
each player's unseen cards among that player's own hand and deck."""

from __future__ import annotations

import copy
import random
from collections import Counter
from collections.abc import Callable

import pytest

from services.kit.determinize import check_determinize
from services.kit.engine import Rng
from services.kit.testing import choose, random_game
from services.shen import engine
from services.shen.engine.state import Step
from tests.shen.test_random_play import invariants, leak_check

Hook = Callable[[engine.State, "int | None", random.Random], engine.State]

# name: (players, options, games); round limits keep random games short.
CONFIGS = {
    "2p": (2, engine.Options(round_limit=40), 8),
    "3p": (3, engine.Options(round_limit=40), 4),
    "2x2 teams": (4, engine.Options(teams=2, round_limit=30), 4),
    "2p small field, 60 cards": (
        2,
        engine.Options(size=5, deck_size=60, anchor_points=("c3",), round_limit=60),
        4,
    ),
    "2p default, no round limit": (2, engine.Options(), 4),
}
POINTS = 6  # states per game, from the set-up to the end
SEEDS = range(16)  # determinizations per state in the re-deal checks


def states_along(seed: int, players: int, options: engine.Options) -> list[engine.State]:
    """States of one random game at POINTS decisions spread from the first to the end."""
    played = random_game(engine, seed, players, options)
    last = played.decisions
    marks = {round(i * last / (POINTS - 1)) for i in range(POINTS)}
    state = engine.new_game(seed, players, options)
    found = []
    for i, (seat, move) in enumerate(played.moves):
        if i in marks:
            found.append(copy.deepcopy(state))
        engine.apply(state, seat, move)
    found.append(state)  # the end: the last mark
    return found


def dealt(seed: int = 3, players: int = 2) -> engine.State:
    """A 2-player game just past Pre-Game: six cards in every hand, the rest in the decks."""
    state = engine.new_game(seed, players, engine.Options(round_limit=40))
    rng = random.Random(seed)
    while state.step == Step.PLACE_STONE:
        engine.apply(state, *choose(engine, state, rng))
    return state


def midgame(seed: int = 0, players: int = 2, options: engine.Options | None = None) -> engine.State:
    """A random game some 40 decisions in, at the first point where every hand holds two
    cards or more (random play soon empties hands)."""
    options = options or engine.Options(round_limit=40)
    state = engine.new_game(seed, players, options)
    rng = random.Random(seed)
    for decisions in range(400):
        if decisions >= 40 and all(len(p.hand) >= 2 for p in state.players):
            return state
        engine.apply(state, *choose(engine, state, rng))
    raise AssertionError(f"seed {seed}: no hand of two or more cards for everyone")


def assert_redeals(hook: Hook, state: engine.State, seat: int | None) -> None:
    """Over SEEDS, ``hook`` changes exactly what ``seat`` cannot see, keeps each player's
    cards that player's (hand and deck sizes too), and does re-deal: every deck that can
    be reordered is, for some seed, and so is every hand hidden from ``seat``."""
    dets = [hook(state, seat, random.Random(s)) for s in SEEDS]
    for det in dets:
        restored = copy.deepcopy(det)
        for mine, true in zip(restored.players, state.players, strict=True):
            mine.hand, mine.deck = true.hand[:], true.deck[:]
        restored.rng = copy.deepcopy(state.rng)
        assert restored == state, "something besides the hands, decks and generator changed"
        assert det.rng != state.rng, "the generator was not re-seeded"
        for mine, true in zip(det.players, state.players, strict=True):
            assert Counter(mine.hand + mine.deck) == Counter(true.hand + true.deck), (
                f"seat {true.seat}'s unseen cards are not its own any more"
            )
            assert (len(mine.hand), len(mine.deck)) == (len(true.hand), len(true.deck))
            assert mine.hand == sorted(mine.hand)
            if true.seat == seat:
                assert mine.hand == true.hand, "the seat's own hand was re-dealt"
        invariants(det)
    for true in state.players:
        if len(set(true.deck)) > 1:
            assert any(det.players[true.seat].deck != true.deck for det in dets), (
                f"seat {true.seat}'s deck is never re-dealt"
            )
        if true.seat != seat and true.hand and true.deck and len(set(true.hand + true.deck)) > 1:
            assert any(det.players[true.seat].hand != true.hand for det in dets), (
                f"seat {true.seat}'s hand is never re-dealt for seat {seat}"
            )


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_the_contract_holds_along_random_games(config):
    players, options, games = CONFIGS[config]
    checked = 0
    for seed in range(games):
        for state in states_along(seed, players, options):
            for seat in [*range(players), None]:
                for det in check_determinize(engine, state, seat, play=20):
                    invariants(det)
                assert_redeals(engine.determinize, state, seat)
                checked += 1
    assert checked == games * POINTS * (players + 1)


def test_everything_unseen_can_land_in_an_opponents_hand():
    """Every unseen place is reachable: each kind of card the opponent may hold turns up
    in its re-dealt hand for some seed; the seat's own hand never moves, its deck does."""
    state = dealt()
    opponent = state.players[1]
    hands = [engine.determinize(state, 0, random.Random(s)).players[1].hand for s in range(200)]
    assert set().union(*hands) == set(opponent.hand + opponent.deck)
    assert len({tuple(hand) for hand in hands}) > 150  # hardly ever the same hand twice
    own = [engine.determinize(state, 0, random.Random(s)).players[0] for s in range(20)]
    assert all(p.hand == state.players[0].hand for p in own)
    assert len({tuple(p.deck) for p in own}) == 20  # the face-down deck is shuffled


def test_a_spectator_sees_every_hand_re_dealt():
    state = midgame()
    for seat in range(state.n):
        hands = {
            tuple(engine.determinize(state, None, random.Random(s)).players[seat].hand)
            for s in SEEDS
        }
        assert len(hands) > 1


def test_a_teammates_hand_is_hidden_and_re_dealt():
    state = midgame(1, 4, engine.Options(teams=2, round_limit=30))
    assert state.teammates(0, 2)
    assert_redeals(engine.determinize, state, 0)
    hands = {tuple(engine.determinize(state, 0, random.Random(s)).players[2].hand) for s in SEEDS}
    assert len(hands) > 1


# --- controls: a broken hook fails these checks -----------------------------------------


class _WithHook:
    """The Shén engine with another determinize hook in place of its own."""

    def __init__(self, hook: Hook) -> None:
        self.determinize = hook

    def __getattr__(self, name: str):
        return getattr(engine, name)


def _own_hand_too(state, seat, rng):
    """Wrong: re-deals the seat's own hand as well."""
    det = engine.determinize(state, seat, rng)
    mine = det.players[seat]
    cards = mine.hand + mine.deck
    rng.shuffle(cards)
    mine.hand, mine.deck = sorted(cards[: len(mine.hand)]), cards[len(mine.hand) :]
    return det


def _mutates(state, seat, rng):
    """Wrong: shuffles the decks of the state it was given."""
    for player in state.players:
        rng.shuffle(player.deck)
    return engine.determinize(state, seat, rng)


def _unseeded(state, seat, rng):
    """Wrong: draws from a generator of its own, so a seed does not fix the result."""
    return engine.determinize(state, seat, random.Random())


def _hands_untouched(state, seat, rng):
    """Wrong: shuffles the decks and re-seeds, but leaves the other hands as they are."""
    det = copy.deepcopy(state)
    for player in det.players:
        rng.shuffle(player.deck)
    det.rng = Rng(rng.getrandbits(64))
    return det


def _not_reseeded(state, seat, rng):
    """Wrong: future draws and dice stay those of the true game."""
    det = engine.determinize(state, seat, rng)
    det.rng = copy.deepcopy(state.rng)
    return det


def _across_players(state, seat, rng):
    """Wrong: deals unseen cards across players (a spectator's view is unchanged)."""
    det = engine.determinize(state, seat, rng)
    others = [p for p in det.players if p.seat != seat]
    cards = [c for p in others for c in p.hand + p.deck]
    rng.shuffle(cards)
    for p in others:
        held, left = len(p.hand), len(p.deck)
        p.hand, p.deck, cards = (
            sorted(cards[:held]),
            cards[held : held + left],
            cards[held + left :],
        )
    return det


@pytest.mark.parametrize("hook", [_own_hand_too, _mutates, _unseeded])
def test_control_the_contract_check_catches_a_broken_hook(hook):
    state = midgame()
    check_determinize(engine, copy.deepcopy(state), 0)  # the real hook passes here
    with pytest.raises(AssertionError):
        check_determinize(_WithHook(hook), state, 0)


@pytest.mark.parametrize(
    ("hook", "seat"), [(_hands_untouched, 0), (_not_reseeded, 0), (_across_players, None)]
)
def test_control_the_re_deal_check_catches_a_hook_that_re_deals_too_little(hook, seat):
    state = midgame()
    assert_redeals(engine.determinize, state, seat)  # the real hook passes here
    # Each of these shows the seat the same view: only the re-deal check can tell.
    check_determinize(_WithHook(hook), state, seat)
    with pytest.raises(AssertionError):
        assert_redeals(hook, state, seat)


# --- play goes on from a determinized state ---------------------------------------------


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (2, engine.Options(round_limit=40)),
        (3, engine.Options(round_limit=40)),
        (4, engine.Options(teams=2, round_limit=30)),
    ],
)
def test_random_play_reaches_an_outcome_from_determinized_states(players, options):
    for seed in range(3):
        played = random_game(engine, seed, players, options)
        state = engine.new_game(seed, players, options)
        for seat, move in played.moves[: played.decisions // 2]:
            engine.apply(state, seat, move)
        for viewer in (engine.to_act(state)[0], None):
            det = engine.determinize(state, viewer, random.Random(seed))
            rng = random.Random(seed)
            decisions = 0
            while engine.outcome(det) is None:
                assert decisions < 20_000, "no outcome"
                engine.apply(det, *choose(engine, det, rng))
                invariants(det)
                if decisions % 25 == 0:
                    for who in [*range(players), None]:
                        leak_check(det, engine.view(det, who), who)
                decisions += 1
            final = engine.outcome(det)
            assert final is not None and engine.to_act(det) == ()
            check_determinize(engine, det, viewer)  # the end can be determinized too


# --- canonical: only what the seat sees shapes the re-deal ------------------------------

CANON_SEEDS = range(3)


def assert_canonical(hook: Hook, state: engine.State, seat: int | None) -> int:
    """Under each seed, ``hook`` gives one state for ``state`` and for each state the seat
    cannot tell from it (the real hook's re-deals of it under other seeds: other hidden
    cards, deck orders and generator): what the seat may not see cannot shape the result.
    Returns how many twins hold other cards where ``state`` does (where the check has
    teeth; the generator always differs)."""
    differ = 0
    seen = engine.view(state, seat)
    for t in CANON_SEEDS:
        twin = engine.determinize(state, seat, random.Random(1000 + t))
        assert engine.view(twin, seat) == seen
        differ += any(
            (mine.hand, mine.deck) != (true.hand, true.deck)
            for mine, true in zip(twin.players, state.players, strict=True)
        )
        for s in CANON_SEEDS:
            assert hook(twin, seat, random.Random(s)) == hook(state, seat, random.Random(s)), (
                f"seat {seat}, seeds {s}, {t}: hidden cards shaped the re-deal"
            )
    return differ


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_states_a_seat_cannot_tell_apart_determinize_alike(config):
    players, options, _ = CONFIGS[config]
    differ = 0
    for seed in range(2):
        for state in states_along(seed, players, options):
            for seat in [*range(players), None]:
                differ += assert_canonical(engine.determinize, state, seat)
    assert differ > 0, "no twin differed from its state: the check proved nothing"


def _from_true_order(state, seat, rng):
    """Wrong: shuffles each pool from the order it finds it in (the hidden true order)."""
    det = copy.deepcopy(state)
    for player in det.players:
        if player.seat == seat:
            rng.shuffle(player.deck)
        else:
            unseen = player.hand + player.deck
            rng.shuffle(unseen)
            player.hand, player.deck = (
                sorted(unseen[: len(player.hand)]),
                unseen[len(player.hand) :],
            )
    det.rng = Rng(rng.getrandbits(64))
    return det


def _keeps_the_generator(state, seat, rng):
    """Wrong: re-deals canonically but seeds future draws from the true generator."""
    det = engine.determinize(state, seat, rng)
    det.rng = Rng(copy.deepcopy(state.rng).getrandbits(64) ^ rng.getrandbits(64))
    return det


@pytest.mark.parametrize("hook", [_from_true_order, _keeps_the_generator])
def test_control_the_canonical_check_catches_a_hook_reading_hidden_parts(hook):
    state = midgame()
    assert_canonical(engine.determinize, state, 0)  # the real hook passes here
    check_determinize(_WithHook(hook), copy.deepcopy(state), 0)  # the contract holds
    assert_redeals(hook, copy.deepcopy(state), 0)  # and it re-deals
    with pytest.raises(AssertionError, match="hidden cards shaped the re-deal"):
        assert_canonical(hook, state, 0)
