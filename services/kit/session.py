"""Play: a seat's session on one stream, its moves in and its game's updates out.

A native gRPC client that plays a game makes, per move, a SubmitMove call (and, without
``with_moves``, a ListMoves) beside its WatchGame stream. Each call is a new HTTP/2
stream through every hop, with its metadata, its guards and its access line; on Play the
move is one message on a stream already open and already admitted. What a move does is
SubmitMove's own code (``submitted``) and what the updates carry is WatchGame's
(``follow``), so the two paths cannot drift apart.

- The first message is ``watch``; anything else ends the session INVALID_ARGUMENT. Its
  updates are written as WatchGame writes them, stalls and all.
- Each later message is a move, answered in the order sent, one at a time: the answer
  is SubmitMove's response or the refusal it would have ended with (a ``Refusal``), and
  a refused move leaves the game and the session as they were. A move is admitted by
  the client's calls-a-second rate like a separate call (``limits.message_wait``), and
  its token is resolved again for each move, as a SubmitMove's is: a seat given back
  with LeaveGame, or a player's token that has expired, is refused from then on.
- The session ends when its updates end (the game's end: OK; a drain, a stall: their
  status), after answering a move already being applied; or when the client cancels.
  A client that has sent its last move (half-closed) is still sent the updates.
- Writes are one at a time (gRPC takes one pending write per call): the updates and the
  answers share a lock, so a client that stops reading holds up its own session only.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import structlog

from services.kit import auth, encoding, limits, status, wire
from services.kit.errors import BadRequest, RateLimited
from services.kit.players.seats import Caller

_log = structlog.get_logger("service")

# PlayResponse's fields, and PlayAnswer's: the same numbers in every game's protos.
UPDATE, ANSWER = 1, 2
REQUEST_ID, ACCEPTED, REFUSED = 1, 2, 3

Follow = Callable[[Any, Callable[[], Awaitable[Caller]], Callable[[bytes], Awaitable[Any]]], Any]
Submitted = Callable[[Any, Callable[[], Awaitable[Caller]]], Awaitable[bytes]]
Refuse = Callable[[grpc.aio.ServicerContext[Any, Any], BaseException], Awaitable[None]]


def answer(request_id: str, accepted: bytes | None, refused: Any = None) -> bytes:
    """A PlayResponse carrying a PlayAnswer, as protobuf writes it."""
    body = encoding.field(REQUEST_ID, request_id.encode()) if request_id else b""
    if refused is not None:
        body += encoding.field(REFUSED, refused.SerializeToString())
    else:
        body += encoding.field(ACCEPTED, accepted or b"")
    return encoding.field(ANSWER, body)


def handler(
    request_type: Any,
    follow: Follow,
    submitted: Submitted,
    caller_of: Callable[[str | None], Awaitable[Caller]],
    refuse: Refuse,
    count: Callable[[BaseException], None],
) -> grpc.RpcMethodHandler[Any, Any]:
    """Play's method handler: requests arrive as bytes, responses leave as bytes.
    ``refuse`` ends the session with a refusal's status; ``count`` counts a refusal
    answered to a move, as a call's would be counted."""

    def parse(data: bytes) -> Any:
        limits.check_message_size(len(data))  # as a call's request: before it is read
        return wire.parse(request_type, data)

    async def play(_requests: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        try:
            first = await context.read()
            if first is grpc.aio.EOF:
                return
            opening = parse(first)
            if opening.WhichOneof("request") != "watch":
                raise BadRequest("Play's first message is watch (the game to follow)")
            token = auth.bearer(context.invocation_metadata())
            caller = await caller_of(token)
            game_id = opening.watch.game_id

            async def opened() -> Caller:
                return caller

            async def again() -> Caller:
                return await caller_of(token)

            lock = asyncio.Lock()

            async def write(data: bytes) -> None:
                async with lock:
                    await context.write(data)

            async def update(data: bytes) -> None:
                await write(encoding.field(UPDATE, data))

            updates = asyncio.ensure_future(follow(opening.watch, opened, update))
            try:
                await _moves(context, updates, parse, game_id, submitted, again, write, count)
                await updates  # raises the status that ended the updates
            finally:
                if not updates.done():
                    updates.cancel()
                    with contextlib.suppress(BaseException):
                        await updates
        except status.KNOWN as exc:
            await refuse(context, exc)
        except Exception:
            _log.exception("unexpected error")
            await context.abort(grpc.StatusCode.INTERNAL, "internal error; it has been logged")

    return grpc.stream_stream_rpc_method_handler(play, response_serializer=wire.serialized)


async def _moves(
    context: grpc.aio.ServicerContext[Any, Any],
    updates: asyncio.Future[Any],
    parse: Callable[[bytes], Any],
    game_id: str,
    submitted: Submitted,
    caller: Callable[[], Awaitable[Caller]],
    write: Callable[[bytes], Awaitable[None]],
    count: Callable[[BaseException], None],
) -> None:
    """Read and answer moves until the client stops sending (then wait for the updates
    to end) or the updates end (a move being applied is answered first)."""
    reading = False
    ended = False

    async def answer_each() -> None:
        # One task for the session's moves, not one per move: a read waits here.
        nonlocal reading
        while not ended:
            reading = True
            data = await context.read()
            reading = False
            if data is grpc.aio.EOF:
                return
            await write(await _answer(data, parse, game_id, submitted, caller, count))

    moves = asyncio.ensure_future(answer_each())
    try:
        await asyncio.wait({moves, updates}, return_when=asyncio.FIRST_COMPLETED)
        if moves.done():
            moves.result()  # a fault in answering ends the session
            await asyncio.wait({updates})  # half-closed: the updates go on to the end
            return
        ended = True  # the updates ended: answer a move being applied, read no more
        if reading:
            moves.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await moves
    finally:
        if not moves.done():
            moves.cancel()


async def _answer(
    data: bytes,
    parse: Callable[[bytes], Any],
    game_id: str,
    submitted: Submitted,
    caller: Callable[[], Awaitable[Caller]],
    count: Callable[[BaseException], None],
) -> bytes:
    """One move's answer: SubmitMove's response, or the refusal it would have ended with."""
    request_id = ""
    try:
        message = parse(data)
        if message.WhichOneof("request") != "move":
            raise BadRequest("after watch, each message of Play is a move")
        move = message.move
        request_id = move.request_id[:128]  # echoed; a longer one is refused below
        if not move.game_id:
            move.game_id = game_id
        elif move.game_id != game_id:
            raise BadRequest("a move on Play is for the game its watch follows")
        wait = limits.message_wait()
        if wait:
            raise RateLimited(
                "too many moves; slow down",
                limit="rate_per_client",
                retry_after_ms=max(1, int(wait * 1000)),
            )
        with structlog.contextvars.bound_contextvars():
            return answer(request_id, await submitted(move, caller))
    except status.KNOWN as exc:
        count(exc)
        return answer(request_id, None, status.refusal(exc))
