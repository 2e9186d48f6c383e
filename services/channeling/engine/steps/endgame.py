"""7 - Check for Endgame: the turn ends; seven cards trigger the end, and who has won.

Reading taken (README, reading 9): the first player holding seven or more cards at the
end of their own turn triggers the end; the other player takes one more turn, then the
game ends. Most Splendor (less one per Overchanneling Cube) wins; ties go to the fewest
cards, then to whoever went second (Dark).
"""

from __future__ import annotations

from services.kit.engine import Event, Outcome

from ..content import CARD_BY_ID
from ..state import GLYPH, SEAT_NAMES, State

CARDS_TO_END = 7  # "at least seven Magic Circle Cards"


def end_turn(state: State, seat: int) -> list[Event]:
    """The endgame check closing ``seat``'s turn, then play passes to the other player."""
    events: list[Event] = []
    if state.end_triggered_by is None:
        if len(state.acquired[seat]) >= CARDS_TO_END:
            state.end_triggered_by = seat
            count, other = len(state.acquired[seat]), SEAT_NAMES[1 - seat]
            text = f"{SEAT_NAMES[seat]} has {count} cards: one more turn for {other}"
            events.append(Event("end_triggered", text, seat))
    elif seat != state.end_triggered_by:
        state.result = final_outcome(state)
        events.append(
            Event(
                "game_over",
                f"game over: {state.result.reason}",
                None,
                {"winners": list(state.result.winners)},
            )
        )
    state.step = GLYPH
    state.glyph = state.moved = state.stationary = None
    if state.result is None:
        state.current = 1 - seat
        state.turn += 1
    return events


def splendor(state: State, seat: int) -> int:
    """Splendor from acquired cards, less one per Overchanneling Cube."""
    return sum(CARD_BY_ID[c].splendor for c in state.acquired[seat]) - state.overchanneling[seat]


def final_outcome(state: State) -> Outcome:
    """Most Splendor wins; ties go to the fewest cards, then to whoever went second."""
    scores = (splendor(state, 0), splendor(state, 1))
    cards = (len(state.acquired[0]), len(state.acquired[1]))
    details = tuple(
        f"{SEAT_NAMES[s]}: {scores[s]} Splendor ({cards[s]} cards, "
        f"{state.overchanneling[s]} Overchanneling)"
        for s in (0, 1)
    )
    if scores[0] != scores[1]:
        return Outcome(scores, (scores.index(max(scores)),), "MOST_SPLENDOR", details)
    if cards[0] != cards[1]:
        return Outcome(scores, (cards.index(min(cards)),), "TIE_FEWEST_CARDS", details)
    return Outcome(scores, (1,), "TIE_WENT_SECOND", details)


def outcome(state: State) -> Outcome | None:
    return state.result
