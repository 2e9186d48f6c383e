"""Rematch: a finished game's seats play again, sides rotated (docs/players.md).

OfferRematch by a seat (its seat token or its player's token) is a table entry in the
finished game's log (``@rematch``, event ``rematch_offered``), so a restart or another
replica replays the offers like any seat change. Bots accept at once: once every seat a
person holds has offered, the same entry also carries ``rematch_started`` with the new
game's id, and the new table is created first, under that id.

Exactly one rematch per game, whatever races: the rematch's id is derived from the
finished game's (:func:`rematch_id`), so two replicas completing it at once create the
same game (the second creation finds it there, ``GameExists``) and append the same entry
at the same version (the second is refused by the version check, reads the log, and
finds the rematch started). A crash between the creation and the entry leaves the game
created and the last acceptance unacknowledged: its retry (or whichever OfferRematch
completes the offers next) finds the game there and writes the entry naming it.

The rematch has the same options, time control and owner; seat ``i`` of the finished
game plays seat ``i + 1`` (the last plays seat 0), held by the same player, the same
seat token (its hash carries over: the token a client holds acts there too) or the same
bot level. Games that never really happened have none: a waiting table that expired, a
game abandoned.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
from typing import TYPE_CHECKING, Any

from services.kit import auth
from services.kit import table as tables
from services.kit.engine import Outcome
from services.kit.errors import NoRematch, StaleVersion
from services.kit.players import seats as holders
from services.kit.players.verifier import Player
from services.kit.ratings import tables as rated_tables
from services.kit.store import GameExists, MoveRecord

if TYPE_CHECKING:
    from services.kit.games import GameManager, LiveGame, Snapshot
    from services.kit.players.seats import Caller

# Endings of games nobody played to the end: no rematch.
NO_REMATCH_ENDINGS = frozenset(tables.ENDINGS[e][0] for e in (tables.EXPIRE, tables.ABANDON))
# Another replica may write the same game's log between our read and our append: read it
# again and decide again, a few times.
ATTEMPTS = 3


def possible(table: tables.Table, outcome: Outcome | None) -> bool:
    """Whether a rematch of this game may still start (it is over, was played, and its
    rematch has not started)."""
    return (
        outcome is not None
        and outcome.reason not in NO_REMATCH_ENDINGS
        and not table.rematch_game_id
        and bool(people(table))
    )


def people(table: tables.Table) -> list[int]:
    """The seats a person holds (or held, before giving up): each must accept."""
    return [i for i, s in enumerate(table.plan.seats) if s.kind != tables.BOT]


def rematch_id(game_id: str) -> str:
    """The rematch's game id: the same on every replica, for the same finished game."""
    digest = hashlib.sha256(f"rematch:{game_id}".encode()).digest()
    return base64.urlsafe_b64encode(digest).decode()[:16]


def rotated(table: tables.Table) -> tuple[tables.Plan, tuple[str, ...]]:
    """The rematch's table: each holder one seat on, and each seat's token hash."""
    n = len(table.seats)
    seats: list[tables.SeatPlan] = [tables.SeatPlan(tables.OPEN)] * n
    hashes = [""] * n
    for i, (planned, now) in enumerate(zip(table.plan.seats, table.seats, strict=True)):
        j = (i + 1) % n
        if planned.kind == tables.BOT:
            seats[j] = tables.SeatPlan(tables.BOT, "", planned.level)
        else:
            seats[j] = tables.SeatPlan(tables.RESERVED, now.name, "medium", now.player_id)
            hashes[j] = now.token_hash
    return tables.Plan(tuple(seats), table.plan.clock, table.plan.several), tuple(hashes)


def replay(table: tables.Table, move: MoveRecord) -> None:
    """Apply a logged ``@rematch`` entry to the table."""
    for event in move.events:
        if event["kind"] == "rematch_offered":
            table.rematch_offers.append(event["seat"])
        elif event["kind"] == "rematch_started":
            table.rematch_game_id = event["data"]["game_id"]


async def offer(manager: GameManager, game_id: str, caller: Caller) -> Snapshot:
    """Offer (or accept) a rematch for the caller's seats; the finished game as the
    caller's seat sees it, with the rematch's id once it started."""
    for attempt in range(ATTEMPTS):
        try:
            return await _offer(manager, game_id, caller)
        except StaleVersion:
            if attempt == ATTEMPTS - 1:
                raise
    raise AssertionError("unreachable")


async def _offer(manager: GameManager, game_id: str, caller: Caller) -> Snapshot:
    async with manager.acting(game_id) as game:
        table = game.table
        seat = manager._seat(game, caller)
        if seat is None:
            if caller is None:
                raise auth.MissingToken(
                    "a rematch needs a seat token or a player's token: "
                    "authorization: Bearer <token>"
                )
            raise NoRematch("this player holds no seat of this game")
        outcome = manager.outcome(game)
        if outcome is None:
            raise NoRematch("the game is not over")
        if table.rematch_game_id:
            raise NoRematch(
                "this game's rematch has started", rematch_game_id=table.rematch_game_id
            )
        if not possible(table, outcome):
            raise NoRematch(f"a game that ended {outcome.reason} has no rematch")
        mine = holders.held_by(table, caller.id) if isinstance(caller, Player) else [seat]
        new = [s for s in mine if s not in table.rematch_offers]
        accepted = {*table.rematch_offers, *mine}
        complete = all(s in accepted for s in people(table))
        if not new and not complete:
            return manager.snapshot(game, seat)  # offered already: nothing changes
        started = await _start(manager, game) if complete else ""
        await _append(manager, game, seat, new, started)
        return manager.snapshot(game, seat)


async def _start(manager: GameManager, game: LiveGame) -> str:
    """Create the rematch (once, whoever gets here first); its id."""
    found = rematch_id(game.record.game_id)
    plan, hashes = rotated(game.table)
    options = manager.engine.GAME.options_type.from_dict(game.record.options)
    # GameExists: another replica's, or ours before a crash: the same table.
    with contextlib.suppress(GameExists):
        await manager.create(
            game.record.players,
            options,
            owner=game.record.owner,
            plan=plan,
            game_id=found,
            token_hashes=hashes,
            rated=rated_tables.is_rated(game.record.table),  # a rated table's rematch is rated
        )
    return found


async def _append(
    manager: GameManager, game: LiveGame, seat: int, new: list[int], started: str
) -> None:
    table = game.table
    events: list[dict[str, Any]] = []
    for s in new:
        name = table.seats[s].name or f"Seat {s}"
        events.append({"kind": "rematch_offered", "text": f"{name} offers a rematch", "seat": s})
    if started:
        events.append(
            {
                "kind": "rematch_started",
                "text": "every player accepted: the rematch begins",
                "data": {"game_id": started},
            }
        )
    record = MoveRecord(
        game.version + 1,
        new[0] if new else seat,
        tables.REMATCH,
        events,
        applied_at=manager.clock(),
    )
    replay(table, record)  # the live table first, as every entry; the log decides on failure
    await manager._append(game, record)
