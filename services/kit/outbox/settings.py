"""The outbox's settings, and the background work a game service runs for it."""

from __future__ import annotations

import asyncio
import time
from typing import Any
from urllib.parse import urlparse

import structlog

from services.kit import config
from services.kit.outbox import webhooks as webhooks_module
from services.kit.outbox.webhooks import Webhooks
from services.kit.store import StoreError

_log = structlog.get_logger("outbox")


def settings() -> list[config.Setting]:
    S = config.Setting
    return [
        S("webhook_url", "TABLETOP_WEBHOOK_URL", "", "str",
          "players' events (your turn, game over, rematch) are POSTed here as JSON, signed "
          "(docs/players.md); '': no webhook"),
        S("webhook_secret", "TABLETOP_WEBHOOK_SECRET", "", "str",
          "the shared secret the webhook's Tabletop-Signature is made with (required with "
          "a URL; at least 16 characters)"),
        S("webhook_timeout", "TABLETOP_WEBHOOK_TIMEOUT_SECONDS", "10", "float",
          "a webhook post that has no answer in this long failed (tried again later)"),
        S("webhook_retry_max", "TABLETOP_WEBHOOK_RETRY_MAX_SECONDS", "600", "float",
          "the longest wait between two tries of one event (exponential from 1 s, jittered)"),
        S("webhook_lease", "TABLETOP_WEBHOOK_LEASE_SECONDS", "60", "float",
          "an event a replica claimed to post is left to another after this long (the "
          "replica died); at least twice the timeout"),
        S("player_events_retention", "TABLETOP_PLAYER_EVENTS_RETENTION_SECONDS", "604800", "float",
          "players' events are kept this long (resumed streams, webhook retries), then "
          "deleted (0: forever)"),
        S("player_events_poll", "TABLETOP_PLAYER_EVENTS_POLL_SECONDS", "1", "float",
          "with a shared store (PostgreSQL replicas): open event streams and the webhook "
          "read the outbox again this often, for the events other replicas write"),
    ]  # fmt: skip


def check(cfg: config.Config) -> None:
    """Refuse a webhook configuration that cannot work (config.ConfigError)."""
    url: str = cfg.webhook_url.strip()
    if not url:
        return
    if urlparse(url).scheme not in ("http", "https") or not urlparse(url).netloc:
        raise config.ConfigError(f"TABLETOP_WEBHOOK_URL={url!r}: an http or https URL")
    if len(cfg.webhook_secret) < 16:
        raise config.ConfigError(
            "TABLETOP_WEBHOOK_SECRET is required with TABLETOP_WEBHOOK_URL: at least 16 "
            "characters the receiver shares (python -c 'import secrets; "
            "print(secrets.token_hex(32))')"
        )
    if cfg.webhook_timeout <= 0:
        raise config.ConfigError("TABLETOP_WEBHOOK_TIMEOUT_SECONDS must be above 0")


def start(manager: Any, cfg: config.Config, shared: bool) -> list[asyncio.Task[None]]:
    """Set the manager's outbox up as ``cfg`` says; the tasks to cancel at shutdown. A
    configuration that cannot work stops the process, naming the variable."""
    try:
        check(cfg)
    except config.ConfigError as exc:
        raise SystemExit(f"configuration error: {exc}") from None
    events = manager.player_events
    events.poll_seconds = cfg.player_events_poll if shared else None
    loop = asyncio.get_running_loop()
    tasks = []
    # Every series at 0 from the start, as the services' others (a webhook URL or not).
    for family in (webhooks_module.DELIVERED, webhooks_module.FAILED, webhooks_module.PENDING):
        family.labels(manager.game_type)
    if cfg.webhook_url.strip():
        webhooks = Webhooks(
            manager.store,
            events,
            cfg.webhook_url.strip(),
            cfg.webhook_secret,
            timeout=cfg.webhook_timeout,
            lease=cfg.webhook_lease,
            backoff_cap=cfg.webhook_retry_max,
            poll_seconds=cfg.player_events_poll,
        )
        tasks.append(loop.create_task(webhooks.run()))
    if cfg.player_events_retention > 0:
        tasks.append(loop.create_task(retain(manager, cfg.player_events_retention)))
    return tasks


async def retain(manager: Any, retention: float, interval: float = 3600.0) -> None:
    """Delete outbox rows older than ``retention``, now and every ``interval``."""
    every = min(interval, max(retention / 10, 1.0))
    while True:
        try:
            gone = await manager.store.delete_events_before(
                manager.game_type, time.time() - retention
            )
            if gone:
                _log.info("player_events_removed", count=gone)
        except StoreError as exc:
            _log.warning("player events retention: the store is unavailable", error=str(exc))
        except Exception:
            _log.exception("player events retention failed; will try again")
        await asyncio.sleep(every)
