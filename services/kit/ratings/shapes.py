"""Table shapes: a game and its seat structure, the unit a rating belongs to.

A player's rating in Glow at three is not its rating at four, nor its rating in Shén's
teams of two. A shape is derived from the game's own facts (services/kit/engine.py
``GameInfo``: the player counts, and ``sides_of(players, options)``: who wins or loses
together), never listed by hand per game:

- every seat a side of its own: ``"<n>p"`` (``channeling/2p``, ``glow/3p``, ``shen/5p``);
- sides of several seats: their sizes joined by ``v`` (``shen/2v2``, ``shen/3v3``,
  ``shen/2v2v2``).

Which team shapes a game has is found by asking its ``sides`` with each whole-number
option set to each count a table could split into: the options that make equal sides of
two or more seats are the game's team shapes, and are what a table of that shape is
created with (:func:`options_for`). A table whose sides are unequal has no shape and is
never rated (a game that allowed them would need a decision about what rating means
there; none does today).
"""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from services.kit.engine import EngineError, GameInfo

Sides = tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Shape:
    """A rated table structure of one game: ``seating`` lists each side's seats, as the
    game's ``sides_of`` gives them for a table of this shape."""

    game: str
    seating: Sides

    @property
    def players(self) -> int:
        return sum(len(side) for side in self.seating)

    @property
    def teams(self) -> bool:
        return any(len(side) > 1 for side in self.seating)

    @property
    def name(self) -> str:
        """The shape within its game: ``"3p"``, ``"2v2"`` (the store's ``shape`` column)."""
        if not self.teams:
            return f"{self.players}p"
        return "v".join(str(len(side)) for side in self.seating)

    @property
    def key(self) -> str:
        """The stable key across games: ``"glow/3p"``, ``"shen/2v2"``."""
        return f"{self.game}/{self.name}"

    def __str__(self) -> str:
        return self.key


class UnknownShape(ValueError):
    """The game has no such shape (a name not derived from its GameInfo)."""


def _side_structure(sides: Sides, players: int) -> bool:
    """Whether ``sides`` splits seats 0..players-1 into sides, each seat exactly once."""
    seats = [seat for side in sides for seat in side]
    return len(sides) >= 2 and all(sides) and sorted(seats) == list(range(players))


def _equal_teams(sides: Sides) -> bool:
    return len({len(side) for side in sides}) == 1 and len(sides[0]) >= 2


def shape_of(info: GameInfo, players: int, options: Any) -> Shape | None:
    """The shape of a table of ``players`` with ``options``; None when it has none (a
    player count the game does not seat, or unequal sides)."""
    if not info.min_players <= players <= info.max_players:
        return None
    sides = tuple(tuple(side) for side in info.sides_of(players, options))
    if not _side_structure(sides, players):
        return None
    if any(len(side) > 1 for side in sides) and not _equal_teams(sides):
        return None
    return Shape(info.name, sides)


def _int_fields(options_type: type[Any]) -> list[str]:
    hints = typing.get_type_hints(options_type)
    return [f.name for f in dataclasses.fields(options_type) if hints.get(f.name) is int]


def _variants(info: GameInfo) -> list[tuple[int, dict[str, int]]]:
    """(players, option overrides) for every table structure the game's sides can take:
    the default options at each count, then each whole-number option set to each count
    from 2 to the players (the only values that can split seats into teams)."""
    found: list[tuple[int, dict[str, int]]] = []
    for players in range(info.min_players, info.max_players + 1):
        found.append((players, {}))
        if info.sides is None:
            continue
        for name in _int_fields(info.options_type):
            found.extend((players, {name: value}) for value in range(2, players + 1))
    return found


@functools.cache
def _tables(info: GameInfo) -> dict[Shape, dict[str, int]]:
    """Each shape of the game, with the option overrides that make a table of it."""
    default = info.options_type()
    shapes: dict[Shape, dict[str, int]] = {}
    for players, overrides in _variants(info):
        try:
            options = dataclasses.replace(default, **overrides) if overrides else default
            shape = shape_of(info, players, options)
        except (EngineError, ValueError, TypeError):
            continue  # a value the options (or the sides) refuse makes no table
        if shape is None or (overrides and not shape.teams):
            continue  # an override that makes no teams is not what made the shape
        shapes.setdefault(shape, overrides)
    return shapes


def shapes(info: GameInfo) -> tuple[Shape, ...]:
    """Every shape of the game: free-for-all by player count, then team shapes."""
    found = _tables(info)
    return tuple(sorted(found, key=lambda s: (s.teams, s.players, len(s.seating))))


def parse_shape(info: GameInfo, name: str) -> Shape:
    """The game's shape called ``name`` (``"3p"``, ``"2v2"``, or the full key
    ``"glow/3p"``); :class:`UnknownShape` naming the game's shapes otherwise."""
    game, slash, rest = name.partition("/")
    wanted = rest if slash else name
    if slash and game != info.name:
        raise UnknownShape(f"{name!r} is not a shape of {info.name}")
    for shape in shapes(info):
        if shape.name == wanted:
            return shape
    known = ", ".join(s.name for s in shapes(info))
    raise UnknownShape(f"{info.name} has no shape {wanted!r}; its shapes are {known}")


def options_for(info: GameInfo, shape: Shape) -> Mapping[str, int]:
    """The option values a table of ``shape`` is created with (``{"teams": 2}`` for
    Shén's 2v2); empty for a free-for-all shape. A request's own options must agree."""
    return dict(_tables(info)[shape])
