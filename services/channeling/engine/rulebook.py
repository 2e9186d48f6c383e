"""The rulebook's names for the steps of a turn that a refused move can break.

Each is the name an :class:`~services.kit.engine.IllegalMove` carries as its ``rule``
(the step's number and heading, as the rulebook numbers them). Steps 4 (Place Energy
Cubes), 5 (Remove Energy Cubes) and 7 (Check for Endgame) follow on their own and ask
nothing, so no move is ever refused under them.
"""

from __future__ import annotations

PLAY_A_GLYPH_CARD = "1 - Play a Glyph Card"
MOVE_A_DRUID_TOKEN = "2 - Move a Druid Token"
CHOOSE_A_LEYLINE_PATH = "3 - Choose a Leyline Path"
# Step 6 asks the acquirer the order in which the deck's cards replace acquired ones.
ACQUIRE_MAGIC_CIRCLE_CARDS = "6 - Acquire Magic Circle Cards for Splendor"
