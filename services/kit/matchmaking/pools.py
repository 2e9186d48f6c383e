"""Every pool of a game service, with each player in at most one of them.

A pool is one (shape, time control, options, rated or casual): players are only matched
with players who asked for the same table. A player's second FindMatch **replaces** its
first, in whichever pool that was (the newest request is what the player wants now, from
whichever device; refusing it would strand a player whose first stream the network
dropped without either end noticing). The replaced entry is returned, so the service
ends that stream (ABORTED, reason MATCH_REPLACED). In the same pool the player keeps its
place in the queue; in another it starts a new wait.
"""

from __future__ import annotations

import json
import random
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from services.kit.matchmaking.pool import Entry, Match, Pool
from services.kit.matchmaking.window import Window
from services.kit.ratings import Shape


def canonical(value: Mapping[str, Any] | None) -> str:
    """A JSON text equal for equal settings (sorted keys, no spaces); "" for none."""
    if value is None:
        return ""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True)
class PoolKey:
    """Which pool: the shape, and the table's settings as canonical JSON."""

    shape: Shape
    clock: str = ""  # the time control's JSON (services/kit/table.py Clock.to_dict)
    options: str = "{}"  # the game options' JSON, every option filled in
    rated: bool = True

    @classmethod
    def of(
        cls,
        shape: Shape,
        clock: Mapping[str, Any] | None,
        options: Mapping[str, Any],
        rated: bool,
    ) -> PoolKey:
        return cls(shape, canonical(clock), canonical(options), rated)


class PoolFull(Exception):
    """The service holds as many waiting players as it allows."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"{limit} players are already waiting; try again shortly")
        self.limit = limit


@dataclass
class Pools:
    window: Window = field(default_factory=Window)
    rng: random.Random = field(default_factory=random.Random)
    max_entries: int = 0  # 0: no limit
    _pools: dict[PoolKey, Pool] = field(default_factory=dict, init=False, repr=False)
    _where: dict[str, PoolKey] = field(default_factory=dict, init=False, repr=False)

    def add(self, key: PoolKey, entry: Entry) -> tuple[PoolKey, Entry] | None:
        """Put the player in ``key``'s pool, out of any other; return the entry it
        replaces (and its pool), if any. PoolFull for a new player beyond the limit."""
        old_key = self._where.get(entry.player)
        if old_key is None and self.max_entries and len(self._where) >= self.max_entries:
            raise PoolFull(self.max_entries)
        replaced: tuple[PoolKey, Entry] | None = None
        if old_key is not None and old_key != key:
            old = self._pools[old_key].remove(entry.player)
            self._drop_if_empty(old_key)
            replaced = None if old is None else (old_key, old)
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = Pool(key.shape, key.rated, self.window, self.rng)
        same = pool.add(entry)
        if same is not None:
            replaced = (key, same)
        self._where[entry.player] = key
        return replaced

    def remove(self, player: str) -> Entry | None:
        key = self._where.pop(player, None)
        if key is None:
            return None
        entry = self._pools[key].remove(player)
        self._drop_if_empty(key)
        return entry

    def put_back(self, key: PoolKey, entries: list[Entry]) -> None:
        """Matched players back in their pool with their join times, unless they asked
        for another table meanwhile (their new entry stands)."""
        back = [e for e in entries if e.player not in self._where]
        if not back:
            return
        pool = self._pools.get(key)
        if pool is None:
            pool = self._pools[key] = Pool(key.shape, key.rated, self.window, self.rng)
        pool.put_back(back)
        for e in back:
            self._where[e.player] = key

    def where(self, player: str) -> PoolKey | None:
        return self._where.get(player)

    def match(self, now: float) -> list[tuple[PoolKey, Match]]:
        made: list[tuple[PoolKey, Match]] = []
        for key in sorted(self._pools, key=_order):
            for match in self._pools[key].match(now):
                made.append((key, match))
                for player in match.players:
                    del self._where[player]
            self._drop_if_empty(key)
        return made

    def sizes(self) -> dict[PoolKey, int]:
        """Players waiting per pool (the catalog's and /metrics' figures)."""
        return {key: len(pool) for key, pool in self._pools.items()}

    def __len__(self) -> int:
        return len(self._where)

    def _drop_if_empty(self, key: PoolKey) -> None:
        pool = self._pools.get(key)
        if pool is not None and not len(pool):
            del self._pools[key]


def _order(key: PoolKey) -> tuple[str, str, str, bool]:
    return (key.shape.key, key.clock, key.options, key.rated)
