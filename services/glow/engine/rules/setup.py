"""Game Setup: the packs, the meeting track, the first player, the nine small dice.

Seats sit clockwise in seat order: the player on a seat's left is the next seat, the one
on its right the previous seat.
"""

from __future__ import annotations

from services.kit.engine import BadOptions, Event, Rng
from services.kit.kernel import Decision

from .. import rulebook
from ..content import (
    ADVENTURER,
    ADVENTURERS,
    BOARDS,
    COMPANIONS,
    DICE,
    ELEMENTS,
    PACKS,
    REMOVED_PER_PACK,
    REROLL_TOKENS,
    REROLLS_RIGHT_OF_FIRST,
    SPACE_OF_ELEMENT,
    SPELLS,
    TRACK_SPACES,
)
from ..dice import roll, symbol
from ..effects import player_name, take_rerolls
from ..moves import ChooseAdventurer
from ..state import (
    CHOOSE_ADVENTURER,
    EVENING_RULES,
    IDLE,
    SIMULTANEOUS_RULES,
    Options,
    Player,
    State,
)

MIN_PLAYERS, MAX_PLAYERS = 2, 4


def new_game(seed: int, players: int, options: Options | None = None) -> State:
    """A new game; the adventurers are chosen first, then the rest of the setup is dealt,
    shuffled and rolled from the state's Rng (seeded with ``seed``).

    >>> state = new_game(7, 3)
    >>> (state.acting, state.players[0].score)
    ((0,), 10)
    """
    options = Options() if options is None else options
    if not isinstance(options, Options):
        raise BadOptions("options must be Glow Options")
    if not isinstance(players, int) or not MIN_PLAYERS <= players <= MAX_PLAYERS:
        raise BadOptions(f"Glow is for {MIN_PLAYERS} to {MAX_PLAYERS} players")
    if options.board not in BOARDS:
        raise BadOptions(f"unknown board {options.board!r}: one of {', '.join(BOARDS)}")
    if options.evening not in EVENING_RULES:
        raise BadOptions(
            f"unknown evening rule {options.evening!r}: one of {', '.join(EVENING_RULES)}"
        )
    if options.simultaneous not in SIMULTANEOUS_RULES:
        raise BadOptions(
            f"unknown simultaneous rule {options.simultaneous!r}: "
            f"one of {', '.join(SIMULTANEOUS_RULES)}"
        )
    if not isinstance(seed, int):
        raise BadOptions("the seed is an integer")
    state = State(players=[Player() for _ in range(players)], options=options, rng=Rng(seed))
    state.faces = [0] * len(DICE)
    state.pool = sorted(d.id for d in DICE if d.home == "pool")
    # The adventurers' dice and the nine small dice wait in the box until the choice.
    state.dice_box = sorted(d.id for d in DICE if d.home in ("adventurer", "track"))
    state.track = [0] * TRACK_SPACES
    state.track_dice = [[] for _ in range(TRACK_SPACES)]
    state.track_footprints = [0] * TRACK_SPACES
    state.reroll_pool = REROLL_TOKENS
    # Until the adventurers are chosen (Game Setup 2) the companions are in the box,
    # the nine small dice beside the board: the rest of the setup follows their choice.
    state.box = sorted(COMPANIONS)
    state.spell_pile = sorted(SPELLS)
    state.first = -1  # drawn after the adventurer choice
    state.chooser = 0
    state.players[0].stage = CHOOSE_ADVENTURER
    state.players[0].done = False
    state.acting = (0,)
    return state


def place_on_track(state: State, die: int, occupied_only: bool = False) -> int:
    """Roll a die until it shows an element and put it on that element's space.

    ``occupied_only``: reroll also when that space has no companion (Kaar's black die).
    """
    while True:
        roll(state, die)
        shown = symbol(state, die)
        if shown not in ELEMENTS:
            continue
        space = SPACE_OF_ELEMENT[shown]
        if occupied_only and not state.track[space]:
            continue
        state.track_dice[space].append(die)
        state.track_dice[space].sort()
        return space


def place_as_shown(state: State, die: int) -> int:
    """Evening: put a die on the space of the element it shows; a die showing -2 or a
    footprint is first rerolled until it shows an element."""
    if symbol(state, die) not in ELEMENTS:
        return place_on_track(state, die)
    space = SPACE_OF_ELEMENT[symbol(state, die)]
    state.track_dice[space].append(die)
    state.track_dice[space].sort()
    return space


# --- the decision: each player in turn chooses an adventurer ----------------------------


def adventurer_moves(state: State, seat: int) -> list[ChooseAdventurer]:
    taken = {p.adventurer for p in state.players}
    return [ChooseAdventurer(a.id) for a in ADVENTURERS if a.id not in taken]


def choose_adventurer(state: State, seat: int, move: ChooseAdventurer) -> list[Event]:
    player = state.players[seat]
    player.adventurer = move.adventurer
    player.stage = IDLE
    player.done = True
    events = [
        Event(
            "adventurer",
            f"seat {seat} chooses {ADVENTURER[move.adventurer].name}",
            seat,
            {"adventurer": move.adventurer},
        )
    ]
    if seat + 1 < state.n:
        state.chooser = seat + 1
        state.players[seat + 1].stage = CHOOSE_ADVENTURER
        state.players[seat + 1].done = False
    return events


def _adventurer_taken(state: State, seat: int, move: ChooseAdventurer) -> str:
    return "that adventurer is already taken"


def _free(state: State, seat: int, move: ChooseAdventurer) -> bool:
    return all(p.adventurer != move.adventurer for p in state.players)


CHOOSING_AN_ADVENTURER = Decision(
    rule=rulebook.GAME_SETUP,
    moves=adventurer_moves,
    allows=_free,
    explain=_adventurer_taken,
    do=choose_adventurer,
)


def finish_setup(state: State) -> list[Event]:
    """Setup 2: each adventurer's large dice; the unused ones stay in the box."""
    events = []
    for seat, player in enumerate(state.players):
        adventurer = ADVENTURER[player.adventurer]
        dice = [d for d in state.dice_box if DICE[d].colour == adventurer.colour]
        player.adventurer_dice = dice[: adventurer.dice]
        for die in player.adventurer_dice:
            state.dice_box.remove(die)
        events.append(
            Event(
                "setup",
                f"{player_name(state, seat)} takes dice {player.adventurer_dice}",
                seat,
                {"dice": list(player.adventurer_dice)},
            )
        )
    events += _deal(state)
    events.append(
        Event(
            "first_player",
            f"seat {state.first} is the first player; seat {(state.first - 1) % state.n} "
            f"takes {REROLLS_RIGHT_OF_FIRST} reroll tokens",
            state.first,
        )
    )
    return events


def _deal(state: State) -> list[Event]:
    """Game Setup 5-9, from the state's Rng, once the adventurers are chosen."""
    rng = state.rng
    # 5. The spell tokens shuffled face down.
    rng.shuffle(state.spell_pile)
    # 6. Both packs shuffled separately, three returned to the box from each, A on B.
    state.box = []
    for pack in PACKS:
        cards = sorted(c for c in COMPANIONS if COMPANIONS[c].pack == pack)
        rng.shuffle(cards)
        state.box += cards[:REMOVED_PER_PACK]
        state.deck += cards[REMOVED_PER_PACK:]
    state.box.sort()
    state.track = [state.deck.pop(0) for _ in range(TRACK_SPACES)]
    # 7. The first player, and two reroll tokens for the player on their right.
    state.first = rng.randrange(state.n)
    take_rerolls(state, state.players[(state.first - 1) % state.n], REROLLS_RIGHT_OF_FIRST)
    # 8. The nine small dice rolled onto the track (a purple footprint is rerolled).
    for die in (d.id for d in DICE if d.home == "track"):
        state.dice_box.remove(die)
        place_on_track(state, die)
    # 9. A footprint token on each space without a die.
    for space in range(TRACK_SPACES):
        if not state.track_dice[space]:
            state.track_footprints[space] += 1
    names = ", ".join(f"{COMPANIONS[c].name} ({c})" for c in state.track)
    return [Event("meeting_track", f"the meeting track: {names}")]
