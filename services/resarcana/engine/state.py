"""The game state: everything, including the one seeded generator all chance comes from.

Cards and components are ints (ids into ``CONTENT``). Piles are lists whose last element
is the top card. ``turned`` and ``on`` hold, per component id, whether it is turned and
the essences on it. ``tasks`` is the rest of the action being carried out (its cost to
pay, then its effect), first task first; each task is a small frozen dataclass (see
``task.py``), and ``Seat.collect`` the same for a player's Collect decisions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from services.kit.engine import Options as KitOptions
from services.kit.engine import Outcome, Rng
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.task import Task

# Phases, in the order a game goes through them.
DRAFT, MAGE, ITEM, COLLECT, ACTIONS, OVER = range(6)
PHASES = ("draft", "mage", "item", "collect", "actions", "over")

SETUPS = ("draft", "first_game")
PLACE_SIDES = ("auto", "amber", "random")


@dataclass(frozen=True)
class Options(KitOptions):
    """What is chosen when a game is created.

    ``setup``: "draft" (the full game: draft Artifacts, choose a Mage) or "first_game"
    (the Start-symbol Mages and Artifacts, and 7 VP). ``places``: "amber" (the first-game
    sides), "random" (a random side each) or "auto" (amber in the first game, random
    otherwise). ``victory_points``: 0 for the rulebook's (7 in the first game, 10
    otherwise). ``first_player``: -1 to let the seed determine it. ``collect_in_turn_order``:
    players collect one after the other from the First Player, as the rulebook allows on
    request, instead of simultaneously. ``round_limit``: a house rule, not the rulebook's,
    chosen only when above 0: after this round's Victory check the game ends even if
    nobody reached the victory points (most VP wins, then the usual tie-break). 0 (the
    default): no limit, the game ends only as the rulebook says, at a Victory check where
    a player has reached the target.
    """

    #: Games stored while the round limit was 20 by default replay with it.
    STORED_BEFORE: ClassVar[Mapping[str, Any]] = {"round_limit": 20}

    setup: str = "draft"
    places: str = "auto"
    victory_points: int = 0
    first_player: int = -1
    collect_in_turn_order: bool = False
    round_limit: int = 0


@dataclass
class Seat:
    """One player's things. Lists of card ids; ``deck`` and ``discard`` tops are last."""

    mage: int = -1  # revealed Mage, -1 before the reveal
    mage_options: list[int] = field(default_factory=list)  # draft: the two dealt Mages
    mage_choice: int = -1  # draft: the secret choice before both reveal
    item: int = -1
    hand: list[int] = field(default_factory=list)
    deck: list[int] = field(default_factory=list)
    discard: list[int] = field(default_factory=list)
    tableau: list[int] = field(default_factory=list)  # Artifacts, Monuments, Places in play
    pool: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    passed: bool = False
    draft_stack: list[int] = field(default_factory=list)
    draft_offer: list[int] = field(default_factory=list)
    draft_kept: list[int] = field(default_factory=list)
    draft_given: list[int] = field(default_factory=list)  # set aside for the rival
    gave: list[int] = field(default_factory=list)  # after the draft: what this seat gave
    collect: list[Task] = field(default_factory=list)  # pending Collect decisions

    def components(self) -> list[int]:
        """Every component in front of this player: Mage, Magic Item, then the rest."""
        own = [c for c in (self.mage, self.item) if c >= 0]
        return own + self.tableau


@dataclass
class State:
    options: Options
    rng: Rng
    target_vp: int
    phase: int = DRAFT
    round: int = 0
    first_player: int = 0  # who holds the First Player token
    token_passed: bool = False  # the token is on its "Passed" side
    chooser: int = 0  # setup: who chooses a Magic Item now
    active: int = 0  # actions: whose turn it is
    in_action: bool = False  # an action has begun and its tasks are being carried out
    seats: list[Seat] = field(default_factory=lambda: [Seat(), Seat()])
    turned: list[bool] = field(default_factory=lambda: [False] * len(CONTENT.components))
    on: list[list[int]] = field(
        default_factory=lambda: [[0, 0, 0, 0, 0] for _ in CONTENT.components]
    )
    monument_deck: list[int] = field(default_factory=list)
    monument_display: list[int] = field(default_factory=list)
    places: list[int] = field(default_factory=list)  # unclaimed Places of Power, face up
    items: list[int] = field(default_factory=list)  # Magic Items in the middle
    tasks: list[Task] = field(default_factory=list)
    paid: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])  # this action's payment
    looking: list[int] = field(default_factory=list)  # Monuments drawn by a look, not yet back
    box: list[int] = field(default_factory=list)  # out of the game: unused Mages, sides, cards
    out: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])  # taken from the supply
    result: Outcome | None = None
