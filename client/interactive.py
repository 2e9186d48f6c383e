"""``play --interactive``: one seat in this terminal, with the board, clocks and prompts."""

from __future__ import annotations

import argparse
import math
import sys
import time
from typing import Any

import grpc
from tabletop.common.v1 import table_pb2

from client import render
from client.api import FINISHED, IN_PROGRESS, WAITING, refusal
from client.game import (
    Game,
    chosen_move,
    move_texts,
    need_token,
    seat_label,
    seat_side,
    show_state,
    show_turn,
)
from client.render.colour import paint
from client.tables import waiting_for


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


def seat_lines(header: Any, now: float) -> list[str]:
    """Every seat: its rulebook name, who plays it and how, and its clock: the bank left
    (as of the start of its decision) and, for a seat to act, the time to its deadline."""
    lines = []
    for seat in header.seats:
        parts = [f"  {seat.index} {seat.name:<10} {seat_label(seat):<28}"]
        if seat.HasField("bank"):
            parts.append(f"bank {clock_text(seat.bank.ToNanoseconds() / 1e9)}")
        if seat.index in header.to_act:
            parts.append(", ".join(filter(None, ("to act", left(seat, now)))))
        if header.HasField("viewer") and seat.index == header.viewer:
            parts.append("(you)")
        lines.append("  ".join(parts).rstrip())
    return lines


def prompt(text: str) -> str | None:
    """A line from stdin, or None at its end (Ctrl-D)."""
    try:
        return input(text)
    except EOFError:
        return None


def has_decision(header: Any, seat: int) -> bool:
    """Whether ``seat``'s player decides now: the game is on, the seat is to act, and it
    is still the player's (a given-up seat is played by the service's bot)."""
    return (
        header.status == IN_PROGRESS
        and seat in header.to_act
        and header.seats[seat].state != table_pb2.SEAT_STATE_GIVEN_UP
    )


def wait_for_turn(game: Game, game_id: str, token: str, seat: int, seen: int, seats: Any) -> int:
    """Follow the game after version ``seen`` (WatchGame), printing each move, until this
    seat has a decision or the game is over; the last version printed. A stream that
    breaks off (a service draining, a watcher too slow) just ends the wait: the caller
    reads the game again and resumes from what it saw."""
    stream = game.watch(game_id, token, seen)
    try:
        for update in stream:
            if update.game.seats:  # a turn behind the latest carries no seats: keep the last
                seats = update.game.seats
            if update.HasField("turn"):
                show_turn(game, update.turn, seats)
                seen = update.turn.version
            if not update.HasField("view"):
                continue
            header = update.game
            if header.status == FINISHED or has_decision(header, seat):
                return seen
    except grpc.RpcError as error:
        if error.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED):
            raise
    finally:
        stream.cancel()
    return seen


def catch_up(game: Game, game_id: str, token: str, seen: int, version: int) -> int:
    """Print the moves after ``seen`` up to ``version`` (those made while this seat was
    deciding, or too fast to wait for): the same seat sees every move once."""
    while seen < version:
        reply = game.call("GetHistory", token, game_id=game_id, from_version=seen)
        if not reply.turns:
            break
        for turn in reply.turns:
            if turn.version <= version:
                show_turn(game, turn, reply.game.seats)
        seen = min(reply.turns[-1].version, version)
    return version


def play_interactive(game: Game, args: argparse.Namespace) -> None:
    """One seat in this terminal: wait for its turn, draw the board, the seats and their
    clocks, list the legal moves, read one by number or text, submit it; a refusal is
    shown and the seat asked again. Ends with the outcome, or at the end of stdin."""
    token = need_token(args)
    state = game.call("GetGame", token, game_id=args.game)
    if not state.game.HasField("viewer"):
        sys.exit("play --interactive plays a seat: the token opens none of this game's")
    seat = state.game.viewer
    me = state.game.seats[seat]
    print(f"playing {seat_label(me)} in seat {seat} ({me.name}); Ctrl-D leaves")
    seen = state.game.version  # the moves before this session are history (`history`)
    echo = not sys.stdin.isatty()  # piped answers are echoed, so the transcript reads
    while True:
        header = state.game
        seen = catch_up(game, args.game, token, seen, header.version)
        if header.status == FINISHED:
            show_state(game, state, args.as_seat)
            print("you won" if seat in header.outcome.winners else "you did not win")
            return
        if not has_decision(header, seat):
            now = time.time()
            acting = [
                ", ".join(filter(None, (seat_label(header.seats[s]), left(header.seats[s], now))))
                for s in header.to_act
            ]
            if header.status == WAITING:
                print(waiting_for(header))
            else:
                print(f"waiting for {', '.join(acting) or 'the service'}")
            seen = wait_for_turn(game, args.game, token, seat, seen, header.seats)
            state = game.call("GetGame", token, game_id=args.game)
            continue
        listed = game.call("ListMoves", token, game_id=args.game)
        if listed.game.version != header.version or not listed.moves:
            state = game.call("GetGame", token, game_id=args.game)
            continue  # the game moved on meanwhile (a timeout, say): look again
        side = seat_side(game, args.as_seat, header)
        print(render.board(game.name, state.view, header, as_seat=side))
        for line in seat_lines(listed.game, time.time()):
            print(line)
        texts = move_texts(game, listed)
        for i, text in enumerate(texts):
            print(f"{i:4}  {text}")
        while True:
            answer = prompt(f"v{header.version} your move (number or text): ")
            if answer is None:
                print("\nstdin closed: leaving the game as it is")
                return
            if echo:
                print(answer)
            answer = answer.strip()
            chosen = chosen_move(listed, texts, answer) if answer else None
            if chosen is not None:
                break
            if answer:
                print(f"{answer!r} is none of the moves above (0-{len(texts) - 1}, or a text)")
        try:
            reply = game.call(
                "SubmitMove",
                token,
                game_id=args.game,
                move=chosen,
                expected_version=listed.game.version,
                request_id=f"cli-{time.time_ns()}",
            )
        except grpc.RpcError as error:
            if error.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.NOT_FOUND):
                raise
            print(paint(f"refused: {refusal(error)}", "red"))
        else:
            show_turn(game, reply.turn, reply.game.seats)
            if reply.turn.version == seen + 1:
                seen = reply.turn.version
        state = game.call("GetGame", token, game_id=args.game)
