"""Seeded random games to the end for every configuration, with the contract checked after
every move (kit ``check_random_game``), this game's invariants and the leak check; and
every event checked for what its audience may not know."""

from __future__ import annotations

import collections
import time

import pytest

import services.resarcana.engine as E
from services.kit.testing import check_random_game, random_game_count
from tests.resarcana.helpers import check_invariants, known_slugs, leak_check, named_in

# The house rule's round limit, which the variants play under (so random play goes
# through it too, in a few games in a hundred). The first game and the full game are
# also played as the rulebook has them, with no limit: every random game measured ends at
# a victory check (10,000 seeds, 2,000 per configuration: the longest 51 rounds, 1,386
# decisions; see the README's figures).
LIMIT = 20

CONFIGS = {
    "first_game": E.Options(setup="first_game"),
    "first_game_random_places": E.Options(setup="first_game", places="random", round_limit=LIMIT),
    "draft": E.Options(),
    "draft_amber_places": E.Options(places="amber", round_limit=LIMIT),
    "draft_collect_in_turn_order": E.Options(collect_in_turn_order=True, round_limit=LIMIT),
}
# 10 games per configuration in make test (each about 0.7 s), 1,000 in make soak.
GAMES = random_game_count(10)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_random_games_reach_an_outcome(name: str) -> None:
    options = CONFIGS[name]
    started = time.perf_counter()
    reasons: collections.Counter[str] = collections.Counter()
    decisions = longest = 0
    rounds = []
    for seed in range(GAMES):
        played = check_random_game(
            E, seed, 2, options, invariants=check_invariants, leak_check=leak_check
        )
        assert played.outcome is not None
        reasons[played.outcome.reason] += 1
        decisions += played.decisions
        longest = max(longest, played.decisions)
        rounds.append(played.state.round)
        if not options.round_limit:  # the rulebook's end: a victory check with the target
            assert not played.outcome.reason.startswith("ROUND_LIMIT"), seed
            assert max(played.outcome.scores) >= played.state.target_vp, seed
    elapsed = time.perf_counter() - started
    print(
        f"\n{name}: {GAMES} games, {decisions} decisions, {elapsed:.1f}s, longest {longest},"
        f" rounds {min(rounds)}-{max(rounds)} (median {sorted(rounds)[len(rounds) // 2]}),"
        f" reasons {dict(sorted(reasons.items()))}"
    )


@pytest.mark.parametrize("name", ["first_game", "draft"])
def test_events_tell_nobody_what_they_may_not_know(name: str) -> None:
    """A public event names only what is public before or after it; a private event only
    what its audience may know before or after it."""
    import random

    for seed in range(max(6, GAMES // 10)):
        state = E.new_game(seed, 2, CONFIGS[name])
        rng = random.Random(seed)
        while E.outcome(state) is None:
            seat = rng.choice(E.to_act(state))
            move = rng.choice(E.legal_moves(state, seat))
            drafted = state.options.setup == "draft"
            before = {s: known_slugs(state, s, drafted) for s in (0, 1, None)}
            events = E.apply(state, seat, move)
            after = {s: known_slugs(state, s, drafted) for s in (0, 1, None)}
            # A card discarded face up is public from then on, even if it is retrieved
            # again within the same move (Fortune Teller discards, then retrieves).
            tucked = set().union(
                *(named_in(e.text + repr(dict(e.data))) for e in events if e.kind == "discard")
            )
            after = {s: known | tucked for s, known in after.items()}
            # Cards drawn or looked at are shown to that player by the rules, even when a
            # forced return puts them back within the same move (a Brass Bust on 1 card).
            for e in events:
                if e.kind in ("draw", "look") and e.to is not None and len(e.to) == 1:
                    (looker,) = e.to
                    after[looker] = after[looker] | named_in(repr(dict(e.data)))
            for event in events:
                audience = [None, 0, 1] if event.to is None else sorted(event.to)
                said = named_in(event.text) | named_in(repr(dict(event.data)))
                for who in audience:
                    leaked = said - before[who] - after[who]
                    assert not leaked, f"{event.text!r} tells {who} about {sorted(leaked)}"
