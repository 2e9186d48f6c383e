"""The turn as the kit's kernel drives it: which decisions each seat has now, and the
automatic parts of the day between them.

A seat's ``stage`` (state.py) says what it is asked; its row below maps each kind of
move to that kind's :class:`~services.kit.kernel.Decision`, written beside its rule in
rules/<part of the day>.py. After every decision ``advance`` runs what follows without
one (rolling, special faces, the evening reset, the final count) until some seat has a
decision again.
"""

from __future__ import annotations

import dataclasses
from typing import Any, cast

from services.kit.engine import Event, MalformedMove, Outcome
from services.kit.kernel import Decision, Explainer

from . import rulebook
from .effects import hand_out_rerolls
from .moves import (
    Bury,
    Camp,
    CancelSpell,
    ChooseAdventurer,
    ChooseFace,
    ChooseSketalDie,
    EndJourney,
    Fix,
    GlowMove,
    Go,
    Lose,
    MoveBlackDie,
    PayReroll,
    PickDie,
    Raise,
    Ready,
    Resolve,
    Roll,
    Sail,
    Take,
    UseReroll,
)
from .rules import journey, morning, noon, rerolls, setup
from .rules.evening import evening, game_ends
from .scoring import final_count
from .state import (
    ADVENTURERS,
    AFTERNOON,
    CEMETERY_PICK,
    CHOOSE_ADVENTURER,
    FIX_FACE,
    FIX_PAY,
    FIX_PICK,
    IDLE,
    JOURNEY,
    LATE_MORNING,
    MORNING,
    MOVE_BLACK_DIE,
    NOON,
    OVER,
    RECRUIT,
    REROLL_PICK,
    REROLLS,
    RESOLVING,
    RESURRECT,
    SKETAL_DIE,
    SKULL,
    STAGE_NAMES,
    State,
)

# Keyed by the move's type (the kernel's default ``kind``); Any: mypy takes a class
# object for its instances' __hash__.
Row = dict[Any, Decision]


def to_act(state: State) -> tuple[int, ...]:
    """The seats with a decision pending, sorted (several in the simultaneous steps)."""
    return state.acting


def outcome(state: State) -> Outcome | None:
    return state.result


# --- what follows a decision --------------------------------------------------------------


def advance(state: State) -> list[Event]:
    """Run the automatic parts of the day until a seat has a decision or the game is over."""
    events: list[Event] = []
    players = state.players
    while True:
        step = state.step
        if step == ADVENTURERS:
            if all(p.adventurer for p in players):
                events += setup.finish_setup(state)
                events += morning.start_morning(state)
                continue
        elif step == MORNING:
            if morning.morning_over(state):
                events += morning.end_morning(state)
                events += rerolls.start_late_morning(state)
                continue
        elif step != OVER and all(p.done for p in players):
            if step == LATE_MORNING:
                events += noon.start_noon(state)
            elif step == NOON:
                events += hand_out_rerolls(state)
                events += journey.start_afternoon(state)
            elif step == AFTERNOON:
                events += hand_out_rerolls(state)
                if game_ends(state):
                    state.step = OVER
                    state.result, end_events = final_count(state)
                    events += end_events
                else:
                    events += evening(state)
                    events += morning.start_morning(state)
            continue
        break
    state.acting = acting(state)
    return events


def acting(state: State) -> tuple[int, ...]:
    """The seats to act: the one chooser in the turn-by-turn steps, else every seat not done."""
    if state.step == OVER:
        return ()
    if state.step in (ADVENTURERS, MORNING):
        return (state.chooser,)
    return tuple(i for i, p in enumerate(state.players) if not p.done)


# --- the decisions open to a seat, by its stage ------------------------------------------


def _row(*entries: tuple[type[GlowMove], Decision]) -> Row:
    """A stage's decisions, in the order their moves are listed (today's sort order).

    A kind in the row may offer no move now ("fix" with fewer than three rerolls,
    "camp" outside a village): such a move is refused as a kind that is not a decision
    now, as ``out_of_step`` words it, before the decision's own explanation is asked.
    """
    return {kind: dataclasses.replace(d, explain=_offered_first(d)) for kind, d in entries}


def _offered_first(decision: Decision) -> Explainer:
    explain = decision.explain

    def why(state: State, seat: int, move: GlowMove) -> tuple[str, str] | str:
        _check_board(move)
        if move.WORD not in _offered(state, seat):
            return out_of_step(state, seat, move)
        if explain is None:  # every move of a kind without fields is listed when offered
            return "not allowed now"  # pragma: no cover
        return explain(state, seat, move)

    return why


_ROWS: dict[int, Row] = {
    IDLE: {},
    CHOOSE_ADVENTURER: _row((ChooseAdventurer, setup.CHOOSING_AN_ADVENTURER)),
    RECRUIT: _row((Take, morning.RECRUITING)),
    MOVE_BLACK_DIE: _row((MoveBlackDie, morning.MOVING_THE_BLACK_DIE)),
    SKETAL_DIE: _row((ChooseSketalDie, morning.CHOOSING_A_SKETAL_DIE)),
    CEMETERY_PICK: _row((Bury, morning.SENDING_TO_THE_CEMETERY)),
    REROLLS: _row(
        (UseReroll, rerolls.USING_A_REROLL),
        (Fix, rerolls.FIXING),
        (Ready, rerolls.BEING_READY),
    ),
    REROLL_PICK: _row((PickDie, rerolls.PICKING), (Roll, rerolls.ROLLING)),
    FIX_PAY: _row((PayReroll, rerolls.PAYING)),
    FIX_PICK: _row((PickDie, rerolls.PICKING_TO_FIX)),
    FIX_FACE: _row((ChooseFace, rerolls.CHOOSING_A_FACE)),
    RESOLVING: _row((Resolve, noon.RESOLVING_A_CARD)),
    RESURRECT: _row((Raise, noon.RAISING)),
    SKULL: _row((Lose, journey.LOSING), (CancelSpell, journey.CANCELLING)),
}
# A multicoloured Sketal raised by Cromaug at Noon: after its die, back to resolving.
_SKETAL_DIE_AT_NOON = _row((ChooseSketalDie, noon.CHOOSING_A_RAISED_SKETAL_DIE))
_PROVINCE = _row(
    (Go, journey.GOING),
    (Camp, journey.CAMPING),
    (EndJourney, journey.ENDING_THE_PROVINCE_JOURNEY),
)
_ARCHIPELAGO = _row(
    (Sail, journey.SAILING),
    (EndJourney, journey.ENDING_THE_ARCHIPELAGO_JOURNEY),
)


def decisions(state: State, seat: int) -> Row:
    """The decisions open to ``seat`` now, by the kind of move."""
    stage = state.players[seat].stage
    if stage == JOURNEY:
        return _PROVINCE if state.options.board == "province" else _ARCHIPELAGO
    if stage == SKETAL_DIE and state.step == NOON:
        return _SKETAL_DIE_AT_NOON
    return _ROWS[stage]


def _offered(state: State, seat: int) -> set[str]:
    """The words of the kinds of move ``seat`` has now (only to word a refusal)."""
    row = decisions(state, seat)
    return {cast(type[GlowMove], kind).WORD for kind, d in row.items() if d.moves(state, seat)}


# --- a move of a kind that is not a decision now -----------------------------------------

_STAGE_RULES = {
    CHOOSE_ADVENTURER: rulebook.GAME_SETUP,
    RECRUIT: rulebook.RECRUIT,
    MOVE_BLACK_DIE: rulebook.KAAR,
    SKETAL_DIE: rulebook.SKETALS,
    CEMETERY_PICK: rulebook.TWO_PLAYER_GAMES,
    REROLLS: rulebook.ROLL_AND_REROLL,
    REROLL_PICK: rulebook.ROLL_AND_REROLL,
    FIX_PAY: rulebook.ROLL_AND_REROLL,
    FIX_PICK: rulebook.ROLL_AND_REROLL,
    FIX_FACE: rulebook.ROLL_AND_REROLL,
    RESOLVING: rulebook.RESOLVE_THE_CARDS,
    RESURRECT: rulebook.CROMAUG,
    SKULL: rulebook.COMMON_JOURNEY_RULES,
}


def _check_board(move: GlowMove) -> None:
    """A spot or island past the journey board is malformed at any step, before any rule
    reads it (a move the rules allow is on the board: only a refusal needs the check)."""
    problem = journey.off_board(move)
    if problem is not None:
        raise MalformedMove(problem)


def out_of_step(state: State, seat: int, move: GlowMove) -> tuple[str, str]:
    """The rule of the seat's stage, and the kinds of move it may make instead (a spot or
    island past the board is malformed first)."""
    _check_board(move)
    stage = state.players[seat].stage
    if stage == JOURNEY:
        if state.options.board == "province":
            rule = rulebook.PROVINCE_JOURNEY
        else:
            rule = rulebook.ARCHIPELAGO_JOURNEY
    else:
        rule = _STAGE_RULES.get(stage, rulebook.PLAYING_THE_GAME)
    names = ", ".join(sorted(_offered(state, seat)))
    return rule, f"'{move.WORD}' is not a decision now ({STAGE_NAMES[stage]}: {names})"
