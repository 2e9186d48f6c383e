"""Golden playthroughs: seeded random games written move by move (legal moves, events
with their audience, every view). Any change in behaviour shows up as a diff in review;
``make golden`` (TABLETOP_UPDATE_GOLDEN=1) rewrites them."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.kit.testing import assert_golden, record_playthrough
from services.shrine import engine

GOLDEN = Path(__file__).parent / "golden"
CASES = [
    ("base_seed1", 1, engine.Options()),
    ("base_seed2", 2, engine.Options()),
    ("radiant_shapes_seed4", 4, engine.Options(radiant_shapes=True)),
]


@pytest.mark.parametrize(("name", "seed", "options"), CASES, ids=[c[0] for c in CASES])
def test_golden_playthrough(name: str, seed: int, options: engine.Options) -> None:
    text = record_playthrough(engine, seed, 2, options)
    assert len(text.encode()) < 400_000
    assert_golden(GOLDEN / f"{name}.txt", text)
