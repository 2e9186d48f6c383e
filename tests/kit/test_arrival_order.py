"""Simultaneous decisions never depend on the order in which they reach the server.

For every engine in the registry: seeded random games, and at a bounded number of states
where several seats are to act at once, the same decisions are played in every arrival
order (services/kit/arrival.py) and must give the same state. The controls are two toy
games with one shared token: one hands it to whoever grabs first (the check must catch
it), the other settles the claims when the step ends (the check must pass it).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pytest

from services.kit.arrival import arrival_orders, check_arrival_orders, seeded_chooser
from services.kit.engine import IllegalMove, Outcome, check_seat
from services.kit.testing import random_game_count
from services.registry import SERVICES

CHECKS_PER_GAME = 3  # states checked in each random game
MAX_DECISIONS = 1_500  # a game is followed this far at most: the checks are the point
GAMES = random_game_count(2, 20)


def _configs():
    for entry in SERVICES:
        info = entry.engine().GAME
        for players in range(info.min_players, min(info.max_players, 4) + 1):
            yield pytest.param(entry.name, players, id=f"{entry.name}-{players}")


def _check_random_games(engine, players: int) -> tuple[int, int]:
    """(states checked, arrival orders played) over the seeded random games."""
    checked = orders = 0
    options = engine.GAME.options_type()
    for seed in range(GAMES):
        state = engine.new_game(seed, players, options)
        rng = random.Random(seed * 31 + players)
        done = 0
        for _ in range(MAX_DECISIONS):
            if engine.outcome(state) is not None:
                break
            seats = engine.to_act(state)
            if len(seats) > 1 and done < CHECKS_PER_GAME and rng.random() < 0.2:
                orders += check_arrival_orders(engine, state, seeded_chooser(rng.randrange(99)))
                done += 1
            seat = rng.choice(seats)
            engine.apply(state, seat, rng.choice(engine.legal_moves(state, seat)))
        checked += done
    return checked, orders


@pytest.mark.parametrize(("name", "players"), list(_configs()))
def test_simultaneous_decisions_give_the_same_game_in_every_arrival_order(name, players) -> None:
    engine = next(e for e in SERVICES if e.name == name).engine()
    checked, orders = _check_random_games(engine, players)
    if name == "glow":  # its dice, cards and journeys are simultaneous on every day
        assert checked >= GAMES and orders >= checked * 2 * 2


# ---- the controls: a toy game with one shared token --------------------------------------


@dataclass
class _Table:
    """Two rounds; in each, every seat at once may grab the one token or pass."""

    fair: bool
    alone: bool = False  # between the rounds, seat 0 alone counts the tokens
    counting: bool = False
    pile: int = 1
    got: list[int] = field(default_factory=lambda: [0, 0, 0])
    claims: list[bool] = field(default_factory=lambda: [False, False, False])
    done: list[bool] = field(default_factory=lambda: [False, False, False])
    round: int = 1
    result: Outcome | None = None


class _Grab:
    """An engine for the table. ``fair``: the claims are settled in seat order when the
    round ends; otherwise the token goes to whichever grab arrives first."""

    @staticmethod
    def outcome(state: _Table) -> Outcome | None:
        return state.result

    @staticmethod
    def to_act(state: _Table) -> tuple[int, ...]:
        if state.result is not None:
            return ()
        if state.counting:
            return (0,)
        return tuple(seat for seat in range(3) if not state.done[seat])

    @staticmethod
    def legal_moves(state: _Table, seat: int) -> list[str]:
        if seat not in _Grab.to_act(state):
            return []
        if state.counting:
            return ["count"]
        return ["grab", "pass"] if state.pile else ["pass"]

    @staticmethod
    def apply(state: _Table, seat: int, move: str) -> list:
        check_seat(_Grab, state, seat)
        if move not in _Grab.legal_moves(state, seat):
            raise IllegalMove(f"cannot {move}", rule="the token")
        if move == "count":
            state.counting = False
            return []
        if move == "grab" and state.fair:
            state.claims[seat] = True
        elif move == "grab":
            state.pile -= 1
            state.got[seat] += 1
        state.done[seat] = True
        if all(state.done):
            for other in range(3):
                if state.claims[other] and state.pile:
                    state.pile -= 1
                    state.got[other] += 1
            state.claims = [False] * 3
            state.done = [False] * 3
            state.pile = 1
            state.round += 1
            state.counting = state.alone
            if state.round > 2:
                state.result = Outcome(tuple(state.got), (), "COUNTED")
        return []


def _greedy(seat: int, k: int, moves) -> str:
    return moves[0]  # "grab" whenever it is offered


def test_the_check_catches_a_token_that_goes_to_the_first_arrival() -> None:
    with pytest.raises(AssertionError, match="arrival order"):
        check_arrival_orders(_Grab, _Table(fair=False), _greedy)
    script = {0: ["grab"], 1: ["grab"], 2: ["pass"]}
    with pytest.raises(AssertionError, match="decides whether a move is allowed"):
        check_arrival_orders(_Grab, _Table(fair=False), script)


def test_the_check_passes_claims_settled_when_the_step_ends() -> None:
    state = _Table(fair=True)
    assert check_arrival_orders(_Grab, state, _greedy) == 2 * 6
    assert state == _Table(fair=True), "the checked state is not changed"
    played = arrival_orders(_Grab, state, {0: ["grab"], 1: ["grab"], 2: ["pass"]})
    assert {a.state.got[0] for a in played} == {1} and all(a.refused is None for a in played)
    # Each order stopped where the next round's simultaneous step began.
    assert all(a.state.round == 2 and len(a.moves) == 3 for a in played)
    assert {a.moves for a in played} >= {
        ((0, "grab"), (1, "grab"), (2, "pass")),
        ((2, "pass"), (1, "grab"), (0, "grab")),
    }


def test_the_step_closes_where_the_next_simultaneous_step_begins() -> None:
    """Seat 0 alone counts between the rounds: whether it was the last to grab or the
    first, each order plays that count and stops at the second round."""
    played = arrival_orders(_Grab, _Table(fair=True, alone=True), _greedy)
    assert {(a.state.round, a.state.counting, len(a.moves)) for a in played} == {(2, False, 4)}
    assert all(a.moves[-1] == (0, "count") for a in played)
    assert check_arrival_orders(_Grab, _Table(fair=True, alone=True), _greedy) == 12
