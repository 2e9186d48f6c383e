"""A matched table cancelled: one of its players left while it was being made
(docs/ratings.md, "The accept step"). The table ends at once as abandoned, with the same
``@abandon`` entry the clock writes for a table nobody plays (so a replay, the lobby and
the ratings read it as they read that one: not rated), and no seat is left waiting for
a player who is gone; the others are back in the pool."""

from __future__ import annotations

from typing import Any

import structlog

from services.kit import table as tables
from services.kit.errors import GameNotFound
from services.kit.seats import table_event
from services.kit.store import MoveRecord

_log = structlog.get_logger("matchmaking")

LEFT = "a matched player left as the table was made: the others are back in the pool"


async def cancel_table(manager: Any, game_id: str) -> bool:
    """End the just-made table as abandoned; False if it is not there or already over."""
    try:
        async with manager.acting(game_id) as game:
            if manager.outcome(game) is not None:
                return False
            game.table.end(tables.ABANDON, game.record.players)
            record = MoveRecord(
                game.version + 1,
                tables.SERVICE_SEAT,
                tables.ABANDON,
                [table_event("game_abandoned", LEFT)],
                applied_at=manager.clock(),
                finished=True,
            )
            await manager._append(game, record)
    except GameNotFound:
        return False
    _log.info("match_table_cancelled", game_id=game_id)
    return True
