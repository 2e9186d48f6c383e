"""Rated tables: the rules a table asking to be rated must meet, and the rating job of
its finishing entry (docs/ratings.md, "Tables: rated or not").

A rated table is kept as ``"rated": true`` in the game row's table config (the plan
chosen at creation, which never changes afterwards), so every backend, every replica and
a replay after a restart agree on it without a column of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from services.kit import table as tables
from services.kit.engine import GameInfo, Outcome
from services.kit.ratings.errors import (
    RatedJoinNeedsPlayer,
    RatedNeedsClock,
    RatedNeedsPlayers,
    RatingsPlayerRequired,
    UnknownShapeName,
)
from services.kit.ratings.job import RatingJob, job_for
from services.kit.ratings.shapes import Shape, shape_of, shapes
from services.kit.store.base import GameRecord

RATED_KEY = "rated"


def is_rated(table_config: Mapping[str, Any] | None) -> bool:
    return bool(table_config and table_config.get(RATED_KEY))


def config(plan: tables.Plan | None, rated: bool) -> dict[str, Any] | None:
    """The game row's table config: the plan's, with ``rated`` where it is."""
    if plan is None:
        return None
    out = plan.to_dict()
    if rated:
        out[RATED_KEY] = True
    return out


def seat_player(seat: tables.SeatPlan | tables.SeatNow) -> str:
    """The player holding a seat (planned or now), "" for none (docs/players.md)."""
    return seat.player_id


def check_rated(info: GameInfo, players: int, options: Any, plan: tables.Plan | None) -> Shape:
    """A rated table's shape, or the refusal: every reserved seat held by a player of its
    own (the creator's, by its player's token; a match's, each its player's), every other
    seat open for a player (no bot), a shape, and a clock that forfeits on timeout."""
    seats = plan.seats if plan is not None else ()
    if len(seats) != players or any(s.kind == tables.BOT for s in seats):
        raise RatedNeedsPlayers(
            "a rated table lists its seats, each reserved for a player or open: no bot"
        )
    held = [seat_player(s) for s in seats if s.kind == tables.RESERVED]
    if not held or not all(held):
        raise RatingsPlayerRequired("a rated table is created with a player's token")
    if len(set(held)) != len(held) or (plan is not None and plan.several):
        raise RatedNeedsPlayers("a player holds one seat of a rated table")
    shape = shape_of(info, players, options)
    if shape is None:
        known = ",".join(s.name for s in shapes(info))
        raise UnknownShapeName(
            f"a table of {players} with these options has no rated shape in {info.name}",
            shapes=known,
        )
    clock = plan.clock if plan is not None else None
    if clock is None or not clock.forfeit:
        raise RatedNeedsClock(
            "a rated table needs a time control that forfeits on timeout (on_timeout FORFEIT)"
        )
    return shape


def check_join(table_config: Mapping[str, Any] | None, player: str | None) -> None:
    """Joining a rated table takes a player's token (RATED_NEEDS_PLAYERS)."""
    if is_rated(table_config) and not player:
        raise RatedJoinNeedsPlayer("a rated table's seats are taken with a player's token")


def given_up(seats: Sequence[tables.SeatNow]) -> list[int]:
    return [i for i, s in enumerate(seats) if s.state == tables.GIVEN_UP]


class _Game(Protocol):
    record: GameRecord
    table: tables.Table


def finishing_job(info: GameInfo, game: _Game, outcome: Outcome | None) -> RatingJob | None:
    """The rating job a rated table's finishing entry carries (None for a table that is
    not rated): its shape, each seat's player and name, the outcome, who gave up."""
    record = game.record
    if not is_rated(record.table):
        return None
    options = info.options_type.from_dict(record.options)
    shape = shape_of(info, record.players, options)
    seats = game.table.seats
    return job_for(
        record.game_id,
        shape,
        [seat_player(s) for s in seats],
        [s.name for s in seats],
        outcome,
        given_up(seats),
    )
