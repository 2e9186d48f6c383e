"""The rating beside each seat of a rated table, in headers and the lobby.

Read from the store when a header of a rated game is sent, and kept per game, its
seats' players and whether it is finished: the same header again (every move of a game
sends one) costs a dict lookup; a join or the finish reads them afresh.
"""

from __future__ import annotations

import functools
import json
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

from services.kit.engine import GameInfo
from services.kit.ratings.scale import Standing
from services.kit.ratings.shapes import shape_of
from services.kit.ratings.tables import is_rated
from services.kit.store.base import GameRecord

CACHED_GAMES = 10_000


def shape_name(info: GameInfo, players: int, options: Mapping[str, Any]) -> str:
    """The shape name of a table of ``players`` with these options ("" for none)."""
    return _shape_name(info, players, json.dumps(dict(options), sort_keys=True))


@functools.lru_cache(maxsize=256)
def _shape_name(info: GameInfo, players: int, options: str) -> str:
    shape = shape_of(info, players, info.options_type.from_dict(json.loads(options)))
    return "" if shape is None else shape.name


def rated_shape(info: GameInfo, record: GameRecord) -> str:
    """A rated table's shape name; "" for a table that is not rated."""
    if not is_rated(record.table):
        return ""
    return shape_name(info, record.players, record.options)


class SeatRatings:
    """Fills ``rated`` and each seat's ``rating`` of a rated game's header."""

    def __init__(self, store: Any, info: GameInfo) -> None:
        self.store = store
        self.info = info
        self._cache: OrderedDict[tuple[str, tuple[str, ...], bool], dict[str, Standing]] = (
            OrderedDict()
        )

    async def _standings(
        self, game_id: str, shape: str, players: Sequence[str], finished: bool
    ) -> dict[str, Standing]:
        key = (game_id, tuple(players), finished)
        found = self._cache.get(key)
        if found is None:
            held = [p for p in players if p]
            found = await self.store.standings(self.info.name, shape, held) if held else {}
            self._cache[key] = found
            if len(self._cache) > CACHED_GAMES:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(key)
        return found

    async def fill(self, header: Any, shape: str) -> Any:
        """``header`` (a GameHeader) with its rated flag and seat ratings, for a table of
        ``shape`` ("" for a table that is not rated: left as it is)."""
        if not shape:
            return header
        header.rated = True
        players = [seat.player_id for seat in header.seats]
        finished = header.HasField("outcome") or header.status == 2  # GAME_STATUS_FINISHED
        standings = await self._standings(header.game_id, shape, players, finished)
        for seat, player in zip(header.seats, players, strict=True):
            if player:
                standing = standings.get(player, Standing())
                seat.rating.shown = standing.shown
                seat.rating.provisional = standing.provisional
        return header
