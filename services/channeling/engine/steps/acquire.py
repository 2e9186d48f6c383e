"""6 - Acquire Magic Circle Cards for Splendor, and replace them from the deck.

Every card holding at least its Vigor in the moving player's cubes is acquired (reading
5: only the player whose turn it is acquires). The deck's cards then replace the
acquired ones in the order the acquirer chooses: a decision (``FillGap``) only while
more than one gap is left and the deck still has a card for it. Reading taken (reading
7): when the deck runs out, the remaining gaps stay empty for the rest of the game.
"""

from __future__ import annotations

from services.kit.engine import Event
from services.kit.kernel import Decision

from .. import board, rulebook
from ..content import CARD_BY_ID
from ..moves import FillGap
from ..state import BEYOND_VIGOR, FILL, SEAT_NAMES, State
from . import endgame


def acquire(state: State, seat: int) -> list[Event]:
    """Cards holding at least their Vigor in ``seat``'s cubes leave the grid for ``seat``.

    By default Splendor-many cubes go back to the supply and the rest are kept as
    Overchanneling Cubes (step 6's wording); the ``overchanneling="vigor"`` option keeps
    only the cubes beyond the Vigor (the glossary's). See the README, reading 4.
    """
    events: list[Event] = []
    by_vigor = state.options.overchanneling == BEYOND_VIGOR
    for cell in board.CELLS:
        card_id = state.grid[cell]
        if card_id is None:
            continue
        card = CARD_BY_ID[card_id]
        mine = state.cubes[cell][seat]
        if mine < card.vigor:
            continue
        returned = min(mine, card.vigor if by_vigor else card.splendor)
        state.supply[seat] += returned
        state.overchanneling[seat] += mine - returned
        state.cubes[cell][seat] = 0
        state.grid[cell] = None
        state.acquired[seat].append(card_id)
        state.gaps.append(cell)
        data = {
            "cell": board.name(cell),
            "card": card_id,
            "vigor": card.vigor,
            "splendor": card.splendor,
            "returned": returned,
            "overchanneling": mine - returned,
        }
        text = (
            f"{SEAT_NAMES[seat]} acquires the card on {board.name(cell)} "
            f"(Vigor {card.vigor}, Splendor {card.splendor}) with {mine} cubes"
        )
        events.append(Event("card_acquired", text, seat, data))
    return events


def replace_or_ask(state: State) -> list[Event]:
    """Refill the gaps from the deck, asking the acquirer where only when it is a choice;
    once none is left to fill, 7 - Check for Endgame closes the turn.

    One gap left (or one card left in the deck with one gap) is filled at once.
    """
    events: list[Event] = []
    while state.gaps and state.deck:
        if len(state.gaps) > 1:
            state.step = FILL
            return events
        events.extend(_fill(state, state.gaps[0]))
    state.gaps = []
    events.extend(endgame.end_turn(state, state.current))
    return events


def _fill(state: State, cell: int) -> list[Event]:
    card_id = state.deck.pop()
    state.grid[cell] = card_id
    state.gaps.remove(cell)
    card = CARD_BY_ID[card_id]
    text = f"a new card (Vigor {card.vigor}, Splendor {card.splendor}) fills {board.name(cell)}"
    data = {
        "cell": board.name(cell),
        "card": card_id,
        "vigor": card.vigor,
        "splendor": card.splendor,
    }
    return [Event("card_replaced", text, None, data)]


# --- the decision: which gap the deck's next card fills ----------------------------------


def _gaps(state: State, seat: int) -> list[FillGap]:
    return [FillGap(c) for c in sorted(state.gaps)]


def _is_gap(state: State, seat: int, move: FillGap) -> bool:
    return move.cell in state.gaps


def _why_not(state: State, seat: int, move: FillGap) -> str:
    return f"{board.name(move.cell)} is not a gap left by an acquired card"


def _fill_gap(state: State, seat: int, move: FillGap) -> list[Event]:
    return _fill(state, move.cell)


FILL_A_GAP = Decision(
    rule=rulebook.ACQUIRE_MAGIC_CIRCLE_CARDS,
    moves=_gaps,
    allows=_is_gap,
    explain=_why_not,
    do=_fill_gap,
    then=replace_or_ask,
)
