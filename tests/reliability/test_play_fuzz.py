"""Fuzzing Play, every game's session stream, directly and through the gateway.

The same targets as test_fuzz.py (every game, a live game ``a``, another ``b``, a finished
``c``, a game of each other type), the same strategies and the same checks on a status.

- The first message: well-typed PlayRequests of any kind with random fields, and bytes
  that are not quite one, under any metadata. A session either follows the game (a watch
  of a real game: its first message is an update, and it is cancelled there) or ends
  with a status that is never UNKNOWN, INTERNAL and the like, with an ErrorInfo whose
  reason the contract lists; anything but a watch ends it INVALID_ARGUMENT (or a limit's
  RESOURCE_EXHAUSTED, refused before it is read).
- Messages on a session open on the live game (a seat's token, or none): moves legal
  now, near misses, random ones, random PlayRequests, raw bytes, a second watch; sent
  one by one or several before reading. Each gets exactly one answer, in the order
  sent, echoing its request_id; a refusal is an answer with a code a call could end
  with and a listed reason; the game moves by one version per accepted move and by
  nothing else (a retried request_id: none); the session stays open and following the
  game.

No response and no status carries a seat token. ``make test`` runs a fixed set of
examples, ``make soak`` more (TABLETOP_FUZZ_EXAMPLES; the tests' names hold ``test_fuzz``
for its -k); TABLETOP_FUZZ_SECONDS runs fresh ones for that long.
"""

from __future__ import annotations

import itertools
import queue
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from tabletop.common.v1 import errors_pb2

from services import registry
from services.kit import limits
from services.kit import session as play_session
from tests.reliability import protofuzz
from tests.reliability.harness import (
    CALL_TIMEOUT,
    FINISHED,
    FUZZ_SECONDS,
    MAX_REQUEST,
    NEVER,
    REASONS,
    KnownGame,
    Outcome,
    Stack,
    Target,
    fixed_settings,
    long_settings,
    run_fuzz,
    share_of_fuzz_time,
)
from tests.reliability.test_fuzz import (
    METADATA,
    PLANS,
    apply_plan,
    game_id_for,
    metadata_for,
    move_for,
)

GAMES = registry.names()
VIAS = ("direct", "gateway")
TARGETS = [(name, via) for name in GAMES for via in VIAS]
TESTS_PER_TARGET = 3  # openings well-typed and as bytes, messages on an open session
SHARE = share_of_fuzz_time(len(TARGETS) * TESTS_PER_TARGET)
SETTINGS = long_settings() if FUZZ_SECONDS > 0 else fixed_settings()
# A session lives for a whole example (a few dozen calls beside it): generous, as a
# call's is, so that only a lost answer or a hang runs into it.
SESSION_TIMEOUT = 4 * CALL_TIMEOUT
# Messages on a session stay within the services' request size limit: one beyond it is
# refused unread, with no request_id to check the answer by, which
# test_a_message_over_the_size_limit_is_refused_like_a_call checks on its own.
MESSAGE_LIMIT = limits.Limits().max_message_bytes
_ids = itertools.count()


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    with Stack(GAMES) as running:
        yield running


@pytest.fixture(scope="module", params=TARGETS, ids=[f"{n}-{v}" for n, v in TARGETS])
def target(request, stack: Stack) -> Iterator[Target]:
    name, via = request.param
    aimed = Target(stack, name, via)
    aimed.setup()
    yield aimed
    aimed.close()


@pytest.fixture
def counted(target: Target, record_property) -> Iterator[Target]:
    """The target, with the calls this test made recorded for the run's summary."""
    before = dict(target.calls)
    answers = target.answers.copy()
    yield target
    record_property(
        "reliability_calls",
        {
            "what": "play fuzz",
            "service": target.name,
            "via": target.via,
            "fuzzed": target.calls["fuzzed"] - before.get("fuzzed", 0),
            "total": sum(target.calls.values()) - sum(before.values()),
            "answers": dict(target.answers - answers),
        },
    )


# --- one session, driven from this thread -------------------------------------------------


class Session:
    """A Play stream: messages go in through a queue (the stream stays open until it is
    closed), responses are read one at a time into ``updates`` and ``answers``."""

    def __init__(self, target: Target, metadata: protofuzz.Metadata) -> None:
        self.pb2 = target.pb2
        self.secrets = target.secrets()
        self._queue: queue.Queue[bytes | None] = queue.Queue()
        self.call = target.channel.stream_stream(f"/{target.service}/Play")(
            self._requests(), metadata=metadata or None, timeout=SESSION_TIMEOUT
        )
        self.updates: list[Any] = []
        self.answers: list[Any] = []
        self.ended: grpc.StatusCode | None = None
        self.error: grpc.RpcError | None = None

    def _requests(self) -> Iterator[bytes]:
        while (data := self._queue.get()) is not None:
            yield data

    def send(self, data: bytes) -> None:
        self._queue.put(data)

    def read(self) -> bool:
        """One response into ``updates`` or ``answers``; False once the stream has ended."""
        if self.ended is not None:
            return False
        try:
            data = next(self.call)
        except StopIteration:
            self.ended = grpc.StatusCode.OK
            return False
        except grpc.RpcError as error:
            self.ended, self.error = error.code(), error
            return False
        for secret in self.secrets:
            assert secret.encode() not in data, "a seat token in a response"
        response = self.pb2.PlayResponse.FromString(data)
        kind = response.WhichOneof("response")
        assert kind is not None, f"a PlayResponse with neither update nor answer: {data!r:.200}"
        (self.updates if kind == "update" else self.answers).append(getattr(response, kind))
        return True

    def read_until(self, done: Callable[[], bool]) -> None:
        while not done() and self.read():
            pass

    def close(self) -> None:
        self._queue.put(None)  # lets gRPC's sending thread finish
        self.call.cancel()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def watch_of(pb2: Any, data: bytes) -> Any:
    """The WatchGameRequest these bytes carry as a PlayRequest, or None."""
    try:
        message = pb2.PlayRequest.FromString(data)
    except Exception:  # DecodeError, or a RecursionError on hostile nesting
        return None
    return message.watch if message.WhichOneof("request") == "watch" else None


# --- the first message --------------------------------------------------------------------


def opening(target: Target, data: bytes, md: protofuzz.Metadata) -> None:
    """Open a session with ``data`` as its first message; check how it starts or ends."""
    assume(len(data) < MAX_REQUEST)
    watched = watch_of(target.pb2, data)
    game = (target.known(watched.game_id) if watched is not None else None) or target.live_a()
    if not game.state:
        target.refresh(game)
    target.calls["fuzzed"] += 1
    with Session(target, md) as session:
        session.send(data)
        session.read()
    outcome = Outcome("Play", data, md, response=b"", error=session.error)
    assert not session.answers, f"an answer before any move: {outcome.describe()}"
    if session.updates or session.ended == grpc.StatusCode.OK:
        # Following a game: only a watch does, and only the game it names.
        assert watched is not None, f"a session without a watch: {outcome.describe()}"
        for update in session.updates:
            assert update.game.game_id == watched.game_id, outcome.describe()
        outcome.error = None
    elif watched is None:
        # A limit may refuse the call before its first message is read.
        assert session.ended in (
            grpc.StatusCode.INVALID_ARGUMENT,
            grpc.StatusCode.RESOURCE_EXHAUSTED,
        ), outcome.describe()
    target.check_answer(outcome)
    target.check_game(game, outcome)
    target.assert_up()


def play_requests(target: Target) -> st.SearchStrategy:
    return protofuzz.messages(target.pb2.PlayRequest.DESCRIPTOR)


def watches(target: Target) -> st.SearchStrategy[Any]:
    """A watch of the live, another or the finished game (or a near miss of their ids),
    from now or from a version near the game's; made when the call is."""
    pb2 = target.pb2

    def made(drawn: tuple[int, int | None, bool]) -> Any:
        n, offset, with_moves = drawn
        watch = pb2.WatchGameRequest(game_id=game_id_for(target, n), with_moves=with_moves)
        if offset is not None:
            known = target.known(watch.game_id)
            watch.from_version = (known.version if known else 0) + offset
        return pb2.PlayRequest(watch=watch)

    drawn = st.tuples(
        st.integers(0, 2**16), st.one_of(st.none(), st.integers(-3, 1)), st.booleans()
    )
    return drawn.map(lambda d: lambda: made(d))


def aim(target: Target, request: Any, plan: dict[str, int]) -> None:
    """Realistic values (the live game's id, a legal move...) in the watch or the move."""
    kind = request.WhichOneof("request")
    if kind is not None:
        apply_plan(target, getattr(request, kind), plan)


# --- messages on an open session ------------------------------------------------------------


@dataclass(frozen=True)
class Step:
    """One message of a session, drawn before the games are looked at (see test_fuzz.py):
    ``what`` is (kind, value), resolved against the game when the message is sent."""

    what: tuple[str, Any]
    game: int | None = None  # the move's game_id: None empty, else a choice
    offset: int | None = None  # its expected_version, from the version now
    rid: int | str | None = None  # its request_id: None a new one, an int a used one
    wait: bool = False  # read its answer before sending the next


@dataclass(frozen=True)
class Sent:
    """A message sent, and what its answer must say."""

    data: bytes
    request_id: str  # echoed by its answer
    move: bool  # a move the service may accept


def expected(pb2: Any, data: bytes, seated: bool) -> Sent:
    """What the answer to ``data`` must echo, read as the service reads it."""
    try:
        message = pb2.PlayRequest.FromString(data)
    except Exception:
        return Sent(data, "", False)
    if message.WhichOneof("request") != "move":
        return Sent(data, "", False)
    return Sent(data, message.move.request_id[:128], seated)


def steps(target: Target) -> st.SearchStrategy[Step]:
    pb2 = target.pb2
    index = st.integers(0, 2**16)
    requests = play_requests(target)
    what = st.one_of(
        index.map(lambda n: ("legal", n)),
        st.tuples(index, st.lists(index, min_size=3, max_size=3)).map(lambda v: ("near", v)),
        protofuzz.messages(pb2.Move.DESCRIPTOR).map(lambda m: ("random", m)),
        st.tuples(requests, PLANS).map(lambda v: ("request", v)),
        # In a tuple: a one_of of raw_bytes' own branches would flatten into this one.
        st.tuples(protofuzz.raw_bytes(requests)).map(lambda b: ("raw", b[0])),
        st.just(("watch", None)),
        index.map(lambda n: ("legal", n)),
    )
    return st.builds(
        Step,
        what,
        game=st.one_of(st.none(), index),
        offset=st.one_of(st.none(), st.just(0), st.integers(-2, 2)),
        rid=st.one_of(st.none(), index, st.text(max_size=8), st.just("")),
        wait=st.booleans(),
    )


def legal_now(target: Target, mine: list[Any], n: int) -> Any:
    """Mostly a move the session's seat may make now, now and then one legal for another
    seat, in another state or another game (test_fuzz's move_for)."""
    if n % 4 != 3 and mine:
        return mine[n // 4 % len(mine)]
    return move_for(target, n)


def message_for(target: Target, game: KnownGame, mine: list[Any], step: Step) -> bytes:
    """The step's message, made from the game as it is now (``mine``: the seat's moves)."""
    pb2 = target.pb2
    kind, value = step.what
    if kind == "raw":
        return bytes(value)
    if kind == "watch":  # a second watch, of the same game
        return pb2.PlayRequest(watch=pb2.WatchGameRequest(game_id=game.game_id)).SerializeToString()
    if kind == "request":
        request, plan = value
        request = type(request).FromString(request.SerializeToString())  # drawn: keep intact
        aim(target, request, plan)
        return request.SerializeToString()
    if kind == "legal":
        move = legal_now(target, mine, value)
    elif kind == "near":
        donors = protofuzz.strings_in(target.pool)
        move = protofuzz.near_miss(legal_now(target, mine, value[0]), value[1], donors)
    else:
        move = value
    if step.rid is None:
        rid = f"play-{next(_ids)}"
    elif isinstance(step.rid, int):
        rid = target.request_ids[step.rid % len(target.request_ids)]
    else:
        rid = step.rid
    request = pb2.SubmitMoveRequest(move=move, request_id=rid)
    if step.game is not None:  # mostly the session's game, now and then another
        request.game_id = game.game_id if step.game % 3 else game_id_for(target, step.game)
    if step.offset is not None:
        request.expected_version = game.version + step.offset
    return pb2.PlayRequest(move=request).SerializeToString()


def sentinel(pb2: Any, other_game: str) -> Sent:
    """A move every session refuses (another game's), with a request_id no fuzzed message
    carries: its answer marks the end of those before it."""
    rid = f"sentinel-{next(_ids):06d}"
    request = pb2.SubmitMoveRequest(game_id=other_game, request_id=rid)
    return Sent(pb2.PlayRequest(move=request).SerializeToString(), rid, False)


def refused_properly(refusal: errors_pb2.Refusal, secrets: Sequence[str], where: str) -> None:
    """A refusal carries what a call's status would: a client-error code, a listed
    reason, nothing secret."""
    code = next((c for c in grpc.StatusCode if c.value[0] == refusal.code), None)
    assert code is not None and code != grpc.StatusCode.OK, f"code {refusal.code}: {where}"
    assert code not in NEVER, f"{code}: {where}"
    assert refusal.reason in REASONS, f"reason {refusal.reason!r}: {where}"
    said = refusal.message + repr(dict(refusal.metadata))
    for secret in secrets:
        assert secret not in said, f"a seat token in a refusal: {where}"


def check_answers(
    sent: Sequence[Sent],
    answers: Sequence[Any],
    ended: grpc.StatusCode | None,
    secrets: Sequence[str],
) -> None:
    """Exactly one answer per message, in the order sent. Only the game's end (OK) ends
    a session, and messages sent after the move that ended it may go unanswered."""
    assert ended in (None, grpc.StatusCode.OK), f"the session ended {ended}"
    assert len(answers) <= len(sent), f"{len(answers)} answers to {len(sent)} messages"
    if len(answers) < len(sent):
        finished = [
            a
            for a in answers
            if a.WhichOneof("result") == "accepted" and a.accepted.game.status == FINISHED
        ]
        assert ended == grpc.StatusCode.OK and finished, (
            f"{len(answers)} answers to {len(sent)} messages, the session "
            f"{'open' if ended is None else ended}"
        )
    for i, (message, answer) in enumerate(zip(sent, answers, strict=False)):
        where = f"answer {i} of {len(sent)} ({message.data!r:.120})"
        assert answer.request_id == message.request_id, (
            f"{where}: request_id {answer.request_id!r}, sent {message.request_id!r}"
        )
        result = answer.WhichOneof("result")
        assert result is not None, f"{where}: neither accepted nor refused"
        if result == "refused":
            refused_properly(answer.refused, secrets, where)
        else:
            assert message.move, f"{where}: accepted, but not a seat's move"


def versions(
    sent: Sequence[Sent], answers: Sequence[Any], start: int, used: set[str], game_id: str
) -> int:
    """The game's version after these answers: one more per move applied, none for a
    retry (a request_id seen before) and none for a refusal."""
    version = start
    for i, (message, answer) in enumerate(zip(sent, answers, strict=False)):
        if answer.WhichOneof("result") != "accepted":
            continue
        game = answer.accepted.game
        where = f"answer {i}: version {game.version} after {version}"
        assert game.game_id == game_id, f"{where}: another game"
        if game.version == version + 1:
            version += 1
            if message.request_id:  # only a request_id makes a retry
                used.add(message.request_id)
        else:
            assert game.version == version, where
            assert message.request_id in used, f"{where}, request_id never used"
    return version


def moves_of(target: Target, game: KnownGame, seat: int | None) -> list[Any]:
    """The seat's legal moves now (none when it is not to act)."""
    if seat is None or seat not in game.state[2]:
        return []
    return list(target.typed("ListMoves", game.tokens[seat], game_id=game.game_id).moves)


def play(target: Target, seat: int, with_moves: bool, plan: Sequence[Step]) -> None:
    """A session on the live game; the plan's messages; the checks."""
    game = target.live_a()
    target.refresh(game)
    before = game.state
    seats = [*(before[2] * 2), *range(len(game.tokens)), None]  # mostly a seat to act
    chosen = seats[seat % len(seats)]
    md = (("authorization", f"Bearer {game.tokens[chosen]}"),) if chosen is not None else ()
    watch = target.pb2.WatchGameRequest(game_id=game.game_id, with_moves=with_moves)
    sent: list[Sent] = []
    mine = moves_of(target, game, chosen)
    with Session(target, md) as session:
        session.send(target.pb2.PlayRequest(watch=watch).SerializeToString())
        session.read_until(lambda: bool(session.updates))
        assert session.updates, f"the session did not start: {session.ended} {session.error}"
        assert not session.answers, "an answer before any move"
        for step in plan:
            if session.ended is not None:
                break  # the game ended: nothing more is read
            data = message_for(target, game, mine, step)
            if len(data) > MESSAGE_LIMIT:
                continue  # refused unread: test_a_message_over_the_size_limit_is_refused_...
            target.calls["fuzzed"] += 1
            sent.append(expected(target.pb2, data, chosen is not None))
            session.send(data)
            if step.wait:
                session.read_until(lambda: len(session.answers) >= len(sent))
                if len(session.answers) == len(sent) and session.answers[-1].HasField("accepted"):
                    target.refresh(game)  # the next steps choose from the moves now
                    mine = moves_of(target, game, chosen)
        if session.ended is None:
            sent.append(sentinel(target.pb2, target.b.game_id))
            session.send(sent[-1].data)
            last = sent[-1].request_id
            session.read_until(lambda: any(a.request_id == last for a in session.answers))
        for answer in session.answers:
            if answer.HasField("refused"):
                target.answers[f"Play:{answer.refused.reason}"] += 1
            else:
                target.answers["Play:accepted"] += 1
        check_answers(sent, session.answers, session.ended, target.secrets())
        used = set(target.request_ids)
        final = versions(sent, session.answers, before[0], used, game.game_id)
        header = target.typed("GetGame", game_id=game.game_id).game
        assert header.version == final, f"version {header.version}, the answers say {final}"
        if final == before[0]:
            assert target.read_state(game) == before, "the game changed without a move"
        target.refresh(game)
        target.request_ids.extend(sorted(used - set(target.request_ids)))
        seen = [u.game.version for u in session.updates]
        assert seen == sorted(seen) and {u.game.game_id for u in session.updates} == {
            game.game_id
        }, f"updates out of order or of another game: {seen}"
        if session.ended is None and not game.finished:
            still_open(target, game, session)
    target.assert_up()


def still_open(target: Target, game: KnownGame, session: Session) -> None:
    """The session follows the game after its refusals: a move made elsewhere reaches it,
    and no answer comes without a move."""
    answered = len(session.answers)
    target.play(game, 1, collect=False)
    now = game.version
    session.read_until(lambda: any(u.game.version >= now for u in session.updates))
    assert any(u.game.version >= now for u in session.updates), (
        f"the session stopped following at {session.updates[-1].game.version}: {session.ended}"
    )
    assert len(session.answers) == answered, "an answer to no message"


# --- the tests ----------------------------------------------------------------------------


def test_fuzz_play_opening_messages(counted: Target) -> None:
    """Any PlayRequest as the first message, or a watch made to follow a game (the live,
    another or the finished one, or a near miss of their ids), under any metadata or,
    for a made watch, now and then none (a spectator's, which a real game lets follow)."""
    target = counted

    @SETTINGS
    @given(
        # Hypothesis favours the first and the last choice: made watches.
        request=st.one_of(watches(target), play_requests(target), watches(target)),
        plan=PLANS,
        md=METADATA,
        spectator=st.booleans(),
    )
    def example(request, plan, md, spectator: bool) -> None:
        if callable(request):
            request = request()  # a watch, made from the games as they are now
            md = () if spectator else md
        else:
            aim(target, request, plan)
        opening(target, request.SerializeToString(), metadata_for(target, md))

    run_fuzz(example, SHARE)
    target.assert_playable()


def test_fuzz_play_opening_bytes(counted: Target) -> None:
    """Bytes that are not quite a PlayRequest as the first message, now and then after a
    watch of the live game (a real opening, then the damage)."""
    target = counted
    pb2 = target.pb2

    @SETTINGS
    @given(data=protofuzz.raw_bytes(play_requests(target)), aimed=st.booleans(), md=METADATA)
    def example(data: bytes, aimed: bool, md) -> None:
        if aimed:
            watch = pb2.WatchGameRequest(game_id=target.live_a().game_id)
            data = pb2.PlayRequest(watch=watch).SerializeToString() + data
        opening(target, data, metadata_for(target, md))

    run_fuzz(example, SHARE)
    target.assert_playable()


def test_fuzz_play_moves_on_an_open_session(counted: Target) -> None:
    """A session on the live game, a seat's or a spectator's, then up to six messages of
    any kind, each read before the next or several at once; then a move made elsewhere
    must still reach the session."""
    target = counted

    @SETTINGS
    @given(
        seat=st.integers(0, 2**16),
        with_moves=st.booleans(),
        plan=st.lists(steps(target), min_size=1, max_size=6),
    )
    def example(seat: int, with_moves: bool, plan: list[Step]) -> None:
        play(target, seat, with_moves, plan)

    run_fuzz(example, SHARE)
    target.assert_playable()


# --- the controls: the answer check fails when the guarantee is broken ----------------------

PB2 = registry.by_name(GAMES[0]).pb2()
SECRET = "sEcReT-token-of-a-seat"


def _refused(rid: str, code: int = 3, reason: str = "BAD_REQUEST", message: str = "no") -> Any:
    refusal = errors_pb2.Refusal(code=code, reason=reason, message=message)
    return PB2.PlayAnswer(request_id=rid, refused=refusal)


def _accepted(rid: str, version: int, status: int = 1) -> Any:
    answer = PB2.PlayAnswer(request_id=rid)
    answer.accepted.game.game_id = "g"
    answer.accepted.game.version = version
    answer.accepted.game.status = status
    return answer


def _transcript() -> tuple[list[Sent], list[Any]]:
    """A session as the fuzz records one: a refused move, bytes that are no message, an
    accepted move (version 5 to 6), the sentinel; and their answers."""
    sent = [
        Sent(b"m1", "m1", True),
        Sent(b"\xff", "", False),
        Sent(b"m2", "m2", True),
        Sent(b"end", "sentinel-1", False),
    ]
    answers = [
        _refused("m1", code=9, reason="NOT_YOUR_DECISION"),
        _refused(""),
        _accepted("m2", 6),
        _refused("sentinel-1"),
    ]
    return sent, answers


def _doctor(how: str, sent: list[Sent], answers: list[Any]) -> grpc.StatusCode | None:
    """Break the transcript as a faulty session.py would; the stream's end it would see."""
    if how == "a refused move's answer dropped":
        del answers[0]
    elif how == "an answer sent twice":
        answers.insert(1, answers[1])
    elif how == "two answers swapped":
        answers[0], answers[2] = answers[2], answers[0]
    elif how == "the last answer lost, the session open":
        del answers[-1]
    elif how == "the last answer lost, the session ended OK":
        del answers[-1]
        return grpc.StatusCode.OK
    elif how == "a refusal ended the session":
        del answers[1:]
        return grpc.StatusCode.INVALID_ARGUMENT
    elif how == "an answer with no result":
        answers[1] = PB2.PlayAnswer()
    elif how == "a refusal coded INTERNAL":
        answers[1] = _refused("", code=grpc.StatusCode.INTERNAL.value[0])
    elif how == "a refusal coded OK":
        answers[1] = _refused("", code=0)
    elif how == "a refusal with no listed reason":
        answers[1] = _refused("", reason="OOPS")
    elif how == "a seat token in a refusal":
        answers[0] = _refused("m1", message=f"token {SECRET} is not to act")
    elif how == "bytes that are no move accepted":
        answers[1] = _accepted("", 6)
    elif how == "a move applied twice":
        answers[2] = _accepted("m2", 7)
    elif how == "an accepted move not applied":
        answers[2] = _accepted("m2", 5)
    elif how == "a spectator's move accepted":
        answers[0] = _accepted("m1", 6)
        sent[0] = Sent(b"m1", "m1", False)
    elif how == "a move with no request_id answered as a retry":
        sent[2] = Sent(b"m2", "", True)
        answers[2] = _accepted("", 5)
    return None


def _check(sent: list[Sent], answers: list[Any], ended: grpc.StatusCode | None) -> None:
    check_answers(sent, answers, ended, [SECRET])
    assert versions(sent, answers, 5, set(), "g") == 6


# Each way of breaking it, and what the check says.
DOCTORED = {
    "a refused move's answer dropped": "3 answers to 4 messages, the session open",
    "an answer sent twice": "5 answers to 4 messages",
    "two answers swapped": "request_id 'm2', sent 'm1'",
    "the last answer lost, the session open": "3 answers to 4 messages, the session open",
    "the last answer lost, the session ended OK": "3 answers to 4 messages, the session Status",
    "a refusal ended the session": "the session ended StatusCode.INVALID_ARGUMENT",
    "an answer with no result": "neither accepted nor refused",
    "a refusal coded INTERNAL": "StatusCode.INTERNAL",
    "a refusal coded OK": "code 0",
    "a refusal with no listed reason": "reason 'OOPS'",
    "a seat token in a refusal": "a seat token in a refusal",
    "bytes that are no move accepted": "accepted, but not a seat's move",
    "a move applied twice": "version 7 after 5",
    "an accepted move not applied": "version 5 after 5, request_id never used",
    "a spectator's move accepted": "accepted, but not a seat's move",
    "a move with no request_id answered as a retry": "version 5 after 5, request_id never used",
}


def test_the_answer_check_passes_a_session_as_the_contract_says() -> None:
    sent, answers = _transcript()
    _check(sent, answers, None)
    # The game's end may leave the messages after its last move unanswered.
    answers[2] = _accepted("m2", 6, status=FINISHED)
    _check(sent, answers[:3], grpc.StatusCode.OK)


@pytest.mark.parametrize("how", list(DOCTORED))
def test_the_answer_check_fails_on_a_doctored_session(how: str) -> None:
    sent, answers = _transcript()
    ended = _doctor(how, sent, answers)
    with pytest.raises(AssertionError, match=re.escape(DOCTORED[how])):
        _check(sent, answers, ended)


@pytest.fixture(scope="module")
def live(stack: Stack) -> Iterator[Target]:
    """One game's target with just a live game (the controls need no more)."""
    aimed = Target(stack, GAMES[0], "direct")
    aimed.b = aimed.create(seed=2)
    aimed.a = aimed.create(seed=1)
    yield aimed
    aimed.close()


def _answers_written(how: str, pb2: Any) -> Callable[..., Any]:
    """session._moves with its first answer dropped or written twice, or its first
    accepted move answered as a refusal."""
    real = play_session._moves
    tag = bytes([play_session.ANSWER << 3 | 2])

    async def moves(context, updates, parse, game_id, submitted, caller, write, *rest):
        done = False

        async def doctored(data: bytes) -> None:
            nonlocal done
            answer = pb2.PlayResponse.FromString(data).answer if data[:1] == tag else None
            if how == "hide" and answer is not None and answer.HasField("accepted"):
                refusal = errors_pb2.Refusal(code=9, reason="ILLEGAL_MOVE", message="doctored")
                data = play_session.answer(answer.request_id, None, refusal)
            first = answer is not None and not done
            done = done or first
            if not (first and how == "drop"):
                await write(data)
            if first and how == "twice":
                await write(data)

        await real(context, updates, parse, game_id, submitted, caller, doctored, *rest)

    return moves


LIVE_CONTROLS = {
    "drop": "answers to",  # the watch's refusal lost: 2 answers to 3 messages
    "twice": "answers to",  # 4 answers to 3 messages
    "hide": "the answers say",  # the move applied, its answer a refusal
}


@pytest.mark.parametrize("how", list(LIVE_CONTROLS))
def test_a_session_that_loses_repeats_or_hides_an_answer_fails_the_fuzz(
    live: Target, how: str, monkeypatch
) -> None:
    """The running service with session.py's writes doctored: the session check fails.
    The plan: a second watch (refused), a move legal for the seat to act (accepted)."""
    plan = [Step(("watch", None)), Step(("legal", 0))]
    play(live, 0, False, plan)  # as it is: passes
    monkeypatch.setattr(play_session, "_moves", _answers_written(how, live.pb2))
    with pytest.raises(AssertionError, match=LIVE_CONTROLS[how]):
        play(live, 0, False, plan)


# --- the size limit, on each message ----------------------------------------------------------


@pytest.mark.parametrize(
    ("via", "which"),
    [("direct", "first"), ("direct", "move"), ("gateway", "first"), ("gateway", "move")],
)
def test_a_message_over_the_size_limit_is_refused_like_a_call(
    stack: Stack, via: str, which: str
) -> None:
    """A message over the request size limit is refused as SubmitMove's request is, before
    it is read (RESOURCE_EXHAUSTED, LIMIT_REACHED): the first ends the session, a move is
    answered (with no request_id: it was not read) and the session stays open."""
    target = Target(stack, GAMES[0], via)
    pb2 = target.pb2
    padding = protofuzz.length_delimited(99, b"x" * MESSAGE_LIMIT)  # a field no one reads
    try:
        game = target.create(seed=1)
        md = (("authorization", f"Bearer {game.tokens[game.state[2][0]]}"),)
        move = pb2.SubmitMoveRequest(move=game.legal[0], request_id="big")
        call = target.raw("SubmitMove", move.SerializeToString() + padding, md)
        assert call.code == grpc.StatusCode.RESOURCE_EXHAUSTED  # the call's own refusal
        watch = pb2.WatchGameRequest(game_id=game.game_id).SerializeToString()
        with Session(target, md) as session:
            if which == "first":
                session.send(protofuzz.length_delimited(1, watch + padding))
                session.read()
                assert session.ended == grpc.StatusCode.RESOURCE_EXHAUSTED
                target.check_answer(Outcome("Play", b"", md, error=session.error))
                return
            session.send(protofuzz.length_delimited(1, watch))
            data = protofuzz.length_delimited(2, move.SerializeToString() + padding)
            session.send(data)
            end = sentinel(pb2, "another")
            session.send(end.data)
            session.read_until(lambda: len(session.answers) >= 2)
            check_answers([Sent(data, "", True), end], session.answers, session.ended, [])
            assert session.answers[0].refused.reason == "LIMIT_REACHED"
        assert target.typed("GetGame", game_id=game.game_id).game.version == game.version
    finally:
        target.close()
