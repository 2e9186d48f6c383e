"""Seats: taking and giving back a seat, resigning, the log entries they write and their
replay, and the lobby's listing.

A seat's change is a table entry in the move log (see :mod:`services.kit.table`), appended
under the game's lock like any move, after whatever the clock made due (see
:meth:`services.kit.sweep.ClockSweep.acting`), so a restart or another replica replays
the same seats. Part of :class:`services.kit.games.GameManager` (see :mod:`services.kit.manager`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from services.kit import auth
from services.kit import rematch as rematches
from services.kit import table as tables
from services.kit.engine import GameOver
from services.kit.errors import (
    AlreadyGivenUp,
    BadRequest,
    GameNotStarted,
    GameStarted,
    SeatNotOpen,
    Unavailable,
)
from services.kit.manager import Manager
from services.kit.players import seats as holders
from services.kit.players.seats import Caller
from services.kit.players.verifier import Player
from services.kit.ratings import tables as rated_tables
from services.kit.store import GameRecord, MoveRecord, QuotaExceeded, StoreError

if TYPE_CHECKING:
    from services.kit.games import LiveGame, Snapshot, Turn


def table_event(kind: str, text: str, seat: int | None = None, **data: Any) -> dict[str, Any]:
    """An event of a table entry, in the form of a game move's (see games.event_dict)."""
    event: dict[str, Any] = {"kind": kind, "text": text}
    if seat is not None:
        event["seat"] = seat
    if data:
        event["data"] = data
    return event


class Seats(Manager):
    """Seats, resigning and the lobby: part of the game manager."""

    async def join(
        self, game_id: str, seat: int | None, name: str, player: Player | None = None
    ) -> tuple[Snapshot, int, str]:
        """Take an open seat (the first one when ``seat`` is None): the game, the seat and
        its new token. The last join starts the game. A ``player`` holds the seat from then
        on (named by its token when ``name`` is empty)."""
        name = tables.player_name(name or (player.name if player else ""))
        async with self.acting(game_id) as game:
            table = game.table
            if self.outcome(game) is not None:
                raise GameOver("the game is over")
            if player is not None:
                holders.may_join(table, player)
            rated_tables.check_join(game.record.table, player.id if player else None)
            if seat is None:
                seat = table.first_open()
                if seat is None:
                    raise SeatNotOpen("no seat is open at this table")
            elif not 0 <= seat < game.record.players:
                raise BadRequest(f"seat must be 0..{game.record.players - 1}")
            elif table.seats[seat].state != tables.OPEN:
                raise SeatNotOpen(f"seat {seat} is not open", seat=seat)
            token = auth.new_token()
            digest = auth.token_hash(token)
            now = self.clock()
            to_act = self.engine.to_act(game.state)
            player_id = player.id if player else ""
            started = table.join(seat, name, digest, now, to_act, player_id)
            joined = {"name": name, **({"player_id": player_id} if player_id else {})}
            events = [
                table_event("player_joined", f"{name} sat down", seat, **joined),
                {
                    "kind": "seat_token",
                    "text": "",
                    "seat": seat,
                    "data": {"sha256": digest},
                    "to": [],
                },
            ]
            if started:
                events.append(table_event("game_started", "every seat is taken: the game begins"))
            record = MoveRecord(
                game.version + 1,
                seat,
                tables.JOIN,
                events,
                applied_at=now,
                seat_player=player_id or None,
                player_games=self.players.games_per_player if player_id else 0,
            )
            try:
                await self._append(game, record)
            except QuotaExceeded as exc:
                raise holders.refusal(exc) or Unavailable("the store refused the seat") from None
            self._kick(game)
            return self.snapshot(game, seat), seat, token

    async def leave(self, game_id: str, seat_token: Caller) -> Snapshot:
        """Give a seat back before the start: it opens again and its token stops working."""
        async with self.acting(game_id) as game:
            seat = self._seated(game, seat_token)
            if self.outcome(game) is not None:
                raise GameOver("the game is over")
            if not game.table.waiting:
                raise GameStarted("the game has started; resign instead")
            name = game.table.seats[seat].name
            held = game.table.seats[seat].player_id
            now = self.clock()
            game.table.leave(seat, now)
            event = table_event("player_left", f"{name} left; the seat is open again", seat)
            record = MoveRecord(
                game.version + 1,
                seat,
                tables.LEAVE,
                [event],
                applied_at=now,
                seat_player="" if held else None,
            )
            await self._append(game, record)
            return self.snapshot(game, None)

    async def resign(self, game_id: str, seat_token: Caller) -> tuple[Snapshot, Turn]:
        """Give up a seat in a game in progress (see Table.resign)."""
        async with self.acting(game_id) as game:
            seat = self._seated(game, seat_token)
            if self.outcome(game) is not None:
                raise GameOver("the game is over")
            if game.table.waiting:
                raise GameNotStarted("the game has not started; leave instead")
            if game.table.seats[seat].state == tables.GIVEN_UP:
                raise AlreadyGivenUp("this seat has already given up")
            record = await self._give_up(game, seat, "resigned", ())
            self._kick(game)
            return self.snapshot(game, seat), self.turn_for(record, seat)

    def _seated(self, game: LiveGame, seat_token: Caller) -> int:
        seat = self._seat(game, seat_token)
        if seat is None:
            raise holders.no_seat(seat_token, "this needs a seat token")
        return seat

    async def _give_up(
        self, game: LiveGame, seat: int, why: str, extra: tuple[dict[str, Any], ...]
    ) -> MoveRecord:
        now = self.clock()
        by_person = not any(e["kind"] == "timeout" for e in extra)
        ended = game.table.resign(seat, now, game.record.players, why, by_person)
        name = game.table.seats[seat].name or f"Seat {seat}"
        events = [*extra, table_event("resigned", f"{name} {why}", seat)]
        if ended:
            events.append(table_event("game_over", "one side is left: it wins"))
        else:
            events.append(
                table_event("zombie", f"the service plays {name}'s seat from now on", seat)
            )
        record = MoveRecord(
            game.version + 1, seat, tables.RESIGN, events, applied_at=now, finished=ended
        )
        await self._append(game, record)
        return record

    def _replay_table_entry(self, game: LiveGame, move: MoveRecord) -> None:
        """Apply a logged table entry (see services.kit.table) to the live game."""
        table, at, seat = game.table, move.applied_at, move.seat
        data = {e["kind"]: e.get("data", {}) for e in move.events}
        if move.move == tables.JOIN:
            joined = data["player_joined"]
            digest = data["seat_token"]["sha256"]
            to_act = self.engine.to_act(game.state)
            table.join(seat, joined["name"], digest, at, to_act, joined.get("player_id", ""))
        elif move.move == tables.LEAVE:
            table.leave(seat, at)
        elif move.move == tables.RESIGN:
            timeout = "timeout" in data
            why = "forfeited on time" if timeout else "resigned"
            table.resign(seat, at, game.record.players, why, by_person=not timeout)
        elif move.move == tables.EXPIRE:
            table.end(tables.EXPIRE, game.record.players)
        elif move.move == tables.ABANDON:
            table.end(tables.ABANDON, game.record.players)
        elif move.move == tables.REMATCH:
            rematches.replay(table, move)
        else:
            raise ValueError(f"unknown table entry {move.move!r}")

    async def list_games(self, **filters: Any) -> tuple[list[GameRecord], int]:
        """A page of the lobby and how many tables are waiting."""
        try:
            games = await self.store.list_games(self.game_type, **filters)
            waiting = await self.store.count_waiting(self.game_type)
        except StoreError as exc:
            raise Unavailable(f"the store is unavailable: {exc}") from exc
        return games, waiting
