"""The evaluation hook: each seat's chance of winning, as the bots' search reads it.

Checked on the states of seeded random games (seeds the constants were not set on):
one value per seat in [0, 1] summing to 1, a finished game's exact split, the state
left as it was, the rulebook's terms pulling the right way, an action under way seen
whole, and the ranking: the seat
favoured late in a game wins it far more often than chance (with a control showing the
check fails an evaluation that ranks the wrong way).
"""

from __future__ import annotations

import copy
import functools
import sys
from collections.abc import Callable

import services.resarcana.engine as E
from services.kit.bots.evaluation import outcome_values
from services.kit.engine import Outcome
from services.kit.testing import random_game
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.essences import GOLD
from services.resarcana.engine.scoring import victory_points
from services.resarcana.engine.state import ACTIONS

SETUPS = {"first_game": E.Options(setup="first_game"), "draft": E.Options()}
SEEDS = range(200, 250)  # per setup: 100 games, none of those the constants were set on
MARKS = (0.25, 0.5, 0.8)  # how far into a game a state is taken, by decisions made


@functools.cache
def games() -> tuple[tuple[tuple[int, ...], tuple[E.State, ...], E.State], ...]:
    """Per random game: its winners, its states at each of ``MARKS``, and its end."""
    found = []
    for options in SETUPS.values():
        for seed in SEEDS:
            played = random_game(E, seed, 2, options)
            assert played.outcome is not None
            state = E.new_game(seed, 2, options)
            marks = [int(f * played.decisions) for f in MARKS]
            taken = []
            for index, (seat, move) in enumerate(played.moves):
                if index in marks:
                    taken.append(copy.deepcopy(state))
                E.apply(state, seat, move)
            found.append((played.outcome.winners, tuple(taken), state))
    return tuple(found)


def _unfinished() -> list[E.State]:
    return [s for _, taken, _ in games() for s in taken]


def test_one_value_per_seat_in_range_summing_to_one() -> None:
    states = _unfinished()
    assert len(states) == 3 * 2 * len(SEEDS)
    spread = set()
    for state in states:
        values = E.evaluate(state)
        assert len(values) == 2
        assert all(0.0 <= v <= 1.0 for v in values), values
        assert abs(sum(values) - 1.0) < 1e-9, values
        spread.add(round(values[0], 2))
    assert len(spread) > 20, "the evaluation hardly tells positions apart"


def test_a_finished_game_gives_the_outcomes_split() -> None:
    decisive = 0
    for winners, _, end in games():
        assert E.outcome(end) is not None
        assert E.evaluate(end) == outcome_values(winners, 2)
        decisive += len(winners) == 1
    assert decisive > 0
    # A shared win ("If you are still tied, you share the win") and a game nobody won.
    end = copy.deepcopy(games()[0][2])
    for winners in ((0, 1), ()):
        end.result = Outcome((7, 7), winners, "SHARED_WIN", ())
        assert E.evaluate(end) == outcome_values(winners, 2)


def test_the_state_is_never_changed() -> None:
    for state in _unfinished()[::3] + [end for _, _, end in games()[::10]]:
        before = copy.deepcopy(state)
        E.evaluate(state)
        assert state == before


def _midgame() -> E.State:
    """A state in the actions with a Monument still to claim."""
    return next(
        s
        for s in _unfinished()
        if s.phase == ACTIONS and s.monument_display and max(s.seats[0].pool) < 20
    )


def test_what_the_rulebook_counts_pulls_the_right_way() -> None:
    state = _midgame()
    base = E.evaluate(state)[0]

    def first_seat_after(*changes: Callable[[E.State], None]) -> float:
        changed = copy.deepcopy(state)
        for change in changes:
            change(changed)
        return E.evaluate(changed)[0]

    def token(s: E.State) -> None:
        s.first_player = 1 - s.first_player

    def gold(n: int) -> Callable[[E.State], None]:
        return lambda s: s.seats[0].pool.__setitem__(GOLD, s.seats[0].pool[GOLD] + n)

    def no_monuments(s: E.State) -> None:
        s.box += s.monument_display + s.monument_deck
        s.monument_display, s.monument_deck = [], []

    def poorest_monument(s: E.State) -> None:  # seat 0 claims it (the Gold paid elsewhere)
        cid = min(s.monument_display + s.monument_deck, key=lambda c: (CONTENT[c].vp, c))
        (s.monument_display if cid in s.monument_display else s.monument_deck).remove(cid)
        s.seats[0].tableau.append(cid)

    # A victory point more (the First Player token) helps its holder.
    assert (first_seat_after(token) > base) == (state.first_player == 1)
    # Gold helps while a Monument is left to claim, and helps less once none is.
    more_gold = first_seat_after(gold(4))
    assert more_gold > base
    without = first_seat_after(no_monuments)
    assert first_seat_after(no_monuments, gold(4)) - without < more_gold - base
    # Even the poorest Monument is worth the 4 Gold it costs: claiming never looks a loss.
    assert first_seat_after(gold(4), poorest_monument, gold(-4)) > more_gold
    # Essences on a Place of Power are victory points ("1 victory point for essences
    # placed on them").
    place = next(c for c in CONTENT.places if CONTENT[c].vp_per_essence)

    def place_of_power(essences: int) -> Callable[[E.State], None]:
        def change(s: E.State) -> None:
            for held in (s.places, s.seats[0].tableau, s.seats[1].tableau):
                if place in held:
                    held.remove(place)
            s.seats[0].tableau.append(place)
            s.on[place] = [essences, 0, 0, 0, 0]

        return change

    assert first_seat_after(place_of_power(3)) > first_seat_after(place_of_power(0))
    # Nearer the end the same lead decides more (the VP needed lowered to the leader's).
    lead = first_seat_after(gold(4))
    near = first_seat_after(gold(4), lambda s: setattr(s, "target_vp", max(_vps(s))))
    assert (near - 0.5) * (lead - 0.5) > 0 and abs(near - 0.5) > abs(lead - 0.5)


def _vps(state: E.State) -> list[int]:
    return [victory_points(state, s) for s in (0, 1)]


def _discards() -> list[tuple[E.State, E.Move]]:
    """States where the player to act may discard an Artifact (for 1 Gold or 2 essences)."""
    found: list[tuple[E.State, E.Move]] = []
    for state in _unfinished():
        if state.phase == ACTIONS and not state.tasks:
            moves = [m for m in E.legal_moves(state, state.active) if isinstance(m, E.Discard)]
            if moves:
                found.append((state, moves[0]))
    return found


def test_an_action_under_way_is_seen_whole() -> None:
    """Between the decisions of one action the gain still to come is counted: discarding
    for 1 Gold is worth the same before the Gold is chosen as after. Control: without
    the action under way the two differ."""
    module = sys.modules["services.resarcana.engine.evaluate"]
    found = _discards()
    assert len(found) >= 20

    def gap() -> float:
        worst = 0.0
        for state, move in found:
            seat = state.active
            chosen = copy.deepcopy(state)
            E.apply(chosen, seat, move)
            pending = E.evaluate(chosen)[seat]
            E.apply(chosen, seat, E.Gain(GOLD))
            worst = max(worst, abs(pending - E.evaluate(chosen)[seat]))
        return worst

    assert gap() < 1e-9
    kept = module._under_way
    module._under_way = lambda state, gold_rate: 0.0
    try:
        assert gap() > 0.01
    finally:
        module._under_way = kept


def favoured_wins(evaluate: Callable[[E.State], tuple[float, ...]]) -> tuple[int, int]:
    """In decisive games, how often the seat favoured after 80% of the decisions won."""
    right = decided = 0
    for winners, taken, _ in games():
        if len(winners) != 1:
            continue
        values = evaluate(taken[-1])
        if values[0] == values[1]:
            continue
        decided += 1
        right += (0 if values[0] > values[1] else 1) == winners[0]
    return right, decided


# Measured 0.87 (175 of 200) on seeds 0-99 of each setup and 0.89 (89 of 100) on these;
# the bound leaves room for other seeds while staying far above a coin's 0.5.
RANKING_BOUND = 0.7


def test_the_favoured_seat_wins_more_often_than_chance() -> None:
    right, decided = favoured_wins(E.evaluate)
    print(
        f"\nfavoured after 80% of the decisions wins {right} of {decided} ({right / decided:.2f})"
    )
    assert decided >= 90
    assert right / decided >= RANKING_BOUND
    # Control: the same check on an evaluation that ranks the wrong way fails.
    wrong, _ = favoured_wins(lambda s: tuple(reversed(E.evaluate(s))))
    assert wrong / decided < RANKING_BOUND
