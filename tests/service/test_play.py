"""Play, a seat's session (services/kit/session.py), over real gRPC in this process, for
every game: moves in, the game's updates and one answer per move out.

- Sessions alone play seeded random games: each move answered once, in order, with its
  request_id; the sessions end OK after the game's end (the last move's answer first);
  the game is what the answers said.
- A session's updates are WatchGame's messages byte for byte, for a seat and for a
  spectator, with and without moves: Play shows nothing WatchGame would not.
- Refusals are answers, each the status SubmitMove would have ended with, the game and the
  session unchanged; a request_id sent again is answered with its first turn.
- Each move is admitted by the client's rate and its token resolved again (a player's
  token that expires mid-session), each with a control that removes the hook; a drain
  ends a session UNAVAILABLE; a client that half-closes is still sent the updates.

Messages go out and come back as bytes, so the updates' bytes are compared as sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc
import jwt
import pytest
from prometheus_client import REGISTRY
from tabletop.common.v1 import table_pb2

from client.api import FINISHED, IN_PROGRESS, GameClient, bearer
from services import registry
from services.kit import limits, session
from services.kit.errors import BadRequest
from services.kit.limits import Limits
from services.kit.players import StaticKey, Verifier
from services.kit.players.seats import PlayerPolicy
from services.kit.status import error_info
from tests.players.support import AUDIENCE, ISSUER, Signer
from tests.support import service_in_process

GAMES = registry.names()
SEED = 7
MOVES = 20  # moves of each game's random play but channeling's, played to its end
STREAM_SECONDS = 120.0  # a session's deadline: no test is about it
UPDATE, ANSWER = 1, 2  # PlayResponse's fields
OK = grpc.StatusCode.OK


def _field(data: bytes) -> tuple[int, bytes]:
    """A PlayResponse's one field as sent: (its number, its bytes)."""
    tag, size, shift, at = data[0], 0, 0, 1
    assert tag & 7 == 2, "a length-delimited field"
    while True:
        byte = data[at]
        size |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if byte < 0x80:
            break
    assert at + size == len(data), "one field, nothing else"
    return tag >> 3, data[at:]


class Session:
    """A Play stream as a client holds it: messages sent as bytes, and every update's
    bytes (as sent) and every answer kept in arrival order by a reader."""

    def __init__(
        self, channel: grpc.aio.Channel, game: str, token: str | None,
        metadata: Sequence[tuple[str, str]] = (),
    ) -> None:  # fmt: skip
        entry = registry.by_name(game)
        self.pb2 = entry.pb2()
        method = channel.stream_stream(f"/{entry.service_name}/Play")
        self.call = method(metadata=(*(bearer(token) or ()), *metadata), timeout=STREAM_SECONDS)
        self.updates: list[bytes] = []
        self.views: list[Any] = []  # the updates, parsed
        self.answers: list[Any] = []
        self.kinds: list[int] = []  # UPDATE or ANSWER, in arrival order
        self.error: grpc.aio.AioRpcError | None = None  # how it ended, unless OK
        self._arrived = asyncio.Event()
        self._reader = asyncio.ensure_future(self._read())

    @classmethod
    async def open(
        cls, channel: grpc.aio.Channel, game: str, game_id: str, token: str | None, *,
        with_moves: bool = True, metadata: Sequence[tuple[str, str]] = (),
        from_version: int | None = None,
    ) -> Session:  # fmt: skip
        """A session following ``game_id``, past its first update."""
        opened = cls(channel, game, token, metadata)
        await opened.send(opened.watch(game_id, with_moves, from_version))
        await opened.until(lambda: opened.views, "the first update")
        return opened

    def watch(
        self, game_id: str, with_moves: bool = True, from_version: int | None = None
    ) -> bytes:
        request = self.pb2.WatchGameRequest(game_id=game_id, with_moves=with_moves)
        if from_version is not None:
            request.from_version = from_version
        return bytes(self.pb2.PlayRequest(watch=request).SerializeToString())

    def move(self, move: Any, version: int | None, request_id: str, game_id: str = "") -> bytes:
        request = self.pb2.SubmitMoveRequest(game_id=game_id, move=move, request_id=request_id)
        if version is not None:
            request.expected_version = version
        return bytes(self.pb2.PlayRequest(move=request).SerializeToString())

    async def _read(self) -> None:
        try:
            while (data := await self.call.read()) is not grpc.aio.EOF:
                number, payload = _field(data)
                if number == UPDATE:
                    self.updates.append(payload)
                    self.views.append(self.pb2.WatchGameResponse.FromString(payload))
                else:
                    assert number == ANSWER, number
                    self.answers.append(self.pb2.PlayAnswer.FromString(payload))
                self.kinds.append(number)
                self._arrived.set()
        except grpc.aio.AioRpcError as error:
            self.error = error
        finally:
            self._arrived.set()

    async def until(self, condition: Callable[[], Any], what: str) -> None:
        while not condition():
            if self._reader.done():
                raise AssertionError(f"the session ended ({await self.call.code()}) before {what}")
            self._arrived.clear()
            await asyncio.wait_for(self._arrived.wait(), STREAM_SECONDS)

    async def send(self, data: bytes) -> None:
        await self.call.write(data)

    async def answer(self, data: bytes) -> Any:
        """Send one message and return its answer (the next one)."""
        count = len(self.answers)
        await self.send(data)
        await self.until(lambda: len(self.answers) > count, "the move's answer")
        return self.answers[count]

    async def at(self, version: int) -> Any:
        """The update of ``version`` (updates come one per version, in order)."""
        await self.until(lambda: self.views[-1].game.version >= version, f"version {version}")
        found = [v for v in self.views if v.game.version == version]
        assert found, f"no update of version {version}"
        return found[-1]

    async def ended(self) -> grpc.StatusCode:
        """Once every message is read, how the session ended."""
        await asyncio.wait_for(asyncio.shield(self._reader), STREAM_SECONDS)
        code: grpc.StatusCode = await self.call.code()
        return code

    def close(self) -> None:
        self.call.cancel()
        self._reader.cancel()


@contextlib.asynccontextmanager
async def served(game: str, **options: Any) -> AsyncIterator[tuple[Any, GameClient, Any]]:
    """(the running service, a client, its channel), the sessions opened closed after."""
    async with service_in_process(game, **options) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            yield running, GameClient(game, channel), channel


def refusal_of(error: grpc.aio.AioRpcError) -> tuple[int, str, str, dict[str, str]]:
    """A call's status as a Refusal carries it: (code, message, reason, metadata)."""
    info = error_info(error)
    reason, metadata = (info.reason, dict(info.metadata)) if info is not None else ("", {})
    return error.code().value[0], error.details() or "", reason, metadata


def refused(answer: Any) -> tuple[int, str, str, dict[str, str]]:
    assert answer.WhichOneof("result") == "refused", answer
    r = answer.refused
    return r.code, r.message, r.reason, dict(r.metadata)


async def submit_refusal(
    client: GameClient, game_id: str, token: str | None, request: bytes
) -> tuple[int, str, str, dict[str, str]]:
    """What SubmitMove answers the move a PlayRequest's bytes carry (for the session's
    game when it names none): its refusal."""
    move = client.pb2.PlayRequest.FromString(request).move
    move.game_id = move.game_id or game_id
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await client._method("SubmitMove")(move, metadata=bearer(token), timeout=30)
    return refusal_of(caught.value)


async def state(client: GameClient, game_id: str) -> tuple[bytes, list[Any]]:
    """The game as a spectator reads it (GetGame's bytes) and its history."""
    game = await client.get(game_id)
    return game.SerializeToString(), list(await client.history(game_id))


Log = list[tuple[int, bytes, Any]]  # each move played: (seat, its PlayRequest's bytes, answer)


async def move_of(
    opened: Session, seat: int, version: int, rng: random.Random
) -> tuple[bytes, Any]:
    """A random legal move of ``seat`` (its session's last update's moves), answered."""
    mine = await opened.at(version)
    assert mine.moves, "a seat to act is sent its moves"
    request_id = f"{seat}-{version}"
    request = opened.move(rng.choice(list(mine.moves)), version, request_id)
    answer = await opened.answer(request)
    assert answer.request_id == request_id
    assert answer.WhichOneof("result") == "accepted", answer
    assert answer.accepted.game.version == version + 1
    assert answer.accepted.turn.version == version + 1 and answer.accepted.turn.seat == seat
    return request, answer


async def play(
    sessions: Sequence[Session], rng: random.Random, version: int, moves: int | None,
    log: Log | None = None, until: Callable[[Any], bool] | None = None,
) -> int:  # fmt: skip
    """Random legal moves from the seats' sessions (``sessions[seat]``, opened with moves),
    each answered before the next, until ``moves`` are made, the game ends, or
    ``until(header)``; returns the version then."""
    made = 0
    while moves is None or made < moves:
        header = (await sessions[0].at(version)).game
        if header.status != IN_PROGRESS or (until is not None and until(header)):
            break
        seat = rng.choice(list(header.to_act))  # several at once in simultaneous steps
        request, answer = await move_of(sessions[seat], seat, version, rng)
        if log is not None:
            log.append((seat, request, answer))
        version += 1
        made += 1
    return version


async def sessions_of(channel: Any, game: str, game_id: str, tokens: Sequence[str | None],
                      with_moves: bool = True) -> list[Session]:  # fmt: skip
    return [await Session.open(channel, game, game_id, t, with_moves=with_moves) for t in tokens]


def closing(sessions: Sequence[Session]) -> contextlib.AbstractContextManager[None]:
    stack = contextlib.ExitStack()
    for opened in sessions:
        stack.callback(opened.close)
    return stack


# --- 1, 4: sessions play games to their end -------------------------------------------------


@pytest.mark.parametrize("game", GAMES)
async def test_sessions_play_a_random_game_each_move_answered_once_then_end_ok(game):
    """Channeling's game is played to its end (the last move's answer is read before the
    session ends OK); the others' first MOVES moves, then a seat resigns."""
    info = registry.by_name(game).engine().GAME
    async with served(game) as (_, client, channel):
        created = await client.create(info.min_players, seed=SEED)
        gid = created.game_id
        sessions = await sessions_of(channel, game, gid, created.tokens)
        log: Log = []
        with closing(sessions):
            whole = game == "channeling"
            version = await play(sessions, random.Random(SEED), 0, None if whole else MOVES, log)
            if whole:
                assert log[-1][2].accepted.game.status == FINISHED  # the ending move's answer
            else:
                assert version == MOVES
                await client.resign(gid, created.tokens[0])
                version += 1
            for seat, played in enumerate(sessions):
                assert await played.ended() == OK
                # One answer per move, in the order sent, nothing else.
                sent = [answer.request_id for s, _, answer in log if s == seat]
                assert [a.request_id for a in played.answers] == sent
                assert played.views[-1].game.version == version
                assert played.views[-1].game.status == FINISHED
        assert [answer.accepted.game.version for *_, answer in log] == list(range(1, len(log) + 1))
        final = await client.get(gid)
        assert final.game.version == version and final.game.status == FINISHED
        history = await client.history(gid)
        assert [t.version for t in history] == list(range(1, version + 1))
        # Each answer's turn is the turn the seat's history holds.
        seen_by = [await client.history(gid, token) for token in created.tokens]
        for seat, _, answer in log:
            turn = answer.accepted.turn
            assert seen_by[seat][turn.version - 1] == turn


# --- 2: a session's updates are WatchGame's messages ----------------------------------------


async def _updates_beside_watch(game: str) -> None:
    """Play and WatchGame streams of every seat and a spectator, with and without moves,
    over a random game to its end; each Play's updates equal its WatchGame's messages."""
    info = registry.by_name(game).engine().GAME
    async with served(game) as (_, client, channel):
        created = await client.create(info.min_players, seed=SEED)
        gid = created.game_id
        watch = channel.unary_stream(f"/{client.service}/WatchGame")
        kinds = [(t, wm) for t in [*created.tokens, None] for wm in (True, False)]
        streams: list[tuple[Any, asyncio.Future[list[bytes]]]] = []
        sessions: list[Session] = []
        try:
            for token, with_moves in kinds:
                request = client.pb2.WatchGameRequest(game_id=gid, with_moves=with_moves)
                stream = watch(request.SerializeToString(), metadata=bearer(token),
                               timeout=STREAM_SECONDS)  # fmt: skip
                first = await stream.read()  # the snapshot, before any move
                streams.append((stream, asyncio.ensure_future(_after(first, stream))))
                sessions.append(await Session.open(channel, game, gid, token,
                                                   with_moves=with_moves))  # fmt: skip
            players = [s for s, (_, wm) in zip(sessions, kinds, strict=True) if wm][:-1]
            await play(players, random.Random(SEED), 0, MOVES)
            await client.resign(gid, created.tokens[0])
            for (stream, read), opened, kind in zip(streams, sessions, kinds, strict=True):
                seen = await asyncio.wait_for(read, STREAM_SECONDS)
                assert await stream.code() == OK and await opened.ended() == OK
                assert opened.updates == seen, f"Play's updates are not WatchGame's: {kind}"
                assert len(seen) > MOVES and opened.views[-1].game.status == FINISHED
            # The comparison saw moves where they are sent, and only there.
            for opened, (token, with_moves) in zip(sessions, kinds, strict=True):
                carried = any(v.moves for v in opened.views)
                assert carried == (token is not None and with_moves), (token, with_moves)
        finally:
            for stream, read in streams:
                stream.cancel()
                read.cancel()
            for opened in sessions:
                opened.close()


async def _after(first: bytes, stream: Any) -> list[bytes]:
    """A WatchGame stream's messages to its end, read as they come (so none waits)."""
    messages = [first]
    while (message := await stream.read()) is not grpc.aio.EOF:
        messages.append(message)
    return messages


@pytest.mark.parametrize("game", GAMES)
async def test_a_sessions_updates_are_watch_games_messages_byte_for_byte(game):
    await _updates_beside_watch(game)


async def test_control_a_session_following_with_moves_it_did_not_ask_for_is_caught(monkeypatch):
    """Control: a session whose updates carry moves whatever its watch asked (the seat's
    moves on a stream opened without) differs from WatchGame's."""
    handler = session.handler

    def asking_moves(request_type: Any, follow: Any, *rest: Any) -> Any:
        async def with_moves(request: Any, caller: Any, write: Any) -> None:
            request.with_moves = True
            await follow(request, caller, write)

        return handler(request_type, with_moves, *rest)

    monkeypatch.setattr(session, "handler", asking_moves)
    with pytest.raises(AssertionError, match="not WatchGame's"):
        await _updates_beside_watch("channeling")


# --- 3: refusals are answers ----------------------------------------------------------------

GARBAGE = b"\x12\xff"  # field 2 (move) whose length is cut short: no PlayRequest
INVALID_ARGUMENT = grpc.StatusCode.INVALID_ARGUMENT.value[0]


@pytest.mark.parametrize("game", GAMES)
async def test_refusals_are_answers_in_order_and_change_neither_game_nor_session(game):
    info = registry.by_name(game).engine().GAME
    async with served(game) as (_, client, channel):
        created = await client.create(info.min_players, seed=SEED)
        other = await client.create(info.min_players, seed=SEED + 1)
        gid, tokens = created.game_id, created.tokens
        sessions = await sessions_of(channel, game, gid, tokens)
        spectator = await Session.open(channel, game, gid, None)
        with closing([*sessions, spectator]):
            rng = random.Random(SEED)
            log: Log = []

            # A move made (a version to be stale, a request_id to send again), and a seat
            # with no decision pending (one to refuse).
            def ready(header: Any) -> bool:
                return bool(header.version) and len(header.to_act) < len(tokens)

            version = await play(sessions, rng, 0, None, log, until=ready)
            header = (await sessions[0].at(version)).game
            assert header.status == IN_PROGRESS
            seat = header.to_act[0]
            idle = next(s for s in range(len(tokens)) if s not in header.to_act)
            mover = sessions[seat]
            move = rng.choice(list((await mover.at(version)).moves))
            before = await state(client, gid)

            # Sent at once, answered in the order sent, each as SubmitMove would end.
            pipelined = [
                ("stale", mover.move(move, version - 1, "stale")),
                ("malformed", mover.move(client.pb2.Move(), version, "malformed")),
                ("elsewhere", mover.move(move, version, "elsewhere", other.game_id)),
                ("", GARBAGE),
                ("", mover.watch(gid)),
            ]
            count = len(mover.answers)
            for _, data in pipelined:
                await mover.send(data)
            await mover.until(lambda: len(mover.answers) >= count + len(pipelined), "the answers")
            answers = mover.answers[count:]
            assert [a.request_id for a in answers] == [rid for rid, _ in pipelined]
            stale, malformed, elsewhere, garbage, watch_again = map(refused, answers)
            assert stale == await submit_refusal(client, gid, tokens[seat], pipelined[0][1])
            assert stale[0] == grpc.StatusCode.ABORTED.value[0] and stale[2] == "STALE_VERSION"
            assert stale[3]["current_version"] == str(version)
            assert malformed == await submit_refusal(client, gid, tokens[seat], pipelined[1][1])
            assert (malformed[0], malformed[2]) == (INVALID_ARGUMENT, "MALFORMED_MOVE")
            for bad in (elsewhere, garbage, watch_again):
                assert (bad[0], bad[2]) == (INVALID_ARGUMENT, "BAD_REQUEST"), bad

            # Another seat's decision, and a move on a spectator's session.
            turn_of_other = sessions[idle].move(move, version, "not-mine")
            not_mine = refused(await sessions[idle].answer(turn_of_other))
            assert not_mine == await submit_refusal(client, gid, tokens[idle], turn_of_other)
            assert not_mine[0] == grpc.StatusCode.PERMISSION_DENIED.value[0]
            watching = spectator.move(move, version, "watching")
            unseated = refused(await spectator.answer(watching))
            assert unseated == await submit_refusal(client, gid, None, watching)
            assert unseated[0] == grpc.StatusCode.UNAUTHENTICATED.value[0]

            assert await state(client, gid) == before  # the game unchanged by any of them

            # Each session still open: the seat's legal move is accepted, ...
            legal = await mover.answer(mover.move(move, version, "legal"))
            assert legal.WhichOneof("result") == "accepted"
            assert legal.accepted.game.version == version + 1
            # ... a request_id sent again is answered with its first turn, applied once, ...
            first_seat, first_request, first = log[-1]
            again = await sessions[first_seat].answer(first_request)
            assert again.request_id == first.request_id
            assert again.WhichOneof("result") == "accepted"
            assert again.accepted.turn == first.accepted.turn
            history = await client.history(gid)
            assert [t.version for t in history] == list(range(1, version + 2))
            # ... the idle seat moves when its turn comes, and the spectator follows.
            version = await play(sessions, rng, version + 1, None, until=lambda h: idle in h.to_act)
            await move_of(sessions[idle], idle, version, rng)
            await spectator.at(version + 1)


@pytest.mark.parametrize("game", GAMES)
async def test_a_session_opens_with_watch_and_a_token_of_the_game_or_ends(game):
    """A first message that is not watch ends the session INVALID_ARGUMENT, a token that
    is no seat of the game UNAUTHENTICATED, as WatchGame's call ends with it."""
    info = registry.by_name(game).engine().GAME
    async with served(game) as (_, client, channel):
        created = await client.create(info.min_players, seed=SEED)
        gid, token = created.game_id, created.tokens[0]
        for first in (None, GARBAGE):
            opened = Session(channel, game, token)
            move = client.pb2.Move()
            await opened.send(first or opened.move(move, 0, "first", gid))
            assert await opened.ended() == grpc.StatusCode.INVALID_ARGUMENT
            assert opened.kinds == []
        stranger = Session(channel, game, "no-seat-of-this-game")
        await stranger.send(stranger.watch(gid))
        assert await stranger.ended() == grpc.StatusCode.UNAUTHENTICATED
        assert stranger.kinds == [] and stranger.error is not None
        with pytest.raises(grpc.aio.AioRpcError) as watched:
            await anext(aiter(client.watch(gid, "no-seat-of-this-game")))
        assert refusal_of(stranger.error) == refusal_of(watched.value)


# --- 4: the client's half-close ----------------------------------------------------------


async def _half_closed_after_a_move() -> None:
    """Seat 0's session half-closes right after its move; the other seat plays on and
    resigns: seat 0's session is sent every update to the end, then ends OK."""
    async with served("channeling") as (_, client, channel):
        created = await client.create(2, seed=SEED)
        gid = created.game_id
        sessions = await sessions_of(channel, "channeling", gid, created.tokens)
        with closing(sessions):
            rng = random.Random(SEED)
            version = await play(sessions, rng, 0, None, until=lambda h: h.to_act == [0])
            closed = sessions[0]
            await move_of(closed, 0, version, rng)
            await closed.call.done_writing()
            on = [sessions[1], sessions[1]]  # the header read from the seat still sending
            version = await play(on, rng, version + 1, None, until=lambda h: h.to_act != [1])
            await client.resign(gid, created.tokens[1])
            assert await closed.ended() == OK, closed.error
            versions = [v.game.version for v in closed.views]
            assert versions == list(range(versions[0], version + 2))
            assert closed.views[-1].game.status == FINISHED


async def test_a_session_half_closed_after_a_move_is_sent_every_update_to_the_end():
    await _half_closed_after_a_move()


async def test_control_a_session_that_ends_at_the_half_close_is_caught(monkeypatch):
    moves = session._moves

    async def ending(context: Any, *rest: Any) -> None:
        class HalfClosed:
            def __getattr__(self, name: str) -> Any:
                return getattr(context, name)

            async def read(self) -> Any:
                data = await context.read()
                if data is grpc.aio.EOF:
                    raise BadRequest("the client has sent its last move")
                return data

        await moves(HalfClosed(), *rest)

    monkeypatch.setattr(session, "_moves", ending)
    with pytest.raises(AssertionError):
        await _half_closed_after_a_move()


# --- 5: each move admitted by the client's rate ------------------------------------------

BURST = 8  # the client's bucket, hardly refilled during a test (RATE)
RATE = 0.001
BEYOND = 3  # moves sent past the burst


async def _burst(game: str) -> tuple[list[Any], list[tuple[int, int]]]:
    """One client (its x-forwarded-for) opens a session per seat, then sends moves past
    its bucket's burst; returns every answer, and the game (version, turns logged) before
    and after each."""
    info = registry.by_name(game).engine().GAME
    rate = Limits(rate_per_client=RATE, burst_per_client=BURST, trust_forwarded_for=True)
    async with served(game, limits=rate) as (running, client, channel):
        created = await client.create(info.min_players, seed=SEED)  # another client's call
        gid = created.game_id

        async def game_now() -> tuple[int, int]:  # read in the service (no call: no bucket)
            snap, turns = await running.manager.history(gid, None, 0, 1000)
            return snap.version, len(turns)

        player = [("x-forwarded-for", "10.0.0.7")]
        sessions = [await Session.open(channel, game, gid, t, metadata=player)
                    for t in created.tokens]  # fmt: skip
        with closing(sessions):
            rng = random.Random(SEED)
            answers, games = [], []
            version = 0
            for _ in range(BURST - len(sessions) + BEYOND):  # each session's opening took one
                header = (await sessions[0].at(version)).game
                seat = rng.choice(list(header.to_act))
                mine = await sessions[seat].at(version)
                request = sessions[seat].move(rng.choice(list(mine.moves)), version, f"r{version}")
                before = await game_now()
                answers.append(await sessions[seat].answer(request))
                games.append((before, await game_now()))
                if answers[-1].WhichOneof("result") == "accepted":
                    version += 1
            return answers, games


@pytest.mark.parametrize("game", GAMES)
async def test_moves_past_the_clients_burst_are_refused_rate_limited_game_unchanged(game):
    answers, games = await _burst(game)
    results = [a.WhichOneof("result") for a in answers]
    admitted = len(answers) - BEYOND
    assert results == ["accepted"] * admitted + ["refused"] * BEYOND
    for answer, (before, after) in zip(answers[admitted:], games[admitted:], strict=True):
        code, _, reason, metadata = refused(answer)
        assert (code, reason) == (grpc.StatusCode.RESOURCE_EXHAUSTED.value[0], "RATE_LIMITED")
        assert metadata["limit"] == "rate_per_client" and int(metadata["retry_after_ms"]) >= 1
        assert after == before
    for before, after in games[:admitted]:
        assert after == (before[0] + 1, before[1] + 1)


async def test_control_without_the_per_move_admission_the_burst_is_all_accepted(monkeypatch):
    monkeypatch.setattr(limits, "message_wait", lambda: 0.0)
    answers, _ = await _burst("channeling")
    assert {a.WhichOneof("result") for a in answers} == {"accepted"}


def _sample(name: str, labels: dict[str, str]) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


async def _refusals_counted() -> dict[str, float]:
    """A spectator's move and moves past the burst, on sessions: how much each family the
    refusals should count in rose (the metrics are this process's: in-process service)."""
    families = {
        "auth_failures": ("tabletop_auth_failures_total",
                          {"game": "channeling", "reason": "MISSING_TOKEN"}),
        "limited": ("tabletop_limited_total", {"limit": "rate_per_client"}),
        "limits_hit": ("tabletop_limits_hit_total",
                       {"game": "channeling", "limit": "rate_per_client"}),
    }  # fmt: skip
    before = {k: _sample(*v) for k, v in families.items()}
    async with served("channeling") as (_, client, channel):
        created = await client.create(2, seed=SEED)
        watching = await Session.open(channel, "channeling", created.game_id, None)
        with closing([watching]):
            legal = (await client.moves(created.game_id, created.tokens[0])).moves[0]
            answer = await watching.answer(watching.move(legal, 0, "spectator"))
            assert refused(answer)[2] == "MISSING_TOKEN"
    await _burst("channeling")
    return {k: _sample(*v) - before[k] for k, v in families.items()}


async def test_a_refused_move_is_counted_as_the_refused_call_would_be():
    """A refusal answered on Play counts where the call's refusal would: a failed
    authentication in tabletop_auth_failures, a move past the client's rate in
    tabletop_limited (by ClientLimits), and not a second time as a game limit."""
    rose = await _refusals_counted()
    assert rose == {"auth_failures": 1, "limited": BEYOND, "limits_hit": 0}, rose


async def test_control_a_session_that_counts_no_refusal_is_caught(monkeypatch):
    from services.kit import service

    monkeypatch.setattr(service, "_count", lambda exc, metrics: None)
    rose = await _refusals_counted()
    assert rose["auth_failures"] == 0  # what the test above would catch


# --- 6: a player's token resolved at each move ----------------------------------------------

SIGNER = Signer.new("EdDSA", "play-key")
LIFETIME = 4  # seconds a session's short token lives: ample for one move at any load
MINE = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)
OPEN = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_OPEN)


def players() -> PlayerPolicy:
    key = StaticKey(jwt.PyJWK(SIGNER.jwk()), kid=SIGNER.kid)
    return PlayerPolicy(Verifier(key, issuer=ISSUER, audience=AUDIENCE, leeway=0))


async def _move_after_expiry() -> tuple[Any, Any, Any]:
    """Ada's seat played on a session opened with a token that expires in LIFETIME s: a
    move before the expiry, a move after. Returns both answers, and SubmitMove's refusal
    of the late move (None if it was accepted)."""
    async with served("channeling", players=players()) as (_, client, channel):
        ada = SIGNER.token(sub="ada", name="Ada", exp=int(time.time()) + 86400)
        created = await client.call("CreateGame", ada, players=2, seats=[MINE, OPEN])
        gid = created.game.game_id
        ben = (await client.join(gid, "Ben")).seat_token.token
        rng = random.Random(SEED)
        watching = await sessions_of(channel, "channeling", gid, [None, ben])
        with closing(watching):
            started = watching[0].views[-1].game.version  # the start is a version too
            version = await play(watching, rng, started, None, until=lambda h: 0 in h.to_act)
            expires = int(time.time()) + LIFETIME
            short = SIGNER.token(sub="ada", name="Ada", exp=expires)
            ada_session = await Session.open(channel, "channeling", gid, short)
            sessions = [ada_session, watching[1]]
            with closing([ada_session]):
                _, before = await move_of(ada_session, 0, version, rng)
                version = await play(sessions, rng, version + 1, None,
                                     until=lambda h: 0 in h.to_act)  # fmt: skip
                while time.time() <= expires:  # the token's expiry: the event waited for
                    await asyncio.sleep(0.05)
                moves = list((await ada_session.at(version)).moves)
                late = ada_session.move(rng.choice(moves), version, "late")
                after = await ada_session.answer(late)
                if after.WhichOneof("result") == "accepted":
                    return before, after, None
                return before, after, await submit_refusal(client, gid, short, late)


async def test_a_players_token_is_resolved_at_each_move_and_refused_once_expired():
    before, after, unary = await _move_after_expiry()
    assert before.WhichOneof("result") == "accepted"
    assert refused(after) == unary
    code, _, reason, _ = unary
    assert (code, reason) == (grpc.StatusCode.UNAUTHENTICATED.value[0], "TOKEN_EXPIRED")


async def test_control_a_caller_resolved_once_at_the_opening_accepts_the_late_move(monkeypatch):
    """Control: a session that keeps the caller it resolved first (the token checked at
    the opening only) accepts the move the test above expects refused."""
    moves = session._moves

    async def resolved_once(context: Any, updates: Any, parse: Any, game_id: str,
                            submitted: Any, caller: Any, *rest: Any) -> None:  # fmt: skip
        first = await caller()

        async def same() -> Any:
            return first

        await moves(context, updates, parse, game_id, submitted, same, *rest)

    monkeypatch.setattr(session, "_moves", resolved_once)
    _, after, _ = await _move_after_expiry()
    assert after.WhichOneof("result") == "accepted"


# --- 7: a drain ---------------------------------------------------------------------------


async def test_a_drain_ends_an_open_session_unavailable_saying_where_to_resume():
    async with served("channeling") as (running, client, channel):
        created = await client.create(2, seed=SEED)
        sessions = await sessions_of(channel, "channeling", created.game_id, created.tokens)
        with closing(sessions):
            version = await play(sessions, random.Random(SEED), 0, 3)
            await sessions[0].at(version)
            running.manager.close_watchers("the service is shutting down")  # the drain's step
            for opened in sessions:
                assert await opened.ended() == grpc.StatusCode.UNAVAILABLE
                assert opened.error is not None
                _, _, reason, metadata = refusal_of(opened.error)
                assert reason == "UNAVAILABLE" and metadata["draining"] == "true"
                assert metadata["version"] == str(version) == str(opened.views[-1].game.version)
