"""Evaluate: each seat's chance of winning from a state, for the computer players.

The rulebook's object: "reach at least 10 victory points, and more than your rival"
(7 in the First Game), checked when both have passed; tied, more essences in the pool
(Gold counting 2). So a position is scored per seat in victory points (VP), with what
turns into VP later counted at a rate of exchange:

- the VP already there (Artifacts, Monuments, Places of Power with the essences on them,
  the First Player token), exactly as the victory check counts them;
- Gold in the pool: "all Monuments cost 4 Gold" and even the poorest Monument is worth
  1 VP, so while a Monument is left to claim a Gold is worth at least a quarter of one
  (at that rate claiming a Monument never looks like a loss to a one-ply player);
- the other essences (and Gold once no Monument is left), in the pool or waiting on a
  component to be taken at Collect, only as the tie-break counts them (Gold 2): essences
  kept are essences not yet turned into VP, and in random games the seat holding more
  of them loses more often (the seat favoured at 80% of a random game's decisions wins
  87% of them; valued at a Place of Power's rate, 0.1 VP each, 78%);
- Collect income: what the Collect abilities in front of a seat bring every round;
- components in play with powers (Artifacts, Monuments, Places of Power: engines for
  the rounds to come), and cards in hand (each at least a discard for 1 Gold);
- the action under way: "every decision is a move", so a state between the decisions
  of one action has paid and not yet gained; what its remaining tasks will bring (the
  Artifact entering play, the Monument claimed, the essences still to choose) is
  counted, so the action is seen whole (without it the kit's one-ply greedy bot, 2
  determinizations a move, passed rather than start an action and won 15 of 20 games
  against random play, seeds 0-19 with seats alternated; with it, 20 of 20);
- the actions a seat still has this round (it has not passed).

The margin between the seats maps to a probability by a logistic whose spread narrows
as the leader nears the victory points needed: with the VP reached a lead of 1 VP nearly
decides the game, at the start it decides little. The rates come from the rulebook's
costs; the spread was fitted, and the rates checked, by log-loss on the decisions of
seeded random games (seeds 0-99 and 1000-1149 of each setup; the tests check the
ranking on other seeds). A guide for the search and the one-ply greedy player, not an
oracle: it reads the whole state (the bots call it on determinized states only), never
changes it, and costs 10 to 15 microseconds on a mid-game state.
"""

from __future__ import annotations

import math

from services.resarcana.engine.actions import DiscardGain
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.cost import Arrive, Enter, Pay
from services.resarcana.engine.effects import ChooseEssences, ChooseMonument
from services.resarcana.engine.essences import GOLD
from services.resarcana.engine.moves import DECK
from services.resarcana.engine.state import ACTIONS, State

GOLD_FOR_MONUMENTS = 0.25  # VP per Gold while a Monument is left: 4 Gold buy 1 VP or more
ESSENCE = 0.01  # VP per other essence: the tie-break's weight (Gold counts 2)
INCOME = 0.3  # VP per essence a seat's Collect abilities bring each round
POWERS = 0.15  # VP per component in play with powers, beyond its own VP
CARD = 0.2  # VP per card in hand: at least a discard for 1 Gold, at the cost of an action
TEMPO = 0.5  # VP for actions still to take this round (a seat that has not passed)
SPREAD_AT_END = 0.7  # logistic spread, in VP, once the leader has the VP needed
SPREAD_PER_VP = 0.4  # more spread per VP the leader still lacks

# Per component: its VP, VP per essence on it, whether essences on it wait to be taken
# at Collect (not on a Place of Power, where they are VP), and what else it is worth
# each round: the most one Collect brings (the larger side of a "/") at INCOME, and
# its powers if it is one played or claimed.
_TABLE = tuple(
    (
        c.vp,
        c.vp_per_essence,
        c.kind != "place",
        INCOME * max((sum(a.fixed) + a.any_n for a in c.collect), default=0)
        + (POWERS if c.powers and c.kind in ("artifact", "monument", "place") else 0.0),
    )
    for c in CONTENT.components
)

# A Monument claimed blind from the deck: the average of all of them.
_MONUMENT_VP = sum(CONTENT[c].vp + POWERS for c in CONTENT.monuments) / len(CONTENT.monuments)


def evaluate(state: State) -> tuple[float, float]:
    """Each seat's chance of winning from ``state``, summing to 1.

    A finished game gives its outcome: 1.0 to the winner, 0.5 each for a shared win.

    >>> from services.resarcana import engine
    >>> first, second = evaluate(engine.new_game(7, 2, engine.Options(setup="first_game")))
    >>> 0.0 < first < 1.0 and abs(first + second - 1.0) < 1e-9
    True
    """
    result = state.result
    if result is not None:
        winners = result.winners
        first, second = (1.0 / len(winners) if seat in winners else 0.0 for seat in (0, 1))
        return first, second
    monument_left = bool(state.monument_display or state.monument_deck)
    gold_rate = GOLD_FOR_MONUMENTS if monument_left else 2 * ESSENCE
    on = state.on
    vps = [0, 0]
    worth = [0.0, 0.0]
    for s in (0, 1):
        me = state.seats[s]
        vp = 1 if state.first_player == s else 0
        waiting = 0
        engines = 0.0
        for cid in (me.mage, me.item, *me.tableau):
            if cid < 0:
                continue
            own_vp, per_essence, takeable, each_round = _TABLE[cid]
            held = sum(on[cid])
            vp += own_vp + per_essence * held
            if takeable:
                waiting += held  # taken into the pool at the next Collect
            engines += each_round
        pool = me.pool
        gold = pool[GOLD]
        vps[s] = vp
        worth[s] = (
            vp
            + gold_rate * gold
            + ESSENCE * (sum(pool) - gold + waiting)
            + engines
            + CARD * len(me.hand)
        )
    if state.tasks:
        worth[state.active] += _under_way(state, gold_rate)
    if state.phase == ACTIONS:
        for s in (0, 1):
            if not state.seats[s].passed:
                worth[s] += TEMPO
    lacking = max(0, state.target_vp - max(vps))
    z = (worth[0] - worth[1]) / (SPREAD_AT_END + SPREAD_PER_VP * lacking)
    first = 1.0 / (1.0 + math.exp(-z)) if z > -700 else 0.0
    return (first, 1.0 - first)


def _under_way(state: State, gold_rate: float) -> float:
    """What the action being carried out will still bring its player: a search or a
    one-ply player stopping between the decisions of one action (paid, not yet gained)
    should see the action whole."""
    total = 0.0
    for task in state.tasks:
        if isinstance(task, Pay):  # the "any" part still to pay, at the cheapest essence
            total -= ESSENCE * task.any
        elif isinstance(task, (Enter, Arrive)):
            cid = task.card if isinstance(task, Enter) else task.component
            if cid == DECK:
                total += _MONUMENT_VP
            else:
                total += _TABLE[cid][0] + _TABLE[cid][3]
                if isinstance(task, Enter):
                    total -= CARD  # from the hand into play
        elif isinstance(task, ChooseMonument):
            total += _MONUMENT_VP
        elif isinstance(task, ChooseEssences):
            dest, n, excl = task.dest, task.count, task.excluded
            if dest >= 0 and _TABLE[dest][1]:
                total += n * _TABLE[dest][1]  # onto a Place of Power: victory points
            else:
                total += n * (gold_rate if not excl >> GOLD & 1 and dest < 0 else ESSENCE)
        elif isinstance(task, DiscardGain):
            total += ESSENCE if task.second else gold_rate
    return total
