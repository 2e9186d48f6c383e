"""The engine's public face: whose decision it is, what they may do, and doing it.

``apply`` checks first (game over, not this seat's decision, malformed, illegal) and only
then changes the state; afterwards ``settle`` carries the game forward through everything
that needs no decision, up to the next real one.
"""

from __future__ import annotations

from services.kit.engine import (
    GameInfo,
    IllegalMove,
    MalformedMove,
    Outcome,
    check_seat,
)
from services.resarcana.engine import actions, collect, scoring, setup, tasks
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.essences import ANY
from services.resarcana.engine.moves import DECK, Kind, Move, well_formed
from services.resarcana.engine.state import (
    ACTIONS,
    COLLECT,
    DRAFT,
    ITEM,
    MAGE,
    Options,
    State,
)
from services.resarcana.engine.table import SEAT_NAMES, Log
from services.resarcana.engine.tasks import power_usable

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


SECRET_KINDS = frozenset({Kind.KEEP, Kind.MAGE, Kind.RETURN})


def public_move(move: Move) -> bool:
    """Whether other seats may be shown this move itself (the service's history asks).

    A kept draft card, a secret Mage choice and a card returned face down on a pile are
    not: their public events say only that the move was made.
    """
    return move.kind not in SECRET_KINDS


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


def step(state: State, seat: int) -> tuple:
    """The decision ``seat`` faces now, as a task-like tuple (``("action",)``, ...)."""
    phase = state.phase
    if phase == ACTIONS:
        return state.tasks[0] if state.tasks else ("action",)
    if phase == COLLECT:
        return state.seats[seat].collect[0]
    if phase == DRAFT:
        return ("draft",)
    if phase == MAGE:
        return ("mage",)
    return ("item",)


def _moves(state: State, seat: int, task: tuple) -> list[Move]:
    code = task[0]
    me = state.seats[seat]
    if code == "action":
        return actions.options(state, seat)
    if code in collect.STEP_TEXT:
        return collect.options(state, seat, task)
    if code == "draft":
        return sorted(Move(Kind.KEEP, c) for c in set(me.draft_offer))
    if code == "mage":
        return [Move(Kind.MAGE, c) for c in me.mage_options]
    if code == "item":
        return [Move(Kind.ITEM, c) for c in sorted(state.items)]
    return tasks.options(state, seat, task)


def legal_moves(state: State, seat: int) -> list[Move]:
    """Every move ``seat`` may make now, sorted; empty when it has nothing to decide."""
    if state.result is not None or seat not in to_act(state):
        return []
    return sorted(_moves(state, seat, step(state, seat)))


def apply(state: State, seat: int, move: Move) -> list:
    """Validate, then make the move; returns the events (kit ``Event``)."""
    check_seat(_SELF, state, seat)
    if not well_formed(move):
        raise MalformedMove(f"not a well-formed Res Arcana Duo move: {move!r}")
    task = step(state, seat)
    if move not in _moves(state, seat, task):
        raise _refusal(state, seat, task, move)
    log = Log()
    code = task[0]
    if code == "action":
        actions.begin(state, seat, move, log)
    elif code in collect.STEP_TEXT:
        collect.play(state, seat, task, move, log)
    elif code == "draft":
        setup.play_keep(state, seat, move, log)
    elif code == "mage":
        setup.play_mage(state, seat, move, log)
    elif code == "item":
        setup.play_item(state, seat, move, log)
    else:
        tasks.play(state, seat, task, move, log)
    settle(state, log)
    return list(log)


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
            code = task[0]
            if code in tasks.AUTO:
                tasks.run_auto(state, seat, log)
                continue
            if code == "pay" and tasks.normalize_pay(state, seat, log):
                continue
            found = tasks.options(state, seat, task)
            if not found:
                assert code != "pay", "a payment was started that cannot be finished"
                state.tasks.pop(0)
                log.say("no_effect", f"{tasks.STEP_TEXT[code]}: nothing to do", seat)
                continue
            if len(found) == 1:
                tasks.play(state, seat, task, found[0], log)
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
        found = collect.options(state, seat, task)
        if not found:
            queue.pop(0)
        elif len(found) == 1:
            collect.play(state, seat, task, found[0], log)
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
    if scoring.check_victory(state, log, f"end of round {state.round}"):
        return
    limit = state.options.round_limit
    if limit and state.round >= limit:
        scoring.finish(state, log, "ROUND_LIMIT", f"round limit {limit} reached without a winner")
        return
    # Straighten all components; flip the token and the Magic Items back.
    state.turned = [False] * len(CONTENT.components)
    state.token_passed = False
    for seat in state.seats:
        seat.passed = False
    setup.begin_round(state, log)


# ---------------------------------------------------------------- refusals


def _refusal(state: State, seat: int, task: tuple, move: Move) -> IllegalMove:
    """The error for a well-formed move that the rules forbid now, naming the rule."""
    code = task[0]
    kind = move.kind
    if code == "action":
        return _action_refusal(state, seat, move)
    if code == "draft":
        return IllegalMove("keep one of the two Artifacts you drew", rule="Setup")
    if code == "mage":
        return IllegalMove("choose one of your two Mages", rule="Setup")
    if code == "item":
        return IllegalMove("take a Magic Item from the middle", rule="Setup")
    if code in collect.STEP_TEXT:
        return IllegalMove(f"not possible now: {collect.STEP_TEXT[code]}", rule="1. Collect")
    if code == "pay":
        if kind == Kind.PAY and task[5]:
            return IllegalMove("apply the discount first", rule="Discount")
        if kind == Kind.PAY and task[4] >> move.a & 1:
            return IllegalMove("that essence is forbidden in this cost", rule="Cost")
        if kind == Kind.PAY:
            return IllegalMove("you have no such essence in your pool", rule="Cost")
        if kind == Kind.WAIVE:
            what = "any" if move.a == ANY else "that essence"
            return IllegalMove(f"the discount cannot reduce {what} here", rule="Discount")
        return IllegalMove("you must always pay the entire cost first", rule="Cost")
    if code == "swap_item":
        if kind == Kind.ITEM:
            return IllegalMove("swap for a different Magic Item from the middle", rule="Passing")
        return IllegalMove("a passing player swaps the Magic Item now", rule="Passing")
    if code == "straighten" and kind == Kind.STRAIGHTEN and move.a == task[1]:
        return IllegalMove("straighten another component", rule="Powers")
    if code == "retrieve" and kind == Kind.RETRIEVE:
        return IllegalMove("retrieve a card from your own discard pile", rule="Special Cases")
    if code in ("discard_gain", "discard_gain2") and kind == Kind.GAIN:
        return IllegalMove("1 Gold, or 2 essences other than Gold", rule="Discard an Artifact")
    if code == "turn_other" and kind == Kind.TURN and move.a == task[1]:
        return IllegalMove("turn another component", rule="Powers")
    return IllegalMove(f"not possible now: {tasks.STEP_TEXT[code]}", rule="Powers")


def _action_refusal(state: State, seat: int, move: Move) -> IllegalMove:
    me = state.seats[seat]
    kind = move.kind
    if kind == Kind.PLACE:
        if move.a not in me.hand:
            return IllegalMove("that Artifact is not in your hand", rule="Place an Artifact")
        return IllegalMove("you cannot pay its cost", rule="Cost")
    if kind == Kind.CLAIM:
        if move.a not in actions.claimable(state) or (move.a == DECK and not state.monument_deck):
            return IllegalMove(
                "it is not in the middle of the table (claimed, or not in play)",
                rule="Claim a Monument or a Place of Power",
            )
        return IllegalMove("you cannot pay its cost", rule="Cost")
    if kind == Kind.DISCARD:
        return IllegalMove("that Artifact is not in your hand", rule="Discard an Artifact")
    if kind == Kind.POWER:
        if move.a not in me.components():
            return IllegalMove("that component is not yours", rule="Use a power")
        if state.turned[move.a]:
            return IllegalMove("powers on turned components cannot be used", rule="Powers")
        if not power_usable(state, seat, move.a, move.b - 1):
            return IllegalMove("you cannot pay the entire cost", rule="Cost")
    return IllegalMove("choose an action first", rule="2. Actions")


class _Self:
    """What ``check_seat`` needs of this engine (its outcome and to_act)."""

    outcome = staticmethod(outcome)
    to_act = staticmethod(to_act)


_SELF = _Self()
