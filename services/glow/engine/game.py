"""The engine contract: legal moves, applying a move, whose decision it is, the outcome.

``apply`` validates first (membership in the legal moves) and only then changes the
state; after each move ``_advance`` runs the automatic parts of the day (rolling,
special faces, the evening reset, the final count) until some seat has a decision.
"""

from __future__ import annotations

import types

from services.kit.engine import Event, IllegalMove, Outcome, check_seat

from .content import DICE, TRACK_SPACES
from .effects import hand_out_rerolls
from .moves import (
    ADVENTURER_CHOICE,
    BLACK,
    BURY,
    CAMP,
    CANCEL,
    DIE,
    END,
    FACE,
    FIX,
    GO,
    KIND_NAMES,
    LOSE,
    PAY,
    PICK,
    RAISE,
    READY,
    REROLL,
    RESOLVE,
    ROLL,
    SAIL,
    TAKE,
    Move,
    check_well_formed,
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


def to_act(state: State) -> tuple[int, ...]:
    """The seats with a decision pending, sorted (several in the simultaneous steps)."""
    return state.acting


def outcome(state: State) -> Outcome | None:
    return state.result


def legal_moves(state: State, seat: int) -> list[Move]:
    """Every move ``seat`` may make now, sorted; empty when it has nothing to decide."""
    if state.result is not None or seat not in state.acting:
        return []
    player = state.players[seat]
    stage = player.stage
    if stage == CHOOSE_ADVENTURER:
        return setup.adventurer_moves(state)
    if stage == RECRUIT:
        return morning.recruit_moves(state)
    if stage == MOVE_BLACK_DIE:
        return morning.black_die_moves(state, player)
    if stage == SKETAL_DIE:
        return morning.sketal_die_moves(state, seat)
    if stage == CEMETERY_PICK:
        return morning.cemetery_moves(state)
    if REROLLS <= stage <= FIX_FACE:
        return rerolls.reroll_moves(state, player)
    if stage == RESOLVING:
        return noon.resolve_moves(state, player)
    if stage == RESURRECT:
        return noon.raise_moves(state, seat)
    if stage in (JOURNEY, SKULL):
        return journey.journey_moves(state, player)
    return []


_HANDLERS = {
    ADVENTURER_CHOICE: setup.choose_adventurer,
    TAKE: morning.take,
    BLACK: morning.move_black_die,
    BURY: morning.bury,
    RESOLVE: noon.resolve,
    RAISE: noon.resurrect,
    GO: journey.go,
    CAMP: journey.camp,
    SAIL: journey.sail,
    END: journey.end,
    LOSE: journey.skull,
    CANCEL: journey.skull,
}
for _kind in (REROLL, FIX, PAY, PICK, ROLL, FACE, READY):
    _HANDLERS[_kind] = rerolls.apply_reroll

_SELF = types.SimpleNamespace(outcome=outcome, to_act=to_act)


def apply(state: State, seat: int, move: Move) -> list[Event]:
    """Validate, then play ``move`` for ``seat``; returns the events, as players see them.

    Raises GameOver, NotYourDecision, MalformedMove or IllegalMove (naming the rule)
    and leaves the state untouched when it does.
    """
    check_seat(_SELF, state, seat)
    if move not in legal_moves(state, seat):
        check_well_formed(move)
        message, rule = explain(state, seat, move)
        raise IllegalMove(message, rule=rule)
    if move.kind == DIE:
        events = morning.choose_sketal_die(state, seat, move)
        if state.step == NOON:
            noon.after_sketal_die(state, state.players[seat])
    else:
        events = _HANDLERS[move.kind](state, seat, move)
    events += _advance(state)
    return events


def _advance(state: State) -> list[Event]:
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
    state.acting = _acting(state)
    return events


def _acting(state: State) -> tuple[int, ...]:
    if state.step == OVER:
        return ()
    if state.step in (ADVENTURERS, MORNING):
        return (state.chooser,)
    return tuple(i for i, p in enumerate(state.players) if not p.done)


_STEP_RULES = {
    CHOOSE_ADVENTURER: "Game Setup",
    RECRUIT: "Morning – Recruit a Companion",
    MOVE_BLACK_DIE: "Kaar and the Curse of the Black Die",
    SKETAL_DIE: "The Sketals",
    CEMETERY_PICK: "2-player games",
    REROLLS: "Late Morning – Roll and Reroll Dice",
    REROLL_PICK: "Late Morning – Roll and Reroll Dice",
    FIX_PAY: "Late Morning – Roll and Reroll Dice",
    FIX_PICK: "Late Morning – Roll and Reroll Dice",
    FIX_FACE: "Late Morning – Roll and Reroll Dice",
    RESOLVING: "Noon – Resolve the Cards",
    RESURRECT: "Cromaug",
    SKULL: "Common rules for journeys",
}


def explain(state: State, seat: int, move: Move) -> tuple[str, str]:
    """Why a well-formed move is illegal now, and the rule it breaks (no hidden facts)."""
    player = state.players[seat]
    stage = player.stage
    if stage == JOURNEY:
        board = state.options.board
        rule = (
            "The Province of Shadows journey"
            if board == "province"
            else "The Archipelago of Darkness journey"
        )
    else:
        rule = _STEP_RULES.get(stage, "Playing the Game")
    expected = {m.kind for m in legal_moves(state, seat)}
    if move.kind not in expected:
        names = ", ".join(sorted(KIND_NAMES[k] for k in expected))
        return (
            f"'{KIND_NAMES[move.kind]}' is not a decision now ({STAGE_NAMES[stage]}: {names})",
            rule,
        )
    if move.kind in (TAKE, BURY, BLACK) and 0 <= move.a < TRACK_SPACES:
        return f"no companion in front of space {move.a}", rule
    if move.kind in (REROLL, PAY):
        return "that reroll is not available (no token, no reroll space behind, or used)", rule
    if move.kind == PICK:
        return f"die {move.a} is not one of this player's dice to reroll", rule
    if move.kind == FACE:
        return f"die {player.pending} has no such face", rule
    if move.kind == RESOLVE:
        if move.a in player.resolved:
            return "this card was already resolved this round", rule
        return "this card is not in play or its condition is not met by the dice", rule
    if move.kind == RAISE:
        if move.a == player.pending:
            return "Cromaug cannot take itself back from the cemetery", rule
        if move.a in state.cemetery:
            return (
                f"companion {move.a} went to the cemetery from another seat during this "
                "Noon, at the same time: it cannot be taken back before the next Noon",
                rule,
            )
        return f"companion {move.a} is not in the cemetery to take back", rule
    if move.kind == DIE:
        if any(DICE[d].large and DICE[d].colour == move.a for d in state.pool):
            return (
                "the large dice of that colour in the reserve pool were put back by another "
                "seat during this Noon, at the same time: not before the next Noon",
                rule,
            )
        return "no large die of that colour in the reserve pool", rule
    if move.kind in (LOSE, CANCEL):
        return "the player has no such companion or spell", rule
    if move.kind == GO:
        if move.a in player.visited:
            return "a company cannot go past the same space twice during the same round", rule
        return (
            "that space is not next to the company, or its condition or footprint cost "
            "cannot be met",
            rule,
        )
    if move.kind == SAIL:
        if move.b in player.boats and move.b != 0:
            return "the player cannot place several of their boats on the same island", rule
        return "no such link from a boat, or not enough different symbols or footprints", rule
    if move.kind == ADVENTURER_CHOICE:
        return "that adventurer is already taken", rule
    return "not allowed now", rule  # pragma: no cover


__all__ = ["DICE", "apply", "legal_moves", "outcome", "to_act"]
