"""The state of a game of Shrine: everything, hidden or not, in plain lists and ints.

One :class:`~services.kit.engine.Rng` seeded from the game's seed makes every chance
event (the Code set, the Code cards, the starting player, every Lens drawn from the pouch,
the Shape decks). Nothing here is a set or a dict keyed by strings, so a replay in
another process makes the very same choices.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum

from services.kit.engine import Options as KitOptions
from services.kit.engine import Outcome, Rng
from services.shrine.engine.content import BOARD, CONTENT, FIELDS, PLAYER, POWER_KEYS

SUN, MOON = 0, 1
SEAT_NAMES = ("Sun", "Moon")


@dataclass(frozen=True)
class Options(KitOptions):
    """Chosen when the game is created.

    ``radiant_shapes`` adds the Radiant Shapes module (Shape cards, Proof tiles and
    tokens). Nothing else in Shrine is chosen at creation: the board has one side, the
    Code set is drawn as setup step 7 says, and every game ends by itself (see README,
    "Why every game ends").
    """

    radiant_shapes: bool = False


class Phase(IntEnum):
    """Where the player to act is in the turn (the rulebook's steps)."""

    UNLOCK = 0  # step 2: unlock a Treasure Power (or draw Shape cards)
    KEEP = 1  # step 2: keep one of the two Shape cards drawn
    ACTION = 2  # step 3, before placing: place, relocate or pass; powers, debt, serpents
    SEARCH = 3  # step 3: Refreshing the Offering, pay the additional Treasure or not
    AFTER = 4  # step 3, after placing: more powers (blocking), debt, serpents, done
    SHAPE = 5  # end of turn (Radiant Shapes): complete a Shape card or not
    SHAPE_AT = 6  # ... on which fields
    SHAPE_CLAIM = 7  # ... the Code colour of the field a Serpent ignores
    REWARD = 8  # ... which reward
    BONUS = 9  # ... the bonus draw
    OVER = 10


@dataclass
class Player:
    code: int  # index into CONTENT.codes: hidden from the opponent
    treasure: int = PLAYER.starting_treasure
    powers: list[int] = field(default_factory=lambda: [p.spaces for p in PLAYER.powers])
    serpents_removed: int = 0
    blocks_used: int = 0
    passes: int = 0
    debts: int = 0
    proof: list[int] = field(default_factory=lambda: [-1] * FIELDS)  # colour or -1
    hand: list[int] = field(default_factory=list)  # Shape card ids: hidden
    completed: list[int] = field(default_factory=list)  # Shape card ids, public

    def blocked(self, power: int) -> bool:
        """A power with any Treasure on it is blocked ("Treasure Powers")."""
        return self.powers[power] > 0


@dataclass
class State:
    options: Options
    rng: Rng
    players: list[Player]
    code_set: int  # the colour of the Code set in play (public: the backs show it)
    starting: int  # the seat holding the Starting Player token
    current: int = SUN
    phase: Phase = Phase.UNLOCK
    turn: int = 0
    lenses: list[list[int]] = field(default_factory=lambda: [[] for _ in range(FIELDS)])
    blocked_by: list[int] = field(default_factory=lambda: [-1] * FIELDS)
    block_target: list[bool] = field(default_factory=lambda: [False] * FIELDS)
    block_no_claim: list[bool] = field(default_factory=lambda: [False] * FIELDS)  # claims nothing
    facing: list[int] = field(default_factory=lambda: [d.facing for d in BOARD.dials])
    active: list[bool] = field(default_factory=lambda: [True] * len(BOARD.dials))
    track: list[int] = field(default_factory=list)  # dials removed, in order
    pouch: list[int] = field(default_factory=lambda: list(BOARD.pouch))  # per basic colour
    offering: int = -1  # the Lens in the Offering, or -1
    set_aside: list[int] = field(default_factory=lambda: [0, 0, 0])  # while refreshing
    treasury: int = 0
    # this turn
    powers_used: int = 0  # Treasure Powers activated this turn (a pass needs none)
    placed: bool = False
    dial_used: int = -1
    refreshed_from: int = -1  # the Offering's colour before Refreshing
    # Radiant Shapes
    decks: list[list[int]] = field(default_factory=list)  # per deck size: ids, top last
    drawn: list[int] = field(default_factory=list)  # two Shape cards to keep one of
    shape: int = -1  # the Shape card being completed
    shape_mask: int = 0
    shape_ignore: int = -1
    # the end
    loser: int = -1  # a player who could neither place nor pass
    result: Outcome | None = None

    def deck(self, size: int) -> list[int]:
        return self.decks[CONTENT.decks.index(size)]


def power_name(power: int) -> str:
    return PLAYER.powers[power].name


def power_key(power: int) -> str:
    return POWER_KEYS[power]
