"""The round's flow: whose decision it is, which task each seat decides, the rule table
the kit's kernel reads, and everything that follows without a decision.

A seat decides one task at a time (task.py): the setup's choices, its Collect queue, the
action choice or the first task of the action under way. ``decisions`` is the kit's
rule table: for the task a seat faces, one ``Decision`` per kind of move it takes, whose
listing, refusal and effect are the task's own. After every move ``advance`` carries
the game on up to the next real decision: tasks that need none, decisions with a single
possible move, the end of an action, of the Collect phase and of the round.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from services.kit.engine import Event, GameInfo, Outcome
from services.kit.kernel import Decision
from services.resarcana.engine import scoring
from services.resarcana.engine.actions import ChooseAction, DiscardGain
from services.resarcana.engine.collect import CollectAny, CollectChoice, TakeFromComponents
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.cost import DiscardForCost, Pay, TurnForCost
from services.resarcana.engine.effects import (
    ChooseEssences,
    ChooseMonument,
    DiscardCard,
    LookAtPile,
    PlaceCheaper,
    PlacePaid,
    RetrieveCard,
    ReturnCards,
    StraightenComponent,
    TakeEssence,
    TakeFromComponent,
)
from services.resarcana.engine.moves import ChooseMage, Keep, Move, Return
from services.resarcana.engine.passing import SwapItem
from services.resarcana.engine.powers import ChooseEffect, ItemPower
from services.resarcana.engine.setup import Draft, ItemChoice, MageChoice, begin_round
from services.resarcana.engine.state import ACTIONS, COLLECT, DRAFT, ITEM, MAGE, Options, State
from services.resarcana.engine.table import SEAT_NAMES, Log
from services.resarcana.engine.task import Lister, Task

GAME = GameInfo(
    name="resarcana",
    title="Res Arcana Duo",
    min_players=2,
    max_players=2,
    options_type=Options,
    seat_names=lambda players: SEAT_NAMES[:players],
)


def outcome(state: State) -> Outcome | None:
    return state.result


# A kept draft card, a secret Mage choice and a card returned face down on a pile: their
# public events say only that the move was made.
SECRET_KINDS = (Keep, ChooseMage, Return)


def public_move(move: Move) -> bool:
    """Whether other seats may be shown this move itself (the service's history asks)."""
    return not isinstance(move, SECRET_KINDS)


def to_act(state: State) -> tuple[int, ...]:
    phase = state.phase
    if phase == ACTIONS:
        return (state.active,)
    if phase == COLLECT:
        waiting = [s for s in (0, 1) if state.seats[s].collect]
        if state.options.collect_in_turn_order and len(waiting) == 2:
            return (state.first_player,)
        return tuple(waiting)
    if phase == ITEM:
        return (state.chooser,)
    if phase == DRAFT:
        return tuple(s for s in (0, 1) if state.seats[s].draft_offer)
    if phase == MAGE:
        return tuple(s for s in (0, 1) if state.seats[s].mage_choice < 0)
    return ()


_CHOOSE_ACTION = ChooseAction()
_DRAFT = Draft()
_MAGE = MageChoice()
_ITEM = ItemChoice()


def step(state: State, seat: int) -> Task:
    """The task ``seat`` decides now (only for a seat in ``to_act``)."""
    phase = state.phase
    if phase == ACTIONS:
        return state.tasks[0] if state.tasks else _CHOOSE_ACTION
    if phase == COLLECT:
        return state.seats[seat].collect[0]
    if phase == DRAFT:
        return _DRAFT
    if phase == MAGE:
        return _MAGE
    return _ITEM


# ---------------------------------------------------------------- the rule table


def _do(state: State, seat: int, move: Move) -> list[Event]:
    log = Log()
    step(state, seat).play(state, seat, move, log)
    return log


def refusal(state: State, seat: int, move: Move) -> tuple[str, str]:
    """The rule a move the task now does not take breaks, and why (whatever its kind)."""
    return step(state, seat).refusal(state, seat, move)


def _decision(task: type[Task], lister: Lister) -> Decision:
    def moves(state: State, seat: int) -> list[Move]:
        return lister(step(state, seat), state, seat)

    return Decision(rule=task.RULE, moves=moves, do=_do, explain=refusal)


DECIDED_BY: tuple[type[Task], ...] = (
    Draft,
    MageChoice,
    ItemChoice,
    CollectChoice,
    CollectAny,
    TakeFromComponents,
    ChooseAction,
    Pay,
    TurnForCost,
    DiscardForCost,
    ChooseEssences,
    ChooseEffect,
    PlacePaid,
    RetrieveCard,
    DiscardCard,
    LookAtPile,
    ReturnCards,
    ChooseMonument,
    StraightenComponent,
    ItemPower,
    PlaceCheaper,
    TakeFromComponent,
    TakeEssence,
    DiscardGain,
    SwapItem,
)
# Per task, per kind of move it takes (in the kinds' order, so the legal moves are
# listed sorted): its Decision.
TABLE: dict[type[Task], dict[type[Move], Decision]] = {
    task: {kind: _decision(task, lister) for kind, lister in task.LISTS.items()}
    for task in DECIDED_BY
}


def decisions(state: State, seat: int) -> Mapping[Any, Decision]:
    """The row of the rule table for the task ``seat`` decides now (keyed by move kind)."""
    return TABLE[type(step(state, seat))]


# ---------------------------------------------------------------- without decisions


def advance(state: State) -> list[Event]:
    log = Log()
    settle(state, log)
    return log


def settle(state: State, log: Log) -> None:
    """Carry out everything that needs no decision, up to the next decision."""
    while state.result is None:
        if state.phase == COLLECT:
            for seat in (0, 1):
                _settle_collect(state, seat, log)
            if any(s.collect for s in state.seats):
                return
            _start_actions(state, log)
            continue
        if state.phase != ACTIONS:
            return
        if state.tasks:
            seat = state.active
            task = state.tasks[0]
            if task.AUTO:
                state.tasks.pop(0)
                task.run(state, seat, log)
                continue
            if task.settle(state, seat, log):
                continue
            found = task.options(state, seat)
            if not found:
                assert not isinstance(task, Pay), "a payment was started that cannot be finished"
                state.tasks.pop(0)
                log.say("no_effect", f"{task.TEXT}: nothing to do", seat)
                continue
            if len(found) == 1:
                task.play(state, seat, found[0], log)
                continue
            return
        if state.in_action:
            _end_action(state, log)
            continue
        return


def _settle_collect(state: State, seat: int, log: Log) -> None:
    queue = state.seats[seat].collect
    while queue:
        task = queue[0]
        found = task.options(state, seat)
        if not found:
            queue.pop(0)
        elif len(found) == 1:
            task.play(state, seat, found[0], log)
        else:
            return


def _start_actions(state: State, log: Log) -> None:
    state.phase = ACTIONS
    state.active = state.first_player
    state.in_action = False
    log.say("actions", f"Actions: {SEAT_NAMES[state.active]} begins", state.active)


def _end_action(state: State, log: Log) -> None:
    """After an action the turn alternates, skipping whoever has passed."""
    state.in_action = False
    state.paid = [0, 0, 0, 0, 0]
    me = state.active
    if not state.seats[1 - me].passed:
        state.active = 1 - me
    elif not state.seats[me].passed:
        state.active = me
    else:
        _end_round(state, log)


def _end_round(state: State, log: Log) -> None:
    """3. Victory: the check; if nobody has won, straighten everything, flip the token
    and the Magic Items back, and begin a new round."""
    if scoring.check_victory(state, log, f"end of round {state.round}"):
        return
    limit = state.options.round_limit  # a house rule, chosen only above 0
    if limit and state.round >= limit:
        scoring.finish(state, log, "ROUND_LIMIT", f"round limit {limit} reached without a winner")
        return
    state.turned = [False] * len(CONTENT.components)
    state.token_passed = False
    for seat in state.seats:
        seat.passed = False
    begin_round(state, log)
