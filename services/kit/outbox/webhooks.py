"""Webhooks: each player's event posted to the platform, signed, at least once.

The outbox rows marked for the webhook are claimed (a lease: a replica that dies leaves
its claims to the others once it runs out; on PostgreSQL ``FOR UPDATE SKIP LOCKED``, so
replicas claiming at once never take the same row), posted, and marked delivered on a
2xx answer. Anything else (an error status, a timeout, a refused connection) is tried
again after an exponential backoff with jitter, capped, for as long as the outbox keeps
the event (the retention). A receiver may see an event twice (a post whose answer was
lost, a replica that died after posting): it keeps the first of each
``Tabletop-Event-Id``.

The signature is Stripe's scheme: ``Tabletop-Signature: t=<unix seconds>,v1=<hex
HMAC-SHA256 of "<t>.<body>" with the shared secret>``. :func:`verify` is what a receiver
runs (docs/players.md shows it).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import random
import secrets
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any

import structlog
from prometheus_client import Counter, Gauge

from services.kit.outbox.events import PlayerEvent, webhook_body
from services.kit.outbox.tracker import PlayerEvents
from services.kit.store import OutboxStore, StoredEvent, StoreError

_log = structlog.get_logger("webhooks")

DELIVERED = Counter(
    "tabletop_webhooks_delivered", "Player events the webhook receiver took (2xx)", ["game"]
)
FAILED = Counter(
    "tabletop_webhooks_failed", "Webhook posts that failed (tried again later)", ["game"]
)
PENDING = Gauge("tabletop_webhooks_pending", "Player events not yet delivered", ["game"])

USER_AGENT = "tabletop-webhooks/1"


def sign(secret: str, body: bytes, at: int) -> str:
    """The ``Tabletop-Signature`` header of ``body`` posted at unix second ``at``."""
    mac = hmac.new(secret.encode(), f"{at}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={at},v1={mac}"


def verify(
    secret: str, body: bytes, header: str, tolerance: float = 300, now: float | None = None
) -> bool:
    """Whether ``header`` signs ``body`` with ``secret``, within ``tolerance`` seconds."""
    parts: dict[str, list[str]] = {}
    for item in header.split(","):
        key, _, value = item.strip().partition("=")
        parts.setdefault(key, []).append(value)
    try:
        at = int(parts["t"][0])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - at) > tolerance:
        return False
    expected = hmac.new(secret.encode(), f"{at}.".encode() + body, hashlib.sha256).hexdigest()
    return any(hmac.compare_digest(expected, given) for given in parts.get("v1", []))


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer, not a delivery: it is not followed (a 3xx fails)."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None


_OPENER = urllib.request.build_opener(_NoRedirect)


def post(url: str, body: bytes, headers: dict[str, str], timeout: float) -> int:
    """POST ``body``; the answer's status (0 when none came). Runs on a thread."""
    request = urllib.request.Request(url, data=body, headers=headers, method="POST")
    try:
        with _OPENER.open(request, timeout=timeout) as answer:
            answer.read(65536)
            return int(answer.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)
    except (OSError, ValueError):
        return 0


class Webhooks:
    """Posts one game service's webhook events from the outbox, until cancelled."""

    def __init__(
        self,
        store: OutboxStore,
        events: PlayerEvents,
        url: str,
        secret: str,
        *,
        timeout: float = 10.0,
        lease: float = 60.0,
        backoff: float = 1.0,
        backoff_cap: float = 600.0,
        poll_seconds: float = 1.0,
        batch: int = 20,
        clock: Callable[[], float] = time.time,
        send: Callable[[str, bytes, dict[str, str], float], int] = post,
    ) -> None:
        self.store = store
        self.events = events
        self.game_type = events.game_type
        self.url = url
        self.secret = secret
        self.timeout = timeout
        self.lease = max(lease, timeout * 2)  # a claim outlives its post
        self.backoff = backoff
        self.backoff_cap = backoff_cap
        self.poll_seconds = poll_seconds
        self.batch = batch
        self.clock = clock
        self.send = send
        self.claimant = f"{secrets.token_hex(6)}"  # this process, in the claim column
        self.wake = asyncio.Event()
        events.webhooks = True
        events.on_webhook = self.wake.set

    def retry_delay(self, attempts: int) -> float:
        """After ``attempts`` failed posts: exponential, capped, with full jitter's upper
        half (never less than half the step, so a receiver that is down is not hammered)."""
        step = min(self.backoff_cap, self.backoff * 2.0 ** min(attempts, 30))
        return random.uniform(step / 2, step)

    async def run(self) -> None:
        while True:
            try:
                sent = await self.deliver()
                PENDING.labels(self.game_type).set(
                    await self.store.webhooks_pending(self.game_type)
                )
            except StoreError as exc:
                _log.warning("webhooks: the store is unavailable; will try again", error=str(exc))
                sent = 0
            except Exception:
                _log.exception("webhooks failed; will try again")
                sent = 0
            if sent:
                continue
            self.wake.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.wake.wait(), self.poll_seconds)

    async def deliver(self) -> int:
        """Claim the due events and post them (several at once); how many were claimed."""
        claimed = await self.store.claim_webhooks(
            self.game_type, self.claimant, self.clock(), self.lease, self.batch
        )
        await asyncio.gather(*(self._deliver_one(row) for row in claimed))
        return len(claimed)

    async def _deliver_one(self, row: StoredEvent) -> None:
        event = PlayerEvent.from_json(row.event.body)
        body = webhook_body(event.to_proto(row.sequence))
        headers = {
            "Content-Type": "application/json",
            "User-Agent": USER_AGENT,
            "Tabletop-Event-Id": event.event_id,
            "Tabletop-Signature": sign(self.secret, body, int(self.clock())),
        }
        code = await asyncio.to_thread(self.send, self.url, body, headers, self.timeout)
        delivered = 200 <= code < 300
        now = self.clock()
        retry_at = now if delivered else now + self.retry_delay(row.attempts)
        if delivered:
            DELIVERED.labels(self.game_type).inc()
        else:
            FAILED.labels(self.game_type).inc()
            _log.info(
                "webhook_failed", event_id=event.event_id, status=code, attempts=row.attempts + 1
            )
        await self.store.webhook_result(row.sequence, self.claimant, delivered, now, retry_at)
