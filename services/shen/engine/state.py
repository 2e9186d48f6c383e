"""Options, the game state and the Pre-Game set-up.

The state holds everything, including the one :class:`Rng` from which all chance comes
(the 2d6 roll for the first player, shuffles, combat dice). Nothing in it is a set or a
dict keyed by strings, so a game replays identically in any process.
"""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import IntEnum
from typing import Any, ClassVar

from services.kit.engine import BadOptions, Options, Rng

from . import board as geometry
from .content import CARDS, POOL

HAND_SIZE = 6  # "draws 6 cards into their hand"
MAX_ANCHORS = 6  # "placing up to 6 Anchor Points"
MAX_ITEMS = 3  # "An Avatar can have up to 3 equipped items"
RANGED_REACH = 4  # "targeting any other Avatar 0-4 spaces away"


@dataclass(frozen=True)
class ShenOptions(Options):
    """Everything chosen when a game is created.

    - ``size``: the field is size x size spaces ("a standard playing field of 8x8").
    - ``anchor_points``: the scenario's Anchor Points, as space names ("a1"); empty means
      the default scenario, an Anchor Point in each of the four corners. 1 to 6.
    - ``deck_size``: the agreed number of cards in every deck, 40 to 60.
    - ``realms``: each seat's home Realm (its Realm Stone); empty: seats take the Realms
      in the pool's order (ember, tide, grove, gale, ember, ...).
    - ``decks``: each seat's deck: "" for the ready-made deck of its Realm (the reserve
      extends it past 40 cards), or a deck list "ember_scout*4, tide_guard*2, ..."
      checked against the card pool. Empty: every seat plays its ready-made deck.
    - ``teams``: 0 for every player on their own, else the number of teams; seat i plays
      for team i % teams, so teams alternate around the table, in placing and in turns.
    - ``round_limit``: a house rule, not the rulebook's: the game ends after this many
      turns of each player. Tie-break: most Anchor Points held, then most cards left in
      hand, deck and discard pile (a team adds its players'); still equal: a shared win.
      0 (the default): no limit, the game ends only as the rulebook says.
    - ``captures_at_once``: a new counter first finds every opponent's association it
      leaves surrounded, then removes them all ("remove any opponent's Shén counters that
      are now surrounded and captured"). False is the rule games were stored under before
      this was fixed: one association removed before the next was checked, so with three
      or more players the second could gain a liberty and survive.
    """

    #: Games stored before captures were fixed replay under the old rule.
    STORED_BEFORE: ClassVar[Mapping[str, Any]] = {"captures_at_once": False}

    size: int = 8
    anchor_points: tuple[str, ...] = ()
    deck_size: int = 40
    realms: tuple[str, ...] = ()
    decks: tuple[str, ...] = ()
    teams: int = 0
    round_limit: int = 0
    captures_at_once: bool = True


class Step(IntEnum):
    """The decision the game waits for when no task is pending (see turn.py)."""

    PLACE_STONE = 0  # Pre-Game: set your Realm Stone
    RECOVERY = 1  # 1) Recovery and Set-Up Phase: draw or place a Shén counter
    INFLUENCE = 2  # 2) Celestial Influence Phase: play a card or pass
    COMMAND = 3  # 3) Claim, Move, and Attack Phase: pick an Avatar's action, or end
    MOVING = 4  # an Avatar is moving: another step, or stop
    AFTER_MOVE = 5  # following a move: an ability, a ranged attack, or pass
    OVER = 6


@dataclass
class Player:
    seat: int
    realm: str  # the home Realm, set by the Realm Stone
    team: int
    deck: list[int]  # face down; the top is the end of the list
    hand: list[int] = field(default_factory=list)  # kept sorted
    discard: list[int] = field(default_factory=list)  # face up; the top is the end
    removed: list[int] = field(default_factory=list)  # lost cards, removed from the game
    remains: list[int] = field(default_factory=list)  # Remains in Play cards
    stone: int = -1  # the Realm Stone's vertex
    out: bool = False  # no cards left in hand, deck and discard pile
    turns: int = 0

    def cards_left(self) -> int:
        return len(self.hand) + len(self.deck) + len(self.discard)


@dataclass
class Avatar:
    uid: int
    card: int
    owner: int
    loc: int
    ready: bool = False  # "Manifested Avatars enter play Exhausted"
    items: list[int] = field(default_factory=list)
    start: int = -1  # where it stood at the start of its owner's turn (-1: not in play then)


@dataclass
class Combat:
    """One attack being resolved: a melee, a ranged attack or an attack on a Realm Stone."""

    kind: str  # "melee", "ranged", "stone"
    attacker: int  # seat
    defender: int  # seat
    att_uid: int
    def_uid: int  # -1 for a Realm Stone
    origin: int  # where the attacker attacks from (melee: the space or vertex it moved from)
    target: int  # the defended space or vertex (or the Realm Stone's vertex)
    power: list[int] = field(default_factory=lambda: [0, 0])  # bonuses played, per side
    ward: list[int] = field(default_factory=lambda: [0, 0])
    card_played: list[bool] = field(default_factory=lambda: [False, False])
    ability_used: list[bool] = field(default_factory=lambda: [False, False])
    rolls: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())
    winner: int = -1  # 0 attacker, 1 defender
    loss: int = 0  # cards the loser loses
    double: bool = False


@dataclass
class State:
    size: int
    options: ShenOptions
    rng: Rng
    players: list[Player]
    anchors: tuple[int, ...]  # Anchor Point spaces, sorted
    first_rolls: tuple[
        tuple[int, ...], ...
    ]  # each 2d6 roll-off: the totals, by seat (0: not rolling)
    place_order: tuple[int, ...]  # Realm Stones are set in this order (anticlockwise)
    initial_decks: tuple[tuple[int, ...], ...]  # for the conservation check; never shown
    claims: dict[int, int] = field(default_factory=dict)  # Anchor Point -> claiming seat
    stones: dict[int, int] = field(default_factory=dict)  # vertex -> seat
    counters: dict[int, int] = field(default_factory=dict)  # vertex -> seat (Shén counters)
    avatars: dict[int, Avatar] = field(default_factory=dict)  # uid -> Avatar
    at: dict[int, int] = field(default_factory=dict)  # location -> uid
    next_uid: int = 1
    step: Step = Step.PLACE_STONE
    active: int = 0  # the seat whose turn (or Realm Stone placement) it is
    placed: int = 0  # Realm Stones set so far
    turn: int = 0  # turns begun, in all
    acted: list[int] = field(default_factory=list)  # Avatars that took their action this turn
    mover: int = -1  # the Avatar moving or about to act after its move
    steps_left: int = 0
    last_from: int = -1  # where the mover's last step came from
    tasks: list[tuple] = field(default_factory=list)  # pending decisions; the top is last
    combat: Combat | None = None
    winners: tuple[int, ...] = ()
    end_reason: str = ""
    last_roll: tuple[tuple[int, ...], tuple[int, ...]] | None = None
    playing: int = -1  # the card the active player is playing, until it lands

    @property
    def board(self) -> geometry.Board:
        return geometry.board(self.size)

    @property
    def n(self) -> int:
        return len(self.players)

    def teammates(self, seat: int, other: int) -> bool:
        return self.players[seat].team == self.players[other].team

    def __deepcopy__(self, memo: dict[int, object]) -> State:
        """A fast deep copy: the piles hold ints and the tuples are immutable, so one
        level of copying each mutable part is a full copy."""
        new = copy.copy(self)
        new.rng = copy.deepcopy(self.rng, memo)
        new.players = [
            replace(
                p,
                deck=p.deck[:],
                hand=p.hand[:],
                discard=p.discard[:],
                removed=p.removed[:],
                remains=p.remains[:],
            )
            for p in self.players
        ]
        new.claims = dict(self.claims)
        new.stones = dict(self.stones)
        new.counters = dict(self.counters)
        new.avatars = {uid: replace(a, items=a.items[:]) for uid, a in self.avatars.items()}
        new.at = dict(self.at)
        new.acted = self.acted[:]
        new.tasks = self.tasks[:]
        new.combat = copy.deepcopy(self.combat, memo)
        return new

    def opponents(self, seat: int) -> list[int]:
        """Opponents still in the game, clockwise from ``seat``."""
        order = [(seat + i) % self.n for i in range(1, self.n)]
        return [s for s in order if not self.players[s].out and not self.teammates(seat, s)]


SEAT_NAMES = ("Clan 1", "Clan 2", "Clan 3", "Clan 4", "Clan 5", "Clan 6")


def seat_names(players: int) -> tuple[str, ...]:
    return SEAT_NAMES[:players]


def sides(players: int, options: ShenOptions) -> tuple[tuple[int, ...], ...]:
    """Who wins or loses together: each team (seat i plays for team i % teams), or each
    player on their own."""
    if not options.teams:
        return tuple((seat,) for seat in range(players))
    return tuple(tuple(range(team, players, options.teams)) for team in range(options.teams))


def _deck_list(text: str, deck_size: int, seat: int) -> list[int]:
    cards: list[int] = []
    for entry in text.split(","):
        entry = entry.strip()
        if not entry:
            continue
        card_id, _, count = entry.partition("*")
        card_id = card_id.strip()
        if card_id not in POOL.by_id:
            raise BadOptions(f"seat {seat}'s deck names {card_id!r}, not in the card pool")
        if count and not count.strip().isdigit():
            raise BadOptions(f"seat {seat}'s deck: bad count in {entry!r}")
        cards.extend([POOL.by_id[card_id]] * (int(count) if count else 1))
    if len(cards) != deck_size:
        raise BadOptions(
            f"seat {seat}'s deck has {len(cards)} cards; the agreed size is {deck_size}"
        )
    counts = Counter(cards)
    for card, copies in sorted(counts.items()):
        if copies > POOL.max_copies:
            raise BadOptions(
                f"seat {seat}'s deck has {copies} copies of {CARDS[card].id};"
                f" at most {POOL.max_copies}"
            )
    return sorted(cards)


def _ready_made(realm: str, deck_size: int) -> list[int]:
    data = POOL.realms[realm]
    return sorted(data.deck + data.reserve[: deck_size - len(data.deck)])


def check_options(players: int, options: ShenOptions) -> tuple[int, ...]:
    """Raise BadOptions unless the game can be played as asked; return the anchors."""
    if not isinstance(options, ShenOptions):
        raise BadOptions("options must be shen Options")
    if not 2 <= players <= 6:
        raise BadOptions("Shén is for 2 to 6 players")
    if not geometry.MIN_SIZE <= options.size <= geometry.MAX_SIZE:
        raise BadOptions(f"the field size is {geometry.MIN_SIZE} to {geometry.MAX_SIZE}")
    size = options.size
    if options.anchor_points:
        anchors = []
        for text in options.anchor_points:
            loc = geometry.parse(text) if isinstance(text, str) else None
            if loc is None or geometry.is_vertex(loc) or loc not in geometry.board(size).on_board:
                raise BadOptions(f"Anchor Point {text!r} is not a space of the field")
            anchors.append(loc)
        if len(set(anchors)) != len(anchors):
            raise BadOptions("two Anchor Points on one space")
    else:
        last = size - 1
        anchors = [geometry.space(x, y) for x in (0, last) for y in (0, last)]
    if not 1 <= len(anchors) <= MAX_ANCHORS:
        raise BadOptions(f"a scenario has 1 to {MAX_ANCHORS} Anchor Points")
    if not POOL.min_deck <= options.deck_size <= POOL.max_deck:
        raise BadOptions(f"the deck size is {POOL.min_deck} to {POOL.max_deck}")
    if options.realms and len(options.realms) != players:
        raise BadOptions("name one Realm per seat, or none")
    for realm in options.realms:
        if realm not in POOL.realms:
            raise BadOptions(f"unknown Realm {realm!r}; Realms are {', '.join(POOL.realm_order)}")
    if options.decks and len(options.decks) != players:
        raise BadOptions("give one deck per seat, or none")
    if options.teams and (
        options.teams < 2 or players % options.teams or players // options.teams < 2
    ):
        raise BadOptions("teams split the players into 2 or more equal teams of 2 or more")
    if options.round_limit < 0:
        raise BadOptions("round_limit is 0 (none) or more")
    if not isinstance(options.captures_at_once, bool):
        raise BadOptions("captures_at_once is true or false")
    # Each Realm Stone and its counters cover at most 5 vertices, each Anchor Point's space
    # 4: with more vertices than that, every player always finds a legal vertex.
    if (size + 1) ** 2 <= 5 * players + 4 * len(anchors):
        raise BadOptions("the field is too small for this many Realm Stones and Anchor Points")
    return tuple(sorted(anchors))


def roll_for_first(rng: Rng, players: int) -> tuple[int, tuple[tuple[int, ...], ...]]:
    """ "Roll 2d6 and the player with the highest total goes first. In case of a tie,
    reroll": the tied players roll again until one is highest."""
    rolling = list(range(players))
    rounds = []
    while True:
        totals = [0] * players
        for seat in rolling:
            totals[seat] = rng.randint(1, 6) + rng.randint(1, 6)
        rounds.append(tuple(totals))
        best = max(totals)
        rolling = [seat for seat in rolling if totals[seat] == best]
        if len(rolling) == 1:
            return rolling[0], tuple(rounds)


def new_game(seed: int, players: int, options: ShenOptions | None = None) -> State:
    """Set up a game: decks, the 2d6 roll for the first player, then Realm Stone placement.

    >>> state = new_game(7, 2, ShenOptions())
    >>> state.step.name, len(state.players[0].deck)
    ('PLACE_STONE', 40)
    """
    options = options if options is not None else ShenOptions()
    anchors = check_options(players, options)
    order = POOL.realm_order
    realms = options.realms or tuple(order[seat % len(order)] for seat in range(players))
    decks = []
    for seat in range(players):
        text = options.decks[seat] if options.decks else ""
        decks.append(
            _deck_list(text, options.deck_size, seat)
            if text
            else _ready_made(realms[seat], options.deck_size)
        )
    rng = Rng(seed)
    first, rolls = roll_for_first(rng, players)
    # Seats sit clockwise in number order; "Starting with the first player and continuing
    # anticlockwise, each player sets their realm stone".
    place_order = tuple((first - i) % players for i in range(players))
    teams = options.teams
    return State(
        size=options.size,
        options=options,
        rng=rng,
        players=[
            Player(seat, realms[seat], seat % teams if teams else seat, decks[seat])
            for seat in range(players)
        ],
        anchors=anchors,
        first_rolls=rolls,
        place_order=place_order,
        initial_decks=tuple(tuple(deck) for deck in decks),
        active=place_order[0],
    )
