"""Seeded random games to the end, for each board and player count, with the invariants
(30 dice, 46 companions and 7 spell tokens each in exactly one place, tokens never
negative), the leak check on every view, and replay equal to the live state."""

from __future__ import annotations

import random
import time

import pytest

from services.glow import engine
from services.glow.engine.state import AFTERNOON, NOON
from services.kit.arrival import check_arrival_orders, seeded_chooser
from services.kit.testing import check_random_game, random_game, random_game_count

from .helpers import invariants, leak_check

CONFIGS = [(board, players) for board in ("province", "archipelago") for players in (2, 3, 4)]


@pytest.mark.parametrize(("board", "players"), CONFIGS)
def test_random_games_reach_an_outcome(board: str, players: int) -> None:
    reasons: dict[str, int] = {}
    games = random_game_count(10)  # per configuration: 1,000 in make soak
    decisions = longest = 0
    started = time.perf_counter()
    for seed in range(games):
        played = check_random_game(
            engine,
            seed,
            players,
            engine.Options(board=board),
            invariants=invariants,
            leak_check=leak_check,
        )
        assert played.state.day == 8, "the game lasts eight days"
        assert all(len(p.companions) <= 8 for p in played.state.players)
        reasons[played.outcome.reason] = reasons.get(played.outcome.reason, 0) + 1
        decisions += played.decisions
        longest = max(longest, played.decisions)
    assert "MOST_BURSTS_OF_LIGHT" in reasons
    seconds = time.perf_counter() - started
    print(
        f"\nglow {board} {players}p: {games} games, {decisions} decisions, {seconds:.1f} s, "
        f"longest {longest}, reasons {sorted(reasons.items())}"
    )


def test_interleaving_of_simultaneous_moves_does_not_change_the_game() -> None:
    """Two random orders of the same seats' moves give the same game (reroll streams)."""
    for seed in range(20):
        first = random_game(engine, seed, 4, engine.Options())
        # Replay the same per-seat move sequences, choosing the acting seat differently.
        queues = {seat: [m for s, m in first.moves if s == seat] for seat in range(4)}
        state = engine.new_game(seed, 4, engine.Options())
        rng = random.Random(seed + 99)
        while engine.outcome(state) is None:
            seats = list(engine.to_act(state))
            seat = rng.choice(seats)
            engine.apply(state, seat, queues[seat].pop(0))
        assert state == first.state


@pytest.mark.parametrize("board", ["province", "archipelago"])
def test_random_games_under_the_rules_games_were_stored_with_still_finish(board: str) -> None:
    """Stored rows without the newer options replay under the old rules (STORED_BEFORE)."""
    stored = engine.Options.from_dict({"board": board})
    assert (stored.evening, stored.simultaneous) == ("roll", "arrival")
    for seed in range(random_game_count(4)):
        played = check_random_game(
            engine, seed, 3, stored, invariants=invariants, leak_check=leak_check
        )
        assert played.state.day == 8


@pytest.mark.parametrize("players", [3, 4])
def test_noon_and_afternoon_come_out_the_same_in_every_arrival_order(players: int) -> None:
    """At the start of every Noon and Afternoon, the same decisions in every arrival order
    of the seats give the same game. (Under the old rule, Options(simultaneous="arrival"),
    this check finds differing orders in random games: 19 of 2,182 states in 150 games.)"""
    checked = 0
    for seed in range(random_game_count(3, 30)):
        state = engine.new_game(
            seed, players, engine.Options(board=("province", "archipelago")[seed % 2])
        )
        rng = random.Random(seed)
        seen: set[tuple[int, int]] = set()
        while engine.outcome(state) is None:
            moment = (state.day, state.step)
            if state.step in (NOON, AFTERNOON) and moment not in seen:
                seen.add(moment)
                if len(engine.to_act(state)) > 1:
                    check_arrival_orders(engine, state, seeded_chooser(seed))
                    checked += 1
            seat = rng.choice(engine.to_act(state))
            engine.apply(state, seat, rng.choice(engine.legal_moves(state, seat)))
    assert checked >= random_game_count(3, 30)


def test_public_events_never_name_a_face_down_spell() -> None:
    for seed in range(30):
        state = engine.new_game(seed, 4, engine.Options())
        rng = random.Random(seed)
        while engine.outcome(state) is None:
            seat = rng.choice(engine.to_act(state))
            move = rng.choice(engine.legal_moves(state, seat))
            for event in engine.apply(state, seat, move):
                hidden = {s for p in state.players for s in p.hidden_spells}
                if event.to is None:
                    assert event.data.get("spell", 0) not in hidden
                    assert not any(f"spell {s} (" in event.text for s in hidden)
                else:
                    assert len(event.to) == 1
