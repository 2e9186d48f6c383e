"""The turn: which decisions are open now, and carrying the game on between them.

What the game waits for is either a *task* on ``State.tasks`` (a stack: the top, last,
is decided first) or, when no task is pending, the active player's ``State.step``. Each
is a row of the rule table (the modules of ``phases/``):

    tasks (decisions)              row                  moves
    ("lose", seat, n)              losing_cards.LOSE    lose hand X / lose deck / lose discard X
    ("yield", seat, uid, n)        combat.YIELD         remove avatar / lose cards
    ("retreat", seat, uid, spots)  combat.RETREAT       retreat c4
    ("foe", seat, n)               losing_cards.FOE     foe 2
    ("target", seat, uid, i)       influence.TARGET     target c4 / foe 2
    ("support", seat, side)        combat.SUPPORT       play X / ability 0 / pass
    ("winner", seat, uid)          combat.WINNER        ability 0 / pass
    tasks (automatic): ("resolve",), ("position",), ("enter",), ("combat_end",)

    steps          row                          moves
    PLACE_STONE    pregame.ROW                  stone C4
    RECOVERY       recovery.ROW                 draw / shen C4
    INFLUENCE      influence.ROW                play X / pass
    COMMAND        claim_move_attack.COMMAND    claim a1 / siege a1 B2 / step c4 d5 / hold c4 / end
    MOVING         claim_move_attack.MOVING     step c4 d5 / stop
    AFTER_MOVE     following_a_move.ROW         ability 0 / ranged f6 / pass

(the rows are named by their module in phases/). ``advance`` runs the automatic tasks and
drops decisions nobody needs to make, until a seat has a decision (or the game is over).
"""

from __future__ import annotations

from typing import Any

from services.kit.engine import Event, Outcome

from . import combat, scoring
from . import rulebook as rule
from .phases import (
    claim_move_attack,
    following_a_move,
    influence,
    losing_cards,
    pregame,
    recovery,
)
from .phases import combat as fighting
from .phases.base import Row, check_field
from .state import State, Step

# The step's row, and what it waits for (named when a move of another kind comes).
_STEPS: dict[Step, tuple[Row, str]] = {
    Step.PLACE_STONE: (pregame.ROW, pregame.PROMPT),
    Step.RECOVERY: (recovery.ROW, recovery.PROMPT),
    Step.INFLUENCE: (influence.ROW, influence.PROMPT),
    Step.COMMAND: (claim_move_attack.COMMAND, claim_move_attack.PROMPT),
    Step.MOVING: (claim_move_attack.MOVING, claim_move_attack.MOVING_PROMPT),
    Step.AFTER_MOVE: (following_a_move.ROW, following_a_move.PROMPT),
}
# The task's row, the rule it is decided under, and what it waits for.
_TASKS: dict[str, tuple[Row, str, str]] = {
    "lose": (losing_cards.LOSE, rule.LOSE, losing_cards.PROMPT),
    "yield": (fighting.YIELD, rule.LOSE, fighting.YIELD_PROMPT),
    "retreat": (fighting.RETREAT, rule.RETREAT, fighting.RETREAT_PROMPT),
    "foe": (losing_cards.FOE, rule.OPPONENT, losing_cards.FOE_PROMPT),
    "target": (influence.TARGET, rule.PLAY, influence.TARGET_PROMPT),
    "support": (fighting.SUPPORT, rule.COMBAT, fighting.SUPPORT_PROMPT),
    "winner": (fighting.WINNER, rule.ABILITY, fighting.WINNER_PROMPT),
}


def to_act(state: State) -> tuple[int, ...]:
    """The seat with a decision pending (one at a time in Shén), or () once over."""
    if state.step == Step.OVER:
        return ()
    if state.tasks:
        return (state.tasks[-1][1],)
    return (state.active,)


def outcome(state: State) -> Outcome | None:
    return scoring.outcome(state)


def decisions(state: State, seat: int) -> Row:
    """The row open now: the top task's, else the step's."""
    if state.tasks:
        return _TASKS[state.tasks[-1][0]][0]
    return _STEPS[state.step][0]


def out_of_step(state: State, seat: int, move: Any) -> tuple[str, str]:
    """Why a move of a kind not open now is refused (a move off the field is malformed
    first, as any move is)."""
    check_field(state, move)
    if state.tasks:
        _, task_rule, prompt = _TASKS[state.tasks[-1][0]]
        return task_rule, f"a decision is pending: {prompt}"
    return rule.PHASES, f"not now: {_STEPS[state.step][1]}"


def _settle(state: State, events: list[Event]) -> bool:
    """Run automatic tasks and drop decisions nobody needs to make. True when the top of
    the stack is a real decision (or the stack is empty)."""
    task = state.tasks[-1]
    kind = task[0]
    if kind in ("resolve", "position", "enter", "combat_end"):
        state.tasks.pop()
        if kind == "resolve":
            combat.resolve(state, events)
        elif kind == "position":
            combat.position(state, events)
        elif kind == "enter":
            combat.enter(state, events)
        else:
            state.combat = None
        return False
    seat = task[1]
    player = state.players[seat]
    drop = False
    if kind == "lose":
        drop = player.out or task[2] <= 0 or player.cards_left() == 0
    elif kind in ("yield", "retreat"):
        drop = task[2] not in state.avatars
    elif kind == "foe":
        foes = state.opponents(seat)
        if len(foes) == 1:
            state.tasks[-1] = ("lose", foes[0], task[2])
            return False
        drop = not foes
    elif kind == "target":
        drop = (
            not influence.targets(state, task) if task[2] < 0 or task[2] in state.avatars else True
        )
        if drop and task[2] < 0 and state.playing >= 0:
            # Nothing left to aim at: the card is spent.
            state.players[seat].discard.append(state.playing)
            state.playing = -1
    elif kind == "support":
        drop = not fighting.needs_asking(state, seat, task[2])
    elif kind == "winner":
        drop = player.out or not fighting.winner_may_act(state, task[2])
    if drop:
        state.tasks.pop()
        return False
    return True


def carry_on(state: State, events: list[Event]) -> None:
    """Carry the game on until someone has a decision to make (or it is over)."""
    while True:
        if scoring.check(state, events):
            return
        if state.tasks:
            if _settle(state, events):
                return
            continue
        step = state.step
        if step == Step.PLACE_STONE:
            return
        if state.players[state.active].out:
            state.mover = -1
            recovery.next_turn(state, events)
            continue
        if step == Step.RECOVERY and recovery.nothing_to_do(state):
            state.step = Step.INFLUENCE
            continue
        if step in (Step.MOVING, Step.AFTER_MOVE) and state.mover not in state.avatars:
            state.mover = -1
            state.step = Step.COMMAND
            continue
        return


def advance(state: State) -> list[Event]:
    """The kernel's ``advance``: what follows a decision on its own, as events."""
    events: list[Event] = []
    carry_on(state, events)
    return events
