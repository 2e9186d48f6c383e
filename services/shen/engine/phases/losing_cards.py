"""Losing cards: a player "loses (removes cards from their Hand, Deck, or Discard Pile
from the game)" cards, choosing each one; with several opponents, the claimer of a
further Anchor Point chooses which opponent loses them.

A ``("lose", seat, n)`` task asks for one card at a time; a ``("foe", seat, n)`` task
for the opponent who loses n.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from services.kit.engine import Event

from .. import pieces
from .. import rulebook as rule
from ..moves import LOSE_DECK, ChooseFoe, LoseFromDeck, LoseFromDiscard, LoseFromHand
from ..state import State
from .base import Row, decision, event

PROMPT = "choose a card to lose"
FOE_PROMPT = "choose the opponent who loses cards"


def _from_hand(state: State, seat: int) -> list[LoseFromHand]:
    return [LoseFromHand(card) for card in sorted(set(state.players[seat].hand))]


def _from_deck(state: State, seat: int) -> list[LoseFromDeck]:
    return [LOSE_DECK] if state.players[seat].deck else []


def _from_discard(state: State, seat: int) -> list[LoseFromDiscard]:
    return [LoseFromDiscard(card) for card in sorted(set(state.players[seat].discard))]


def _lose(pile: str) -> Callable[[State, int, Any], list[Event]]:
    """The effect of losing a card from ``pile``; the task then asks for the next one."""

    def do(state: State, seat: int, move: Any) -> list[Event]:
        task = state.tasks[-1]
        card = move.card if not isinstance(move, LoseFromDeck) else -1
        events: list[Event] = []
        pieces.lose(state, seat, pile, card, events)
        if task[2] > 1:
            state.tasks[-1] = ("lose", seat, task[2] - 1)
        else:
            state.tasks.pop()
        return events

    return do


def _no_loss(state: State, seat: int, move: object) -> str:
    return f"not a legal choice: {PROMPT}"


LOSE: Row = {
    LoseFromHand: decision(rule.LOSE, _from_hand, _lose("hand"), _no_loss),
    LoseFromDeck: decision(rule.LOSE, _from_deck, _lose("deck"), _no_loss),
    LoseFromDiscard: decision(rule.LOSE, _from_discard, _lose("discard"), _no_loss),
}


# --- which opponent loses them --------------------------------------------------------


def _foes(state: State, seat: int) -> list[ChooseFoe]:
    return [ChooseFoe(s) for s in sorted(state.opponents(seat))]


def _choose_foe(state: State, seat: int, move: ChooseFoe) -> list[Event]:
    task = state.tasks.pop()
    events = [
        event(
            "foe",
            f"{pieces.seat_name(state, move.seat)} must lose {task[2]} card(s)",
            seat,
            foe=move.seat,
            amount=task[2],
        )
    ]
    state.tasks.append(("lose", move.seat, task[2]))
    return events


def _no_foe(state: State, seat: int, move: ChooseFoe) -> str:
    return f"not a legal choice: {FOE_PROMPT}"


FOE: Row = {ChooseFoe: decision(rule.OPPONENT, _foes, _choose_foe, _no_foe)}
