"""Table shapes come from each game's GameInfo and sides_of, and agree with its engine."""

from __future__ import annotations

import dataclasses

import pytest

from services import registry
from services.kit import ratings
from services.kit.engine import BadOptions, GameInfo, Options

ENGINES = {entry.name: entry.engine() for entry in registry.SERVICES}


def test_every_game_has_a_free_for_all_shape_per_player_count() -> None:
    for name, engine in ENGINES.items():
        info = engine.GAME
        free = [s for s in ratings.shapes(info) if not s.teams]
        assert [s.players for s in free] == list(range(info.min_players, info.max_players + 1))
        assert [s.key for s in free] == [f"{name}/{s.players}p" for s in free]
        for shape in free:
            assert shape.seating == tuple((seat,) for seat in range(shape.players))
            assert ratings.options_for(info, shape) == {}


def test_the_shapes_named_in_the_issue() -> None:
    keys = {s.key for engine in ENGINES.values() for s in ratings.shapes(engine.GAME)}
    for key in ("channeling/2p", "shrine/2p", "resarcana/2p", "glow/2p", "glow/3p", "glow/4p"):
        assert key in keys
    assert {k for k in keys if k.startswith("glow/")} == {"glow/2p", "glow/3p", "glow/4p"}
    shen = sorted(k for k in keys if k.startswith("shen/"))
    free = [f"shen/{n}p" for n in range(2, 7)]
    assert shen == sorted([*free, "shen/2v2", "shen/3v3", "shen/2v2v2"])


def test_team_shapes_are_exactly_the_team_tables_the_engine_accepts() -> None:
    """Every teams value Shén's new_game accepts gives a listed shape (whose sides are
    the table's), and every listed team shape's options make a table the engine accepts."""
    shen = ENGINES["shen"]
    info = shen.GAME
    listed = {s for s in ratings.shapes(info) if s.teams}
    accepted = set()
    for players in range(info.min_players, info.max_players + 1):
        for teams in range(0, players + 1):
            options = info.options_type(teams=teams)
            try:
                shen.new_game(1, players, options)
            except BadOptions:
                continue
            shape = ratings.shape_of(info, players, options)
            assert shape is not None
            assert shape.seating == info.sides_of(players, options)
            if shape.teams:
                accepted.add(shape)
    assert accepted == listed
    for shape in listed:
        options = dataclasses.replace(info.options_type(), **ratings.options_for(info, shape))
        shen.new_game(1, shape.players, options)
        assert ratings.shape_of(info, shape.players, options) == shape


def test_parse_shape() -> None:
    glow, shen = ENGINES["glow"].GAME, ENGINES["shen"].GAME
    assert ratings.parse_shape(glow, "3p").key == "glow/3p"
    assert ratings.parse_shape(glow, "glow/4p").players == 4
    assert ratings.parse_shape(shen, "2v2v2").seating == ((0, 3), (1, 4), (2, 5))
    for bad in ("5p", "1p", "2v2", "shen/3p", "", "3P", "glow/"):
        with pytest.raises(ratings.UnknownShape):
            ratings.parse_shape(glow, bad)
    with pytest.raises(ratings.UnknownShape, match="2p, 3p, 4p"):
        ratings.parse_shape(glow, "9p")


@dataclasses.dataclass(frozen=True)
class _Options(Options):
    split: int = 0


def _uneven(players: int, options: _Options) -> tuple[tuple[int, ...], ...]:
    if options.split == 0:
        return tuple((seat,) for seat in range(players))
    return ((0,), tuple(range(1, players)))


def test_unequal_sides_have_no_shape() -> None:
    """A game whose sides could be one seat against the rest: such tables get no shape
    (never rated), the free-for-all ones do."""
    info = GameInfo("lopsided", "Lopsided", 3, 3, _Options, lambda n: ("a", "b", "c"), _uneven)
    assert ratings.shape_of(info, 3, _Options(split=1)) is None
    assert ratings.shape_of(info, 3, _Options()) is not None
    assert [s.key for s in ratings.shapes(info)] == ["lopsided/3p"]
    assert ratings.shape_of(info, 4, _Options()) is None  # a count the game does not seat
