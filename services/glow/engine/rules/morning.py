"""Morning – Recruit a Companion, with the Sketals' dice, Kaar's black die and the
2-player cemetery pick. One seat decides at a time, from the first player clockwise."""

from __future__ import annotations

from bisect import insort

from services.kit.engine import Event

from ..content import ANY_COLOUR, BLACK_DIE, COLOURS, COMPANIONS, DICE, NO_DIE, TRACK_SPACES
from ..effects import player_name, pool_for, spell_text
from ..moves import BLACK, BURY, DIE, STAY, TAKE, Move
from ..state import (
    CEMETERY_PICK,
    IDLE,
    MORNING,
    MOVE_BLACK_DIE,
    RECRUIT,
    SKETAL_DIE,
    Player,
    State,
)
from .setup import place_on_track


def has_kaar(player: Player) -> bool:
    return any(COMPANIONS[c].black_die for c in player.companions)


def start_morning(state: State) -> list[Event]:
    """A new day: face-down spells are revealed, the first player recruits first."""
    state.day += 1
    state.step = MORNING
    state.recruited = 0
    events = [Event("day", f"day {state.day} begins; seat {state.first} is the first player")]
    for seat, player in enumerate(state.players):
        for spell in player.hidden_spells:
            events.append(
                Event(
                    "spell_revealed",
                    f"{player_name(state, seat)} reveals {spell_text(spell)}",
                    seat,
                    {"spell": spell},
                )
            )
        player.spells += player.hidden_spells
        player.hidden_spells = []
        player.done = True
        player.stage = IDLE
    _ask(state, state.first, RECRUIT)
    return events


def _ask(state: State, seat: int, stage: int) -> None:
    state.chooser = seat
    state.players[seat].stage = stage
    state.players[seat].done = False


def recruit_moves(state: State) -> list[Move]:
    return [Move(TAKE, s) for s in range(TRACK_SPACES) if state.track[s]]


def black_die_moves(state: State, player: Player) -> list[Move]:
    here = player.pending
    return [Move(BLACK, STAY)] + [
        Move(BLACK, s) for s in range(TRACK_SPACES) if s != here and state.track[s]
    ]


def sketal_colours(state: State, seat: int) -> list[int]:
    """The colours of the large dice in the reserve pool that ``seat`` may take."""
    return sorted({DICE[d].colour for d in pool_for(state, seat) if DICE[d].large})


def sketal_die_moves(state: State, seat: int) -> list[Move]:
    return [Move(DIE, c) for c in sketal_colours(state, seat)]


def cemetery_moves(state: State) -> list[Move]:
    return [Move(BURY, s) for s in range(TRACK_SPACES) if state.track[s]]


def take(state: State, seat: int, move: Move) -> list[Event]:
    player = state.players[seat]
    space = move.a
    if (
        BLACK_DIE in state.track_dice[space]
        and has_kaar(player)
        and any(state.track[s] for s in range(TRACK_SPACES) if s != space)
    ):
        # Kaar's immunity: the black die may first be moved in front of another companion.
        player.pending = space
        player.stage = MOVE_BLACK_DIE
        return []
    return _recruit(state, seat, space)


def move_black_die(state: State, seat: int, move: Move) -> list[Event]:
    player = state.players[seat]
    space = player.pending
    events = []
    if move.a != STAY:
        state.track_dice[space].remove(BLACK_DIE)
        state.track_dice[move.a].append(BLACK_DIE)
        state.track_dice[move.a].sort()
        events.append(
            Event(
                "black_die",
                f"{player_name(state, seat)} moves the black die to space {move.a} (Kaar)",
                seat,
                {"space": move.a},
            )
        )
    player.pending = 0
    return events + _recruit(state, seat, space)


def _recruit(state: State, seat: int, space: int) -> list[Event]:
    player = state.players[seat]
    companion = state.track[space]
    card = COMPANIONS[companion]
    state.track[space] = 0
    player.companions.append(companion)
    dice = state.track_dice[space]
    state.track_dice[space] = []
    player.small_dice = sorted(player.small_dice + dice)
    footprints = state.track_footprints[space]
    state.track_footprints[space] = 0
    player.footprints += footprints
    state.recruited += 1
    events = [
        Event(
            "recruit",
            f"{player_name(state, seat)} recruits {card.name} ({companion}) from space {space}"
            f" with dice {dice} and {footprints} footprints",
            seat,
            {"companion": companion, "space": space, "dice": list(dice), "footprints": footprints},
        )
    ]
    player.stage = IDLE
    events += companion_arrives(state, seat, companion)
    if player.stage == IDLE:
        events += after_recruit(state, seat)
    return events


def companion_arrives(state: State, seat: int, companion: int) -> list[Event]:
    """A new companion's powers: a Sketal's large die, Kaar's black die into play.

    Used by recruiting and by Cromaug. May leave the seat in SKETAL_DIE.
    """
    player = state.players[seat]
    card = COMPANIONS[companion]
    events: list[Event] = []
    if card.die != NO_DIE:
        colours = sketal_colours(state, seat)
        if card.die != ANY_COLOUR:
            colours = [c for c in colours if c == card.die]
        if len(colours) == 1:
            events += give_sketal_die(state, seat, companion, colours[0])
        elif len(colours) > 1:
            player.pending = companion
            player.stage = SKETAL_DIE
        else:
            events.append(
                Event(
                    "no_die",
                    f"{player_name(state, seat)}: no such large die in the reserve pool",
                    seat,
                )
            )
    if card.black_die and BLACK_DIE in state.pool:
        state.pool.remove(BLACK_DIE)
        occupied = any(state.track)
        space = place_on_track(state, BLACK_DIE, occupied_only=occupied)
        events.append(
            Event(
                "black_die",
                f"{player_name(state, seat)} rolls the black die onto space {space}",
                seat,
                {"space": space},
            )
        )
    return events


def give_sketal_die(state: State, seat: int, companion: int, colour: int) -> list[Event]:
    die = min(d for d in pool_for(state, seat) if DICE[d].large and DICE[d].colour == colour)
    state.pool.remove(die)
    state.players[seat].sketal_dice.append((companion, die))
    return [
        Event(
            "sketal_die",
            f"{player_name(state, seat)} takes the {COLOURS[colour]} large die {die}",
            seat,
            {"companion": companion, "die": die},
        )
    ]


def choose_sketal_die(state: State, seat: int, move: Move) -> list[Event]:
    player = state.players[seat]
    companion = player.pending
    player.pending = 0
    player.stage = IDLE
    events = give_sketal_die(state, seat, companion, move.a)
    if state.step == MORNING:
        events += after_recruit(state, seat)
    return events


def after_recruit(state: State, seat: int) -> list[Event]:
    """2-player games: the first player's cemetery pick; then the next seat recruits."""
    if state.n == 2 and seat == state.first and state.recruited == 1 and any(state.track):
        _ask(state, seat, CEMETERY_PICK)
        return []
    return _next(state, seat)


def bury(state: State, seat: int, move: Move) -> list[Event]:
    companion = state.track[move.a]
    state.track[move.a] = 0
    insort(state.cemetery, companion)
    state.players[seat].stage = IDLE
    events = [
        Event(
            "cemetery",
            f"{player_name(state, seat)} sends {COMPANIONS[companion].name} ({companion}) "
            "to the cemetery (2-player games)",
            seat,
            {"companion": companion, "space": move.a},
        )
    ]
    return events + _next(state, seat)


def _next(state: State, seat: int) -> list[Event]:
    player = state.players[seat]
    player.stage = IDLE
    player.done = True
    if state.recruited < state.n:
        _ask(state, (seat + 1) % state.n, RECRUIT)
    return []


def morning_over(state: State) -> bool:
    return state.recruited == state.n and state.players[state.chooser].stage == IDLE


def end_morning(state: State) -> list[Event]:
    """The companions left on the track go to the cemetery; their dice and footprints stay."""
    gone = [c for c in state.track if c]
    state.cemetery = sorted(state.cemetery + gone)
    state.track = [0] * TRACK_SPACES
    if not gone:
        return []
    names = ", ".join(f"{COMPANIONS[c].name} ({c})" for c in gone)
    return [Event("cemetery", f"left on the meeting track, to the cemetery: {names}", None)]
