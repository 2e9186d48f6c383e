"""Ratings per game and table shape, with openskill's Plackett-Luce model (docs/ratings.md).

Pure and transport-free: the store and the services call it (in the transaction that
finishes a game), the rebuild command replays it.

    from services.kit import ratings
    shape = ratings.shape_of(engine.GAME, players, options)    # None: no rated shape
    rated = ratings.rate_game(shape, seats, outcome, given_up) # or ratings.NotRated
    for update in rated.updates:
        update.player, update.after.rating.mu, update.after.rating.sigma, update.after.games
"""

from services.kit.ratings.ranks import NO_RESULT, Contestant, NotRated, contestants
from services.kit.ratings.rate import (
    Book,
    Rated,
    RatedGame,
    SeatPlayer,
    Update,
    rate_game,
    rebuild,
)
from services.kit.ratings.scale import (
    MODEL,
    NEW,
    POINTS_PER_MU,
    PROVISIONAL_GAMES,
    SHOWN_AT_ZERO,
    Rating,
    Standing,
    points,
    shown,
)
from services.kit.ratings.shapes import (
    Shape,
    UnknownShape,
    options_for,
    parse_shape,
    shape_of,
    shapes,
)

__all__ = [
    "MODEL",
    "NEW",
    "NO_RESULT",
    "POINTS_PER_MU",
    "PROVISIONAL_GAMES",
    "SHOWN_AT_ZERO",
    "Book",
    "Contestant",
    "NotRated",
    "Rated",
    "RatedGame",
    "Rating",
    "SeatPlayer",
    "Shape",
    "Standing",
    "UnknownShape",
    "Update",
    "contestants",
    "options_for",
    "parse_shape",
    "points",
    "rate_game",
    "rebuild",
    "shape_of",
    "shapes",
    "shown",
]
