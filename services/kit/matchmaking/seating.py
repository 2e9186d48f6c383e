"""Who sits where once a group is matched: teams balanced by rating, sides at random.

In a free-for-all shape every player takes a seat at random (which seat moves first is
the game's business). In a team shape the group is split into the shape's teams so that
the teams' summed skill (mu) is as even as it can be (every split is tried: a table
holds at most six), then the teams take the shape's sides at random and each team's
players its seats at random. A bot counts as the group's average player.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence
from typing import TypeVar

from services.kit.ratings import Shape

T = TypeVar("T")


def splits(players: int, teams: int) -> Iterator[list[list[int]]]:
    """Every way to split seats-to-be 0..players-1 into ``teams`` teams of equal size,
    each split once (teams unordered: the first team always holds 0)."""
    size, rest = divmod(players, teams)
    if rest or size < 1:
        raise ValueError(f"{players} cannot split into {teams} equal teams")
    yield from _splits(list(range(players)), size)


def _splits(items: list[int], size: int) -> Iterator[list[list[int]]]:
    if not items:
        yield []
        return
    first, others = items[0], items[1:]
    for mates in itertools.combinations(others, size - 1):
        remaining = [item for item in others if item not in mates]
        for tail in _splits(remaining, size):
            yield [[first, *mates], *tail]


def balanced(skills: Sequence[float], teams: int, rng: random.Random) -> list[list[int]]:
    """Indexes of ``skills`` split into ``teams`` equal teams whose summed skills are
    closest (smallest gap between the strongest and the weakest team); among equally
    even splits, one at random."""
    best: list[list[list[int]]] = []
    best_gap = float("inf")
    for split in splits(len(skills), teams):
        sums = [sum(skills[i] for i in team) for team in split]
        gap = max(sums) - min(sums)
        if gap < best_gap - 1e-9:
            best, best_gap = [split], gap
        elif gap <= best_gap + 1e-9:
            best.append(split)
    return rng.choice(best)


def seat(shape: Shape, group: Sequence[T], skills: Sequence[float], rng: random.Random) -> list[T]:
    """``group`` (with each member's skill) in seat order for a table of ``shape``."""
    if len(group) != shape.players or len(skills) != len(group):
        raise ValueError(f"a table of {shape} seats {shape.players}")
    if not shape.teams:
        order = list(group)
        rng.shuffle(order)
        return order
    seats: dict[int, T] = {}
    split = balanced(skills, len(shape.seating), rng)
    rng.shuffle(split)  # which team takes which side
    for team, side in zip(split, shape.seating, strict=True):
        members = list(team)
        rng.shuffle(members)
        for index, seat_no in zip(members, side, strict=True):
            seats[seat_no] = group[index]
    return [seats[seat_no] for seat_no in range(shape.players)]
