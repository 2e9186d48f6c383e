"""The matchmaker's settings (environment variables; README's settings table)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from services.kit import config
from services.kit.matchmaking.window import Window


def settings() -> list[config.Setting]:
    S = config.Setting
    return [
        S("match_window_start", "TABLETOP_MATCH_WINDOW_START", "100", "float",
          "matchmaking: rating points either side a player accepts at once"),
        S("match_window_widen", "TABLETOP_MATCH_WINDOW_WIDEN", "10", "float",
          "matchmaking: points the window widens by per second of waiting"),
        S("match_window_max", "TABLETOP_MATCH_WINDOW_MAX", "0", "float",
          "matchmaking: the widest window, in points (0: no widest)"),
        S("match_tick", "TABLETOP_MATCH_TICK_SECONDS", "0.25", "float",
          "matchmaking: the pools are matched at every arrival and this often"),
        S("match_accept", "TABLETOP_MATCH_ACCEPT_SECONDS", "5", "float",
          "matchmaking on PostgreSQL: a group proposed and not accepted by every member's"
          " replica within this is dissolved; one accepted and not seated is seated by"
          " any replica"),
        S("pool_max_players", "TABLETOP_POOL_MAX_PLAYERS", "10000", "int",
          "players waiting in this service's pools at most; beyond, POOL_FULL (0: no limit)"),
        S("pool_heartbeat", "TABLETOP_POOL_HEARTBEAT_SECONDS", "2", "float",
          "matchmaking on PostgreSQL: each replica refreshes its players' pool rows this"
          " often; rows 3 heartbeats old are dropped"),
    ]  # fmt: skip


@dataclass(frozen=True)
class MatchSettings:
    window: Window = field(default_factory=Window)
    tick: float = 0.25
    max_players: int = 10_000
    waiting_every: float = 5.0  # seconds between MatchWaiting messages
    heartbeat: float = 2.0  # the shared pool's heartbeat (PostgreSQL), seconds
    accept: float = 5.0  # the shared pool's accept step, at most (PostgreSQL), seconds

    @classmethod
    def from_config(cls, cfg: config.Config) -> MatchSettings:
        if not cfg.pool_heartbeat > 0:
            raise config.ConfigError("TABLETOP_POOL_HEARTBEAT_SECONDS must be more than 0")
        if not cfg.match_accept > 0:
            raise config.ConfigError("TABLETOP_MATCH_ACCEPT_SECONDS must be more than 0")
        most = cfg.match_window_max or math.inf
        window = Window(cfg.match_window_start, cfg.match_window_widen, most)
        return cls(
            window,
            cfg.match_tick,
            cfg.pool_max_players,
            heartbeat=cfg.pool_heartbeat,
            accept=cfg.match_accept,
        )

    @classmethod
    def from_environment(cls) -> MatchSettings:
        return cls.from_config(config.load(settings()))
