"""Morning – Recruit a Companion, with the Sketals' dice, Kaar's black die and the
2-player cemetery pick. One seat decides at a time, from the first player clockwise."""

from __future__ import annotations

from bisect import insort

from services.kit.engine import Event
from services.kit.kernel import Decision

from .. import rulebook
from ..content import ANY_COLOUR, BLACK_DIE, COLOURS, COMPANIONS, DICE, NO_DIE, TRACK_SPACES
from ..effects import player_name, pool_for, spell_text
from ..moves import STAY, Bury, ChooseSketalDie, MoveBlackDie, Take
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


def sketal_colours(state: State, seat: int) -> list[int]:
    """The colours of the large dice in the reserve pool that ``seat`` may take."""
    return sorted({DICE[d].colour for d in pool_for(state, seat) if DICE[d].large})


# --- the decision: recruit a companion ---------------------------------------------------


def recruit_moves(state: State, seat: int) -> list[Take]:
    return [Take(s) for s in range(TRACK_SPACES) if state.track[s]]


def _companion_there(state: State, seat: int, move: Take | Bury) -> bool:
    return state.track[move.space] != 0


def _no_companion(state: State, seat: int, move: Take | Bury | MoveBlackDie) -> str:
    return f"no companion in front of space {move.space}"


def take(state: State, seat: int, move: Take) -> list[Event]:
    player = state.players[seat]
    space = move.space
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


RECRUITING = Decision(
    rule=rulebook.RECRUIT,
    moves=recruit_moves,
    allows=_companion_there,
    explain=_no_companion,
    do=take,
)


# --- the decision: Kaar's owner moves the black die first, or keeps it --------------------


def black_die_moves(state: State, seat: int) -> list[MoveBlackDie]:
    here = state.players[seat].pending
    return [MoveBlackDie(STAY)] + [
        MoveBlackDie(s) for s in range(TRACK_SPACES) if s != here and state.track[s]
    ]


def move_black_die(state: State, seat: int, move: MoveBlackDie) -> list[Event]:
    player = state.players[seat]
    space = player.pending
    target = move.space
    events = []
    if target != STAY:
        state.track_dice[space].remove(BLACK_DIE)
        state.track_dice[target].append(BLACK_DIE)
        state.track_dice[target].sort()
        events.append(
            Event(
                "black_die",
                f"{player_name(state, seat)} moves the black die to space {target} (Kaar)",
                seat,
                {"space": target},
            )
        )
    player.pending = 0
    return events + _recruit(state, seat, space)


def _black_die_target(state: State, seat: int, move: MoveBlackDie) -> bool:
    space = move.space
    return space == STAY or (space != state.players[seat].pending and state.track[space] != 0)


MOVING_THE_BLACK_DIE = Decision(
    rule=rulebook.KAAR,
    moves=black_die_moves,
    allows=_black_die_target,
    explain=_no_companion,
    do=move_black_die,
)


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


# --- the decision: the colour of a multicoloured Sketal's large die ----------------------


def sketal_die_moves(state: State, seat: int) -> list[ChooseSketalDie]:
    return [ChooseSketalDie(c) for c in sketal_colours(state, seat)]


def choose_sketal_die(state: State, seat: int, move: ChooseSketalDie) -> list[Event]:
    player = state.players[seat]
    companion = player.pending
    player.pending = 0
    player.stage = IDLE
    events = give_sketal_die(state, seat, companion, move.colour)
    if state.step == MORNING:
        events += after_recruit(state, seat)
    return events


def no_such_die(state: State, seat: int, move: ChooseSketalDie) -> str:
    if any(DICE[d].large and DICE[d].colour == move.colour for d in state.pool):
        return (
            "the large dice of that colour in the reserve pool were put back by another "
            "seat during this Noon, at the same time: not before the next Noon"
        )
    return "no large die of that colour in the reserve pool"


CHOOSING_A_SKETAL_DIE = Decision(
    rule=rulebook.SKETALS, moves=sketal_die_moves, explain=no_such_die, do=choose_sketal_die
)


def after_recruit(state: State, seat: int) -> list[Event]:
    """2-player games: the first player's cemetery pick; then the next seat recruits."""
    if state.n == 2 and seat == state.first and state.recruited == 1 and any(state.track):
        _ask(state, seat, CEMETERY_PICK)
        return []
    return _next(state, seat)


# --- the decision: 2-player games, a companion left on the track to the cemetery ----------


def cemetery_moves(state: State, seat: int) -> list[Bury]:
    return [Bury(s) for s in range(TRACK_SPACES) if state.track[s]]


def bury(state: State, seat: int, move: Bury) -> list[Event]:
    space = move.space
    companion = state.track[space]
    state.track[space] = 0
    insort(state.cemetery, companion)
    state.players[seat].stage = IDLE
    events = [
        Event(
            "cemetery",
            f"{player_name(state, seat)} sends {COMPANIONS[companion].name} ({companion}) "
            "to the cemetery (2-player games)",
            seat,
            {"companion": companion, "space": space},
        )
    ]
    return events + _next(state, seat)


SENDING_TO_THE_CEMETERY = Decision(
    rule=rulebook.TWO_PLAYER_GAMES,
    moves=cemetery_moves,
    allows=_companion_there,
    explain=_no_companion,
    do=bury,
)


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
