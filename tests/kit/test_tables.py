"""Tables in the game manager, without gRPC: seats, joining, leaving, resigning, bots,
clocks and idle tables. Clocks run on an injected clock, never on sleeps."""

from __future__ import annotations

import asyncio
import os
import random

import pytest

from services import registry
from services.channeling import engine as channeling
from services.glow import engine as glow
from services.kit import auth
from services.kit import table as tables
from services.kit.engine import GameOver
from services.kit.errors import (
    AlreadyGivenUp,
    BadRequest,
    GameNotFound,
    GameNotStarted,
    GameStarted,
    LimitReached,
    SeatNotOpen,
)
from services.kit.games import GameManager
from services.kit.store import open_store
from services.shen import engine as shen


class Now:
    """A clock the test moves by hand."""

    def __init__(self, at: float = 1_000_000.0) -> None:
        self.at = at

    def __call__(self) -> float:
        return self.at

    def advance(self, seconds: float) -> None:
        self.at += seconds


def plan(*kinds: str, clock: tables.Clock | None = None, level: str = "medium") -> tables.Plan:
    return tables.Plan(tuple(tables.SeatPlan(k, "", level) for k in kinds), clock)


def manager(engine=channeling, store="memory://", now=None, **kw) -> GameManager:
    return GameManager(engine, open_store(store), clock=now or Now(), **kw)


async def history(m: GameManager, game_id: str, token: str | None = None):
    _, turns = await m.history(game_id, token, 0, 10_000)
    return turns


async def play_humans(m: GameManager, game_id: str, tokens: dict[int, str], rng, limit=100_000):
    """Random legal moves for the seats the tokens hold, letting bots move in between."""
    for _ in range(limit):
        await m.settle()
        snap, _ = await m.read(game_id, None)
        if snap.outcome is not None:
            return snap
        mine = [s for s in snap.to_act if s in tokens]
        assert mine, f"nobody but bots to act, yet no bot moved: {snap.to_act}"
        seat = rng.choice(mine)
        _, moves, _ = await m.legal_moves(game_id, tokens[seat])
        move = rng.choice(moves)
        await m.submit(game_id, tokens[seat], lambda mv=move: mv, None, None)
    raise AssertionError("the game did not end")


# --- seats ---------------------------------------------------------------------------------


async def test_saying_nothing_gives_every_token_and_starts_at_once():
    m = manager()
    game, tokens = await m.create(2, channeling.Options())
    assert sorted(tokens) == [0, 1]
    snap, _ = await m.read(game.record.game_id, None)
    assert not snap.waiting and snap.to_act
    assert [s.state for s in snap.seats] == [tables.TAKEN, tables.TAKEN]
    assert [s.player_name for s in snap.seats] == ["Player 1", "Player 2"]


async def test_open_seats_wait_and_the_last_join_starts_the_game():
    m = manager(glow)
    game, tokens = await m.create(3, glow.Options(), plan=plan("open", "open", "open"))
    gid = game.record.game_id
    assert tokens == {}
    snap, _ = await m.read(gid, None)
    assert snap.waiting and snap.to_act == ()
    assert [s.state for s in snap.seats] == [tables.OPEN] * 3
    joined = {}
    for name in ("Ann", "Bo"):
        snap, seat, token = await m.join(gid, None, name)
        joined[seat] = token
        assert snap.waiting
    # A seated player cannot move before the start.
    seat = next(iter(joined))
    with pytest.raises(GameNotStarted):
        await m.submit(gid, joined[seat], lambda: None, None, None)
    snap, seat, token = await m.join(gid, None, "Cy")
    joined[seat] = token
    assert sorted(joined) == [0, 1, 2]
    assert not snap.waiting and snap.to_act
    assert [s.player_name for s in snap.seats] == ["Ann", "Bo", "Cy"]
    turns = await history(m, gid)
    assert [t.move_text for t in turns] == ["@join"] * 3
    assert [e["kind"] for e in turns[-1].events] == ["player_joined", "game_started"]
    # The token's hash is in the log for replay, but no seat is ever shown it.
    for t in turns:
        assert all(e["kind"] != "seat_token" for e in t.events)
    final = await play_humans(m, gid, joined, random.Random(1))
    assert final.outcome is not None


async def test_twenty_clients_racing_for_the_last_seat_one_gets_it():
    m = manager()
    game, _ = await m.create(2, channeling.Options(), plan=plan("reserved", "open"))
    gid = game.record.game_id
    results = await asyncio.gather(
        *(m.join(gid, None, f"p{i}") for i in range(20)), return_exceptions=True
    )
    won = [r for r in results if not isinstance(r, BaseException)]
    lost = [r for r in results if isinstance(r, BaseException)]
    assert len(won) == 1
    assert len(lost) == 19 and all(isinstance(e, SeatNotOpen) for e in lost)
    snap, _ = await m.read(gid, None)
    assert snap.version == 1 and not snap.waiting


async def test_leaving_opens_the_seat_again_and_ends_its_token():
    m = manager()
    game, mine = await m.create(2, channeling.Options(), plan=plan("reserved", "open"))
    gid = game.record.game_id
    with pytest.raises(auth.BadToken):
        await m.leave(gid, "not-a-token")
    snap = await m.leave(gid, mine[0])
    assert [s.state for s in snap.seats] == [tables.OPEN, tables.OPEN]
    with pytest.raises(auth.BadToken):
        await m.read(gid, mine[0])
    _, seat, token = await m.join(gid, 0, "Again")
    assert seat == 0
    _, seat, token = await m.join(gid, None, "Other")
    with pytest.raises(GameStarted):
        await m.leave(gid, token)


async def test_bad_joins_are_refused_and_change_nothing():
    m = manager()
    game, _ = await m.create(2, channeling.Options(), plan=plan("reserved", "open"))
    gid = game.record.game_id
    for seat, name, error in [
        (0, "Taken", SeatNotOpen),
        (2, "Out", BadRequest),
        (-1, "Neg", BadRequest),
        (None, "x" * 10_000, BadRequest),
        (None, "", BadRequest),
        (None, "   ", BadRequest),
        (None, "bell\x07", BadRequest),
        (None, "line\nbreak", BadRequest),
    ]:
        with pytest.raises(error):
            await m.join(gid, seat, name)
    with pytest.raises(GameNotFound):
        await m.join("no-such-game", None, "Ann")
    snap, _ = await m.read(gid, None)
    assert snap.version == 0 and snap.waiting
    # A finished game takes nobody.
    done, tokens = await m.create(2, channeling.Options())
    await m.resign(done.record.game_id, tokens[0])
    with pytest.raises(GameOver):
        await m.join(done.record.game_id, None, "Late")


async def test_a_bot_seat_plays_a_random_legal_move_after_the_move_before_it():
    m = manager()
    game, tokens = await m.create(2, channeling.Options(), plan=plan("reserved", "bot"))
    gid = game.record.game_id
    snap = await play_humans(m, gid, tokens, random.Random(4))
    assert snap.outcome is not None
    turns = await history(m, gid)
    by_bot = [t for t in turns if t.seat == 1]
    assert by_bot and all(any(e["kind"] == "bot_move" for e in t.events) for t in by_bot)
    assert all(not any(e["kind"] == "bot_move" for e in t.events) for t in turns if t.seat == 0)


@pytest.mark.parametrize("name", registry.names())
async def test_a_game_of_bots_plays_to_its_end_by_itself(name):
    engine = registry.by_name(name).engine()
    players = 2
    options = engine.GAME.options_type()
    if name == "shen":
        options = engine.GAME.options_type(round_limit=40)
    m = manager(engine)
    game, tokens = await m.create(players, options, seed=7, plan=plan("bot", "bot"))
    assert tokens == {}
    await m.settle()
    snap, _ = await m.read(game.record.game_id, None)
    assert snap.outcome is not None, name
    # Replayed from the log, the same game.
    fresh = GameManager(engine, m.store, clock=m.clock)
    again, _ = await fresh.read(game.record.game_id, None)
    assert again.outcome == snap.outcome and again.version == snap.version


# --- resigning -----------------------------------------------------------------------------


async def test_in_a_two_sided_game_resigning_hands_the_other_side_the_win():
    m = manager()
    game, tokens = await m.create(2, channeling.Options(), plan=plan("reserved", "reserved"))
    gid = game.record.game_id
    before = m.in_progress
    snap, turn = await m.resign(gid, tokens[0])
    assert snap.outcome.reason == "RESIGNED" and snap.outcome.winners == (1,)
    assert turn.move_text == "@resign" and turn.seat == 0
    assert m.in_progress == before - 1
    with pytest.raises(GameOver):
        await m.resign(gid, tokens[1])
    with pytest.raises(GameOver):
        await m.resign(gid, tokens[0])
    record = await m.store.load(gid)
    assert record.finished_at is not None and record.lobby["status"] == "finished"


async def test_resigning_before_the_start_is_refused():
    m = manager()
    game, tokens = await m.create(2, channeling.Options(), plan=plan("reserved", "open"))
    with pytest.raises(GameNotStarted):
        await m.resign(game.record.game_id, tokens[0])


def shen_options(**kw):
    return shen.Options(round_limit=40, **kw)


async def test_with_four_players_the_resigned_seat_is_played_by_the_bot_and_cannot_win():
    m = manager(shen)
    game, tokens = await m.create(4, shen_options(), seed=3)
    gid = game.record.game_id
    await m.resign(gid, tokens[2])
    with pytest.raises(AlreadyGivenUp):
        await m.resign(gid, tokens[2])
    humans = {s: t for s, t in tokens.items() if s != 2}
    snap = await play_humans(m, gid, humans, random.Random(5))
    assert snap.outcome is not None and 2 not in snap.outcome.winners
    assert snap.seats[2].state == tables.GIVEN_UP
    turns = await history(m, gid)
    zombie = [t for t in turns if t.seat == 2 and t.move_text != "@resign"]
    assert zombie and all(any(e["kind"] == "bot_move" for e in t.events) for t in zombie)


async def test_once_one_side_is_left_it_wins():
    m = manager(shen)
    game, tokens = await m.create(4, shen_options(), seed=3)
    gid = game.record.game_id
    for seat in (0, 1):
        snap, _ = await m.resign(gid, tokens[seat])
        assert snap.outcome is None
    snap, _ = await m.resign(gid, tokens[3])
    assert snap.outcome.reason == "RESIGNED" and snap.outcome.winners == (2,)


async def test_teams_resign_together():
    m = manager(shen)
    # Two teams of two: seat i plays for team i % 2.
    game, tokens = await m.create(4, shen_options(teams=2), seed=3)
    gid = game.record.game_id
    snap, _ = await m.resign(gid, tokens[0])
    assert snap.outcome is None  # its teammate plays on
    snap, _ = await m.resign(gid, tokens[2])
    assert snap.outcome.reason == "RESIGNED" and snap.outcome.winners == (1, 3)


# --- clocks --------------------------------------------------------------------------------


def timeouts(turns) -> int:
    return sum(bool(t.events) and t.events[0]["kind"] == "timeout" for t in turns)


async def test_a_per_decision_clock_gives_each_deadline_one_bot_move_till_nobody_plays():
    now = Now()
    m = manager(now=now)
    clock = tables.Clock(per_decision=2.0)
    game, _ = await m.create(
        2, channeling.Options(), plan=plan("reserved", "reserved", clock=clock)
    )
    gid = game.record.game_id
    snap, _ = await m.read(gid, None)
    seat = snap.to_act[0]
    assert snap.seats[seat].deadline == now.at + 2.0
    assert await m.sweep() == 0  # not yet
    deadlines = 0
    missed = {0: 0, 1: 0}
    while snap.outcome is None:
        before = len(await history(m, gid))
        acting = snap.to_act[0]
        now.advance(2.0)
        await m.sweep()
        turns = (await history(m, gid))[before:]
        assert timeouts(turns) == 1, "exactly one timeout per deadline"
        assert await m.sweep() == 0, "a deadline never fires twice"
        assert [e["kind"] for e in turns[0].events][:2] == ["timeout", "bot_move"]
        missed[acting] += 1
        deadlines += 1
        snap, _ = await m.read(gid, None)
    # Each seat let two deadlines in a row pass with the bot moving for it: abandoned
    # right after the last of them, in the same landing.
    assert min(missed.values()) == tables.MISSED_IN_A_ROW
    assert snap.outcome.reason == "ABANDONED" and snap.outcome.winners == ()
    turns = await history(m, gid)
    assert timeouts(turns) == deadlines and len(turns) == deadlines + 1
    assert turns[-1].move_text == tables.ABANDON
    assert [e["kind"] for e in turns[-1].events] == ["game_abandoned"]


async def test_a_person_moving_between_the_timeouts_keeps_the_table_alive():
    now = Now()
    m = manager(now=now)
    clock = tables.Clock(per_decision=2.0)
    game, tokens = await m.create(
        2, channeling.Options(), seed=4, plan=plan("reserved", "reserved", clock=clock)
    )
    gid = game.record.game_id
    rng = random.Random(3)
    for _ in range(12):
        snap, _ = await m.read(gid, None)
        if snap.outcome is not None:
            break
        seat = snap.to_act[0]
        if seat == 0:  # seat 0's player plays each decision in time
            now.advance(1.0)
            _, moves, _ = await m.legal_moves(gid, tokens[0])
            chosen = rng.choice(moves)
            await m.submit(gid, tokens[0], lambda mv=chosen: mv, None, None)
        else:  # seat 1's never does
            now.advance(2.0)
            assert await m.sweep() == 1
    snap, _ = await m.read(gid, None)
    assert snap.outcome is None or snap.outcome.reason != "ABANDONED"
    assert timeouts(await history(m, gid)) >= tables.MISSED_IN_A_ROW  # seat 1 missed


async def test_controls_a_clock_that_fires_early_or_twice_is_caught(monkeypatch):
    # The assertions of the test above, against two broken tables.
    real_deadline, real_after = tables.Table.deadline, tables.Table.after_move

    def early(self, seat):
        found = real_deadline(self, seat)
        return None if found is None else found - 1.0

    def keeps_old_start(self, seat, at, to_act, by=tables.PERSON):
        before = None if seat is None else self.seats[seat].since
        real_after(self, seat, at, to_act, by)
        if seat is not None and seat in tuple(to_act) and before is not None:
            self.seats[seat].since = before  # the mover's clock not restarted

    clock = tables.Clock(per_decision=2.0)
    monkeypatch.setattr(tables.Table, "deadline", early)
    now = Now()
    m = manager(now=now)
    await m.create(2, channeling.Options(), plan=plan("reserved", "reserved", clock=clock))
    now.advance(1.5)
    assert await m.sweep() == 1  # "not yet" would fail
    monkeypatch.setattr(tables.Table, "deadline", real_deadline)
    monkeypatch.setattr(tables.Table, "after_move", keeps_old_start)
    now = Now()
    m = manager(now=now)
    game, _ = await m.create(
        2, channeling.Options(), seed=1, plan=plan("reserved", "reserved", clock=clock)
    )
    most = 0
    for _ in range(6):
        before = len(await history(m, game.record.game_id))
        now.advance(2.0)
        await m.sweep()
        most = max(most, timeouts((await history(m, game.record.game_id))[before:]))
    assert most > 1  # "exactly one timeout per deadline" would fail


async def test_with_forfeit_the_idle_seat_loses():
    now = Now()
    m = manager(now=now)
    clock = tables.Clock(per_decision=2.0, forfeit=True)
    game, _ = await m.create(
        2, channeling.Options(), plan=plan("reserved", "reserved", clock=clock)
    )
    gid = game.record.game_id
    snap, _ = await m.read(gid, None)
    idle = snap.to_act[0]
    now.advance(2.0)
    assert await m.sweep() == 1
    snap, _ = await m.read(gid, None)
    assert snap.outcome.reason == "RESIGNED" and snap.outcome.winners == (1 - idle,)
    (turn,) = await history(m, gid)
    assert [e["kind"] for e in turn.events][:2] == ["timeout", "resigned"]


async def test_a_bank_is_charged_the_time_taken_and_gets_its_increment():
    now = Now()
    m = manager(now=now)
    clock = tables.Clock(bank=10.0, increment=2.0)
    game, tokens = await m.create(
        2, channeling.Options(), plan=plan("reserved", "reserved", clock=clock)
    )
    gid = game.record.game_id
    snap, _ = await m.read(gid, None)
    seat = snap.to_act[0]
    assert snap.seats[seat].deadline == now.at + 10.0
    now.advance(3.0)
    _, moves, _ = await m.legal_moves(gid, tokens[seat])
    await m.submit(gid, tokens[seat], lambda: moves[0], None, None)
    snap, _ = await m.read(gid, None)
    assert snap.seats[seat].bank == pytest.approx(9.0)  # 10 - 3 + 2


async def test_simultaneous_decisions_run_every_pending_clock_at_once():
    now = Now()
    m = manager(glow, now=now)
    clock = tables.Clock(per_decision=5.0)
    game, tokens = await m.create(
        3, glow.Options(), seed=2, plan=plan("reserved", "reserved", "reserved", clock=clock)
    )
    gid = game.record.game_id
    rng = random.Random(0)
    for _ in range(400):  # play until several seats decide at once
        snap, _ = await m.read(gid, None)
        if len(snap.to_act) > 1:
            break
        seat = snap.to_act[0]
        _, moves, _ = await m.legal_moves(gid, tokens[seat])
        now.advance(1.0)
        chosen = rng.choice(moves)
        await m.submit(gid, tokens[seat], lambda mv=chosen: mv, None, None)
    else:
        pytest.skip("no simultaneous step reached")  # pragma: no cover
    deadlines = {snap.seats[s].deadline for s in snap.to_act}
    assert deadlines == {now.at + 5.0}
    now.advance(5.0)
    fired = 0
    while landed := await m.sweep():
        fired += landed
    assert fired >= len(snap.to_act)


async def test_a_restart_fires_overdue_deadlines_at_once_and_none_twice(tmp_path):
    now = Now()
    url = f"sqlite:///{tmp_path}/clock.db"
    first = manager(store=url, now=now)
    clock = tables.Clock(per_decision=2.0)
    game, _ = await first.create(
        2, channeling.Options(), plan=plan("reserved", "reserved", clock=clock)
    )
    gid = game.record.game_id
    await first.store.close()  # the service is killed
    now.advance(60.0)  # and down for a minute: thirty deadlines' worth
    second = manager(store=url, now=now)
    try:
        assert await second.sweep() == 1  # the overdue deadline, at once
        assert await second.sweep() == 0  # the next decision has its own two seconds
        turns = await history(second, gid)
        assert len(turns) == 1 and turns[0].events[0]["kind"] == "timeout"
    finally:
        await second.store.close()


POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL")


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_two_replicas_give_each_deadline_exactly_one_move(tmp_path, backend):
    # The injected clock stands in 1970: no other test's game on a shared database is
    # ever due at these times, and these games are due only when this test says.
    now = Now()
    if backend == "postgresql":
        if not POSTGRES:
            pytest.skip("TABLETOP_TEST_POSTGRES_URL is not set (.ci/run always sets it)")
        url = POSTGRES
    else:
        url = f"sqlite:///{tmp_path}/replicas.db"
    one, two = manager(store=url, now=now), manager(store=url, now=now)
    try:
        clock = tables.Clock(per_decision=2.0)
        game, _ = await one.create(
            2, channeling.Options(), plan=plan("reserved", "reserved", clock=clock)
        )
        gid = game.record.game_id
        await two.read(gid, None)  # both hold it live
        deadlines = 0
        while (await one.read(gid, None))[0].outcome is None:
            now.advance(2.0)
            fired = await asyncio.gather(one.sweep(), two.sweep())
            assert sum(fired) >= 1
            deadlines += 1
        turns = await history(one, gid)
        # One timeout per deadline, then the one abandonment once nobody played.
        assert timeouts(turns) == deadlines >= 2 * tables.MISSED_IN_A_ROW
        assert [t.move_text for t in turns[deadlines:]] == [tables.ABANDON]
    finally:
        await one.store.close()
        await two.store.close()


# --- idle tables ---------------------------------------------------------------------------


async def test_the_fill_the_limit_attack_recovers_within_the_waiting_ttl():
    now = Now()
    m = manager(now=now, max_games=5, waiting_ttl=3600.0)
    for _ in range(5):
        await m.create(2, channeling.Options(), plan=plan("open", "open"))
    with pytest.raises(LimitReached):
        await m.create(2, channeling.Options(), plan=plan("open", "open"))
    now.advance(3599.0)
    assert await m.sweep() == 0
    now.advance(2.0)
    assert await m.sweep() == 5
    await m.create(2, channeling.Options(), plan=plan("open", "open"))
    games, waiting = await m.list_games(status="finished")
    assert len(games) == 5 and waiting == 1
    assert {g.lobby["status"] for g in games} == {"finished"}


async def test_a_game_nobody_plays_is_abandoned_clock_or_not_and_bot_moves_do_not_count():
    week = 7 * 86400.0
    now = Now()
    m = manager(now=now, idle_seconds=week)
    idle, _ = await m.create(2, channeling.Options())
    # A 30-day bank would hold its place for a month per decision (the outside attack's
    # table): a week without a person's move ends it all the same.
    banked, _ = await m.create(
        2,
        channeling.Options(),
        plan=plan("reserved", "reserved", clock=tables.Clock(bank=30 * 86400.0)),
    )
    # The bot plays this one's timeouts every three days: moves, but nobody's.
    timed, _ = await m.create(
        2,
        channeling.Options(),
        plan=plan("reserved", "reserved", clock=tables.Clock(per_decision=3 * 86400.0)),
    )
    played, tokens = await m.create(
        2,
        channeling.Options(),
        plan=plan("reserved", "reserved", clock=tables.Clock(bank=30 * 86400.0)),
    )
    pid = played.record.game_id
    for _ in range(2):
        now.advance(3 * 86400.0)
        assert await m.sweep() == 1  # the timed table's timeout
    now.advance(86400.0 - 1)
    snap, _ = await m.read(pid, None)
    _, moves, _ = await m.legal_moves(pid, tokens[snap.to_act[0]])
    await m.submit(pid, tokens[snap.to_act[0]], lambda: moves[0], None, None)
    assert await m.sweep() == 0  # a week less a second: nothing yet
    now.advance(2.0)
    assert await m.sweep() == 3
    for gone in (idle, banked, timed):
        snap, _ = await m.read(gone.record.game_id, None)
        assert snap.outcome.reason == "ABANDONED" and snap.outcome.winners == ()
    snap, _ = await m.read(pid, None)
    assert snap.outcome is None  # a person moved within the week
    turns = await history(m, timed.record.game_id)
    assert timeouts(turns) == 2 and turns[-1].move_text == tables.ABANDON


async def test_a_client_may_hold_only_so_many_waiting_tables():
    m = manager(waiting_per_client=2)
    for _ in range(2):
        await m.create(2, channeling.Options(), owner="addr:1.2.3.4", plan=plan("reserved", "open"))
    with pytest.raises(LimitReached) as refused:
        await m.create(2, channeling.Options(), owner="addr:1.2.3.4", plan=plan("reserved", "open"))
    assert refused.value.metadata["limit"] == "waiting_per_client"
    # A full table and another client are not held back.
    await m.create(2, channeling.Options(), owner="addr:1.2.3.4")
    await m.create(2, channeling.Options(), owner="addr:5.6.7.8", plan=plan("reserved", "open"))


async def test_a_table_replays_to_the_same_seats_clock_and_outcome(tmp_path):
    now = Now()
    url = f"sqlite:///{tmp_path}/replay.db"
    first = manager(shen, store=url, now=now)
    clock = tables.Clock(bank=100.0, increment=1.0)
    game, tokens = await first.create(
        4, shen_options(), seed=9, plan=plan("reserved", "open", "bot", "open", clock=clock)
    )
    gid = game.record.game_id
    _, s1, t1 = await first.join(gid, None, "Ann")
    _, s3, t3 = await first.join(gid, None, "Bo")
    humans = {0: tokens[0], s1: t1, s3: t3}
    await first.resign(gid, t1)
    rng = random.Random(2)
    for _ in range(30):
        await first.settle()
        snap, _ = await first.read(gid, None)
        mine = [s for s in snap.to_act if s in humans and s != s1]
        if not mine:
            break
        now.advance(rng.random() * 5)
        _, moves, _ = await first.legal_moves(gid, humans[mine[0]])
        chosen = rng.choice(moves)
        await first.submit(gid, humans[mine[0]], lambda mv=chosen: mv, None, None)
    await first.settle()
    snap, _ = await first.read(gid, None)
    await first.store.close()
    second = manager(shen, store=url, now=now)
    try:
        again, _ = await second.read(gid, None)
        assert again.seats == snap.seats and again.version == snap.version
        assert again.outcome == snap.outcome
    finally:
        await second.store.close()


async def test_a_bot_turn_stored_by_the_release_before_is_played_by_the_sweep(tmp_path):
    # That release wrote a bot's turn as due_at = now, with no bot_turn column: the
    # sweep finds it in the due list (bot_turns does not) and queues the bot.
    import sqlite3

    now = Now()
    url = f"sqlite:///{tmp_path}/before.db"
    first = manager(store=url, now=now)
    game, _ = await first.create(2, channeling.Options(), plan=plan("reserved", "reserved"))
    gid = game.record.game_id
    await first.store.close()
    plain = sqlite3.connect(tmp_path / "before.db")
    plain.execute(
        "UPDATE games SET table_config = ?, due_at = created_at, bot_turn = 0 WHERE game_id = ?",
        (
            '{"seats": [{"kind": "bot", "name": "", "level": "easy"}, {"kind": "bot", "name": "",'
            ' "level": "easy"}], "clock": null}',
            gid,
        ),
    )
    plain.commit()
    plain.close()
    now.advance(1.0)
    second = manager(store=url, now=now)
    try:
        assert await second.store.bot_turns("channeling", now.at) == []
        await second.sweep()
        await second.settle()
        snap, _ = await second.read(gid, None)
        assert snap.version > 0 or snap.outcome is not None  # the bots played
    finally:
        await second.store.close()
