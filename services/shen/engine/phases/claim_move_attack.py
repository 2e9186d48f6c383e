"""3) Claim, Move, and Attack Phase: "For each Avatar you have in play you may" claim an
Anchor Point, attack a Realm Stone, or move (into a Melee Attack), then act following
the move; or end the turn.

Each Ready Avatar acts once a turn (``State.acted``). Moving is a decision per step
(``Step.MOVING``: another step or stop) up to the Avatar's movement trait; ``hold``
skips the move, straight to what may follow one (following_a_move.py).
"""

from __future__ import annotations

from services.kit.engine import Event

from .. import board as geometry
from .. import combat, pieces, scoring
from .. import rulebook as rule
from ..content import CARDS
from ..moves import (
    END,
    STOP,
    AttackRealmStone,
    ClaimAnchorPoint,
    EndTurn,
    Hold,
    MoveStep,
    StopMoving,
)
from ..state import State, Step
from .base import Row, decision, event
from .following_a_move import may_act
from .recovery import next_turn

PROMPT = "Claim, Move, and Attack Phase: an Avatar's action, or end"
MOVING_PROMPT = "moving an Avatar: step or stop"


def step_targets(state: State, avatar: pieces.Avatar) -> list[int]:
    """Where the Avatar may step (or attack into) from where it stands, sorted."""
    out = []
    at, owner = state.at, avatar.owner
    if avatar.loc >= geometry.VERTEX:
        # "Avatars Walking the Spirit Path move only horizontally or vertically between
        # vertexes ... only onto vertexes where you have ... your Shén counter".
        for to in state.board.links[avatar.loc]:
            if to in state.stones:
                continue
            uid = at.get(to)
            if uid is None:
                if state.counters.get(to) == owner:
                    out.append(to)
            elif not state.teammates(owner, state.avatars[uid].owner):
                out.append(to)
        return out
    for to, passed in state.board.steps[avatar.loc]:
        # "Avatars cannot move ... diagonally between spaces on either side of one."
        if passed >= 0 and passed in state.stones:
            continue
        uid = at.get(to)
        if uid is None or not state.teammates(owner, state.avatars[uid].owner):
            out.append(to)
    return out


def _sieges(state: State, avatar: pieces.Avatar) -> list[int]:
    """Realm Stones of opponents next to the Avatar (which stood there at turn start)."""
    b = state.board
    near = b.links[avatar.loc] if avatar.loc >= geometry.VERTEX else b.corners[avatar.loc]
    out = []
    for v in near:
        owner = state.stones.get(v)
        if (
            owner is not None
            and not state.teammates(avatar.owner, owner)
            and not state.players[owner].out
        ):
            out.append(v)
    return out


def _can_claim(state: State, avatar: pieces.Avatar) -> bool:
    """ "if you have a Ready Avatar on an Anchor Point at the start of your turn"."""
    loc = avatar.loc
    if loc not in state.anchors or avatar.start != loc:
        return False
    holder = state.claims.get(loc)
    return holder is None or not state.teammates(holder, avatar.owner)


def _free(state: State, seat: int) -> list[pieces.Avatar]:
    """The seat's Ready Avatars that have not acted this turn, by uid."""
    return [
        state.avatars[uid]
        for uid in sorted(state.avatars)
        if state.avatars[uid].owner == seat and state.avatars[uid].ready and uid not in state.acted
    ]


def _act(state: State, loc: int) -> pieces.Avatar:
    """The Avatar at ``loc`` takes its action this turn."""
    avatar = state.avatars[state.at[loc]]
    state.acted.append(avatar.uid)
    return avatar


def _refusal(
    state: State, move: AttackRealmStone | ClaimAnchorPoint | Hold | MoveStep
) -> tuple[str, str] | str:
    """Why an Avatar's action is refused: no Avatar of yours there, not Ready, or not the
    one moving; then what the action itself needs."""
    loc = move.values()[0]
    uid = state.at.get(loc)
    avatar = state.avatars.get(uid) if uid is not None else None
    if avatar is None or avatar.owner != state.active:
        return f"you have no Avatar at {geometry.name(loc)}"
    if state.step == Step.MOVING and uid != state.mover:
        return rule.MOVE, "another Avatar is moving; stop it first"
    if not avatar.ready or (uid in state.acted and uid != state.mover):
        return f"the Avatar at {geometry.name(loc)} is not Ready"
    if isinstance(move, MoveStep):
        occupant = state.at.get(move.destination)
        if occupant is not None and state.teammates(state.active, state.avatars[occupant].owner):
            return rule.MOVE, "an Avatar of your side stands there"
        if state.step == Step.MOVING and state.steps_left <= 0:
            return rule.MOVE, "no movement left"
        return rule.MOVE, f"{move}: not a step this Avatar may take"
    if isinstance(move, ClaimAnchorPoint | AttackRealmStone) and avatar.start != loc:
        return "the Avatar must have stood there since the start of your turn"
    if isinstance(move, ClaimAnchorPoint) and loc not in state.anchors:
        return f"{geometry.name(loc)} is not an Anchor Point"
    if isinstance(move, ClaimAnchorPoint):
        return "your side already holds this Anchor Point"
    return f"{move} is not possible now"


# --- Claim an Anchor Point ------------------------------------------------------------


def _claims(state: State, seat: int) -> list[ClaimAnchorPoint]:
    return [
        ClaimAnchorPoint(loc)
        for loc in sorted(a.loc for a in _free(state, seat) if _can_claim(state, a))
    ]


def _claim(state: State, seat: int, move: ClaimAnchorPoint) -> list[Event]:
    space = move.space
    avatar = _act(state, space)
    avatar.ready = False
    state.claims[space] = seat
    held = sum(1 for owner in state.claims.values() if owner == seat)
    events = [
        event(
            "claimed",
            f"{pieces.seat_name(state, seat)} claims the Anchor Point {geometry.name(space)}"
            f" ({held} held)",
            seat,
            at=geometry.name(space),
            held=held,
        )
    ]
    if scoring.check_anchor_win(state, seat, events):
        return events
    # "For every additional Anchor Point you claim, beyond the first, your opponent loses
    # a card".
    if held > 1:
        foes = state.opponents(seat)
        if len(foes) == 1:
            state.tasks.append(("lose", foes[0], held - 1))
        elif foes:
            state.tasks.append(("foe", seat, held - 1))
    return events


def _no_claim(state: State, seat: int, move: ClaimAnchorPoint) -> tuple[str, str] | str:
    return _refusal(state, move)


# --- Attack a Realm Stone -------------------------------------------------------------


def _sieges_open(state: State, seat: int) -> list[AttackRealmStone]:
    found = [(a.loc, v) for a in _free(state, seat) if a.start == a.loc for v in _sieges(state, a)]
    return [AttackRealmStone(loc, v) for loc, v in sorted(found)]


def _siege(state: State, seat: int, move: AttackRealmStone) -> list[Event]:
    avatar = _act(state, move.avatar)
    avatar.ready = False
    events: list[Event] = []
    combat.start(
        state, "stone", avatar.uid, move.avatar, move.stone, state.stones[move.stone], -1, events
    )
    return events


def _no_siege(state: State, seat: int, move: AttackRealmStone) -> tuple[str, str] | str:
    return _refusal(state, move)


# --- Move an Avatar (and Make a Melee Attack) -----------------------------------------


def _first_steps(state: State, seat: int) -> list[MoveStep]:
    found = [
        (a.loc, to)
        for a in _free(state, seat)
        if pieces.trait(state, a, "move") > 0
        for to in step_targets(state, a)
    ]
    return [MoveStep(loc, to) for loc, to in sorted(found)]


def _may_start(state: State, seat: int, move: MoveStep) -> bool:
    uid = state.at.get(move.origin)
    if uid is None:
        return False
    avatar = state.avatars[uid]
    if (
        avatar.owner != state.active
        or not avatar.ready
        or uid in state.acted
        or pieces.trait(state, avatar, "move") <= 0
    ):
        return False
    return move.destination in step_targets(state, avatar)


def _after_move(state: State) -> None:
    mover = state.avatars.get(state.mover)
    if mover is not None and may_act(state, mover):
        state.step = Step.AFTER_MOVE
    else:
        state.mover = -1
        state.step = Step.COMMAND


def _step(state: State, seat: int, move: MoveStep, avatar: pieces.Avatar) -> list[Event]:
    """One step: into an opponent's Avatar, a Melee Attack; else on, while movement lasts."""
    events: list[Event] = []
    defender = state.at.get(move.destination)
    if defender is not None:
        # "Make a Melee Attack if your Avatar moves into a space or vertex occupied by an
        # opponent's Avatar."
        avatar.ready = False
        state.mover = -1
        state.step = Step.COMMAND
        combat.start(
            state,
            "melee",
            avatar.uid,
            move.origin,
            move.destination,
            state.avatars[defender].owner,
            defender,
            events,
        )
        return events
    pieces.move_to(state, avatar, move.destination)
    state.steps_left -= 1
    events.append(
        event(
            "moved",
            f"{CARDS[avatar.card].name} moves {geometry.name(move.origin)}"
            f" to {geometry.name(move.destination)}",
            seat,
            **{"from": geometry.name(move.origin)},
            to=geometry.name(move.destination),
        )
    )
    if state.steps_left > 0:
        state.step = Step.MOVING
    else:
        _after_move(state)
    return events


def _start_moving(state: State, seat: int, move: MoveStep) -> list[Event]:
    avatar = _act(state, move.origin)
    state.mover = avatar.uid
    state.steps_left = pieces.trait(state, avatar, "move")
    return _step(state, seat, move, avatar)


def _no_step(state: State, seat: int, move: MoveStep) -> tuple[str, str] | str:
    return _refusal(state, move)


# --- hold still: straight to what may follow a move -----------------------------------


def _holds(state: State, seat: int) -> list[Hold]:
    return [Hold(loc) for loc in sorted(a.loc for a in _free(state, seat) if may_act(state, a))]


def _hold(state: State, seat: int, move: Hold) -> list[Event]:
    avatar = _act(state, move.avatar)
    state.mover, state.steps_left = avatar.uid, 0
    state.step = Step.AFTER_MOVE
    return []


def _no_hold(state: State, seat: int, move: Hold) -> tuple[str, str] | str:
    return _refusal(state, move)


# --- or end the turn ------------------------------------------------------------------


def _ends(state: State, seat: int) -> list[EndTurn]:
    return [END]


def _end(state: State, seat: int, move: EndTurn) -> list[Event]:
    events = [event("turn_end", f"{pieces.seat_name(state, seat)} ends the turn", seat)]
    next_turn(state, events)
    return events


def _no_end(state: State, seat: int, move: EndTurn) -> str:  # pragma: no cover - always open
    return f"{move} is not possible now"


COMMAND: Row = {
    ClaimAnchorPoint: decision(rule.CLAIM, _claims, _claim, _no_claim),
    AttackRealmStone: decision(rule.SIEGE, _sieges_open, _siege, _no_siege),
    MoveStep: decision(rule.MOVE, _first_steps, _start_moving, _no_step, allows=_may_start),
    Hold: decision(rule.ABILITY, _holds, _hold, _no_hold),
    EndTurn: decision(rule.PHASES, _ends, _end, _no_end),
}


# --- moving: another step, or stop ----------------------------------------------------


def _next_steps(state: State, seat: int) -> list[MoveStep]:
    mover = state.avatars[state.mover]
    return [MoveStep(mover.loc, to) for to in sorted(step_targets(state, mover))]


def _may_step(state: State, seat: int, move: MoveStep) -> bool:
    uid = state.at.get(move.origin)
    if uid is None or uid != state.mover or state.steps_left <= 0:
        return False
    return move.destination in step_targets(state, state.avatars[uid])


def _step_on(state: State, seat: int, move: MoveStep) -> list[Event]:
    return _step(state, seat, move, state.avatars[state.at[move.origin]])


def _stops(state: State, seat: int) -> list[StopMoving]:
    return [STOP]


def _stop(state: State, seat: int, move: StopMoving) -> list[Event]:
    _after_move(state)
    return []


def _no_stop(state: State, seat: int, move: StopMoving) -> str:  # pragma: no cover
    return f"{move} is not possible now"


MOVING: Row = {
    MoveStep: decision(rule.MOVE, _next_steps, _step_on, _no_step, allows=_may_step),
    StopMoving: decision(rule.MOVE, _stops, _stop, _no_stop),
}
