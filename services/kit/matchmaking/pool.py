"""One matchmaking pool: players waiting for a table of one shape, matched by rating.

Pure and transport-free: the clock is the ``now`` each call is given, chance is the
``random.Random`` the pool is made with, and nothing here waits. The service (phase 2,
docs/ratings.md) holds the entries in its store and calls :meth:`Pool.match` on a timer
and on every arrival.

:meth:`Pool.match` takes the waiting players longest-waiting first. For each one still
unmatched it looks among the others within its rating window (services/kit/matchmaking/
window.py) for the nearest in rating who accept it too, and adds them one by one, each
within every chosen player's window, until the shape's table is full: a group of
players all within each other's windows. A full group is a :class:`Match`, seated by
services/kit/matchmaking/seating.py (teams balanced, sides at random), and leaves the
pool: no one is matched twice. A player whose group cannot fill waits, its window
widening, for the next call.

Then bots: a player who asked for bots (:class:`BotFill`) and has waited their time is
seated with the other such players near it who asked for the same level, and bots of
that level take the other seats. A table with a bot is never rated.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from services.kit.matchmaking.seating import seat
from services.kit.matchmaking.window import Window
from services.kit.ratings import Rating, Shape, points

BOT_LEVELS = ("easy", "medium", "hard")


@dataclass(frozen=True)
class BotFill:
    """Fill the table with bots of ``level`` once the player has waited ``after`` s."""

    after: float
    level: str = "medium"

    def __post_init__(self) -> None:
        if self.level not in BOT_LEVELS:
            raise ValueError(f"bot level is one of {', '.join(BOT_LEVELS)}")
        if not self.after >= 0:
            raise ValueError("bots come after 0 seconds or more")


@dataclass(frozen=True)
class Entry:
    """A waiting player: its id, its rating in the pool's shape, when it joined."""

    player: str
    rating: Rating
    joined_at: float
    bots: BotFill | None = None

    @property
    def points(self) -> float:
        """Its skill estimate in points, what windows measure."""
        return points(self.rating.mu)

    def waited(self, now: float) -> float:
        return max(0.0, now - self.joined_at)


@dataclass(frozen=True)
class Bot:
    level: str


@dataclass(frozen=True)
class Match:
    """A full table: one player or bot per seat, in seat order."""

    seats: tuple[Entry | Bot, ...]
    made_at: float
    rated: bool

    @property
    def entries(self) -> tuple[Entry, ...]:
        return tuple(s for s in self.seats if isinstance(s, Entry))

    @property
    def players(self) -> tuple[str, ...]:
        return tuple(e.player for e in self.entries)

    def waits(self) -> list[float]:
        """Each player's wait from joining to this match, in seconds."""
        return [e.waited(self.made_at) for e in self.entries]


@dataclass
class Pool:
    """Players waiting for a table of ``shape``; rated or casual as the pool is."""

    shape: Shape
    rated: bool = True
    window: Window = field(default_factory=Window)
    rng: random.Random = field(default_factory=random.Random)
    _entries: dict[str, Entry] = field(default_factory=dict, init=False, repr=False)

    # --- who waits ----------------------------------------------------------------------

    def add(self, entry: Entry) -> Entry | None:
        """Put ``entry`` in the pool; the same player's earlier entry, which it
        replaces, is returned (its wait carries over: a reconnect keeps its place)."""
        old = self._entries.get(entry.player)
        if old is not None and old.joined_at < entry.joined_at:
            entry = Entry(entry.player, entry.rating, old.joined_at, entry.bots)
        self._entries[entry.player] = entry
        return old

    def remove(self, player: str) -> Entry | None:
        """Take the player out (its stream closed); None if it was not waiting."""
        return self._entries.pop(player, None)

    def put_back(self, entries: Sequence[Entry]) -> None:
        """Return matched players to the pool with their original join times (a match
        whose table could not be made, e.g. a player left the moment it was made), ahead
        of everyone who joined after them. A player already back is left as it is."""
        for entry in entries:
            self._entries.setdefault(entry.player, entry)

    def __contains__(self, player: object) -> bool:
        return player in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def __iter__(self) -> Iterator[Entry]:
        return iter(self._entries.values())

    def get(self, player: str) -> Entry | None:
        return self._entries.get(player)

    # --- matching -----------------------------------------------------------------------

    def match(self, now: float) -> list[Match]:
        """Every table that can be made now; its players leave the pool."""
        waiting = sorted(self._entries.values(), key=lambda e: (e.joined_at, e.player))
        ring = _Ring(waiting, {e.player: self.window.at(e.waited(now)) for e in waiting})
        matches: list[Match] = []
        size = self.shape.players
        for entry in waiting:
            if entry.player in ring.taken:
                continue
            group = ring.group(entry, size, None)
            if len(group) == size:
                matches.append(self._table(group, [], now))
                ring.take(group)
        for entry in waiting:
            bots = entry.bots
            if entry.player in ring.taken or bots is None or entry.waited(now) < bots.after:
                continue
            group = ring.group(entry, size, (now, bots.level))
            matches.append(self._table(group, [Bot(bots.level)] * (size - len(group)), now))
            ring.take(group)
        for player in ring.taken:
            del self._entries[player]
        return matches

    def _table(self, group: list[Entry], bots: list[Bot], now: float) -> Match:
        average = sum(e.rating.mu for e in group) / len(group)
        members: list[Entry | Bot] = [*group, *bots]
        skills = [e.rating.mu if isinstance(e, Entry) else average for e in members]
        seated = seat(self.shape, members, skills, self.rng)
        return Match(tuple(seated), now, self.rated and not bots)


class _Ring:
    """The waiting players in rating order, for one :meth:`Pool.match` call: finds a
    player's nearest untaken neighbours by walking outwards from it, nearest first, so a
    call costs about one short walk per waiting player."""

    def __init__(self, waiting: list[Entry], widths: dict[str, float]) -> None:
        self.by_points = sorted(waiting, key=lambda e: (e.points, e.joined_at, e.player))
        self.index = {e.player: i for i, e in enumerate(self.by_points)}
        self.widths = widths
        self.taken: set[str] = set()

    def take(self, group: list[Entry]) -> None:
        self.taken.update(e.player for e in group)

    def group(self, first: Entry, size: int, bots: tuple[float, str] | None) -> list[Entry]:
        """``first`` and the nearest untaken players all within each other's windows,
        up to ``size``; with ``bots`` (now, level), only players due bots of that level."""
        group = [first]
        for candidate in self._outwards(first):
            if len(group) == size:
                break
            if bots is not None and not _due_bots(candidate, *bots):
                continue
            width = self.widths[candidate.player]
            if all(
                abs(candidate.points - e.points) <= min(self.widths[e.player], width) for e in group
            ):
                group.append(candidate)
        return group

    def _outwards(self, first: Entry) -> Iterator[Entry]:
        """Untaken players within ``first``'s window, nearest first (ties: the longer
        waiting), each also holding ``first`` within its own window."""
        entries, centre = self.by_points, first.points
        width = self.widths[first.player]
        at = self.index[first.player]
        down, up = at - 1, at + 1
        while True:
            below = entries[down] if down >= 0 else None
            above = entries[up] if up < len(entries) else None
            if below is not None and centre - below.points > width:
                below = None
            if above is not None and above.points - centre > width:
                above = None
            if below is not None and (
                above is None
                or (centre - below.points, below.joined_at, below.player)
                <= (above.points - centre, above.joined_at, above.player)
            ):
                chosen, down = below, down - 1
            elif above is not None:
                chosen, up = above, up + 1
            else:
                return
            if chosen.player in self.taken:
                continue
            if abs(chosen.points - centre) <= self.widths[chosen.player]:
                yield chosen


def _due_bots(entry: Entry, now: float, level: str) -> bool:
    bots = entry.bots
    return bots is not None and bots.level == level and entry.waited(now) >= bots.after
