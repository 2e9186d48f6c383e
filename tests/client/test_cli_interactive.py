"""``play --interactive`` follows the game: driven in a pseudo-terminal (pexpect) as a
person plays it, against a served game (The Channeling and Glow as processes behind a
gateway) with an 8 s clock per decision, and a seat of the service's bot across the table.

What the screen shows is checked against what the service says (GetHistory, ListMoves,
its own /metrics), not against the client. The guard that keeps an answer from being
sent for a screen that is gone is also driven in process, event by event, where the
moment a key comes can be chosen.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import re
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import grpc
import pexpect
import pytest
from prometheus_client.parser import text_string_to_metric_families

from client.api import GameClient
from client.game import Game
from client.interactive import Answer, Listed, Sent, Session, Update
from client.terminal import Lines
from services import registry
from tests.client.test_cli_tables import Interactive, Stack, cli, created, gateway_stack, ok, rpc
from tests.support import ROOT, service_in_process

GAME = "channeling"
SERVICE = registry.by_name(GAME).service_name
pb = registry.by_name(GAME).pb2()
# Seconds per decision: short, to see the clock run out; long enough that on a loaded
# machine the first prompt, drawn once the CLI has started, still ticks, and the next
# one is answered in time (two deadlines let pass in a row end the game: abandoned).
CLOCK = 8
PROMPT = r"v(\d+) \((\d+):(\d\d) left\) your move \(number or text\): "


@pytest.fixture(scope="module")
def stack(tmp_path_factory) -> Iterator[Stack]:
    # The bot decides at once: these are tests, not play.
    env = {"TABLETOP_BOT_MS_PER_DECISION": "20"}
    with gateway_stack(tmp_path_factory.mktemp("cli-interactive"), env) as running:
        yield running


def new_table(stack: Stack) -> tuple[str, str]:
    """Ann's seat (Light, seat 0) against the service's easy bot (Dark), CLOCK s a decision."""
    out = ok(
        cli(
            stack,
            "create",
            GAME,
            "--bots",
            "1",
            "--level",
            "easy",
            "--name",
            "Ann",
            "--per-decision",
            str(CLOCK),
        )
    )
    game_id, tokens = created(out)
    return game_id, tokens[0]


def spawn(stack: Stack, game_id: str, token: str) -> pexpect.spawn:
    """The CLI in a pseudo-terminal, as a person starts it."""
    env = {k: v for k, v in os.environ.items() if k not in ("TABLETOP_KEY", "NO_COLOR")}
    env.update(TABLETOP_TARGET=stack.gateway.address, TABLETOP_TOKEN=token, TERM="xterm")
    child = pexpect.spawn(
        sys.executable,
        ["-m", "client", "play", GAME, game_id, "--interactive"],
        cwd=str(ROOT),
        env=env,
        dimensions=(60, 200),
        encoding="utf-8",
        codec_errors="replace",
        timeout=30,
    )
    child.logfile_read = io.StringIO()  # the whole screen, for a failure's message
    return child


def screen(child: pexpect.spawn) -> str:
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", child.logfile_read.getvalue())[-4000:]


@dataclass
class Submits:
    """SubmitMove calls the channeling service answered, and those it refused as stale."""

    started: float
    aborted: float


def submits(stack: Stack) -> Submits:
    process = next(p for p in stack.services if GAME in str(p.log))
    with urllib.request.urlopen(f"http://127.0.0.1:{process.metrics_port}/metrics") as reply:
        body = reply.read().decode()
    found = {"started": 0.0, "aborted": 0.0}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            labels = sample.labels
            if labels.get("grpc_service") != SERVICE or labels.get("grpc_method") != "SubmitMove":
                continue
            if sample.name == "grpc_server_started_total":
                found["started"] += sample.value
            elif sample.name == "grpc_server_handled_total" and labels["grpc_code"] == "ABORTED":
                found["aborted"] += sample.value
    return Submits(**found)


def seconds_left(stack: Stack, game_id: str, token: str) -> tuple[int, float]:
    """The game's version and the time to Ann's deadline, as the service says them."""
    header = rpc(stack, GAME, "GetGame", token, game_id=game_id).game
    seat = header.seats[0]
    if not seat.HasField("deadline") or 0 not in header.to_act:
        return header.version, 0.0
    return header.version, seat.deadline.ToNanoseconds() / 1e9 - time.time()


def turn_at(stack: Stack, game_id: str, version: int, timeout: float = 20) -> Any:
    """The turn that made ``version`` (waiting for it to be played)."""
    deadline = time.monotonic() + timeout
    while True:
        turns = rpc(stack, GAME, "GetHistory", game_id=game_id, from_version=version - 1).turns
        if turns:
            return turns[0]
        assert time.monotonic() < deadline, f"no turn {version}"
        time.sleep(0.05)


def answer_first_move(child: pexpect.spawn, stack: Stack, game_id: str, token: str) -> Any:
    """Wait for a prompt with more than a second on the clock, read the listing the
    service gives at that version, type 0 and Enter; the turn it made. A prompt drawn too
    close to the clock's end is let go (the clock's move and the key would race)."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        child.expect(PROMPT)
        shown = int(child.match.group(1))
        version, left = seconds_left(stack, game_id, token)
        if version != shown or left < 1.0:
            continue
        listed = rpc(stack, GAME, "ListMoves", token, game_id=game_id)
        assert listed.game.version == shown
        child.send("0\r")
        turn = turn_at(stack, game_id, shown + 1)
        if not any(e.kind == "timeout" for e in turn.events):
            # Judged against the listing on screen: its first move, at its version.
            assert turn.seat == 0 and turn.move_text == listed.labels[0], screen(child)
            return turn
    raise AssertionError(f"no prompt with time to answer:\n{screen(child)}")


def test_the_screen_follows_the_clock_and_the_opponent_and_ends_with_the_game(stack):
    game_id, token = new_table(stack)
    before = submits(stack)
    child = spawn(stack, game_id, token)
    try:
        # The countdown ticks on the prompt line, from the deadline the service sent (the
        # clock started with the game, before this CLI did: the first prompt may show less).
        child.expect(PROMPT)
        version = int(child.match.group(1))
        first = int(child.match.group(2)) * 60 + int(child.match.group(3))
        assert 2 <= first <= CLOCK, screen(child)
        child.expect(rf"v{version} \(0:0{first - 1} left\) your move")
        # No key pressed: the clock runs out, the bot moves for Ann, and the screen says so.
        child.expect(r"the clock ran out: the bot moved for you: ([a-z0-9 -]+)")
        clock_move = child.match.group(1).strip()
        turn = turn_at(stack, game_id, version + 1)
        assert turn.seat == 0 and turn.move_text == clock_move
        assert {"timeout", "bot_move"} <= {e.kind for e in turn.events}
        # A move typed now is judged against the new listing, the one on screen.
        mine = answer_first_move(child, stack, game_id, token)
        assert mine.version > version + 1
        # The opponent's moves appear with no key pressed (the clock plays Ann's steps
        # of the turn meanwhile, and the screen shows each).
        child.expect(r"v(\d+) Dark: ", timeout=40)
        dark = turn_at(stack, game_id, int(child.match.group(1)))
        assert dark.seat == 1
        # The game ends under the prompt (Ann gives up from elsewhere): the session ends
        # with the outcome, by itself.
        child.expect(PROMPT)
        rpc(stack, GAME, "Resign", token, game_id=game_id)
        child.expect("game over: RESIGNED")
        child.expect("you did not win")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, screen(child)
    after = submits(stack)
    # One move was typed and sent, and nothing stale: the service refused none as ABORTED.
    assert (after.started - before.started, after.aborted - before.aborted) == (1, 0)


def test_what_was_typed_for_a_listing_that_is_gone_is_never_sent(stack):
    game_id, token = new_table(stack)
    before = submits(stack)
    child = spawn(stack, game_id, token)
    try:
        deadline = time.monotonic() + 30
        while True:  # a prompt with time left, so the key comes before the clock
            child.expect(PROMPT)
            shown = int(child.match.group(1))
            version, left = seconds_left(stack, game_id, token)
            if version == shown and left > 1.0:
                break
            assert time.monotonic() < deadline, screen(child)
        child.send("0")  # typed for the listing at `shown`, not entered
        # It stays on the prompt line as the countdown ticks...
        child.expect(rf"v{shown} \(0:0[01] left\) your move \(number or text\): 0")
        # ...until the clock moves for Ann: the listing it answered is gone, and so is it.
        child.expect("the clock ran out: the bot moved for you: ")
        child.expect(r"\(the game moved on: what you had typed was cleared\)")
        child.expect(PROMPT)
        assert int(child.match.group(1)) > shown
        child.send("\r")  # Enter now enters nothing: nothing is sent
        child.expect(PROMPT)  # the countdown goes on ticking after the Enter
        child.sendcontrol("d")
        child.expect("stdin closed: leaving the game as it is")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0, screen(child)
    after = submits(stack)
    assert (after.started - before.started, after.aborted - before.aborted) == (0, 0)
    turns = rpc(stack, GAME, "GetHistory", game_id=game_id, from_version=shown).turns
    assert all(any(e.kind == "timeout" for e in t.events) for t in turns if t.seat == 0)

    # The control: a move sent for that listing after the game moved on is what the check
    # above would see (the service refuses it as stale, and counts it).
    move = pb.Move(play_glyph=pb.PlayGlyph(glyph="sun"))
    with pytest.raises(grpc.RpcError) as refused:
        rpc(stack, GAME, "SubmitMove", token, game_id=game_id, move=move, expected_version=shown)
    assert refused.value.code() == grpc.StatusCode.ABORTED
    control = submits(stack)
    assert (control.started - after.started, control.aborted - after.aborted) == (1, 1)


def test_a_transcript_shows_the_clock_move_and_the_next_line_answers_the_new_listing(stack):
    """From a pipe: the clock's move is shown with no line given, and a line given after
    it answers the prompt printed after it."""
    game_id, token = new_table(stack)
    player = Interactive(stack, GAME, game_id, token)
    try:
        player.wait_for("the clock ran out: the bot moved for you: ", timeout=30)
        after_clock = player.text.index("the clock ran out")
        deadline = time.monotonic() + 30
        while True:  # the prompt printed after it, while it has time left
            prompts = re.findall(PROMPT, player.text[after_clock:])
            if prompts:
                shown = int(prompts[-1][0])
                version, left = seconds_left(stack, game_id, token)
                if shown == version and left > 1.0:
                    break
            assert time.monotonic() < deadline, player.text[-2000:]
            time.sleep(0.05)
        listed = rpc(stack, GAME, "ListMoves", token, game_id=game_id)
        player.send("0")
        turn = turn_at(stack, game_id, shown + 1)
    finally:
        code = player.close()
    assert code == 0, player.text[-2000:]
    assert "refused" not in player.text
    assert listed.game.version == shown
    assert turn.seat == 0 and turn.move_text == listed.labels[0]
    assert not any(e.kind == "timeout" for e in turn.events)


# --- the guard, event by event ----------------------------------------------------------


class Recorded:
    """An Io that keeps what was drawn, as a terminal (a live status line) would show it."""

    live = True

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.status_line = ""
        self.typed = ""

    def start(self, on_line, on_eof) -> None: ...
    def stop(self) -> None: ...

    def frame(self, lines: list[str]) -> None:
        self.lines += lines

    def say(self, lines: list[str]) -> None:
        self.lines += lines

    def status(self, text: str) -> None:
        self.status_line = text

    def ask(self, text: str) -> None:
        self.status_line = text

    def invalidate(self) -> bool:
        cleared, self.typed = bool(self.typed), ""
        return cleared

    def unread(self, line: str) -> None: ...


class Spy(GameClient):
    """A client that records every SubmitMove it sends."""

    sent: list[int]

    async def submit(self, game_id, token, move, expected_version=None, **kw):  # type: ignore[override]
        self.sent.append(expected_version)
        return await super().submit(game_id, token, move, expected_version, **kw)


async def drain(session: Session) -> None:
    """Handle every event queued (the calls the session started land as events too)."""
    for _ in range(30):
        while not session.events.empty():
            await session._handle(session.events.get_nowait())
        await asyncio.sleep(0.01)


@pytest.fixture
async def session() -> Any:
    """A session of Ann's (seat 0) on a new Channeling game in process, its events handed
    over one by one; ``moved_to_now`` feeds it the game as it stands, as the stream would."""
    async with service_in_process(GAME) as service:
        async with grpc.aio.insecure_channel(service.address) as channel:
            client = Spy(GAME, channel)
            client.sent = []
            game = await client.create(2, seed=5)
            args = argparse.Namespace(
                game=game.game_id, token=game.tokens[0], as_seat=None, command="play"
            )
            with grpc.insecure_channel(service.address) as sync:
                played = Session(Game(GAME, sync), client, args, Recorded())

                async def moved_to_now() -> None:
                    state = await client.get(game.game_id, game.tokens[0])
                    message = pb.WatchGameResponse(game=state.game, view=state.view)
                    await played._handle(Update(message))
                    await drain(played)

                played.moved_to_now = moved_to_now  # type: ignore[attr-defined]
                await moved_to_now()
                assert played.listing is not None and "your move" in played.io.status_line
                yield played


async def elsewhere(session: Session) -> int:
    """Ann plays the last listed move from another device; the version it was listed at."""
    listed = await session.client.moves(session.game_id, session.token)
    await session.client.submit(
        session.game_id, session.token, listed.moves[-1], listed.game.version
    )
    return listed.game.version


@pytest.mark.parametrize("guard", [True, False], ids=["guarded", "control-unguarded"])
async def test_an_answer_entered_for_a_screen_the_game_has_moved_past_is_refused_here(
    session, guard, monkeypatch
):
    if not guard:  # the control: what the test sees when answers are not tagged
        monkeypatch.setattr(Session, "_for_a_screen_gone", lambda self, event: False)
    client = session.client
    listed_at = session.version
    session._entered("0")  # Enter is pressed on this screen...
    pending = session.events.get_nowait()
    assert isinstance(pending, Answer)
    await elsewhere(session)  # ...but the game moves on before the answer is handled
    await session.moved_to_now()
    assert session.version == listed_at + 1 and session.listing.game.version == listed_at + 1
    await session._handle(pending)
    await drain(session)
    if not guard:
        # The number typed for the old listing went out as a move of the new one.
        assert client.sent == [listed_at, listed_at + 1]
        return
    assert client.sent == [listed_at], "only the other device's move was sent"
    assert any("not sent: the game moved on" in line for line in session.io.lines)
    # An answer entered on the screen now on show is sent, for it.
    session._entered("0")
    await drain(session)
    assert client.sent == [listed_at, listed_at + 1]
    history = await client.history(session.game_id)
    assert [t.version for t in history if t.seat == 0][-1] == listed_at + 2


async def test_an_answer_the_game_overtakes_on_its_way_is_refused_by_the_service(session):
    """The key comes before the stream says the game moved: the answer is for the screen
    on show, so it goes, with that screen's version, and the service refuses it as stale
    (nothing is applied to the new position); the refusal is shown."""
    client = session.client
    listed_at = await elsewhere(session)
    session._entered("0")
    await drain(session)
    assert client.sent == [listed_at, listed_at]
    assert any("refused: ABORTED STALE_VERSION" in line for line in session.io.lines)
    history = await client.history(session.game_id)
    assert [t.version for t in history] == [listed_at + 1]
    # A Listed for a version the game has left is dropped, never drawn as current.
    await session.moved_to_now()
    current = session.listing
    await session._handle(Listed(listed_at, await client.moves(session.game_id, session.token)))
    assert session.listing is current and current.game.version == listed_at + 1


@pytest.mark.parametrize("streamed", [True, False], ids=["with-moves", "control-without"])
async def test_the_moves_the_stream_carries_are_listed_without_a_listmoves_call(
    session, streamed, monkeypatch
):
    """The session watches with ``with_moves``: an update that puts Ann to act carries her
    legal moves, and the screen lists them with no ListMoves call. Control: an update
    without them (a service older than with_moves) still gets a listing, by ListMoves."""
    asked: list[str] = []
    listing = GameClient.moves

    async def counted(self, game_id, token):  # type: ignore[no-untyped-def]
        asked.append(game_id)
        return await listing(self, game_id, token)

    await elsewhere(session)  # the game moves on (Ann's next step): a new screen to list
    monkeypatch.setattr(GameClient, "moves", counted)
    client = session.client
    state = await client.get(session.game_id, session.token)
    assert 0 in state.game.to_act
    listed = await listing(client, session.game_id, session.token)  # what ListMoves says
    message = pb.WatchGameResponse(game=state.game, view=state.view)
    if streamed:
        message.moves.extend(listed.moves)
    await session._handle(Update(message))
    await drain(session)
    assert session.listing is not None and session.listing.game.version == state.game.version
    assert list(session.listing.moves) == list(listed.moves)
    assert session.texts == list(listed.labels)
    assert asked == ([] if streamed else [session.game_id])


# --- the stream ahead of SubmitMove's reply ---------------------------------------------


class Held(GameClient):
    """A client whose SubmitMove reply is handed over only once the watch stream has
    brought the version that move made and the session has handled it (or after HOLD
    seconds): the order a loaded machine gives now and then, as the service writes the
    stream's update before its reply, and the update carries the next decision's moves
    (with_moves). It counts the ListMoves calls too."""

    HOLD = 10.0
    session: Session
    listed: int
    released: list[float]  # when each reply was handed over

    async def submit(self, game_id, token, move, expected_version=None, **kw):  # type: ignore[override]
        reply = await super().submit(game_id, token, move, expected_version, **kw)
        deadline = time.monotonic() + self.HOLD
        while self.session.version <= expected_version and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        # A few turns of the loop more: whatever the update set going (a prompt, the line
        # it reads) happens before the reply.
        await asyncio.sleep(0.1)
        self.released.append(time.monotonic())
        return reply

    async def moves(self, game_id, token):  # type: ignore[no-untyped-def]
        self.listed += 1
        return await super().moves(game_id, token)


def as_before_the_fix(monkeypatch) -> None:
    """The session as it was when this hung: a listing's prompt goes up at once, an
    answer on its way or not, and a reply that was not for the listing on show asks
    nothing."""
    listed, sent = Session._listed, Session._sent

    def eager(self: Session, event: Listed) -> None:
        sending, self.sending = self.sending, None
        listed(self, event)
        self.sending = sending

    def quiet(self: Session, event: Sent) -> None:
        listing = self.listing
        if event.error is None and listing is not None and listing.game.version != event.version:
            self.listing = None  # hidden from _sent, which asks nothing then
            sent(self, event)
            self.listing = listing
        else:
            sent(self, event)

    monkeypatch.setattr(Session, "_listed", eager)
    monkeypatch.setattr(Session, "_sent", quiet)


@pytest.mark.parametrize("fixed", [True, False], ids=["fixed", "control-as-before"])
async def test_a_decision_the_stream_brings_before_the_last_answers_reply_is_asked_after_it(
    fixed, monkeypatch
):
    """Ann's turn at The Channeling is several decisions in a row. Each of her answers is
    read from a pipe (a transcript, as the README's blocks play), and the stream brings
    her next decision, with its moves, before SubmitMove's reply to the last one. The
    next prompt waits for that reply and is printed once, so the next line answers it:
    her whole turn is played, with no ListMoves call. Control: as before the fix, the
    prompt went up while the answer was on its way, its line was taken and put back
    (no move may be sent then), and nothing asked again: the session hung."""
    if not fixed:
        as_before_the_fix(monkeypatch)
    async with service_in_process(GAME) as service:
        async with grpc.aio.insecure_channel(service.address) as channel:
            client = Held(GAME, channel)
            client.listed, client.released = 0, []
            game = await client.create(2, seed=5)
            token = game.tokens[0]
            args = argparse.Namespace(game=game.game_id, token=token, as_seat=None, command="play")
            read, write = os.pipe()
            out = io.StringIO()
            os.write(write, b"0\n" * 40)
            with grpc.insecure_channel(service.address) as sync:
                session = Session(Game(GAME, sync), client, args, Lines(read, out))
                client.session = session
                run = asyncio.get_running_loop().create_task(session.run())

                async def ann_to_act() -> bool:
                    return 0 in (await client.get(game.game_id, token)).game.to_act

                deadline = time.monotonic() + 30

                def given_up() -> bool:  # the control: 5 s after the first reply, it hangs
                    return (
                        not fixed
                        and bool(client.released)
                        and (time.monotonic() > client.released[0] + 5)
                    )

                while await ann_to_act() and time.monotonic() < deadline and not run.done():
                    if given_up():
                        break
                    await asyncio.sleep(0.05)
                ann_acts = await ann_to_act()
                run.cancel()
                await asyncio.gather(run, return_exceptions=True)
            os.close(read)
            os.close(write)
            history = await client.history(game.game_id)
    mine = [t for t in history if t.seat == 0]
    transcript = out.getvalue()
    prompts = re.findall(r"v(\d+)(?: \([^)]*\))? your move \(number or text\): ", transcript)
    if not fixed:
        # Her first answer went; the prompt of her second decision was printed while it
        # was on its way, and nothing was sent for it, though lines were there to read.
        assert ann_acts and len(mine) == 1, transcript[-2000:]
        assert [int(v) for v in prompts] == [0, 1], transcript[-2000:]
        return
    assert not ann_acts, f"Ann's turn was not played to its end:\n{transcript[-2000:]}"
    assert len(mine) >= 2 and [t.version for t in mine] == list(range(1, len(mine) + 1))
    # One prompt per decision, each answered by the line after it, at its version.
    assert [int(v) for v in prompts] == [t.version - 1 for t in mine], transcript[-2000:]
    assert "refused" not in transcript and "not sent" not in transcript
    assert client.listed == 0  # every listing came with the stream


def listing_once(self: Session, version: int) -> Any:
    """ListMoves as it was asked before: once, and an answer that failed or came from
    behind the stream was let go (the stream was to bring the game on)."""

    async def once() -> None:
        try:
            reply = await self.client.moves(self.game_id, self.token)
        except grpc.aio.AioRpcError:
            return
        self.events.put_nowait(Listed(version, reply))

    return once()


@pytest.mark.parametrize("retried", [True, False], ids=["retried", "control-once"])
@pytest.mark.parametrize("first", ["failed", "behind"])
async def test_a_listmoves_that_fails_or_answers_from_behind_is_asked_again(
    session, first, retried, monkeypatch
):
    """An update that puts Ann to act carries no moves (a service older than
    with_moves): the session asks ListMoves, whose first answer fails (UNAVAILABLE) or
    is from the version before (a replica yet to read the move). The game waits on Ann,
    so no update will come: ListMoves is asked again, and she is asked for her move.
    Control: asked once, as before, nothing is listed, and the session waits for ever."""
    if not retried:
        monkeypatch.setattr(Session, "_list", listing_once)
    client = session.client
    before = await client.moves(session.game_id, session.token)
    await elsewhere(session)  # Ann's next decision
    asked: list[int] = []
    listing = GameClient.moves

    async def flaky(self, game_id, token):  # type: ignore[no-untyped-def]
        asked.append(len(asked))
        if len(asked) > 1:
            return await listing(self, game_id, token)
        if first == "behind":
            return before
        metadata = grpc.aio.Metadata()
        raise grpc.aio.AioRpcError(grpc.StatusCode.UNAVAILABLE, metadata, metadata, "down")

    monkeypatch.setattr(GameClient, "moves", flaky)
    state = await client.get(session.game_id, session.token)
    assert 0 in state.game.to_act
    await session._handle(Update(pb.WatchGameResponse(game=state.game, view=state.view)))
    deadline = time.monotonic() + (20 if retried else 3)
    while session.listing is None and time.monotonic() < deadline:
        await drain(session)
    if not retried:
        assert session.listing is None and len(asked) == 1
        assert "listing your moves..." in session.io.status_line  # and it stays
        return
    assert session.listing is not None and session.listing.game.version == state.game.version
    assert len(asked) == 2 and "your move (number or text)" in session.io.status_line
