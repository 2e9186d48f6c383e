"""Late Morning – Roll and Reroll Dice: every seat at once.

A reroll (a Lumipili's, a token, or a step back on the score track) rerolls one or two
dice once; three rerolls set one die to a face of the player's choice. Decisions: choose
a source ("reroll token"), pick one die, then a second die or "roll"; or "fix", pay three
sources one by one, pick the die, choose its face. "ready" fixes the result.
"""

from __future__ import annotations

from services.kit.engine import Event

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
from ..moves import FACE, FIX, LUMIPILI, PAY, PICK, READY, REROLL, ROLL, TOKEN, TRACK, Move
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


def _source_moves(player: Player, kind: int) -> list[Move]:
    out = []
    if player.rerolls:
        out.append(Move(kind, TOKEN))
    if track_target(player) >= 0:
        out.append(Move(kind, TRACK))
    out += [Move(kind, LUMIPILI, c) for c in lumipilis(player)]
    return out


def reroll_moves(state: State, player: Player) -> list[Move]:
    stage = player.stage
    if stage == REROLLS:
        moves = _source_moves(player, REROLL)
        if sources(player) >= REROLLS_TO_SET_A_FACE:
            moves.append(Move(FIX))
        moves.append(Move(READY))
        return moves
    if stage == REROLL_PICK:
        moves = [Move(PICK, d) for d in player.rolled if d not in player.picked]
        if player.picked:
            moves.append(Move(ROLL))
        return moves
    if stage == FIX_PAY:
        return _source_moves(player, PAY)
    if stage == FIX_PICK:
        return [Move(PICK, d) for d in player.rolled]
    if stage == FIX_FACE:
        return [Move(FACE, s) for s in sorted(set(DICE[player.pending].faces))]
    return []


def _pay(state: State, seat: int, move: Move) -> Event:
    player = state.players[seat]
    if move.a == TOKEN:
        player.rerolls -= 1
        state.reroll_pool += 1
        what = "a reroll token"
    elif move.a == TRACK:
        before = player.score
        player.score = track_target(player)
        what = f"the score track ({before} -> {player.score})"
    else:
        player.lumipilis_used.append(move.b)
        what = f"{COMPANIONS[move.b].name} ({move.b})"
    return Event(
        "reroll_paid",
        f"{player_name(state, seat)} uses {what}",
        seat,
        {"source": move.a, "card": move.b, "score": player.score},
    )


def apply_reroll(state: State, seat: int, move: Move) -> list[Event]:
    player = state.players[seat]
    kind = move.kind
    if kind == READY:
        player.stage = IDLE
        player.done = True
        return [Event("ready", f"{player_name(state, seat)} keeps {_dice(state, player)}", seat)]
    if kind == REROLL:
        event = _pay(state, seat, move)
        player.stage = REROLL_PICK
        player.picked = []
        return [event]
    if kind == FIX:
        player.stage = FIX_PAY
        player.paid = 0
        return []
    if kind == PAY:
        event = _pay(state, seat, move)
        player.paid += 1
        if player.paid == REROLLS_TO_SET_A_FACE:
            player.stage = FIX_PICK
        return [event]
    if kind == PICK and player.stage == FIX_PICK:
        player.pending = move.a
        player.stage = FIX_FACE
        return []
    if kind == PICK:
        player.picked.append(move.a)
        if len(player.picked) == 2:
            return _roll(state, seat)
        return []
    if kind == ROLL:
        return _roll(state, seat)
    # FACE
    die = player.pending
    state.faces[die] = DICE[die].faces.index(move.a)
    player.pending = 0
    _idle(player)
    return [
        Event(
            "fix",
            f"{player_name(state, seat)} sets die {die} to {SYMBOLS[move.a]} with three rerolls",
            seat,
            {"die": die, "symbol": move.a},
        )
    ]


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


def _dice(state: State, player: Player) -> str:
    return describe(state, player.rolled)
