"""The game state and its setup."""

from __future__ import annotations

from dataclasses import dataclass, field

from services.kit.engine import BadOptions, Options, Outcome, Rng

from . import board
from .content import CARDS, CUBES_PER_COLOUR, GLYPHS

LIGHT, DARK = 0, 1
SEAT_NAMES = ("Light", "Dark")

# The steps a seat decides in; the others (placing, removing cubes, the endgame check)
# follow from those decisions without a choice.
GLYPH, DRUID, PATH, FILL = "play_glyph", "move_druid", "choose_path", "replace_cards"


# Overchanneling: which of an acquired card's cubes become Overchanneling Cubes.
BEYOND_SPLENDOR = "splendor"  # step 6: Splendor-many go back to the supply, the rest are kept
BEYOND_VIGOR = "vigor"  # the glossary: the cubes beyond the card's Vigor are kept
OVERCHANNELING = (BEYOND_SPLENDOR, BEYOND_VIGOR)


@dataclass(frozen=True)
class ChannelingOptions(Options):
    """Chosen when the game is created.

    ``overchanneling``: the rulebook says two things (see README, reading 4). Step 6,
    the default: "places a number of Energy Cubes equal to the Magic Circle Card's
    Splendor value back into their supply, keeping the rest as Overchanneling Cubes"
    (``"splendor"``). The glossary: a card "acquired using more Energy Cubes than its
    Vigor value" leaves "the excess cubes" as Overchanneling Cubes (``"vigor"``). Games
    stored before the option existed were played under step 6, the default, so they
    need no ``STORED_BEFORE`` entry.
    """

    overchanneling: str = BEYOND_SPLENDOR


@dataclass
class State:
    rng: Rng
    deck: list[int]  # Magic Circle card ids; the top card is the last
    grid: list[int | None]  # the card on each cell, None for a gap left by an empty deck
    cubes: list[list[int]]  # per cell: [Light cubes, Dark cubes]
    druids: list[list[int]]  # per seat: the cells of its two Druid Tokens
    row_glyphs: tuple[int, ...]  # the green glyph labelling each row, top to bottom
    col_glyphs: tuple[int, ...]  # the green glyph labelling each column, left to right
    hands: list[list[int]]  # per seat: glyphs in hand, sorted
    played: list[list[int]]  # per seat: glyphs laid on the table, in play order
    supply: list[int]  # per seat: Energy Cubes in supply
    acquired: list[list[int]]  # per seat: acquired card ids, in order
    overchanneling: list[int]  # per seat: Overchanneling Cubes kept
    current: int = LIGHT
    step: str = GLYPH
    turn: int = 1
    glyph: int | None = None  # the glyph played this turn
    moved: int | None = None  # where the moved Druid now stands
    stationary: int | None = None  # where the other Druid stands
    gaps: list[int] = field(default_factory=list)  # acquired cells still to be refilled
    end_triggered_by: int | None = None
    result: Outcome | None = None
    options: ChannelingOptions = field(default_factory=ChannelingOptions)


def druid_at(state: State, cell: int) -> int | None:
    """The seat whose Druid Token stands on ``cell``, if any."""
    for seat in (LIGHT, DARK):
        if cell in state.druids[seat]:
            return seat
    return None


def new_game(seed: int, players: int = 2, options: ChannelingOptions | None = None) -> State:
    """Setup: shuffle the deck, label rows and columns with the green glyphs at random,
    deal 16 cards into the 4x4 grid, and place the Druid Tokens on the centre four cards
    with each colour diagonally across from itself. Light plays first.
    """
    if players != 2:
        raise BadOptions("The Channeling is a game for two players")
    if options is None:
        options = ChannelingOptions()
    if not isinstance(options, ChannelingOptions):
        raise BadOptions("unexpected options for The Channeling")
    if options.overchanneling not in OVERCHANNELING:
        raise BadOptions(
            f"unknown overchanneling {options.overchanneling!r}: one of {', '.join(OVERCHANNELING)}"
        )
    rng = Rng(seed)
    deck = [card.id for card in CARDS]
    rng.shuffle(deck)
    green = list(range(len(GLYPHS)))
    rng.shuffle(green)
    grid: list[int | None] = [deck.pop() for _ in board.CELLS]
    b2, c2, b3, c3 = board.CENTRE
    return State(
        rng=rng,
        deck=deck,
        grid=grid,
        cubes=[[0, 0] for _ in board.CELLS],
        druids=[[b2, c3], [c2, b3]],
        row_glyphs=tuple(green[:4]),
        col_glyphs=tuple(green[4:]),
        hands=[list(range(len(GLYPHS))), list(range(len(GLYPHS)))],
        played=[[], []],
        supply=[CUBES_PER_COLOUR, CUBES_PER_COLOUR],
        acquired=[[], []],
        overchanneling=[0, 0],
        options=options,
    )
