"""How far from its own rating a waiting player accepts an opponent, as it waits.

Distances are in the shown scale's points (services/kit/ratings/scale.py: 40 points per
unit of mu; between settled players 100 points is a 65% favourite, 300 an 87% one). A
player's window is ``min(start + widen * seconds waited, most)`` either side of its
skill estimate (its mu, not its conservative ordinal: two players of equal mu are an
even game however sure the service is of each). Two players may meet when each is
within the other's window, so the one who has waited less sets the bound: a newcomer
is first offered opponents near its own level, and a long wait widens a pair's choice
only once both have waited.

The defaults: ±100 at once (a 65% favourite at most), then 10 points wider per second
(±300 after 20 s, an 87% favourite; ±500 after 40 s, 97%), after Lichess's pools, whose
pairing allows about ±100 at first, then 12 points more per missed pairing wave (one
every few seconds). Unlike Lichess's, the window has no widest by default: our pools are
small, and two players who have waited long for a game should get one, however
lopsided (either may leave the pool at any time). ``most`` caps it where an operator
prefers waiting to lopsided games.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Window:
    start: float = 100.0  # points either side, at once
    widen: float = 10.0  # points per second of wait
    most: float = math.inf  # points either side, at the widest

    def __post_init__(self) -> None:
        if self.start < 0 or self.widen < 0 or self.most < self.start:
            raise ValueError("a window needs 0 <= start <= most and widen >= 0")

    def at(self, waited: float) -> float:
        """The half-width after ``waited`` seconds in the pool."""
        return min(self.start + self.widen * max(0.0, waited), self.most)
