"""Evening – End of Round and Resetting: automatic, in seat order."""

from __future__ import annotations

from services.kit.engine import Event

from ..content import COMPANIONS, TRACK_SPACES
from ..state import IDLE, State
from .setup import place_as_shown, place_on_track


def game_ends(state: State) -> bool:
    """The game ends when the deck cannot give another round (after day 8)."""
    return len(state.deck) < TRACK_SPACES


def evening(state: State) -> list[Event]:
    events = []
    # 1. Small dice back on the track by their result (-2 and footprints rerolled);
    # games stored before that fix rolled every die again (Options.evening "roll").
    place = place_as_shown if state.options.evening == "shown" else place_on_track
    for seat, player in enumerate(state.players):
        placed = []
        for die in player.small_dice:
            placed.append((die, place(state, die)))
        player.small_dice = []
        player.rolled = []
        player.cancelled = []
        player.used = []
        player.stage = IDLE
        player.done = True
        if placed:
            events.append(
                Event(
                    "dice_back",
                    f"seat {seat} puts small dice back: "
                    + ", ".join(f"{d} on space {s}" for d, s in placed),
                    seat,
                    {"dice": [d for d, _ in placed], "spaces": [s for _, s in placed]},
                )
            )
    # 2. Five new companions, and a footprint token in front of each one without a die.
    state.track = [state.deck.pop(0) for _ in range(TRACK_SPACES)]
    for space in range(TRACK_SPACES):
        if not state.track_dice[space]:
            state.track_footprints[space] += 1
    names = ", ".join(f"{COMPANIONS[c].name} ({c})" for c in state.track)
    events.append(Event("meeting_track", f"new companions on the meeting track: {names}"))
    # 3. The first player token passes clockwise.
    state.first = (state.first + 1) % state.n
    return events
