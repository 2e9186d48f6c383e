"""Seeded random games to the end, the contract and the invariants checked after every move."""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path

import pytest

from services.kit.testing import (
    assert_golden,
    check_random_game,
    random_game,
    random_game_count,
    record_playthrough,
)
from services.shen import engine
from services.shen.engine import CARDS
from services.shen.engine.state import MAX_ITEMS, Step
from tests.shen.helpers import hidden_changed

GOLDEN = Path(__file__).parent / "golden"
# The soak (TABLETOP_RANDOM_GAMES set) plays a thousand long games per configuration: it
# runs the kit's deep checks (every seat's moves and views with the leak check, the
# out-of-turn probe) every 21st decision instead of every 7th. Invariants still run after
# every move and replay after every game.
DEEP_EVERY = 21 if os.environ.get("TABLETOP_RANDOM_GAMES") else 7

# The house rule's limit the random configurations play under: without it, random players
# sometimes reach a position nobody can change (about one game in 50 to 200 with 4 or 6
# players), which the rulebook never ends. The default game (no limit) is played too, with
# 2 and 3 players: every seed the soak plays ends (see the README: the round limit).
LIMIT = 40

# name: (players, options, games in a quick run; TABLETOP_RANDOM_GAMES sets them all)
CONFIGS = {
    "2p": (2, engine.Options(round_limit=LIMIT), 15),
    "3p": (3, engine.Options(round_limit=LIMIT), 8),
    "4p": (4, engine.Options(round_limit=LIMIT), 5),
    "6p": (6, engine.Options(round_limit=LIMIT), 3),
    "2x2 teams": (4, engine.Options(teams=2, round_limit=LIMIT), 5),
    "2p small field, 60 cards, one anchor": (
        2,
        engine.Options(size=5, deck_size=60, anchor_points=("c3",), round_limit=60),
        12,
    ),
    "6p three teams, six anchors": (
        6,
        engine.Options(
            teams=3, anchor_points=("a1", "h1", "a8", "h8", "d4", "e5"), round_limit=LIMIT
        ),
        4,
    ),
    "2p default, no round limit": (2, engine.Options(), 8),
    "3p default, no round limit": (3, engine.Options(), 3),
}


def invariants(state: engine.State) -> None:
    b = state.board
    # Every card in exactly one place.
    on_field: list[list[int]] = [[] for _ in state.players]
    for avatar in state.avatars.values():
        on_field[avatar.owner].append(avatar.card)
        on_field[avatar.owner].extend(avatar.items)
    for p in state.players:
        where = p.hand + p.deck + p.discard + p.removed + p.remains + on_field[p.seat]
        if state.playing >= 0 and state.active == p.seat:
            where.append(state.playing)
        where.sort()
        assert tuple(where) == state.initial_decks[p.seat], f"seat {p.seat}'s cards moved"
        assert p.hand == sorted(p.hand)
        if p.out:
            assert p.cards_left() == 0 and not on_field[p.seat]
        elif state.step != Step.OVER and state.step != Step.PLACE_STONE:
            assert p.cards_left() + (state.playing >= 0 and state.active == p.seat) > 0
    # Counters and Realm Stones on vertices only, never together; stones never adjacent.
    on_board = b.on_board
    for v in state.counters:
        assert v >= 256 and v in on_board and v not in state.stones
    for v in state.stones:
        assert v >= 256 and v in on_board
        assert not any(w in state.stones for w in b.links[v]), "Realm Stones side by side"
        assert not any(v in b.corners[a] for a in state.anchors), "a stone on an Anchor Point"
    assert len(state.stones) == (state.placed if state.step == Step.PLACE_STONE else state.n)
    # Avatars: one per space or vertex, in the right kind of place.
    assert len(state.at) == len(state.avatars)
    for uid, avatar in state.avatars.items():
        assert state.at[avatar.loc] == uid and avatar.loc in on_board
        if CARDS[avatar.card].is_spirit:
            assert avatar.loc >= 256 and state.counters.get(avatar.loc) == avatar.owner
            assert not avatar.items
        else:
            assert avatar.loc < 256
        assert len(avatar.items) <= MAX_ITEMS
    for anchor in state.claims:
        assert anchor in state.anchors
    for task in state.tasks:
        if task[0] == "lose":
            assert task[2] > 0
    if state.combat is None:
        assert not any(t[0] in ("support", "resolve", "position", "enter") for t in state.tasks)


def leak_check(state: engine.State, seen: engine.View, seat: int | None) -> None:
    """The view must not change when everything hidden from ``seat`` changes."""
    with hidden_changed(state, seat):
        assert engine.view(state, seat) == seen, "the view depends on hidden information"
    if seat is None:
        # Every view has the same fields; the spectator's repr stands for them all.
        text = repr(seen)
        assert "Rng(" not in text and "seed=" not in text and "deck=" not in text
        assert seen.hand is None
    else:
        assert seen.hand == tuple(CARDS[c].id for c in state.players[seat].hand)


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_random_games_reach_an_outcome_with_invariants(config):
    players, options, quick = CONFIGS[config]
    games = random_game_count(quick)
    reasons: Counter[str] = Counter()
    for seed in range(games):
        played = check_random_game(
            engine,
            seed,
            players,
            options,
            invariants=invariants,
            leak_check=leak_check,
            deep_every=DEEP_EVERY,
        )
        reasons[played.outcome.reason] += 1
        assert played.state.turn > players  # more than one round
    assert sum(reasons.values()) == games


def test_public_events_never_name_a_drawn_card():
    options = engine.Options(round_limit=LIMIT)
    played = random_game(engine, 5, 3, options)
    state = engine.new_game(5, 3, options)
    for seat, move in played.moves:
        for event in engine.apply(state, seat, move):
            if event.kind == "drew":
                assert event.to == frozenset({event.seat})
            if event.to is None:
                assert event.kind != "drew"
                if event.kind == "drew_count":
                    assert "card" not in event.data
    assert state == played.state


@pytest.mark.parametrize(
    ("name", "seed", "players", "options"),
    [
        ("2p-small", 1, 2, engine.Options(size=5, anchor_points=("c3",), round_limit=4)),
        ("4p-teams", 2, 4, engine.Options(size=6, teams=2, round_limit=2)),
    ],
)
def test_golden_playthrough(name, seed, players, options):
    assert_golden(GOLDEN / f"{name}.txt", record_playthrough(engine, seed, players, options))
