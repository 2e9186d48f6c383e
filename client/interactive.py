"""``play --interactive``: one seat in this terminal, following the game as it moves.

The game's WatchGame stream drives the screen: each move is shown as it is made (the
opponent's, the bot's, and the one the clock makes for this seat when its time runs
out), the board and this seat's legal moves are drawn again whenever the game moves,
the countdown ticks from the deadline the service sent, and the session ends with the
game's outcome. Input is read by the same event loop (client/terminal.py), so waiting
for a key never stops the game from being followed.

A move is chosen by its number in the listing on screen, or by its text. An answer is
never sent for a listing that is gone: at a terminal, what was typed is cleared when
the game moves, and a line entered for a screen that has since been redrawn is refused
here, not sent; every SubmitMove carries the version of the listing it was chosen from
(``expected_version``), so a move the game overtook on its way is refused by the
service (ABORTED), never applied to another position.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import sys
import time
from dataclasses import dataclass
from typing import Any

import grpc
from tabletop.common.v1 import table_pb2

from client import render
from client.api import FINISHED, IN_PROGRESS, WAITING, GameClient, refusal
from client.game import (
    Game,
    chosen_move,
    move_texts,
    need_token,
    outcome_lines,
    seat_label,
    seat_side,
    turn_lines,
)
from client.render.colour import paint
from client.tables import waiting_for
from client.terminal import Io, open_io

TICK = 0.2  # seconds between looks at the countdown (it is redrawn when its text changes)
RETRIES = 5  # watch streams broken off in a row before giving up
STREAM_BREAKS = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED)
FATAL = (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.NOT_FOUND)


def clock_text(seconds_left: float) -> str:
    """Seconds as m:ss (h:mm:ss from an hour on); what is overdue shows as 0:00."""
    whole = max(0, math.ceil(seconds_left))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02}:{secs:02}" if hours else f"{minutes}:{secs:02}"


def left(seat: Any, now: float) -> str:
    """The countdown to a seat's deadline ("" for a seat without one)."""
    if not seat.HasField("deadline"):
        return ""
    return f"{clock_text(seat.deadline.ToNanoseconds() / 1e9 - now)} left"


def seat_lines(header: Any, now: float | None) -> list[str]:
    """Every seat: its rulebook name, who plays it and how, and its clock: the bank left
    (as of the start of its decision) and, for a seat to act, the time to its deadline
    as of ``now`` (None: not shown, a live line counts it down instead)."""
    lines = []
    for seat in header.seats:
        parts = [f"  {seat.index} {seat.name:<10} {seat_label(seat):<28}"]
        if seat.HasField("bank"):
            parts.append(f"bank {clock_text(seat.bank.ToNanoseconds() / 1e9)}")
        if seat.index in header.to_act:
            countdown = left(seat, now) if now is not None else ""
            parts.append(", ".join(filter(None, ("to act", countdown))))
        if header.HasField("viewer") and seat.index == header.viewer:
            parts.append("(you)")
        lines.append("  ".join(parts).rstrip())
    return lines


def has_decision(header: Any, seat: int) -> bool:
    """Whether ``seat``'s player decides now: the game is on, the seat is to act, and it
    is still the player's (a given-up seat is played by the service's bot)."""
    return (
        header.status == IN_PROGRESS
        and seat in header.to_act
        and header.seats[seat].state != table_pb2.SEAT_STATE_GIVEN_UP
    )


def clock_lines(turn: Any, seat: int) -> list[str]:
    """What a turn the clock made for ``seat`` means for its player, said plainly."""
    kinds = {event.kind for event in turn.events}
    if turn.seat != seat or "timeout" not in kinds:
        return []
    if "bot_move" in kinds:
        what = turn.move_text or "(a secret move)"
        return [paint(f"the clock ran out: the bot moved for you: {what}", "red", "bold")]
    return [paint("the clock ran out: your seat forfeited", "red", "bold")]


# --- what happens, in the order it happens ---------------------------------------------


@dataclass
class Update:
    """A message of the watch stream."""

    message: Any


@dataclass
class Listed:
    """This seat's legal moves, asked for at ``version``."""

    version: int
    reply: Any


@dataclass
class Answer:
    """A line entered, and the screen it was entered on."""

    text: str
    screen: int


@dataclass
class Sent:
    """What became of a move sent for the listing at ``version``."""

    version: int
    error: grpc.aio.AioRpcError | None


@dataclass
class Closed:
    """The end of input (Ctrl-D, or a pipe's end)."""


@dataclass
class StreamFailed:
    error: grpc.aio.AioRpcError


Event = Update | Listed | Answer | Sent | Closed | StreamFailed


class Session:
    """One seat played in this terminal until the game ends or input does."""

    def __init__(
        self, game: Game, client: GameClient, args: argparse.Namespace, io: Io | None = None
    ) -> None:
        self.game = game
        self.client = client
        self.game_id: str = args.game
        self.token = need_token(args)
        self.as_seat: str | None = args.as_seat
        self.io = io or open_io()
        self.echo = not sys.stdin.isatty()  # piped answers are echoed, so the transcript reads
        self.events: asyncio.Queue[Event] = asyncio.Queue()
        self.seat = 0
        self.side: int | None = None
        self.header: Any = None
        self.view: Any = None
        self.seats: Any = ()
        self.version = 0  # the game's version, as the stream last said
        self.seen = 0  # the last turn shown (the moves before this session are history)
        self.streamed = 0  # the last version the stream delivered: where to resume
        self.listing: Any = None  # the listing on screen, while it is the game's
        self.texts: list[str] = []
        self.sending: int | None = None  # the listing's version a move was sent for
        self.screen = 0  # raised each time the game moves: answers are tagged with it
        self.news: list[str] = []  # moves to show with the next screen
        self.waiting = ""  # the last "waiting for" line said (a transcript says it once)

    async def run(self) -> None:
        state = await self.client.get(self.game_id, self.token)
        if not state.game.HasField("viewer"):
            sys.exit("play --interactive plays a seat: the token opens none of this game's")
        self.seat = state.game.viewer
        self.side = seat_side(self.game, self.as_seat, state.game)
        me = state.game.seats[self.seat]
        self.seats = state.game.seats
        self.seen = self.streamed = self.version = state.game.version
        self.io.say([f"playing {seat_label(me)} in seat {self.seat} ({me.name}); Ctrl-D leaves"])
        self.io.start(self._entered, lambda: self.events.put_nowait(Closed()))
        loop = asyncio.get_running_loop()
        tasks = [loop.create_task(self._follow()), loop.create_task(self._tick())]
        try:
            while not await self._handle(await self.events.get()):
                pass
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.io.stop()

    # --- sources --------------------------------------------------------------------------

    def _entered(self, text: str) -> None:
        # Tagged now, as the key is handled: a screen drawn later cannot adopt it.
        self.events.put_nowait(Answer(text, self.screen))

    async def _follow(self) -> None:
        """The watch stream, resumed from the last version it delivered when it breaks
        off (a service draining, a watcher too slow): no move is missed or shown twice."""
        breaks = 0
        while True:
            try:
                updates = self.client.watch(
                    self.game_id, self.token, self.streamed, with_moves=True
                )
                async for message in updates:
                    breaks = 0
                    if message.HasField("turn"):
                        self.streamed = max(self.streamed, message.turn.version)
                    self.events.put_nowait(Update(message))
            except grpc.aio.AioRpcError as error:
                if error.code() not in STREAM_BREAKS or breaks >= RETRIES:
                    self.events.put_nowait(StreamFailed(error))
                    return
            breaks += 1
            await asyncio.sleep(min(2.0, 0.1 * 2**breaks))

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(TICK)
            if self.io.live and self.header is not None:
                self._status()

    async def _list(self, version: int) -> None:
        """This seat's moves at ``version``, by ListMoves. While the game is still there
        it waits on this seat, so the stream brings nothing more: a call that failed is
        made again (backing off; the failure ends the session after RETRIES in a row), and
        so is one answered from behind the stream (a replica yet to read the last move)."""
        failures = tries = 0
        while self.version == version:
            try:
                reply = await self.client.moves(self.game_id, self.token)
            except grpc.aio.AioRpcError as error:
                failures += 1
                if error.code() in FATAL or failures > RETRIES:
                    self.events.put_nowait(StreamFailed(error))
                    return
            else:
                if reply.game.version >= version:
                    self.events.put_nowait(Listed(version, reply))
                    return
            tries += 1
            await asyncio.sleep(min(2.0, 0.1 * 2**tries))

    async def _send(self, move: Any, version: int) -> None:
        try:
            await self.client.submit(
                self.game_id,
                self.token,
                move,
                expected_version=version,
                request_id=f"cli-{time.time_ns()}",
                omit_view=True,  # the stream brings the view
            )
        except grpc.aio.AioRpcError as error:
            self.events.put_nowait(Sent(version, error))
        else:
            self.events.put_nowait(Sent(version, None))

    # --- what each event does -------------------------------------------------------------

    async def _handle(self, event: Event) -> bool:
        """Apply one event; True when the session is over."""
        if isinstance(event, Update):
            return self._update(event.message)
        if isinstance(event, Listed):
            self._listed(event)
        elif isinstance(event, Answer):
            self._answer(event)
        elif isinstance(event, Sent):
            self._sent(event)
        elif isinstance(event, Closed):
            # After a prompt a transcript's line is still open: end it first.
            farewell = "stdin closed: leaving the game as it is"
            self.io.say([farewell] if self.io.live else ["", farewell])
            return True
        elif isinstance(event, StreamFailed):
            self.io.stop()
            raise event.error
        return False

    def _update(self, message: Any) -> bool:
        if message.game.seats:  # a turn behind the latest carries no seats: keep the last
            self.seats = message.game.seats
        if message.HasField("turn") and message.turn.version > self.seen:
            self.news += turn_lines(message.turn, self.seats)
            self.news += clock_lines(message.turn, self.seat)
            self.seen = message.turn.version
        if not message.HasField("view"):
            if self.news and not self.io.live:
                self.io.say(self._take_news())
            return False
        moved = message.game.version != self.version or self.header is None
        self.header, self.view = message.game, message.view
        self.version = message.game.version
        if not moved and self.listing is not None:
            return False  # the same position again (a resumed stream): the screen stands
        self._moved()
        if self.header.status == FINISHED:
            lines = [*self._take_news(), self._board(), *outcome_lines(self.header)]
            won = self.seat in self.header.outcome.winners
            lines.append(paint("you won" if won else "you did not win", "bold"))
            self.io.status("")
            self.io.frame(lines)
            return True
        if has_decision(self.header, self.seat) and message.moves:
            # The stream listed them (with_moves): no ListMoves call. The old prompt goes
            # first (a new screen draws the live line as it stands below itself); an answer
            # still on its way keeps its "sending" line until its reply.
            if self.sending is None:
                self.io.status("")
            listed = self.client.pb2.ListMovesResponse(game=message.game, moves=message.moves)
            self._listed(Listed(self.version, listed))
        elif has_decision(self.header, self.seat):
            # None listed (a service older than with_moves): ask.
            self.io.status(f"v{self.version} the game moved on: listing your moves...")
            asyncio.get_running_loop().create_task(self._list(self.version))
        else:
            self._wait()
        return False

    def _moved(self) -> None:
        """Whatever was on screen to answer is gone: nothing typed for it will be sent."""
        self.screen += 1
        self.listing = None
        if self.io.invalidate():
            self.news.append(paint("(the game moved on: what you had typed was cleared)", "red"))

    def _listed(self, event: Listed) -> None:
        reply = event.reply
        if event.version != self.version or reply.game.version != self.version:
            return  # the game moved on meanwhile: the stream brings it, and a new listing
        if self.listing is not None and self.listing.game.version == self.version:
            return  # listed already (the stream's moves, then a ListMoves asked before)
        if not reply.moves:
            self._wait()
            return
        self.listing, self.texts = reply, move_texts(self.game, reply)
        now = None if self.io.live else time.time()
        lines = [*self._take_news(), self._board(), *seat_lines(reply.game, now)]
        lines += [f"{i:4}  {text}" for i, text in enumerate(self.texts)]
        self.io.frame(lines)
        if self.sending is None:
            self._ask()
        # Else the answer sent before is still on its way (the stream can bring the next
        # decision before SubmitMove's reply): a line taken now could not be sent, so the
        # prompt waits for that reply (_sent asks it).

    def _wait(self) -> None:
        header = self.header
        if self.io.live:
            self.io.frame([*self._take_news(), self._board(), *seat_lines(header, None)])
            self._status()
            return
        # A transcript says whom the game waits for once per wait, with the time left then.
        news, key = self._take_news(), self._waiting_line(None)
        if news or key != self.waiting:
            self.io.say([*news, self._waiting_line(time.time())])
        self.waiting = key

    def _for_a_screen_gone(self, event: Answer) -> bool:
        """Whether a terminal's answer was entered on a screen the game has redrawn since
        (its listing's numbers may mean other moves now)."""
        return self.io.live and event.screen != self.screen

    def _answer(self, event: Answer) -> None:
        if self._for_a_screen_gone(event):
            self.io.say([paint("not sent: the game moved on while you typed; choose again", "red")])
            return
        if self.listing is None or self.sending is not None:
            if self.io.live:
                if event.text.strip():
                    self.io.say(["not sent: no move of yours is asked for now"])
            else:
                self.io.unread(event.text)
            return
        answer = event.text.strip()
        if self.echo:
            self.io.say([answer])
        if not answer:
            self._ask()
            return
        chosen = chosen_move(self.listing, self.texts, answer)
        if chosen is None:
            last = len(self.texts) - 1
            self.io.say([f"{answer!r} is none of the moves above (0-{last}, or a text)"])
            self._ask()
            return
        self.sending = self.listing.game.version
        by_number = answer.isdigit() and int(answer) < len(self.texts)
        label = self.texts[int(answer)] if by_number else answer
        self.io.status(f"v{self.sending} sending {label}")
        asyncio.get_running_loop().create_task(self._send(chosen, self.sending))

    def _sent(self, event: Sent) -> None:
        self.sending = None
        error = event.error
        if error is None:
            if self.listing is not None and self.listing.game.version == event.version:
                self.listing = None  # answered: the stream brings what follows
                self.io.status(f"v{event.version} sent: waiting for the game")
                return
        elif error.code() in FATAL:
            self.io.stop()
            raise error
        else:
            self.io.say([paint(f"refused: {refusal(error)}", "red")])
        if self.listing is not None and self.listing.game.version == self.version:
            # The listing on show is the game's: after a refusal the same one (choose again
            # from it), or the next one, which the stream brought while this answer was on
            # its way and which was not asked then (_listed).
            self._ask()

    # --- drawing --------------------------------------------------------------------------

    def _take_news(self) -> list[str]:
        news, self.news = self.news, []
        return news

    def _board(self) -> str:
        return render.board(self.game.name, self.view, self.header, as_seat=self.side)

    def _ask(self) -> None:
        self.io.ask(self._prompt(time.time()))

    def _prompt(self, now: float) -> str:
        countdown = left(self.header.seats[self.seat], now)
        clock = f" ({countdown})" if countdown else ""
        return f"v{self.version}{clock} your move (number or text): "

    def _waiting_line(self, now: float | None) -> str:
        if self.header.status == WAITING:
            return waiting_for(self.header)
        acting = []
        for index in self.header.to_act:
            seat = self.header.seats[index]
            who = f"{seat.name} ({seat.player_name})" if seat.player_name else seat.name
            countdown = left(seat, now) if now is not None else ""
            acting.append(", ".join(filter(None, (who, countdown))))
        return f"waiting for {'; '.join(acting) or 'the service'}"

    def _status(self) -> None:
        """The live line as of now: the prompt with this seat's countdown, or whom the
        game waits for with theirs."""
        now = time.time()
        if self.sending is not None or self.header.status == FINISHED:
            return
        if self.listing is not None:
            self.io.ask(self._prompt(now))
        elif not has_decision(self.header, self.seat):
            self.io.status(self._waiting_line(now))


def play_interactive(game: Game, args: argparse.Namespace) -> None:
    """One seat in this terminal (see the module's docstring); ends with the outcome, or
    at the end of input."""

    async def main() -> None:
        async with grpc.aio.insecure_channel(args.target) as channel:
            await Session(game, GameClient(game.name, channel), args).run()

    asyncio.run(main())
