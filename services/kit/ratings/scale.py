"""A rating as stored (openskill's mu and sigma) and as shown (docs/ratings.md).

Every rating of every game and shape comes from one Plackett-Luce model with openskill's
default parameters (mu 25, sigma 25/3, beta 25/6, tau 25/300): a rating stored under
these parameters can only be replayed under them, so they are fixed here, not settings.

The shown rating is the conservative ordinal, ``mu - 3 sigma`` (the skill the service is
99.7% sure a player has at least), on a familiar scale::

    shown = 750 + 40 * (mu - 3 sigma)

- 40 points per unit of mu: for two players whose ratings have settled (sigma about 2),
  openskill's own prediction (``predict_win``) gives the one 100 points (2.5 mu) above
  65% of the wins, where Elo's formula says 64%: a gap reads as it would in Elo.
- 750 for a newcomer (mu 25, sigma 25/3: ordinal 0), so an average player (mu 25) whose
  rating has settled (sigma 2) shows 1510, near the 1500 people know as "average". A
  player's shown rating rises while the service learns it (sigma falls with every game),
  even at a constant skill: that is the price of never overstating one.
"""

from __future__ import annotations

from dataclasses import dataclass

from openskill.models import PlackettLuce, PlackettLuceRating

MODEL = PlackettLuce()

# The scale: shown = SHOWN_AT_ZERO + POINTS_PER_MU * ordinal.
SHOWN_AT_ZERO = 750.0
POINTS_PER_MU = 40.0
# How many sigmas the ordinal takes off mu (openskill's ordinal default, z = 3).
Z = 3.0
# A player's rating in a shape is provisional until its tenth rated game there.
PROVISIONAL_GAMES = 10


@dataclass(frozen=True)
class Rating:
    """openskill's belief about one player's skill in one shape: a value, stored as is
    (two doubles, never rounded: the rebuild must come out the same)."""

    mu: float = MODEL.mu
    sigma: float = MODEL.sigma

    @property
    def ordinal(self) -> float:
        return self.mu - Z * self.sigma

    @property
    def shown(self) -> int:
        return shown(self.ordinal)

    def model_rating(self) -> PlackettLuceRating:
        return MODEL.rating(mu=self.mu, sigma=self.sigma)


NEW = Rating()


def shown(ordinal: float) -> int:
    """The conservative ordinal on the shown scale, rounded to a whole point."""
    return round(SHOWN_AT_ZERO + POINTS_PER_MU * ordinal)


def points(mu: float) -> float:
    """A skill estimate (mu) in the shown scale's points (matchmaking compares these;
    only their differences matter, so no anchor is added)."""
    return POINTS_PER_MU * mu


@dataclass(frozen=True)
class Standing:
    """A player's rating in one shape and how many rated games it comes from."""

    rating: Rating = NEW
    games: int = 0

    @property
    def provisional(self) -> bool:
        """Until the tenth rated game is counted: the rating moves a lot and says little."""
        return self.games < PROVISIONAL_GAMES

    @property
    def shown(self) -> int:
        return self.rating.shown
