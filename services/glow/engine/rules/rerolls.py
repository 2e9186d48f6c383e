"""Late Morning – Roll and Reroll Dice: every seat at once.

A reroll (a Lumipili's, a token, or a step back on the score track) rerolls one or two
dice once; three rerolls set one die to a face of the player's choice. Decisions: choose
a source ("reroll token"), pick one die, then a second die or "roll"; or "fix", pay three
sources one by one, pick the die, choose its face. "ready" fixes the result.
"""

from __future__ import annotations

from typing import TypeVar

from services.kit.engine import Event
from services.kit.kernel import Decision

from .. import rulebook
from ..content import (
    COMPANIONS,
    DICE,
    REROLL_SPACES,
    REROLLS_TO_SET_A_FACE,
    SCORE_TRACK_LENGTH,
    SYMBOLS,
)
from ..dice import describe, roll, stream_roll
from ..effects import player_name
from ..moves import (
    LUMIPILI,
    TOKEN,
    TRACK,
    ChooseFace,
    Fix,
    PayReroll,
    PickDie,
    Ready,
    Roll,
    UseReroll,
)
from ..state import (
    FIX_FACE,
    FIX_PAY,
    FIX_PICK,
    IDLE,
    LATE_MORNING,
    REROLL_PICK,
    REROLLS,
    Player,
    State,
)


def start_late_morning(state: State) -> list[Event]:
    """Everyone rolls, in seat order, from the state's Rng; then each seat's reroll key."""
    state.step = LATE_MORNING
    events = []
    for seat, player in enumerate(state.players):
        player.rolled = player.all_dice()
        for die in player.rolled:
            roll(state, die)
        player.cancelled = []
        player.used = []
        player.lumipilis_used = []
        player.picked = []
        player.paid = 0
        player.resolved = []
        player.visited = []
        player.in_village = False
        events.append(
            Event(
                "roll",
                f"{player_name(state, seat)} rolls {describe(state, player.rolled)}",
                seat,
                {"dice": list(player.rolled), "faces": [state.faces[d] for d in player.rolled]},
            )
        )
    for player in state.players:
        player.stream = state.rng.getrandbits(64)
        _idle(player)
    return events


def _idle(player: Player) -> None:
    player.picked = []
    player.paid = 0
    if sources(player) > 0:
        player.stage = REROLLS
        player.done = False
    else:
        player.stage = IDLE
        player.done = True


def track_target(player: Player) -> int:
    """The next reroll space behind the score token, or -1.

    Moving back is the only way; once the token has gone round the track (a score of
    the track's length or more) the printed rerolls are out of reach.
    """
    if player.score >= SCORE_TRACK_LENGTH:
        return -1
    behind = [s for s in REROLL_SPACES if s < player.score]
    return behind[-1] if behind else -1


def lumipilis(player: Player) -> list[int]:
    """The companions whose reroll power is still unused this round."""
    out = []
    for c in player.companions:
        per_round = COMPANIONS[c].rerolls
        if per_round and player.lumipilis_used.count(c) < per_round:
            out.append(c)
    return sorted(set(out))


def sources(player: Player) -> int:
    """How many rerolls the seat can still use this round."""
    total = player.rerolls
    for c in player.companions:
        total += max(0, COMPANIONS[c].rerolls - player.lumipilis_used.count(c))
    if player.score < SCORE_TRACK_LENGTH:
        total += sum(1 for s in REROLL_SPACES if s < player.score)
    return total


Source = TypeVar("Source", UseReroll, PayReroll)


def _source_moves(player: Player, kind: type[Source]) -> list[Source]:
    out = []
    if player.rerolls:
        out.append(kind(TOKEN))
    if track_target(player) >= 0:
        out.append(kind(TRACK))
    out += [kind(LUMIPILI, c) for c in lumipilis(player)]
    return out


def _pay(state: State, seat: int, move: UseReroll | PayReroll) -> Event:
    player = state.players[seat]
    if move.source == TOKEN:
        player.rerolls -= 1
        state.reroll_pool += 1
        what = "a reroll token"
    elif move.source == TRACK:
        before = player.score
        player.score = track_target(player)
        what = f"the score track ({before} -> {player.score})"
    else:
        player.lumipilis_used.append(move.card)
        what = f"{COMPANIONS[move.card].name} ({move.card})"
    return Event(
        "reroll_paid",
        f"{player_name(state, seat)} uses {what}",
        seat,
        {"source": move.source, "card": move.card, "score": player.score},
    )


def _has_source(state: State, seat: int, move: UseReroll | PayReroll) -> bool:
    player = state.players[seat]
    if move.source == TOKEN:
        return player.rerolls != 0
    if move.source == TRACK:
        return track_target(player) >= 0
    return move.card in lumipilis(player)


def _always(state: State, seat: int, move: object) -> bool:
    return True


def _no_such_reroll(state: State, seat: int, move: UseReroll | PayReroll) -> str:
    return "that reroll is not available (no token, no reroll space behind, or used)"


def _not_to_reroll(state: State, seat: int, move: PickDie) -> str:
    return f"die {move.die} is not one of this player's dice to reroll"


# --- the decisions of a seat with rerolls: use one, set a face with three, or be ready ----


def reroll_moves(state: State, seat: int) -> list[UseReroll]:
    return _source_moves(state.players[seat], UseReroll)


def use_reroll(state: State, seat: int, move: UseReroll) -> list[Event]:
    player = state.players[seat]
    event = _pay(state, seat, move)
    player.stage = REROLL_PICK
    player.picked = []
    return [event]


USING_A_REROLL = Decision(
    rule=rulebook.ROLL_AND_REROLL,
    moves=reroll_moves,
    allows=_has_source,
    explain=_no_such_reroll,
    do=use_reroll,
)


def fix_moves(state: State, seat: int) -> list[Fix]:
    return [Fix()] if sources(state.players[seat]) >= REROLLS_TO_SET_A_FACE else []


def fix(state: State, seat: int, move: Fix) -> list[Event]:
    player = state.players[seat]
    player.stage = FIX_PAY
    player.paid = 0
    return []


def _three_sources(state: State, seat: int, move: Fix) -> bool:
    return sources(state.players[seat]) >= REROLLS_TO_SET_A_FACE


FIXING = Decision(rule=rulebook.ROLL_AND_REROLL, moves=fix_moves, allows=_three_sources, do=fix)


def ready_moves(state: State, seat: int) -> list[Ready]:
    return [Ready()]


def ready(state: State, seat: int, move: Ready) -> list[Event]:
    player = state.players[seat]
    player.stage = IDLE
    player.done = True
    return [Event("ready", f"{player_name(state, seat)} keeps {_dice(state, player)}", seat)]


BEING_READY = Decision(rule=rulebook.ROLL_AND_REROLL, moves=ready_moves, allows=_always, do=ready)


# --- the decisions of a reroll: one die, then a second die or "roll" ---------------------


def pick_moves(state: State, seat: int) -> list[PickDie]:
    player = state.players[seat]
    return [PickDie(d) for d in player.rolled if d not in player.picked]


def pick(state: State, seat: int, move: PickDie) -> list[Event]:
    player = state.players[seat]
    player.picked.append(move.die)
    if len(player.picked) == 2:
        return _roll(state, seat)
    return []


def _not_picked(state: State, seat: int, move: PickDie) -> bool:
    player = state.players[seat]
    return move.die in player.rolled and move.die not in player.picked


PICKING = Decision(
    rule=rulebook.ROLL_AND_REROLL,
    moves=pick_moves,
    allows=_not_picked,
    explain=_not_to_reroll,
    do=pick,
)


def roll_moves(state: State, seat: int) -> list[Roll]:
    return [Roll()] if state.players[seat].picked else []


def roll_picked(state: State, seat: int, move: Roll) -> list[Event]:
    return _roll(state, seat)


def _picked(state: State, seat: int, move: Roll) -> bool:
    return bool(state.players[seat].picked)


ROLLING = Decision(rule=rulebook.ROLL_AND_REROLL, moves=roll_moves, allows=_picked, do=roll_picked)


def _roll(state: State, seat: int) -> list[Event]:
    player = state.players[seat]
    dice = player.picked
    for die in dice:
        stream_roll(player, state, die)
    event = Event(
        "reroll",
        f"{player_name(state, seat)} rerolls: {describe(state, dice)}",
        seat,
        {"dice": list(dice), "faces": [state.faces[d] for d in dice]},
    )
    _idle(player)
    return [event]


# --- the decisions of a fix: pay three rerolls one by one, pick the die, choose its face --


def pay_moves(state: State, seat: int) -> list[PayReroll]:
    return _source_moves(state.players[seat], PayReroll)


def pay(state: State, seat: int, move: PayReroll) -> list[Event]:
    player = state.players[seat]
    event = _pay(state, seat, move)
    player.paid += 1
    if player.paid == REROLLS_TO_SET_A_FACE:
        player.stage = FIX_PICK
    return [event]


PAYING = Decision(
    rule=rulebook.ROLL_AND_REROLL,
    moves=pay_moves,
    allows=_has_source,
    explain=_no_such_reroll,
    do=pay,
)


def fix_pick_moves(state: State, seat: int) -> list[PickDie]:
    return [PickDie(d) for d in state.players[seat].rolled]


def pick_to_fix(state: State, seat: int, move: PickDie) -> list[Event]:
    player = state.players[seat]
    player.pending = move.die
    player.stage = FIX_FACE
    return []


def _rolled(state: State, seat: int, move: PickDie) -> bool:
    return move.die in state.players[seat].rolled


PICKING_TO_FIX = Decision(
    rule=rulebook.ROLL_AND_REROLL,
    moves=fix_pick_moves,
    allows=_rolled,
    explain=_not_to_reroll,
    do=pick_to_fix,
)


def face_moves(state: State, seat: int) -> list[ChooseFace]:
    return [ChooseFace(s) for s in sorted(set(DICE[state.players[seat].pending].faces))]


def choose_face(state: State, seat: int, move: ChooseFace) -> list[Event]:
    player = state.players[seat]
    die = player.pending
    state.faces[die] = DICE[die].faces.index(move.symbol)
    player.pending = 0
    _idle(player)
    return [
        Event(
            "fix",
            f"{player_name(state, seat)} sets die {die} to {SYMBOLS[move.symbol]} "
            "with three rerolls",
            seat,
            {"die": die, "symbol": move.symbol},
        )
    ]


def _no_such_face(state: State, seat: int, move: ChooseFace) -> str:
    return f"die {state.players[seat].pending} has no such face"


def _a_face_of_the_die(state: State, seat: int, move: ChooseFace) -> bool:
    return move.symbol in DICE[state.players[seat].pending].faces


CHOOSING_A_FACE = Decision(
    rule=rulebook.ROLL_AND_REROLL,
    moves=face_moves,
    allows=_a_face_of_the_die,
    explain=_no_such_face,
    do=choose_face,
)


def _dice(state: State, player: Player) -> str:
    return describe(state, player.rolled)
