"""Games stored before a rule changed replay as they were played (the store's options row).

Until the round limit became opt-in, every Shén game was created with ``round_limit`` 40
and the store wrote it into the row (``Options.to_dict``); until captures were fixed,
rows had no ``captures_at_once`` and take the old rule from ``STORED_BEFORE``.
"""

from __future__ import annotations

import pytest

from services.kit.engine import BadOptions, replay
from services.kit.games import GameManager
from services.kit.store import open_store
from services.kit.store.base import GameRecord, MoveRecord
from services.kit.testing import random_game
from services.shen import engine

# A row as the store wrote it for a default game before either change (JSON: lists).
ROW_BEFORE = {
    "size": 8,
    "anchor_points": [],
    "deck_size": 40,
    "realms": [],
    "decks": [],
    "teams": 0,
    "round_limit": 40,
}


def test_a_stored_row_keeps_its_round_limit_and_the_captures_it_was_played_with():
    old = engine.Options.from_dict(ROW_BEFORE)
    assert old == engine.Options(round_limit=40, captures_at_once=False)
    # New games: no limit, captures at once, and the row says so explicitly.
    assert engine.Options().to_dict()["round_limit"] == 0
    assert engine.Options.from_dict(engine.Options().to_dict()) == engine.Options()
    with pytest.raises(BadOptions):
        engine.new_game(1, 2, engine.Options.from_dict({**ROW_BEFORE, "captures_at_once": 1}))


def ended_by_the_round_limit(options: engine.Options) -> tuple[int, list]:
    """The first seed whose random 2-player game the round limit ends, and its moves."""
    for seed in range(40):
        played = random_game(engine, seed, 2, options)
        if played.outcome.reason == "ROUND_LIMIT":
            return seed, played.moves
    raise AssertionError("no random game reached the round limit")


async def test_a_game_stored_with_the_old_default_still_ends_at_its_round_limit():
    seed, moves = ended_by_the_round_limit(engine.Options.from_dict(ROW_BEFORE))
    store = open_store("memory://")
    await store.create(GameRecord("old", "shen", 2, ROW_BEFORE, seed, ("x", "y"), 0.0))
    for version, (seat, move) in enumerate(moves, start=1):
        await store.append("old", MoveRecord(version, seat, str(move)))
    game = await GameManager(engine, store).get("old")
    assert game.state.options == engine.Options(round_limit=40, captures_at_once=False)
    assert engine.outcome(game.state).reason == "ROUND_LIMIT"
    assert all(p.turns == 40 for p in game.state.players)
    # Control: the same log under the new default leaves the game going on.
    unlimited = replay(engine, seed, 2, engine.Options(captures_at_once=False), moves)
    assert engine.outcome(unlimited) is None
