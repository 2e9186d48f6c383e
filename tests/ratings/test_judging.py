"""Issue 28's judging scenario: 20 players of two levels play rated 2-player games of
Channeling over gRPC with their players' tokens, the strong ones' moves chosen by the
kit's greedy bot (one ply over determinizations), the weak ones' at random, both by this
test client; the strong end above the weak, and a rebuild from the stored results comes
out equal. 20 games under ``make test``; ``make soak`` (TABLETOP_RANDOM_GAMES) plays 100.
Seeded throughout: the deals, the moves and so the ratings are the same every run."""

from __future__ import annotations

import os
import random
import statistics

from client.api import GameClient
from services import registry
from services.channeling import codec
from services.kit.bots import greedy
from services.kit.bots import random as random_bot
from services.kit.ratings.rebuilding import rebuild_store
from tests.matchmaking.test_find_match import FORFEIT, service, token
from tests.ratings.test_rated_tables import MINE, OPEN

NAME = "channeling"
GAMES = 100 if os.environ.get("TABLETOP_RANDOM_GAMES") else 20


async def play_rated(client, engine, seed, players, strong, rng) -> None:
    """One rated game between ``players`` (seat order), to its end."""
    created = await client.call(
        "CreateGame", token(players[0]), players=2, seats=[MINE, OPEN], time_control=FORFEIT,
        rated=True, seed=seed,
    )  # fmt: skip
    game_id = created.game.game_id
    await client.join(game_id, "", token=token(players[1]))
    state = engine.new_game(seed, 2, engine.GAME.options_type())
    while engine.outcome(state) is None:
        seat = engine.to_act(state)[0]
        player = players[seat]
        if player in strong:
            move = greedy.decide(engine, state, seat, rng, samples=2)
        else:
            move = random_bot.decide(engine, state, seat, rng)
        await client.call(
            "SubmitMove", token(player), game_id=game_id, move=codec.move_to_proto(move),
            omit_view=True,
        )  # fmt: skip
        engine.apply(state, seat, move)


async def test_random_rated_games_put_the_strong_above_the_weak_and_rebuild_equal():
    engine = registry.by_name(NAME).engine()
    rng = random.Random(28)
    strong = {f"strong-{i:02d}" for i in range(10)}
    weak = [f"weak-{i:02d}" for i in range(10)]
    async with service() as (running, channel):
        client = GameClient(NAME, channel)
        for game in range(GAMES):
            pair = [rng.choice(sorted(strong)), rng.choice(weak)]
            rng.shuffle(pair)
            await play_rated(client, engine, 1000 + game, pair, strong, rng)
        rated = await running.store.rated_games(NAME)
        assert len(rated) == GAMES and all(r.rated for r in rated)
        assert len({r.game_id for r in rated}) == GAMES  # each game rated once
        standings = {e.player_id: e.standing for e in await running.store.all_ratings(NAME)}
        assert sum(s.games for s in standings.values()) == 2 * GAMES
        shown = {p: s.shown for p, s in standings.items()}
        strong_shown = [v for p, v in shown.items() if p in strong]
        weak_shown = [v for p, v in shown.items() if p not in strong]
        assert statistics.mean(strong_shown) > statistics.mean(weak_shown), shown
        assert statistics.median(strong_shown) > statistics.median(weak_shown), shown
        assert await rebuild_store(running.store, engine.GAME, check=True) == []
