"""The rulebook's names for its rules, as refused moves name them (``IllegalMove.rule``).

Each is the heading of the rulebook's section that a refused move breaks, word for word,
so a player holding the rulebook finds the rule under that name.
"""

from __future__ import annotations

SETUP = "Setup"
COLLECT = "1. Collect"
ACTIONS = "2. Actions"
PLACE_AN_ARTIFACT = "Place an Artifact"
CLAIM = "Claim a Monument or a Place of Power"
DISCARD_AN_ARTIFACT = "Discard an Artifact"
USE_A_POWER = "Use a power"
COST = "Cost"
DISCOUNT = "Discount"
POWERS = "Powers"
SPECIAL_CASES = "Special Cases"
PASSING = "Passing"
