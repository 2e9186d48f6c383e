"""The state of a game of Glow: everything, hidden or not, in plain lists and ints.

Dice are ids 0-29 (content/dice.json); ``faces[die]`` is the face index a die shows.
Companions are ids 1-46 (content/companions.json), spells 1-7. Every die, companion and
spell token is in exactly one list at any time (the tests check it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from services.kit.engine import Options as KitOptions
from services.kit.engine import Outcome, Rng

from .content import BOATS, START_SCORE


@dataclass(frozen=True)
class Options(KitOptions):
    """Chosen at creation.

    ``board``: the side of the journey board, ``"province"`` (The Province of Shadows)
    or ``"archipelago"`` (The Archipelago of Darkness).

    Two rule fixes, kept as options so that games stored before them replay as played
    (``STORED_BEFORE`` holds the old rule for stored rows without the key); neither is
    a house rule, and new games always take the default:

    ``evening``: how the small dice go back on the meeting track (Evening, step 1).
    ``"shown"`` (the rulebook): each die goes to the space of the colour it shows, and
    only a die showing -2 or a footprint is rerolled until it shows a colour.
    ``"roll"``: the old engine's rule, every die rolled again until it shows a colour.

    ``simultaneous``: what one seat's moves do to another's during the simultaneous
    steps (Noon, Afternoon). ``"fixed"``: a seat sees the shared supplies as they
    stood when the step began, changed only by its own moves (Cromaug may take back
    neither a companion another seat sent to the cemetery this Noon, nor a die another
    seat's Sketal returned to the reserve pool), and the reroll tokens earned from the
    reserve pool are handed out when the step ends, from the first player clockwise, so
    the order in which moves reach the server never matters. ``"arrival"``: the old
    engine's rule, every change visible to the others at once.
    """

    STORED_BEFORE: ClassVar[Mapping[str, Any]] = {"evening": "roll", "simultaneous": "arrival"}

    board: str = "province"
    evening: str = "shown"
    simultaneous: str = "fixed"


EVENING_RULES = ("shown", "roll")  # Options.evening: the rulebook's first
SIMULTANEOUS_RULES = ("fixed", "arrival")  # Options.simultaneous: the rulebook's first


# Steps of the day (``State.step``).
ADVENTURERS = 0  # Game Setup 2: each player chooses an adventurer, in seat order
MORNING = 1  # Morning - Recruit a Companion: one seat at a time
LATE_MORNING = 2  # Late Morning - Roll and Reroll Dice: simultaneous
NOON = 3  # Noon - Resolve the Cards: simultaneous
AFTERNOON = 4  # Afternoon - Continue Their Journey: simultaneous
OVER = 5
STEP_NAMES = ("adventurers", "morning", "late_morning", "noon", "afternoon", "over")

# What a seat is asked now (``Player.stage``).
IDLE = 0  # nothing pending
CHOOSE_ADVENTURER = 1
RECRUIT = 2  # take a companion
MOVE_BLACK_DIE = 3  # Kaar's owner: move the black die away, or keep it
SKETAL_DIE = 4  # choose the colour of a multicoloured Sketal's die
CEMETERY_PICK = 5  # 2-player games: the first player sends a companion to the cemetery
REROLLS = 6  # use a reroll, set a face with three, or be ready
REROLL_PICK = 7  # pick the one or two dice of a reroll
FIX_PAY = 8  # pay the three rerolls that set a face
FIX_PICK = 9  # pick the die to set
FIX_FACE = 10  # choose its face
RESOLVING = 11  # resolve a triggered card
RESURRECT = 12  # Cromaug: take a companion from the cemetery, or none
JOURNEY = 13  # move on the journey board, or end
SKULL = 14  # a skull space: lose a companion or cancel a spell
STAGE_NAMES = (
    "idle",
    "choose_adventurer",
    "recruit",
    "move_black_die",
    "sketal_die",
    "cemetery_pick",
    "rerolls",
    "reroll_pick",
    "fix_pay",
    "fix_pick",
    "fix_face",
    "resolving",
    "resurrect",
    "journey",
    "skull",
)


@dataclass
class Player:
    """One seat: its cards, dice, tokens, journey pieces and what it is doing today."""

    adventurer: int = 0  # an Adventurer id, 0 before the choice
    companions: list[int] = field(default_factory=list)  # in play, in recruiting order
    adventurer_dice: list[int] = field(default_factory=list)
    sketal_dice: list[tuple[int, int]] = field(default_factory=list)  # (companion, die)
    small_dice: list[int] = field(default_factory=list)  # taken from the meeting track
    score: int = START_SCORE
    rerolls: int = 0  # reroll tokens
    footprints: int = 0  # footprints in tokens (a token shows 1 or 2)
    fireflies: int = 0  # fireflies in tokens
    spells: list[int] = field(default_factory=list)  # revealed spell tokens
    hidden_spells: list[int] = field(default_factory=list)  # face down until the next round
    company: int = 0  # Province: the company's spot
    encampment: int = 0  # Province: the encampment's spot
    boats: list[int] = field(default_factory=lambda: [0] * BOATS)  # Archipelago, sorted
    # What the seat does today.
    stage: int = IDLE
    done: bool = True
    rolled: list[int] = field(default_factory=list)  # the dice rolled this round, sorted
    cancelled: list[int] = field(default_factory=list)  # not counted: the curse
    used: list[int] = field(default_factory=list)  # dice used on the journey today
    lumipilis_used: list[int] = field(default_factory=list)  # Lumipili rerolls used today
    picked: list[int] = field(default_factory=list)  # dice picked for a reroll or a fix
    paid: int = 0  # rerolls paid towards a fix
    resolved: list[int] = field(default_factory=list)  # card refs resolved this noon
    visited: list[int] = field(default_factory=list)  # Province: spots passed today
    in_village: bool = False  # Province: just entered a village (may camp)
    pending: int = 0  # the space, companion or card a pending sub-decision is about
    stream: int = 0  # the seat's reroll stream for today (see dice.py)
    # Options.simultaneous "fixed": what this seat did to the shared supplies this step,
    # so that the other seats go on seeing them as the step began (see rules/noon.py).
    fallen: list[int] = field(default_factory=list)  # companions it sent to the cemetery
    returned: list[int] = field(default_factory=list)  # Sketal dice it put back in the pool
    rerolls_due: int = 0  # reroll tokens earned, handed out when the step ends

    def all_dice(self) -> list[int]:
        return sorted(self.adventurer_dice + [d for _, d in self.sketal_dice] + self.small_dice)


@dataclass
class State:
    """A game of Glow. Compares equal to an identical state (the Rng by its internal state)."""

    players: list[Player]
    options: Options
    rng: Rng
    step: int = ADVENTURERS
    day: int = 0
    first: int = -1  # holds the first player token (-1 until it is drawn)
    chooser: int = 0  # the seat deciding in the turn-by-turn steps
    recruited: int = 0  # companions taken this morning
    deck: list[int] = field(default_factory=list)  # face down, top first
    box: list[int] = field(default_factory=list)  # companions returned to the box at setup
    cemetery: list[int] = field(default_factory=list)  # face up, kept sorted
    track: list[int] = field(default_factory=list)  # companion in front of each space, 0 if none
    track_dice: list[list[int]] = field(default_factory=list)  # small dice on each space
    track_footprints: list[int] = field(default_factory=list)  # footprint tokens on each space
    faces: list[int] = field(default_factory=list)  # the face index each die shows
    pool: list[int] = field(default_factory=list)  # dice in the reserve pool, sorted
    dice_box: list[int] = field(default_factory=list)  # dice of unused adventurers
    spell_pile: list[int] = field(default_factory=list)  # face down, top first
    spell_box: list[int] = field(default_factory=list)  # triggered or cancelled, sorted
    reroll_pool: int = 0  # reroll tokens in the reserve pool
    result: Outcome | None = None
    acting: tuple[int, ...] = ()  # cached to_act

    @property
    def n(self) -> int:
        return len(self.players)
