"""Golden playthroughs: seeded games recorded move by move (TABLETOP_UPDATE_GOLDEN=1 rewrites)."""

from __future__ import annotations

from pathlib import Path

import pytest

from services.glow import engine
from services.kit.testing import assert_golden, record_playthrough

GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize(("seed", "players", "board"), [(1, 2, "province"), (2, 3, "archipelago")])
def test_golden_playthrough(seed: int, players: int, board: str) -> None:
    text = record_playthrough(engine, seed, players, engine.Options(board=board))
    assert_golden(GOLDEN / f"seed{seed}-{players}p-{board}.txt", text)
