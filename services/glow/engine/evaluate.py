"""Evaluate: each seat's chance of winning from a state, for the computer players.

"Whoever collects the most bursts of light" wins (End of Game), so a position is scored,
per seat, in bursts of light, as the final count would see it if the game ended now:

- the score track;
- 1. the bursts on the adventurer and the companions in play, losses included;
- 2. the journey: the encampment's village, or the islands under the four boats;
- 3. the ten bursts of the firefly bonus, if the fireflies already match the companions;
- 4. one burst per footprint held.

To that come what the seat will still earn, as far as the table shows it:

- during the Late Morning and Noon, what today's dice will give: the yellow and purple
  faces and the black die's loss (at the start of Noon), and every card whose
  condition the dice meet and that is not resolved yet, as many times as it triggers
  (Noon - Resolve the Cards), less the card's own bursts when its skull (or a spell
  on it) sends it to the cemetery. This is what a reroll is for, so it is what makes a
  reroll worth its price; once resolved, the gain is on the score track instead, so
  resolving does not change the value;
- for each day still to play, a little per companion and per die in play, since cards
  trigger with dice each round (a companion lost to a skull stops earning);
- a spell held (Xar'gok) not triggered yet: half its cost, bursts and the companion it
  lies on, while a day is still to come in which it may trigger;
- reroll tokens: they break a tie (the most reroll tokens wins) and buy better dice.

The bursts map to a probability by a softmax (for two seats, a logistic of the margin)
whose spread grows with the days left: what can still change adds up day by day.

The constants were fitted by log-loss and by how often the favourite wins, on the
decisions of 600 seeded random games (seeds 0-599, both boards, 2 to 4 players); the
tests check the ranking on other seeds. In random play the per-day, spell and reroll
terms barely move the fit: they are kept small, for the choices a greedy player weighs with
them (a companion or a spell to a skull space, a Sketal's die). It is a guide for
search and for the one-ply greedy player, not an oracle. It reads the whole state (bots
call it on determinized states only), never changes it, and costs 5 to 40 microseconds
(most during the Late Morning and Noon, with four players). Glow has no teams.
"""

from __future__ import annotations

import math

from .content import (
    ADVENTURER,
    ADVENTURERS,
    ARCHIPELAGO,
    BLACK_LOSS,
    BURST,
    COMPANIONS,
    CURSE,
    DAYS,
    DICE,
    FIREFLY_BONUS,
    FOOTPRINT,
    PROVINCE,
    PURPLE_FOOTPRINTS,
    SPELLS,
    SYMBOLS,
    YELLOW_BURST,
    Card,
    Spell,
)
from .moves import ADVENTURER_REF, SPELL_REF
from .rules.morning import has_kaar
from .state import ADVENTURERS as CHOOSING_ADVENTURERS
from .state import LATE_MORNING, MORNING, NOON, Player, State

# Fitted on random games (see the module's docstring).
PER_COMPANION_DAY = 0.3  # bursts a companion in play earns per day still to play
PER_DIE_DAY = 0.05  # bursts a die in play earns per day still to play
SPELL_LIKELIHOOD = 0.5  # the share of a held spell's cost counted before it triggers
REROLL_TOKEN = 0.3  # bursts a reroll token is worth (the tie-break, better dice)
SPREAD = 2.0  # softmax spread, in bursts, at the very end
SPREAD_PER_DAY = 4.0  # and its growth per day still to play (linear fitted better than sqrt)

_BURSTS = {c: card.bursts for c, card in COMPANIONS.items()}
_FACES = tuple(die.faces for die in DICE)
# What a special face gives at the start of Noon; the curse is the black die's loss.
_SPECIAL = tuple(
    {BURST: YELLOW_BURST, FOOTPRINT: PURPLE_FOOTPRINTS, CURSE: -BLACK_LOSS}.get(s, 0)
    for s in range(len(SYMBOLS))
)

_MOST_SAME = max(
    condition.same
    for condition in [
        *(c.condition for c in COMPANIONS.values()),
        *(a.card.condition for a in ADVENTURERS),
        *(s.condition for s in SPELLS.values()),
    ]
)

# A card as _dice_today reads it: (need, same, avoid, once, gain per trigger).
_Card = tuple[tuple[tuple[int, int], ...], int, tuple[int, ...], bool, float]


def _card(card: Card | Spell, once: bool, leaves: int) -> _Card:
    """``leaves``: the end-of-game bursts lost when the card's skull sends it away."""
    effect, condition = card.effect, card.condition
    if condition.empty:
        return ((), 0, (), True, 0.0)  # never triggers
    gain = effect.bursts + effect.footprints + REROLL_TOKEN * effect.rerolls - leaves
    return (condition.need, condition.same, condition.avoid, once, gain)


_ADVENTURER = {a.id: _card(a.card, a.card.once, 0) for a in ADVENTURERS}
_COMPANION = {
    c: _card(card, card.once, card.bursts if card.effect.skull else 0)
    for c, card in COMPANIONS.items()
}
_SPELL = {s: _card(spell, True, 0) for s, spell in SPELLS.items()}
_FIREFLIES = {c: card.fireflies for c, card in COMPANIONS.items()}
_ISLAND = tuple(island.value for island in ARCHIPELAGO.islands)
_VILLAGE = tuple(max(0, spot.village) for spot in PROVINCE.spots)


def evaluate(state: State) -> tuple[float, ...]:
    """Each seat's chance of winning from ``state``, in [0, 1], summing to 1.

    A finished game gives its outcome: 1/len(winners) to each winner, 0 to the others.

    >>> from services.glow import engine
    >>> state = engine.new_game(3, 3, engine.Options())
    >>> chances = evaluate(state)
    >>> len(chances), [round(c, 3) for c in chances], abs(sum(chances) - 1.0) < 1e-9
    (3, [0.333, 0.333, 0.333], True)
    """
    result = state.result
    if result is not None:
        winners = result.winners
        share = 1.0 / len(winners) if winners else 0.0
        return tuple(share if seat in winners else 0.0 for seat in range(state.n))
    return _chances(expected_bursts(state), SPREAD + SPREAD_PER_DAY * _days_left(state))


def expected_bursts(state: State) -> list[float]:
    """Each seat's bursts of light as the final count would see them now, with what the
    table says is still to come (the terms are in the module's docstring).

    >>> from services.glow import engine
    >>> expected_bursts(engine.new_game(3, 2, engine.Options()))  # 10 + the firefly bonus
    [20.0, 20.0]
    """
    days = _days_left(state)
    later = DAYS - state.day  # whole days after today
    today = state.step in (LATE_MORNING, NOON)
    province = state.options.board == "province"
    points = []
    for player in state.players:
        companions = player.companions
        # Reroll tokens earned at Noon or on the journey are handed out when the step ends.
        value = (
            player.score + player.footprints + REROLL_TOKEN * (player.rerolls + player.rerolls_due)
        )
        if player.adventurer:
            value += ADVENTURER[player.adventurer].card.bursts
        fireflies = player.fireflies
        for c in companions:
            value += _BURSTS[c]
            fireflies += _FIREFLIES[c]
        if fireflies >= len(companions):
            value += FIREFLY_BONUS
        if province:
            value += _VILLAGE[player.encampment]
        else:
            for island in player.boats:
                value += _ISLAND[island]
        if today:
            value += _dice_today(state, player, later)
        elif later or state.step == MORNING:
            for spell in player.spells + player.hidden_spells:
                value += _held_spell(spell, companions)
        value += days * (
            PER_COMPANION_DAY * len(companions)
            + PER_DIE_DAY
            * (len(player.adventurer_dice) + len(player.sketal_dice) + len(player.small_dice))
        )
        points.append(value)
    return points


def _days_left(state: State) -> float:
    """Days still to play, counting today's part not yet played: the whole day until
    the dice are resolved, half of it at Noon, a quarter on the journey."""
    if state.step == CHOOSING_ADVENTURERS:
        return float(DAYS)
    rest = 1.0 if state.step in (MORNING, LATE_MORNING) else 0.5 if state.step == NOON else 0.25
    return DAYS - state.day + rest


def _held_spell(spell: int, companions: list[int]) -> float:
    """A spell not triggered yet will likely trigger on a day still to come, costing its
    bursts and the companion it lies on (the last recruited)."""
    gain = _SPELL[spell][4]
    return SPELL_LIKELIHOOD * (gain - (_BURSTS[companions[-1]] if companions else 0))


def _dice_today(state: State, player: Player, later: int) -> float:
    """What today's dice will still give the seat: in bursts, footprints and reroll
    tokens, with the special faces while they have not acted (before Noon). Before Noon
    the curse's cancelled dice are not foreseen: a guide, not the rule.

    The same count as noon.triggered (Condition.times, once-only cards at most once),
    inlined from tables: this is the hot path of a search.
    """
    value = 0.0
    faces = state.faces
    late_morning = state.step == LATE_MORNING
    cancelled = player.cancelled
    counts = [0] * len(SYMBOLS)
    for die in player.rolled:
        shown = _FACES[die][faces[die]]
        if die not in cancelled:
            counts[shown] += 1
        if late_morning:
            value += _SPECIAL[shown]
            if shown == CURSE and has_kaar(player):
                value += BLACK_LOSS  # Kaar's owner is immune
    # Groups of ``same`` identical symbols, for "same 2", "same 3" and "same 4".
    groups = [0, 0] + [sum(c // same for c in counts) for same in range(2, _MOST_SAME + 1)]
    resolved = player.resolved
    companions = player.companions
    cards = [] if ADVENTURER_REF in resolved else [_ADVENTURER[player.adventurer]]
    cards += [_COMPANION[c] for c in companions if c not in resolved]
    for need, same, avoid, once, gain in cards:
        times = groups[same] if same else 1 << 30
        for symbol, n in need:
            if counts[symbol] < n * times:
                times = counts[symbol] // n
        if times and not any(counts[symbol] for symbol in avoid):
            value += gain if once else gain * times
    for spell in player.spells:
        if SPELL_REF + spell in resolved:
            continue
        need, same, avoid, once, gain = _SPELL[spell]
        met = all(counts[symbol] >= n for symbol, n in need) and (not same or groups[same])
        if met and not any(counts[symbol] for symbol in avoid):
            # The companion the spell lies on goes to the cemetery with it.
            value += gain - (_BURSTS[companions[-1]] if companions else 0)
        elif later:
            value += _held_spell(spell, companions)
    if later:
        # Taken face down today (Xar'gok): revealed tomorrow.
        for spell in player.hidden_spells:
            value += _held_spell(spell, companions)
    return value


def _chances(points: list[float], spread: float) -> tuple[float, ...]:
    """A softmax of the bursts over ``spread``: for two seats, a logistic of the margin."""
    best = max(points)
    weights = [math.exp((p - best) / spread) for p in points]
    total = sum(weights)
    return tuple(w / total for w in weights)
