"""The evaluation hook: how likely each seat is to win from a state, for the bots.

The bots call it on states they sampled with ``determinize`` (never on the true state),
to cut rollouts short and as the one-ply greedy bot's criterion. It ranks positions; it
does not solve them.

What decides Shén (see scoring.py): a side wins when it claims all Anchor Points, or when
it alone has cards left in hand, deck and discard pile; under the round limit option the
tie-break is Anchor Points held, then cards left. So each side (a team, or a player on
their own) gets a score in *card units*:

- every card left: the cards are the side's life ("you are defeated if they are
  depleted") and the round limit's second tie-break;
- every card in hand a little more: it can be played (an Avatar, an Item, an instant),
  a card in the deck or the discard pile cannot yet;
- every card on the field (an Avatar, an Item, a Remains in Play card) about as much as
  a card left: still the side's and working for it, though it no longer keeps the side
  in the game, so it counts less as the end nears;
- each Anchor Point held, and each one not held by how soon an Avatar of the side could
  stand on it (one standing there claims it at the start of its owner's next turn):
  toward the all-Anchor-Points win, and each claim past the first costs the opponents a
  card; under a round limit, Anchor Points are the first tie-break, so they weigh far
  more;
- cards the side must lose and has not yet chosen (a pending loss);
- the Avatars' melee, defence and ranged power (with Items and Remains in Play auras):
  what makes the other sides lose cards in combat and keeps this side's cards;
- Shén counters on the field: where cards can be played and what captures.

The scores go through a softmax (for two sides: a logistic of the margin) whose
steepness grows as the game goes on, since a margin late in the game is harder to turn
round. The weights were chosen from the rulebook's scoring and checked against seeded
random games (tests/shen/test_evaluate.py), where they favour the eventual winner at
most decisions.
"""

from __future__ import annotations

import math
from functools import cache

from . import board as geometry
from .content import CARDS
from .state import State, Step

HAND = 0.3  # a card in hand (or being played), on top of counting as a card left
# A card on the field (an Avatar, an Item under one, a Remains in Play card) is still the
# side's, working for it, though it no longer counts toward being out of cards: worth a
# card left at first, less as the game goes on, plus what it adds (POWER). Playing a
# card then costs only HAND, so a greedy player manifests and equips.
FIELD = 1.0
COUNTER = 0.3  # a Shén counter on the field
POWER = 0.2  # a point of an Avatar's melee, defence or ranged power
# An Anchor Point held, without and with the round limit (where it is the first tie-break).
ANCHOR = 2.0
ANCHOR_ROUND_LIMIT = 15.0
# An Avatar standing on an Anchor Point its side does not hold claims it at the start of
# its owner's next turn: worth this share of one held.
THREAT = 0.4
# An Avatar one turn of movement from such an Anchor Point: half this many cards (a third
# two turns away, ...): gives Avatars a direction; small, since it can be blocked.
APPROACH = 1.0
ALL_IN_REACH = 8.0  # held plus stood on: every Anchor Point
# Steepness per card unit: a margin of 5 cards is about 62% at the start of a
# 40-card game and about 73% near its end.
STEEPNESS = 0.1
STEEPNESS_LATE = 0.2
DECK = 40  # the deck size the steepness is set for; bigger decks last longer

_TRAITS = ("melee", "defense", "ranged")
# Per card index, looked up once: an Avatar's own power, an Item's bonus to it, and a
# Remains in Play card's aura to it (for each of its owner's Avatars).
_AVATAR_POWER = tuple(sum(getattr(card, t) for t in _TRAITS) for card in CARDS)
_ITEM_POWER = tuple(sum(card.bonus_of(t) for t in _TRAITS) for card in CARDS)
_AURA_POWER = tuple(sum(card.aura_of(t) for t in _TRAITS) for card in CARDS)
_AVATAR_MOVE = tuple(card.move for card in CARDS)
_ITEM_MOVE = tuple(card.bonus_of("move") for card in CARDS)


@cache
def _distances(anchors: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """For every space: its distance to each Anchor Point (diagonal steps count one)."""
    measure = geometry.board(geometry.MIN_SIZE).distance  # the same on every field size
    return tuple(
        tuple(measure(loc, anchor) for anchor in anchors) for loc in range(geometry.VERTEX)
    )


def evaluate(state: State) -> tuple[float, ...]:
    """Each seat's estimated chance to win, in [0, 1], summing to 1 (0 for every seat when
    a finished game has no winner). Teammates share their team's chance equally; a
    finished game gives each winner an equal share. ``state`` is not changed.

    >>> from services.shen import engine
    >>> values = evaluate(engine.new_game(seed=7, players=2, options=engine.Options()))
    >>> len(values), round(sum(values), 6)
    (2, 1.0)
    """
    players = state.players
    n = len(players)
    if state.step == Step.OVER:
        share = 1.0 / len(state.winners) if state.winners else 0.0
        return tuple(share if seat in state.winners else 0.0 for seat in range(n))

    team_of = [p.team for p in players]
    score = [0.0] * n  # by team number (a seat's own without teams); teams number < n
    members = [0] * n
    alive = [False] * n
    field = [0] * n  # cards on the field, by side
    left = 0
    for p in players:
        cards = len(p.hand) + len(p.deck) + len(p.discard)
        held_cards = len(p.hand)
        if state.playing >= 0 and state.active == p.seat:
            # Counts until it lands (scoring.cards_left), valued as in hand so that
            # starting to play it looks neither good nor bad: where it lands decides.
            cards += 1
            held_cards += 1
        left += cards
        team = p.team
        members[team] += 1
        alive[team] = alive[team] or not p.out
        score[team] += cards + HAND * held_cards
        field[team] += len(p.remains)
        if p.remains:
            aura = sum(_AURA_POWER[c] for c in p.remains)
            if aura:
                score[team] += (
                    POWER * aura * sum(1 for a in state.avatars.values() if a.owner == p.seat)
                )

    limit = state.options.round_limit
    anchor = ANCHOR_ROUND_LIMIT if limit else ANCHOR
    held = [0] * n
    for owner in state.claims.values():
        held[team_of[owner]] += 1
    claims = state.claims
    anchors = state.anchors
    total = len(anchors)
    # Per side and Anchor Point: how soon its nearest Avatar could stand there, as
    # 1 / (1 + turns of movement), 1 when one stands there now (each step counts, so a
    # step toward it shows).
    near = [[0.0] * total for _ in range(n)]
    distances = _distances(anchors)
    for avatar in state.avatars.values():
        team = team_of[avatar.owner]
        power = _AVATAR_POWER[avatar.card]
        move = _AVATAR_MOVE[avatar.card]
        for item in avatar.items:
            power += _ITEM_POWER[item]
            move += _ITEM_MOVE[item]
        field[team] += 1 + len(avatar.items)
        score[team] += POWER * power
        if avatar.loc >= geometry.VERTEX:
            continue  # walking the Spirit Path: Anchor Points are spaces
        mine = near[team]
        for i, d in enumerate(distances[avatar.loc]):
            if d == 0:
                closeness = 1.0
            elif move > 0:
                closeness = 1.0 / (1 + d / move)
            else:
                continue
            if closeness > mine[i]:
                mine[i] = closeness
    # Cards already lost but not yet chosen: without this, putting a loss off (choosing
    # to lose cards rather than an Avatar) would look like keeping the cards.
    for task in state.tasks:
        if task[0] == "lose":
            score[team_of[task[1]]] -= task[2]
        elif task[0] == "yield":
            score[team_of[task[1]]] -= task[3]
        elif task[0] == "foe":  # the seat picks which opponent loses: any of them may
            foes = state.opponents(task[1])
            for foe in foes:
                score[team_of[foe]] -= task[2] / len(foes)
    owners = list(state.counters.values())
    for p in players:
        score[p.team] += COUNTER * owners.count(p.seat)
    for team in range(n):
        if members[team]:
            reach = held[team]
            threat = 0.0
            for i, loc in enumerate(anchors):
                holder = claims.get(loc)
                if holder is None or team_of[holder] != team:
                    if near[team][i] == 1.0:
                        reach += 1
                        threat += anchor * THREAT
                    else:
                        threat += APPROACH * near[team][i]
            score[team] += anchor * held[team] + threat
            if reach >= total:
                score[team] += ALL_IN_REACH

    # How far the game has gone: cards lost or played out, or turns toward the limit.
    dealt = sum(len(deck) for deck in state.initial_decks)
    progress = 1.0 - left / dealt if dealt else 0.0
    if limit:
        progress = max(progress, state.turn / (limit * n))
    progress = min(1.0, max(0.0, progress))
    # The field counts less as the end nears: then only cards left keep a side in.
    for team in range(n):
        score[team] += FIELD * (1 - progress) * field[team]
    steepness = (STEEPNESS + (STEEPNESS_LATE - STEEPNESS) * progress) * DECK * n / dealt

    # Softmax over the sides still in the game; a side with no cards left has lost.
    live = [team for team in range(n) if members[team] and alive[team]]
    if not live:  # everyone out, the end not yet recorded: no side is ahead
        live = [team for team in range(n) if members[team]]
    top = max(score[team] for team in live)
    weight = [0.0] * n
    for team in live:
        weight[team] = math.exp(steepness * (score[team] - top))
    norm = sum(weight)
    return tuple(weight[team_of[seat]] / (norm * members[team_of[seat]]) for seat in range(n))
