"""Rebuild == incremental: rating every game as it finishes, through a store's columns,
gives exactly the ratings that replaying the stored results in finishing order gives."""

from __future__ import annotations

import json
import random
import sqlite3

import pytest

from services.glow import engine as glow
from services.kit import ratings
from services.kit.engine import Outcome
from services.shen import engine as shen
from services.shrine import engine as shrine

INFO = {"shrine": shrine.GAME, "glow": glow.GAME, "shen": shen.GAME}
SHAPES = [
    ratings.parse_shape(shrine.GAME, "2p"),
    ratings.parse_shape(glow.GAME, "3p"),
    ratings.parse_shape(glow.GAME, "4p"),
    ratings.parse_shape(shen.GAME, "2v2"),
    ratings.parse_shape(shen.GAME, "2v2v2"),
]


def finished_games(seed: int, count: int) -> list[ratings.RatedGame]:
    """Games between 30 players over five shapes, in finishing order: most rated, some
    with a seat that gave up, some abandoned, some with an anonymous seat or one player
    in two seats (not rated: the rebuild must skip exactly those)."""
    rng = random.Random(seed)
    people = [f"player-{i:02d}" for i in range(30)]
    games = []
    for n in range(count):
        shape = rng.choice(SHAPES)
        players: list[str | None] = rng.sample(people, shape.players)
        scores = tuple(rng.randrange(0, 40) for _ in range(shape.players))
        side = rng.randrange(len(shape.seating))
        winners = shape.seating[side] if rng.random() < 0.9 else ()
        reason = "RULES"
        given_up: frozenset[int] = frozenset()
        roll = rng.random()
        if roll < 0.1:
            loser = rng.choice([s for s in range(shape.players) if s not in winners])
            given_up = frozenset({loser})
        elif roll < 0.15:
            winners, reason = (), rng.choice(["ABANDONED", "EXPIRED"])
        elif roll < 0.18:
            players[rng.randrange(shape.players)] = None
        elif roll < 0.2:
            players[0] = players[-1]
        games.append(
            ratings.RatedGame(
                f"game-{n:04d}", shape, tuple(players), Outcome(scores, winners, reason), given_up
            )
        )
    return games


class SqliteRatings:
    """The phase-2 store's ratings table, in SQLite: mu and sigma as REAL (doubles)."""

    def __init__(self, lossy: bool = False) -> None:
        self.db = sqlite3.connect(":memory:")
        self.lossy = lossy
        self.db.execute(
            "CREATE TABLE ratings (game_type TEXT, shape TEXT, player_id TEXT, mu REAL,"
            " sigma REAL, games INTEGER, updated_at REAL,"
            " PRIMARY KEY (game_type, shape, player_id))"
        )
        self.db.execute(
            "CREATE TABLE rated_games (seq INTEGER PRIMARY KEY, game_type TEXT, result TEXT)"
        )

    def standing(self, shape: ratings.Shape, player: str) -> ratings.Standing:
        row = self.db.execute(
            "SELECT mu, sigma, games FROM ratings"
            " WHERE game_type = ? AND shape = ? AND player_id = ?",
            (shape.game, shape.name, player),
        ).fetchone()
        return (
            ratings.Standing()
            if row is None
            else ratings.Standing(ratings.Rating(row[0], row[1]), row[2])
        )

    def finish(self, game: ratings.RatedGame, at: float) -> None:
        """What the transaction that finishes a rated game does: read the seats'
        standings, rate, write the new ones and the game's result, in one transaction."""
        with self.db:
            seats = [
                None if p is None else ratings.SeatPlayer(p, self.standing(game.shape, p))
                for p in game.players
            ]
            self.db.execute(
                "INSERT INTO rated_games (game_type, result) VALUES (?, ?)",
                (game.shape.game, json.dumps(game.to_dict())),
            )
            try:
                rated = ratings.rate_game(game.shape, seats, game.outcome, game.given_up)
            except ratings.NotRated:
                return
            for u in rated.updates:
                mu, sigma = u.after.rating.mu, u.after.rating.sigma
                if self.lossy:
                    mu, sigma = round(mu, 4), round(sigma, 4)
                self.db.execute(
                    "INSERT INTO ratings VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT"
                    " (game_type, shape, player_id) DO UPDATE SET mu = excluded.mu,"
                    " sigma = excluded.sigma, games = excluded.games,"
                    " updated_at = excluded.updated_at",
                    (game.shape.game, game.shape.name, u.player, mu, sigma, u.after.games, at),
                )

    def stored_games(self) -> list[ratings.RatedGame]:
        rows = self.db.execute("SELECT game_type, result FROM rated_games ORDER BY seq")
        return [ratings.RatedGame.from_dict(json.loads(r), INFO[t]) for t, r in rows]

    def all(self) -> dict[tuple[str, str], ratings.Standing]:
        rows = self.db.execute("SELECT game_type, shape, player_id, mu, sigma, games FROM ratings")
        return {
            (f"{t}/{s}", p): ratings.Standing(ratings.Rating(mu, sigma), games)
            for t, s, p, mu, sigma, games in rows
        }


def run(games: list[ratings.RatedGame], lossy: bool = False) -> SqliteRatings:
    store = SqliteRatings(lossy)
    for n, game in enumerate(games):
        store.finish(game, float(n))
    return store


@pytest.mark.parametrize("seed", range(3))
def test_rebuild_from_the_stored_results_equals_the_incremental_ratings(seed: int) -> None:
    games = finished_games(seed, 400)
    store = run(games)
    stored = store.stored_games()
    assert stored == games  # the stored result is enough to rate the game again
    rebuilt = dict(ratings.rebuild(stored).items())
    incremental = store.all()
    assert rebuilt == incremental  # exact: the same doubles, the same game counts
    assert len(incremental) > 100
    # Some games were skipped, as they were when they finished; every other seat counted.
    unrated = [g for g in games if _not_rated(g)]
    assert len(unrated) > 10
    seats_rated = sum(g.shape.players for g in games) - sum(g.shape.players for g in unrated)
    assert sum(s.games for s in incremental.values()) == seats_rated


def _not_rated(game: ratings.RatedGame) -> bool:
    try:
        ratings.rate_game(
            game.shape,
            [None if p is None else ratings.SeatPlayer(p) for p in game.players],
            game.outcome,
            game.given_up,
        )
    except ratings.NotRated:
        return True
    return False


def test_control_a_store_that_rounds_its_doubles_does_not_rebuild_the_same() -> None:
    """Control: mu and sigma rounded to 4 decimals on the way in; the rebuild (which
    never rounds) then differs, so the test above sees a lossy column."""
    games = finished_games(0, 400)
    store = run(games, lossy=True)
    assert dict(ratings.rebuild(store.stored_games()).items()) != store.all()


def test_control_replaying_in_another_order_differs() -> None:
    """Control: the order matters (a player's later games start from its earlier
    result), so the rebuild must follow the finishing order the store recorded."""
    games = finished_games(0, 400)
    store = run(games)
    assert dict(ratings.rebuild(list(reversed(games))).items()) != store.all()
    assert dict(ratings.rebuild(games).items()) == store.all()
