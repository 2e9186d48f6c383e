"""A table: who sits in each seat, the clock, and how a game ends off the rules.

Pure and transport-free, like an engine: the game manager feeds it the log's entries and
asks it what is due. Everything here is rebuilt from the game row (the plan chosen at
creation) and the move log, so a restart or another replica derives the same seats,
banks and deadlines.

The log holds two kinds of entry. A game move (its text form, by a seat) goes to the
engine; a table entry, whose text starts with ``@``, goes here:

    @join     seat takes an open seat (events: player_joined, a hidden seat_token with the
              token's hash, and game_started at the last join)
    @leave    seat gives its open seat back before the start (player_left)
    @resign   seat gives up (resigned; timeout too when it forfeited on time)
    @expire   a waiting table nobody completed (seat -1; table_expired)
    @abandon  a game in progress nobody moved in (seat -1; game_abandoned)
    @rematch  seat offers (or accepts) a rematch of the finished game (rematch_offered;
              rematch_started with the new game's id once every person has)

No game's move text starts with ``@``, so the two never meet. Games stored before tables
existed have no plan (every seat taken, no clock) and no table entries: they replay as
they always did.

Every table ends. Besides the rules' end, a resignation and a waiting table's expiry, a
game in progress is abandoned when nobody plays it any more: no person's entry for the
service's idle time (the manager's setting: a person's entry is anything but the
service's own: a bot's move, a timeout, an expiry), or, under a clock whose timeouts the
bot plays, once every person's seat has let two deadlines in a row pass (``absent``).
Both are derived from the log like the rest, so a restart or another replica sees them.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from services.kit.engine import BadOptions, Outcome
from services.kit.errors import BadRequest

TABLE_ENTRY = "@"
JOIN, LEAVE, RESIGN, EXPIRE, ABANDON = "@join", "@leave", "@resign", "@expire", "@abandon"
REMATCH = "@rematch"
SERVICE_SEAT = -1  # the seat of entries the service makes for the table as a whole
# How the service ends a game off the rules: its outcome reason and the detail shown.
ENDINGS = {
    EXPIRE: ("EXPIRED", "nobody took the open seats in time"),
    ABANDON: ("ABANDONED", "nobody moved for too long"),
}

OPEN, TAKEN, BOT, GIVEN_UP = "open", "taken", "bot", "given_up"
RESERVED = "reserved"  # a seat kind at creation: taken by the creator
LEVELS = ("easy", "medium", "hard")

NAME_MAX = 40
# A person's seat this many timeouts in a row is not played by anyone but the bot: once
# every person's seat is, the game is abandoned.
MISSED_IN_A_ROW = 2

# Who made a game move (services.kit.games tells from the entry's events).
PERSON, BOT_MOVE, TIMEOUT = "person", "bot", "timeout"
# Bounds on a time control: below a second no client can answer; beyond 30 days a
# clock is no clock (and 1e12 s would overflow a timestamp).
CLOCK_MIN, CLOCK_MAX, INCREMENT_MAX = 1.0, 30 * 86400.0, 86400.0


def player_name(text: str, *, required: bool = True) -> str:
    """A display name as given, checked: 1-40 characters, none of them control characters."""
    name = text.strip()
    if not name:
        if required:
            raise BadRequest("player_name is required (1-40 characters)")
        return ""
    if len(name) > NAME_MAX:
        raise BadRequest(f"player_name is at most {NAME_MAX} characters")
    if any(unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp") for c in name):
        raise BadRequest("player_name may not contain control characters")
    if looks_like_a_bot(name):
        raise BadRequest("player_name may not look like a bot's name, 'Bot (level)'")
    return name


def looks_like_a_bot(name: str) -> bool:
    """Whether ``name`` reads as a bot seat's name (``Bot (hard)``) in any case, spacing or
    compatibility form (full-width letters): a person may not pass for the service's bot."""
    folded = "".join(unicodedata.normalize("NFKC", name).casefold().split())
    return folded.startswith("bot(") and folded.endswith(")")


def bot_name(level: str) -> str:
    return f"Bot ({level})"


def shown_level(state: str, level: str, finished: bool) -> str:
    """The bot level a header shows for a seat: a bot seat's always; a given-up seat's
    only while the game goes on (the bot plays it then; once it is over, nobody does)."""
    if state == BOT or (state == GIVEN_UP and not finished):
        return level
    return ""


@dataclass(frozen=True)
class Clock:
    """A time control: per decision and/or a bank with an increment (Fischer)."""

    per_decision: float | None = None
    bank: float | None = None
    increment: float = 0.0
    forfeit: bool = False  # on timeout the seat forfeits; else the bot moves for it

    def __post_init__(self) -> None:
        if self.per_decision is None and self.bank is None:
            raise BadOptions("a time control needs per_decision or bank")
        for name in ("per_decision", "bank"):
            value = getattr(self, name)
            if value is not None and not CLOCK_MIN <= value <= CLOCK_MAX:
                raise BadOptions(
                    f"time_control.{name} must be {CLOCK_MIN:g} s to {CLOCK_MAX:g} s (30 days)",
                )
        if not 0 <= self.increment <= INCREMENT_MAX:
            raise BadOptions("time_control.increment must be 0 s to 86400 s")
        if self.increment and self.bank is None:
            raise BadOptions("time_control.increment needs a bank")

    def to_dict(self) -> dict[str, Any]:
        return {
            "per_decision": self.per_decision,
            "bank": self.bank,
            "increment": self.increment,
            "forfeit": self.forfeit,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Clock:
        return cls(data["per_decision"], data["bank"], data["increment"], data["forfeit"])


@dataclass(frozen=True)
class SeatPlan:
    kind: str  # RESERVED, OPEN or BOT
    name: str = ""
    level: str = "medium"
    player_id: str = ""  # a reserved seat a player's CreateGame took (docs/players.md)


@dataclass(frozen=True)
class Plan:
    """The table as created: each seat's kind, and the clock. Stored in the game row."""

    seats: tuple[SeatPlan, ...]
    clock: Clock | None = None
    several: bool = False  # a player may hold several seats (several_seats_per_player)

    def to_dict(self) -> dict[str, Any]:
        seats: list[dict[str, Any]] = []
        for s in self.seats:
            seat = {"kind": s.kind, "name": s.name, "level": s.level}
            if s.player_id:  # only then: a plan without players is stored as before
                seat["player_id"] = s.player_id
            seats.append(seat)
        out: dict[str, Any] = {
            "seats": seats,
            "clock": None if self.clock is None else self.clock.to_dict(),
        }
        if self.several:
            out["several_seats_per_player"] = True
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None, players: int) -> Plan:
        if data is None:  # stored before tables: every seat the creator's, no clock
            return cls(tuple(SeatPlan(RESERVED) for _ in range(players)))
        seats = tuple(
            SeatPlan(s["kind"], s["name"], s["level"], s.get("player_id", ""))
            for s in data["seats"]
        )
        clock = data.get("clock")
        several = bool(data.get("several_seats_per_player", False))
        return cls(seats, None if clock is None else Clock.from_dict(clock), several)

    @property
    def returns_tokens(self) -> tuple[int, ...]:
        """The seats whose token CreateGame returns."""
        return tuple(i for i, s in enumerate(self.seats) if s.kind == RESERVED)


@dataclass
class SeatNow:
    state: str
    name: str
    level: str = "medium"
    token_hash: str = ""  # "" for a seat no token opens (open, bot)
    bank: float | None = None  # seconds left, as of ``since`` while the seat has a decision
    since: float | None = None  # when the seat's current decision began
    missed: int = 0  # timeouts in a row the bot played for this person's seat
    player_id: str = ""  # the player holding the seat (docs/players.md); "" for none

    @property
    def played_by_bot(self) -> bool:
        return self.state in (BOT, GIVEN_UP)


@dataclass
class Table:
    """Seats, clock and off-the-rules ending of one game, as of its last log entry."""

    plan: Plan
    seats: list[SeatNow]
    sides: tuple[tuple[int, ...], ...]  # the seats that win or lose together
    ended: Outcome | None = None  # set when the table, not the rules, ended the game
    started_at: float | None = None
    # The engine's seats to act as of the last entry (after_move keeps it): the clock
    # needs what changed, and the service reads it rather than asking the engine again.
    to_act: tuple[int, ...] = ()
    log: list[str] = field(default_factory=list)  # details for the outcome ("X resigned")
    # When a person last made an entry (a move, a join, a resignation), or the table was
    # created: a table nobody plays is abandoned after the service's idle time.
    human_at: float = 0.0
    # After the end: the seats that offered a rematch, in order, and the rematch's id.
    rematch_offers: list[int] = field(default_factory=list)
    rematch_game_id: str = ""

    @classmethod
    def create(
        cls,
        plan: Plan,
        token_hashes: Sequence[str],
        sides: tuple[tuple[int, ...], ...],
        created_at: float,
        to_act: Iterable[int],
    ) -> Table:
        seats = []
        for i, (seat, digest) in enumerate(zip(plan.seats, token_hashes, strict=True)):
            if seat.kind == OPEN:
                seats.append(SeatNow(OPEN, "", seat.level))
            elif seat.kind == BOT:
                seats.append(SeatNow(BOT, bot_name(seat.level), seat.level))
            else:
                name = seat.name or f"Player {i + 1}"
                seats.append(SeatNow(TAKEN, name, token_hash=digest, player_id=seat.player_id))
        table = cls(plan, seats, sides, human_at=created_at)
        if plan.clock is not None and plan.clock.bank is not None:
            for s in table.seats:
                s.bank = plan.clock.bank
        if not table.waiting:
            table._start(created_at, tuple(to_act))
        return table

    # --- what it is now -----------------------------------------------------------------

    @property
    def waiting(self) -> bool:
        return self.ended is None and any(s.state == OPEN for s in self.seats)

    @property
    def token_hashes(self) -> tuple[str, ...]:
        return tuple(s.token_hash for s in self.seats)

    def first_open(self) -> int | None:
        return next((i for i, s in enumerate(self.seats) if s.state == OPEN), None)

    def bot_to_move(self) -> int | None:
        """A seat to act that the service plays (bot or given up), if any."""
        if self.waiting or self.ended is not None:
            return None
        return next((s for s in self.to_act if self.seats[s].played_by_bot), None)

    def deadline(self, seat: int) -> float | None:
        """When ``seat``'s current decision times out; None without a clock or decision."""
        clock, now = self.plan.clock, self.seats[seat]
        if clock is None or now.since is None or now.played_by_bot:
            return None
        limits = []
        if clock.per_decision is not None:
            limits.append(now.since + clock.per_decision)
        if now.bank is not None:
            limits.append(now.since + now.bank)
        return min(limits)

    def due_at(self, now: float) -> float | None:
        """When the clock makes the service act on this game by itself (for the store's
        sweep and the service's alarm): a deadline, or now once it is to be abandoned.
        A waiting table's expiry and the idle time are swept by their age, and a bot's
        turn (no clock's business) by ``bot_to_move``."""
        if self.ended is not None or self.waiting:
            return None
        if self.absent():
            return now
        deadlines = [d for d in (self.deadline(s) for s in self.to_act) if d is not None]
        return min(deadlines) if deadlines else None

    def absent(self) -> bool:
        """Every person's seat has let ``MISSED_IN_A_ROW`` deadlines in a row pass, the
        bot moving for it each time: nobody plays this table any more."""
        if self.plan.clock is None or self.ended is not None or self.waiting:
            return False
        people = [s for s in self.seats if s.state == TAKEN]
        return bool(people) and all(s.missed >= MISSED_IN_A_ROW for s in people)

    def overdue(self, now: float) -> int | None:
        """A human seat to act whose time has run out."""
        for seat in self.to_act:
            deadline = self.deadline(seat)
            if deadline is not None and deadline <= now:
                return seat
        return None

    def lobby(self, finished: bool = False) -> dict[str, Any]:
        """The lobby card the store keeps in the game row."""
        status = "finished" if finished else "waiting" if self.waiting else "in_progress"
        return {
            "status": status,
            "seats": [
                {
                    "state": s.state,
                    "name": s.name,
                    "level": shown_level(s.state, s.level, finished),
                    **({"player_id": s.player_id} if s.player_id else {}),
                }
                for s in self.seats
            ],
        }

    def humans_sides(self) -> list[tuple[int, ...]]:
        """Sides with at least one seat not given up."""
        return [side for side in self.sides if any(self.seats[s].state != GIVEN_UP for s in side)]

    def final_outcome(self, engine_outcome: Outcome | None) -> Outcome | None:
        """The game's outcome: the table's ending, or the rules' with given-up seats
        unable to win."""
        if self.ended is not None:
            return self.ended
        if engine_outcome is None:
            return None
        gone = {i for i, s in enumerate(self.seats) if s.state == GIVEN_UP}
        if not gone:
            return engine_outcome
        return Outcome(
            engine_outcome.scores,
            tuple(w for w in engine_outcome.winners if w not in gone),
            engine_outcome.reason,
            (*engine_outcome.details, *self.log),
        )

    # --- the log's entries --------------------------------------------------------------

    def _start(self, at: float, to_act: tuple[int, ...]) -> None:
        self.started_at = at
        self.to_act = ()
        self.after_move(None, at, to_act)

    def join(
        self,
        seat: int,
        name: str,
        digest: str,
        at: float,
        to_act: Iterable[int],
        player_id: str = "",
    ) -> bool:
        """Seat the player; True when this join started the game."""
        now = self.seats[seat]
        now.state, now.name, now.token_hash, now.player_id = TAKEN, name, digest, player_id
        self.human_at = at
        if self.waiting:
            return False
        self._start(at, tuple(to_act))
        return True

    def leave(self, seat: int, at: float) -> None:
        now = self.seats[seat]
        now.state, now.name, now.token_hash, now.player_id = OPEN, "", "", ""
        self.human_at = at

    def resign(self, seat: int, at: float, players: int, why: str, by_person: bool = True) -> bool:
        """Give the seat up (``by_person`` False: it forfeited on time); True when that
        ended the game (one side left)."""
        now = self.seats[seat]
        if by_person:
            self.human_at = at
        now.state = GIVEN_UP
        now.level = self.plan.seats[seat].level
        self.log.append(f"{now.name or f'Seat {seat}'} {why}")
        left = self.humans_sides()
        if len(left) > 1:
            return False
        winners = left[0] if left else ()
        self.ended = Outcome((0,) * players, tuple(sorted(winners)), "RESIGNED", tuple(self.log))
        return True

    def end(self, entry: str, players: int) -> None:
        """The table ended the game with no winner (``EXPIRE`` or ``ABANDON``)."""
        reason, detail = ENDINGS[entry]
        self.ended = Outcome((0,) * players, (), reason, (detail,))

    def after_move(
        self, seat: int | None, at: float, to_act: Iterable[int], by: str = PERSON
    ) -> None:
        """A game move by ``seat`` (None: the start) was applied at ``at``, made ``by`` a
        person, a bot or the bot on a timeout: charge its bank, add the increment, count
        the seat's timeouts in a row, and start the clock of every seat newly to act."""
        acting = tuple(to_act)
        clock = self.plan.clock
        if seat is not None:
            mover = self.seats[seat]
            if by == PERSON:
                mover.missed = 0
                self.human_at = at
            elif by == TIMEOUT:
                mover.missed += 1
            if clock is not None and mover.bank is not None and mover.since is not None:
                mover.bank = max(0.0, mover.bank - (at - mover.since)) + clock.increment
        for i, s in enumerate(self.seats):
            if i not in acting:
                s.since = None
            elif i == seat or i not in self.to_act or s.since is None:
                s.since = at
        self.to_act = acting
