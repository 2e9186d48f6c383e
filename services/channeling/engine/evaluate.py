"""Evaluate: each seat's chance of winning from a state, for the computer players.

The object is "more Splendor than the opponent when the game ends", Splendor being the
acquired cards' petals less one per Overchanneling Cube. So a position is scored, per
seat, in Splendor points:

- the Splendor already banked (acquired cards less Overchanneling Cubes), as the end
  will count it;
- the Energy Cubes standing on the grid, each card worth part of its Splendor by how
  far its owner's cubes have come towards its Vigor (cubes of one colour only stand on
  a card between turns: step 5 removes mixed pairs), since those cubes are what turns
  into the next cards;
- mid-turn, the cubes step 4 is about to place: once a Druid has moved (the Leyline
  Path still to choose), the 3 cubes on its card and the 2 on the stationary Druid's
  are certain whatever the path, so they count as placed (with step 5's cancelling),
  and a card they complete as acquired;
- the tempo: the seat whose cubes come next and are not yet counted (the seat to act,
  or its opponent once this turn's cubes are placed or certain) can add to its cards
  before the other answers.

Once the end is triggered only the other player's last turn is left: cubes short of a
card's Vigor then count for nothing (few will still turn into a card), and the
triggering player holds no tempo.

The margin between the seats (plus half a point towards whoever a tie would favour:
fewest cards, then the second player) maps to a probability by a logistic whose spread
narrows as the end comes near: 7 - Check for Endgame ends the game one turn after a
player reaches seven cards, so the leader's card count says how many turns are left.

The constants were fitted on a coarse grid by log-loss on every third decision of 400
seeded random games (seeds 1000-1399; the tests check the ranking on seeds 0-99). It is
a guide for search and for the one-ply greedy player, not an oracle. It reads the whole
state (bots call it on determinized states only), never changes it, and costs about
20 microseconds on a mid-game state.
"""

from __future__ import annotations

import math

from .content import CARD_BY_ID
from .state import BEYOND_VIGOR, DARK, FILL, LIGHT, PATH, State
from .steps.endgame import CARDS_TO_END
from .steps.place_cubes import CUBES_MOVED, CUBES_STATIONARY

# Fitted on random games (see the module's docstring).
PROGRESS = 0.4  # share of a card's Splendor its owner's cubes are worth at Vigor - 1
TEMPO = 1.75  # Splendor points the seat whose cubes come next is worth
SPREAD = 2.35  # logistic spread, in Splendor points, per sqrt(turn left)
TURNS_PER_CARD = 1.0  # turns of uncertainty per card the leader still lacks

# Indexed by card id: a tuple index is cheaper than the dataclass lookups in a hot loop.
_IDS = range(max(CARD_BY_ID) + 1)
_VIGOR = tuple(CARD_BY_ID[i].vigor if i in CARD_BY_ID else 0 for i in _IDS)
_SPLENDOR = tuple(CARD_BY_ID[i].splendor if i in CARD_BY_ID else 0 for i in _IDS)


def evaluate(state: State) -> tuple[float, float]:
    """Light's and Dark's chances of winning from ``state``, summing to 1.

    A finished game gives its outcome: 1.0 to the winner, 0.0 to the other.

    >>> from services.channeling import engine
    >>> state = engine.new_game(seed=3)
    >>> light, dark = evaluate(state)
    >>> 0.0 < light < 1.0 and abs(light + dark - 1.0) < 1e-9
    True
    """
    result = state.result
    if result is not None:
        winners = result.winners
        share = 1.0 / len(winners) if winners else 0.0
        return (share if LIGHT in winners else 0.0, share if DARK in winners else 0.0)
    acquired, over = state.acquired, state.overchanneling
    points: list[float] = [sum(_SPLENDOR[c] for c in acquired[s]) - over[s] for s in (LIGHT, DARK)]
    cards = [len(acquired[LIGHT]), len(acquired[DARK])]
    # After the end is triggered, cubes short of a card's Vigor mostly never become one.
    last_turn = state.end_triggered_by is not None
    pending = _pending(state)
    by_vigor = state.options.overchanneling == BEYOND_VIGOR
    grid = state.grid
    for cell, (light, dark) in enumerate(state.cubes):
        card = grid[cell]
        if card is None:
            continue
        if pending is not None and cell in pending:
            light, dark = pending[cell]
        if light == dark:
            continue
        owner, cubes = (LIGHT, light - dark) if light > dark else (DARK, dark - light)
        vigor, petals = _VIGOR[card], _SPLENDOR[card]
        if cubes >= vigor:
            # Step 6 will acquire it: its Splendor less the cubes kept as Overchanneling.
            points[owner] += petals - max(0, cubes - (vigor if by_vigor else petals))
            cards[owner] += 1
        elif not last_turn:
            points[owner] += petals * PROGRESS * cubes / (vigor - 1)
    tempo = _next_to_channel(state)
    if tempo != state.end_triggered_by:
        points[tempo] += TEMPO
    margin = points[LIGHT] - points[DARK]
    # Ties go to the fewest cards, then to the second player (Dark): half a point.
    margin += 0.5 if cards[LIGHT] < cards[DARK] else -0.5
    return _chances(margin, _turns_left(state, max(cards)))


def _pending(state: State) -> dict[int, tuple[int, int]] | None:
    """The two Druids' cards with step 4's certain cubes placed and step 5's pairs removed,
    while the Leyline Path is still to choose; None at any other step.
    """
    if state.step != PATH or state.moved is None or state.stationary is None:
        return None
    seat = state.current
    supply = state.supply[seat]
    result = {}
    for cell, count in ((state.moved, CUBES_MOVED), (state.stationary, CUBES_STATIONARY)):
        placed = min(count, supply)
        supply -= placed
        cubes = list(state.cubes[cell])
        cubes[seat] += placed
        pairs = min(cubes)
        result[cell] = (cubes[0] - pairs, cubes[1] - pairs)
    return result


def _next_to_channel(state: State) -> int:
    """The seat whose cubes come next and are not yet counted: the seat to act, unless
    its turn's cubes are already counted (placed, or certain once its Druid has moved).
    """
    if state.step in (PATH, FILL):
        return 1 - state.current
    return state.current


def _turns_left(state: State, most_cards: int) -> float:
    """Turns still to play: one once the end is triggered (the other player's last turn),
    else the leader's missing cards at the fitted pace, plus that last turn.
    """
    if state.end_triggered_by is not None or most_cards >= CARDS_TO_END:
        return 1.0
    return (CARDS_TO_END - most_cards) * TURNS_PER_CARD + 1.0


def _chances(margin: float, turns_left: float) -> tuple[float, float]:
    """A logistic of Light's margin, its spread growing with the turns still to come
    (what can change adds up like a random walk's).
    """
    spread = SPREAD * math.sqrt(turns_left)
    z = margin / spread
    light = 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
    return (light, 1.0 - light)
