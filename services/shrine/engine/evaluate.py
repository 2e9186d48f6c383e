"""The evaluation hook: how likely each seat is to win from a state, as the bots use it to
cut a rollout short and to rank the moves of a one-ply search.

Two things decide a game of Shrine ("End of the Game"):

- **Most Treasure** once the third dial leaves the board. The end-game checklist applied
  to the board as it stands (:func:`standing`) is each player's score if the game ended
  now; the lead is mapped to a chance by a logistic whose width shrinks as dials leave
  the board (fewer turns left to change it).
- **Losing the Game**: a player who can neither place (even by taking on Debt) nor pass
  loses at once, whatever the Treasure. What keeps a player from it is a reserve: the
  Treasure held, what the Debt tokens left would bring, and the passes left. Its
  chance of running dry is a logistic of that reserve.

The reserve constants were fitted by maximum likelihood to positions of 400 seeded
random games (decisive ones) and rounded. The Treasure-lead width is chosen, not fitted:
random play ends mostly by the immediate loss, or with both players at 0 or less, so it
says little about how much a lead is worth between players who avoid both. The values
rank positions; they do not predict exactly.

A tie ("the player not holding the Starting Player token wins") and "both lose with 0 or
fewer Treasures" are left out while play goes on, so the two values always sum to 1; a
finished game gives the outcome exactly.

It reads the whole state (Code cards included): the bots call it only on states from
``determinize``, never on the true one.
"""

from __future__ import annotations

import math

from services.shrine.engine import colours
from services.shrine.engine.content import BOARD, CONTENT, FIELDS, PLAYER
from services.shrine.engine.state import State

# Reserve: a pass skips a turn that would otherwise be lost, worth about this much
# Treasure of reserve (fitted: 4).
PASS_RESERVE = 4.0
# A reserve of this much Treasure is an even chance of running dry before the end.
RESERVE_MIDPOINT = 8.0
RESERVE_SCALE = 3.0
# Width of the Treasure-lead logistic: SCORE_SCALE_BASE + SCORE_SCALE_PER_DIAL per dial
# still on the board (3 at the start, 1 before the end).
SCORE_SCALE_BASE = 4.0
SCORE_SCALE_PER_DIAL = 3.0

_DIALS_TO_END = len(BOARD.track)
_DEBTS = len(PLAYER.debt_costs)
_PASSES = len(PLAYER.pass_costs)


def _cumulative(costs: tuple[int, ...]) -> tuple[int, ...]:
    """What is paid at the end for the first k tokens, for each k."""
    return tuple(sum(costs[:k]) for k in range(len(costs) + 1))


_DEBT_PAID = _cumulative(PLAYER.debt_costs)
_PASS_PAID = _cumulative(PLAYER.pass_costs)
_SERPENT_PAID = _cumulative(PLAYER.serpent_costs)
# Per Code card: its colours, and the target bonus per field (its own targets and any the
# board prints).
_CODE_COLOURS = tuple(code.colours for code in CONTENT.codes)
_TARGET_BONUS = tuple(
    tuple(
        PLAYER.target_bonus if code.targets[f] or BOARD.printed_targets[f] else 0
        for f in range(FIELDS)
    )
    for code in CONTENT.codes
)
_IS_TARGET = tuple(
    tuple(code.targets[f] or BOARD.printed_targets[f] for f in range(FIELDS))
    for code in CONTENT.codes
)
_SINGLE = PLAYER.field_value_single
# Two stacked Lenses: the colour seen and the field's value ("Scoring"), by bottom and top.
_STACKED = tuple(
    tuple(
        (a, PLAYER.field_value_double)
        if a == b
        else (colours.mix(a, b), PLAYER.field_value_complex)
        for b in range(len(colours.BASIC))
    )
    for a in range(len(colours.BASIC))
)
_NEIGHBOURS = tuple(sum(1 << n for n in BOARD.neighbours[f]) for f in range(FIELDS))


def _largest_area(mask: int) -> int:
    """The largest group of orthogonally adjacent matches, fields as bits of ``mask``."""
    best = 0
    while mask:
        group = frontier = mask & -mask
        while frontier:
            grown = 0
            rest = frontier
            while rest:
                bit = rest & -rest
                grown |= _NEIGHBOURS[bit.bit_length() - 1]
                rest ^= bit
            frontier = grown & mask & ~group
            group |= frontier
        best = max(best, group.bit_count())
        mask &= ~group
    return best


def standing(state: State) -> tuple[int, int]:
    """Each player's total by the end-game checklist ("End of the Game") applied to the
    board as it stands: Treasure held, unblocked matches, false claims, largest area,
    Debt, Pass and Serpent costs. Equal to the final scores once the game has ended."""
    codes = (_CODE_COLOURS[state.players[0].code], _CODE_COLOURS[state.players[1].code])
    bonus = (_TARGET_BONUS[state.players[0].code], _TARGET_BONUS[state.players[1].code])
    target = (_IS_TARGET[state.players[0].code], _IS_TARGET[state.players[1].code])
    fields = [0, 0]
    false = [0, 0]
    match = [0, 0]
    lenses, blocked_by = state.lenses, state.blocked_by
    for f in range(FIELDS):
        here = lenses[f]
        if not here:
            continue
        if len(here) == 1:
            shows, value = here[0], _SINGLE
        else:
            shows, value = _STACKED[here[0]][here[1]]
        by = blocked_by[f]
        for seat in (0, 1):
            hit = codes[seat][f] == shows
            if hit:
                match[seat] |= 1 << f
                if by < 0:
                    fields[seat] += value + bonus[seat][f]
            # "Validate Blocked Fields": a claim the Code card does not bear out
            if (
                by == seat
                and not state.block_no_claim[f]
                and (not hit or (state.block_target[f] and not target[seat][f]))
            ):
                false[seat] += 1
    areas = (_largest_area(match[0]), _largest_area(match[1]))
    out = []
    for seat in (0, 1):
        player = state.players[seat]
        code = codes[seat]
        if player.proof.count(-1) < FIELDS:  # Proof tokens placed (Radiant Shapes)
            false[seat] += sum(1 for f, c in enumerate(player.proof) if c >= 0 and c != code[f])
        area_bonus = PLAYER.largest_area_bonus if areas[seat] > areas[1 - seat] else 0
        out.append(
            player.treasure
            + fields[seat]
            - PLAYER.false_claim_penalty * false[seat]
            + area_bonus
            - _DEBT_PAID[player.debts]
            - _PASS_PAID[player.passes]
            - _SERPENT_PAID[player.serpents_removed]
        )
    return out[0], out[1]


def _logistic(z: float) -> float:
    if z < -40.0:
        return 0.0
    if z > 40.0:
        return 1.0
    return 1.0 / (1.0 + math.exp(-z))


def running_dry(state: State, seat: int) -> float:
    """The chance ``seat`` loses by "Losing the Game" before the end: a logistic of its
    reserve (Treasure held, Debt still to take, passes left)."""
    player = state.players[seat]
    reserve = (
        player.treasure
        + PLAYER.debt_gain * (_DEBTS - player.debts)
        + PASS_RESERVE * (_PASSES - player.passes)
    )
    return _logistic((RESERVE_MIDPOINT - reserve) / RESERVE_SCALE)


def evaluate(state: State) -> tuple[float, ...]:
    """Each seat's chance to win from ``state``, in seat order; never changes ``state``.

    Finished: 1 for the winner, 0 for the other (0 for both when nobody wins). Otherwise
    the two values sum to 1: a seat wins when only the other runs dry, or when neither
    does and it leads in Treasure; both running dry is an even chance.

    >>> from services.shrine import engine
    >>> evaluate(engine.new_game(1, 2, engine.Options()))
    (0.5, 0.5)
    """
    result = state.result
    if result is not None:
        share = 1.0 / len(result.winners) if result.winners else 0.0
        return tuple(share if seat in result.winners else 0.0 for seat in (0, 1))
    sun, moon = standing(state)
    dials_left = _DIALS_TO_END - len(state.track)
    scale = SCORE_SCALE_BASE + SCORE_SCALE_PER_DIAL * dials_left
    leads = _logistic((sun - moon) / scale)
    dry_sun, dry_moon = running_dry(state, 0), running_dry(state, 1)
    sun_wins = (
        dry_moon * (1.0 - dry_sun)
        + (1.0 - dry_sun) * (1.0 - dry_moon) * leads
        + 0.5 * dry_sun * dry_moon
    )
    return (sun_wins, 1.0 - sun_wins)
