"""Golden playthroughs: seeded random games recorded move by move (legal moves, events
with their audience, every view); any change of behaviour shows as a diff.
``TABLETOP_UPDATE_GOLDEN=1`` rewrites the files."""

from __future__ import annotations

from pathlib import Path

import pytest

import services.resarcana.engine as E
from services.kit.testing import assert_golden, record_playthrough

GOLDEN = Path(__file__).parent / "golden"
# Both recorded under the house rule's round limit (20 was the default when the first was
# made): the files stay as they were.
CASES = {
    "first_game_seed_3": (3, E.Options(setup="first_game", round_limit=20)),
    "draft_seed_11": (11, E.Options(round_limit=4)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_golden_playthrough(name: str) -> None:
    seed, options = CASES[name]
    text = record_playthrough(E, seed, 2, options, max_listed=12)
    assert len(text.encode()) < 400_000, "keep golden files small"
    assert_golden(GOLDEN / f"{name}.txt", text)
