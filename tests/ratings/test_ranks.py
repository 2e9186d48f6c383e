"""Ranks from outcomes: two sides, resignations and forfeits (from the kit's own table),
ties, zombie seats in Shén, teams, and the endings that are not rated."""

from __future__ import annotations

import pytest

from services import registry
from services.kit import ratings
from services.kit import table as tables
from services.kit.engine import Outcome
from services.kit.testing import random_game

SINGLES2 = ((0,), (1,))
SINGLES3 = ((0,), (1,), (2,))
TEAMS2 = ((0, 2), (1, 3))  # Shén's 2v2: seat i plays for team i % 2


def ranks(outcome: Outcome, sides: tuple[tuple[int, ...], ...], given_up=()) -> dict:
    """{seats: rank} of the contestants, and each given-up seat marked."""
    found = ratings.contestants(outcome, sides, given_up)
    seats = sorted(s for c in found for s in c.seats)
    assert seats == list(range(len(outcome.scores))), "every seat rated exactly once"
    return {c.seats: (c.rank, "gave up") if c.gave_up else c.rank for c in found}


def table(sides: tuple[tuple[int, ...], ...]) -> tables.Table:
    players = sum(len(s) for s in sides)
    plan = tables.Plan(tuple(tables.SeatPlan(tables.RESERVED, f"P{i}") for i in range(players)))
    return tables.Table.create(plan, ("h" * 64,) * players, sides, 0.0, (0,))


def given_up(t: tables.Table) -> set[int]:
    return {i for i, s in enumerate(t.seats) if s.state == tables.GIVEN_UP}


def test_two_sides() -> None:
    assert ranks(Outcome((40, 30), (0,), "MOST_SPLENDOR"), SINGLES2) == {(0,): 1, (1,): 2}
    # The winner by a tie-break ranks first whatever the scores say.
    assert ranks(Outcome((30, 30), (1,), "TIE_WENT_SECOND"), SINGLES2) == {(0,): 2, (1,): 1}
    assert ranks(Outcome((5, 9), (0,), "NO_VALID_PLACEMENT"), SINGLES2) == {(0,): 1, (1,): 2}


@pytest.mark.parametrize("why", ["resigned", "forfeited on time"])
def test_a_seat_that_gives_up_loses(why: str) -> None:
    """The kit's table ends a two-seat game when one seat resigns or forfeits on time
    (the same entry, @resign): the other wins, the seat that gave up ranks last."""
    t = table(SINGLES2)
    assert t.resign(0, 10.0, 2, why)
    outcome = t.final_outcome(None)
    assert outcome is not None and outcome.reason == "RESIGNED"
    assert ranks(outcome, SINGLES2, given_up(t)) == {(1,): 1, (0,): (2, "gave up")}


def test_ties() -> None:
    # A shared win is a tie for first; the others after it.
    assert ranks(Outcome((30, 20, 30), (0, 2), "SHARED_VICTORY"), SINGLES3) == {
        (0,): 1,
        (2,): 1,
        (1,): 2,
    }
    # Losers with equal scores tie; losers rank by score, higher first.
    four = ((0,), (1,), (2,), (3,))
    assert ranks(Outcome((10, 20, 20, 30), (3,), "MOST_BURSTS_OF_LIGHT"), four) == {
        (3,): 1,
        (1,): 2,
        (2,): 2,
        (0,): 3,
    }
    # Everyone lost: ranked by score alone; equal scores a draw.
    assert ranks(Outcome((0, 0), (), "BOTH_OUT_OF_TREASURE"), SINGLES2) == {(0,): 1, (1,): 1}
    assert ranks(Outcome((0, 3, 0), (), "NO_CARDS_LEFT"), SINGLES3) == {(1,): 1, (0,): 2, (2,): 2}


def test_zombie_seat_in_shen_ranks_last_whatever_its_score() -> None:
    """In a three-player Shén a seat that resigns leaves the game going on (the service
    plays its zombie seat); when the rules end it, the zombie may hold the best score,
    and the table keeps it out of the winners: it still ranks last."""
    t = table(SINGLES3)
    assert not t.resign(0, 5.0, 3, "resigned")  # two sides left: the game goes on
    engine_outcome = Outcome((40, 12, 7), (0,), "ROUND_LIMIT")
    outcome = t.final_outcome(engine_outcome)
    assert outcome is not None and outcome.winners == ()
    assert ranks(outcome, SINGLES3, given_up(t)) == {(1,): 1, (2,): 2, (0,): (3, "gave up")}


def test_teams() -> None:
    outcome = Outcome((10, 12, 8, 9), (1, 3), "LAST_WITH_CARDS")
    assert ranks(outcome, TEAMS2) == {(1, 3): 1, (0, 2): 2}
    three = ((0, 3), (1, 4), (2, 5))
    outcome = Outcome((1, 1, 5, 1, 1, 0), (0, 3), "ROUND_LIMIT")
    # Losing teams rank by their summed scores: (2, 5) has 5, (1, 4) has 2.
    assert ranks(outcome, three) == {(0, 3): 1, (2, 5): 2, (1, 4): 3}


def test_a_teammate_who_gives_up_is_split_from_its_side() -> None:
    """2v2: seat 2 resigns, its teammate plays on with the zombie, and their team wins.
    The teammate is rated as the winning side; the seat that gave up lost to everyone."""
    t = table(TEAMS2)
    assert not t.resign(2, 5.0, 4, "resigned")
    outcome = t.final_outcome(Outcome((9, 3, 4, 2), (0, 2), "LAST_WITH_CARDS"))
    assert outcome is not None and outcome.winners == (0,)
    assert ranks(outcome, TEAMS2, given_up(t)) == {(0,): 1, (1, 3): 2, (2,): (3, "gave up")}


def test_a_whole_team_gives_up() -> None:
    t = table(TEAMS2)
    assert not t.resign(0, 5.0, 4, "resigned")
    assert t.resign(2, 6.0, 4, "forfeited on time")  # the last of its side: the game ends
    outcome = t.final_outcome(None)
    assert outcome is not None and outcome.winners == (1, 3)
    assert ranks(outcome, TEAMS2, given_up(t)) == {
        (1, 3): 1,
        (0,): (2, "gave up"),
        (2,): (2, "gave up"),
    }


@pytest.mark.parametrize("ending", [tables.ABANDON, tables.EXPIRE])
def test_games_ended_off_the_rules_are_not_rated(ending: str) -> None:
    t = table(SINGLES2)
    t.end(ending, 2)
    outcome = t.final_outcome(None)
    assert outcome is not None
    with pytest.raises(ratings.NotRated) as caught:
        ratings.contestants(outcome, SINGLES2)
    assert caught.value.reason == outcome.reason
    assert caught.value.reason in ("ABANDONED", "EXPIRED")


def test_bad_structure_is_refused() -> None:
    with pytest.raises(ValueError):
        ratings.contestants(Outcome((1, 2, 3), (0,), "X"), SINGLES2)
    with pytest.raises(ValueError):
        ratings.contestants(Outcome((1, 2), (0,), "X"), SINGLES2, given_up=(5,))


SHORT = {"shen": {"round_limit": 6}, "resarcana": {"round_limit": 10}}


@pytest.mark.parametrize("game", registry.names())
def test_real_outcomes_rank_their_winners_first(game: str) -> None:
    """Each shape of each game, a few seeded random games to the end: the engine's
    winners rank first, every seat once, ranks 1..k with no gap."""
    engine = registry.by_name(game).engine()
    info = engine.GAME
    for shape in ratings.shapes(info):
        options = info.options_type(**{**SHORT.get(game, {}), **ratings.options_for(info, shape)})
        for seed in range(3):
            outcome = random_game(engine, seed, shape.players, options).outcome
            assert outcome is not None
            found = ratings.contestants(outcome, shape.seating)
            by_seat = {s: c.rank for c in found for s in c.seats}
            assert sorted(by_seat) == list(range(shape.players))
            for seat in outcome.winners:
                assert by_seat[seat] == 1
            used = sorted({c.rank for c in found})
            assert used == list(range(1, len(used) + 1))
