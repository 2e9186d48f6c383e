"""Webhooks (services/kit/outbox/webhooks.py): signed posts from the outbox, at least
once, with backoff; the documented verifier; bodies that carry nothing hidden."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import re
import time
from pathlib import Path

import pytest

from services.kit.outbox import webhooks as hooks
from services.kit.outbox.events import YOUR_TURN, PlayerEvent
from services.kit.outbox.tracker import PlayerEvents
from services.kit.store import GameRecord, open_store
from tests.players.webhook_receiver import Receiver

DOCS = Path(__file__).resolve().parents[2] / "docs" / "players.md"
SECRET = "a-shared-secret-of-the-platform"


def documented_verify():
    """The receiver's verify function, exactly as docs/players.md shows it."""
    text = DOCS.read_text()
    section = text[text.index("### Webhooks") :]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    scope: dict = {}
    exec(compile(code, "docs/players.md", "exec"), scope)
    return scope["verify"]


def test_the_documented_verifier_accepts_our_signature_and_nothing_else():
    verify = documented_verify()
    body = b'{"kind":"PLAYER_EVENT_KIND_YOUR_TURN"}'
    now = int(time.time())
    header = hooks.sign(SECRET, body, now)
    assert re.fullmatch(r"t=\d+,v1=[0-9a-f]{64}", header)
    assert verify(SECRET, body, header)
    assert hooks.verify(SECRET, body, header)
    # Control: each part changed fails.
    assert not verify(SECRET, body + b" ", header)
    assert not verify("another-secret-entirely", body, header)
    assert not verify(SECRET, body, hooks.sign(SECRET, body, now - 3600))  # a replay
    assert not verify(SECRET, body, header.replace("v1=", "v0="))
    assert not verify(SECRET, body, "")
    assert not hooks.verify(SECRET, body + b" ", header)


def event(n: int, game_id: str = "g1") -> PlayerEvent:
    return PlayerEvent(
        event_id=f"channeling:{game_id}:{n}:{YOUR_TURN}:0",
        kind=YOUR_TURN,
        player_id="alice",
        game_type="channeling",
        game_id=game_id,
        version=n,
        seat=0,
        happened_at=1000.0 + n,
        deadline=1030.0 + n,
    )


class Live:
    """Stands for a live game (the tracker keys games weakly)."""


class Clock:
    def __init__(self) -> None:
        self.at = 1000.0

    def __call__(self) -> float:
        return self.at


async def outbox_with(store, events: list[PlayerEvent]) -> PlayerEvents:
    tracker = PlayerEvents("channeling")
    record = GameRecord(
        game_id="g1",
        game_type="channeling",
        players=2,
        options={},
        seed=1,
        token_hashes=("", ""),
        created_at=1000.0,
        outbox=tuple(e.outbox(True) for e in events),
    )
    await store.create(record)
    return tracker


@pytest.fixture
def receiver():
    r = Receiver()
    r.start()
    yield r
    r.stop()


@pytest.mark.parametrize("url", ["memory://", "sqlite"])
async def test_every_event_is_posted_signed_and_retried_until_taken(receiver, url, tmp_path):
    if url == "sqlite":
        url = f"sqlite:///{tmp_path}/hooks.db"
    store = open_store(url)
    clock = Clock()
    events = [event(n) for n in range(1, 4)]
    tracker = await outbox_with(store, events)
    # The receiver is down for the first four posts.
    receiver.answer = lambda n: 503 if n < 4 else 204
    sender = hooks.Webhooks(
        store, tracker, receiver.url, SECRET, backoff=2.0, backoff_cap=8.0, clock=clock
    )
    assert await sender.deliver() == 3  # three posts, all refused
    assert receiver.delivered() == []
    assert await sender.deliver() == 0  # none is due before its backoff
    clock.at += 8.0
    while len({p.event_id for p in receiver.delivered()}) < 3:
        assert await sender.deliver() > 0
        clock.at += 8.0
        assert clock.at < 1100, "not delivered within the capped backoff"
    assert await store.webhooks_pending("channeling") == 0
    assert await sender.deliver() == 0  # delivered: never posted again
    bodies = {}
    for post in receiver.posts:
        stamp = int(post.headers["Tabletop-Signature"].split(",")[0][2:])
        assert hooks.verify(SECRET, post.body, post.headers["Tabletop-Signature"], now=stamp)
        assert post.headers["Content-Type"] == "application/json"
        bodies[post.event_id] = post.json()
    assert sorted(bodies) == sorted(e.event_id for e in events)
    first = bodies[events[0].event_id]
    assert first["kind"] == "PLAYER_EVENT_KIND_YOUR_TURN"
    assert first["gameId"] == "g1" and first["playerId"] == "alice"
    assert first["deadline"] == "1970-01-01T00:17:11Z"
    await store.close()


async def test_the_backoff_grows_is_capped_and_jittered():
    sender = hooks.Webhooks(
        open_store("memory://"), PlayerEvents("x"), "http://127.0.0.1:9/", SECRET,
        backoff=1.0, backoff_cap=60.0,
    )  # fmt: skip
    for attempts, step in [(0, 1.0), (1, 2.0), (3, 8.0), (10, 60.0), (100, 60.0)]:
        delays = [sender.retry_delay(attempts) for _ in range(200)]
        assert all(step / 2 <= d <= step for d in delays)
        assert max(delays) - min(delays) > step / 10  # jittered


async def test_a_claim_left_by_a_dead_poster_is_taken_after_its_lease(receiver):
    store = open_store("memory://")
    clock = Clock()
    tracker = await outbox_with(store, [event(1)])
    dead = hooks.Webhooks(store, tracker, receiver.url, SECRET, lease=30, timeout=1, clock=clock)
    # It claims, then dies before posting (its claim stays).
    assert len(await store.claim_webhooks("channeling", dead.claimant, clock(), dead.lease)) == 1
    other = hooks.Webhooks(store, tracker, receiver.url, SECRET, lease=30, timeout=1, clock=clock)
    assert await other.deliver() == 0
    clock.at += 31
    assert await other.deliver() == 1
    assert [p.event_id for p in receiver.delivered()] == [event(1).event_id]


async def test_the_poster_is_woken_by_a_write_and_counts_what_it_did(receiver):
    from prometheus_client import REGISTRY

    store = open_store("memory://")
    tracker = PlayerEvents("channeling")
    sender = hooks.Webhooks(store, tracker, receiver.url, SECRET, poll_seconds=60)
    before = (
        REGISTRY.get_sample_value("tabletop_webhooks_delivered_total", {"game": "channeling"})
        or 0.0
    )
    task = asyncio.ensure_future(sender.run())
    try:
        await asyncio.sleep(0.2)  # asleep, for a minute
        rows = (event(1).outbox(tracker.webhooks),)
        assert rows[0].webhook  # the poster marked the tracker: rows are to post
        await store.create(GameRecord("g1", "channeling", 2, {}, 1, ("", ""), 1000.0, outbox=rows))
        tracker.committed(Live(), rows)
        for _ in range(100):
            if receiver.delivered():
                break
            await asyncio.sleep(0.05)
        assert [p.event_id for p in receiver.delivered()] == [event(1).event_id]
    finally:
        task.cancel()
    after = REGISTRY.get_sample_value("tabletop_webhooks_delivered_total", {"game": "channeling"})
    assert after == before + 1


def test_a_webhook_url_needs_a_secret():
    from services.kit import config
    from services.kit.outbox import settings as outbox_settings

    def cfg(**env):
        return config.load(outbox_settings.settings(), env)

    outbox_settings.check(cfg())  # no URL: nothing needed
    with pytest.raises(config.ConfigError, match="TABLETOP_WEBHOOK_SECRET"):
        outbox_settings.check(cfg(TABLETOP_WEBHOOK_URL="http://127.0.0.1:1/h"))
    with pytest.raises(config.ConfigError, match="TABLETOP_WEBHOOK_URL"):
        outbox_settings.check(
            cfg(TABLETOP_WEBHOOK_URL="file:///etc/passwd", TABLETOP_WEBHOOK_SECRET=SECRET)
        )
    outbox_settings.check(
        cfg(TABLETOP_WEBHOOK_URL="https://hooks.example/t", TABLETOP_WEBHOOK_SECRET=SECRET)
    )


def test_a_body_is_the_event_and_nothing_else():
    body = json.loads(hooks.webhook_body(event(2).to_proto(9)))
    assert set(body) <= {
        "sequence", "eventId", "kind", "playerId", "gameType", "gameId", "version", "seat",
        "deadline", "bySeat", "rematchGameId", "happenedAt",
    }  # fmt: skip


async def test_control_without_retries_the_refused_events_are_lost(receiver, monkeypatch):
    """The retry test's control: a poster that takes any answer as done (no retry)
    leaves the events the receiver refused undelivered for ever."""
    store = open_store("memory://")
    clock = Clock()
    events = [event(n) for n in range(1, 4)]
    tracker = await outbox_with(store, events)
    receiver.answer = lambda n: 503 if n < 2 else 200
    real = store.webhook_result

    async def no_retry(sequence, claimant, delivered, now, retry_at):
        await real(sequence, claimant, True, now, now)

    monkeypatch.setattr(store, "webhook_result", no_retry)
    sender = hooks.Webhooks(store, tracker, receiver.url, SECRET, clock=clock)
    for _ in range(5):
        await sender.deliver()
        clock.at += 700
    delivered = {p.event_id for p in receiver.delivered()}
    assert len(delivered) == 1 and len(receiver.posts) == 3


async def test_a_redirect_is_not_a_delivery(receiver):
    store = open_store("memory://")
    clock = Clock()
    tracker = await outbox_with(store, [event(1)])
    receiver.answer = lambda n: 302 if n == 0 else 200
    sender = hooks.Webhooks(store, tracker, receiver.url, SECRET, clock=clock)
    await sender.deliver()
    assert receiver.delivered() == [] and await store.webhooks_pending("channeling") == 1
    clock.at += 2
    await sender.deliver()
    assert [p.event_id for p in receiver.delivered()] == [event(1).event_id]


async def test_no_body_of_a_hidden_information_game_holds_a_secret():
    """Shrine (Code cards and hands hidden): every event body a game makes, as the
    webhook would post it, holds none of the seats' hidden card ids at any point."""
    import random

    from services.kit import table as tables
    from services.kit.games import GameManager
    from services.kit.players import Player
    from services.shrine import engine as shrine
    from services.shrine.engine.content import CONTENT
    from tests.shrine.test_codec import secret_code_ids

    store = open_store("memory://")
    m = GameManager(shrine, store)
    m.player_events.webhooks = True
    seats = (tables.SeatPlan("reserved", "", "medium"), tables.SeatPlan("open", "", "medium"))
    game, tokens = await m.create(
        2, shrine.Options(), plan=tables.Plan(seats, None), player=Player("ann", "Ann", "i")
    )
    gid = game.record.game_id
    _, seat, token = await m.join(gid, None, "", Player("ben", "Ben", "i"))
    tokens[seat] = token
    rng = random.Random(4)
    secrets: set[str] = set()
    for _ in range(60):
        live = await m.get(gid)
        for s in (0, 1):  # what each seat may not see, now
            secrets |= set(secret_code_ids(live.state, s))
            secrets |= {str(card) for card in live.state.players[1 - s].hand}
        snap, _ = await m.read(gid, None)
        if snap.outcome is not None:
            break
        mover = rng.choice(sorted(snap.to_act))
        _, moves, _ = await m.legal_moves(gid, tokens[mover])
        choice = rng.choice(moves)
        await m.submit(gid, tokens[mover], lambda c=choice: c, None, None)
    rows = [
        *await store.player_events("shrine", "ann", 0),
        *await store.player_events("shrine", "ben", 0),
    ]
    assert len(rows) > 5 and secrets
    assert {c.id for c in CONTENT.codes} & secrets  # the Code cards are among them

    def leaks(body: bytes) -> bool:
        text = body.decode()
        return bool(set(_strings(json.loads(body))) & secrets) or any(
            len(s) >= 4 and s in text for s in secrets
        )

    for row in rows:
        event = PlayerEvent.from_json(row.event.body)
        assert not leaks(hooks.webhook_body(event.to_proto(row.sequence))), event.event_id
    # The control: a body that did carry a hidden card is caught.
    code = sorted(secrets & {c.id for c in CONTENT.codes})[0]
    leaky = dataclasses.replace(event, rematch_game_id=code)
    assert leaks(hooks.webhook_body(leaky.to_proto(1)))


def _strings(value) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [str(value)]
