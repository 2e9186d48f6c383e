"""Games stored before the Evening and simultaneous-step fixes replay as they were played.

Rows written before the fixes hold only ``board``; ``Options.STORED_BEFORE`` gives them
the old rules (``evening="roll"``, ``simultaneous="arrival"``), new games the rulebook's.
"""

from __future__ import annotations

from services.glow import engine
from services.kit.engine import EngineError, replay
from services.kit.games import GameManager
from services.kit.store import open_store
from services.kit.store.base import GameRecord, MoveRecord
from services.kit.testing import random_game

ROW_BEFORE = {"board": "archipelago"}  # a row as the store wrote it before the fixes


def test_a_row_without_the_new_options_takes_the_rules_it_was_played_with() -> None:
    old = engine.Options.from_dict(ROW_BEFORE)
    assert old == engine.Options(board="archipelago", evening="roll", simultaneous="arrival")
    assert engine.Options().to_dict() == {
        "board": "province",
        "evening": "shown",
        "simultaneous": "fixed",
    }
    assert engine.Options.from_dict(engine.Options().to_dict()) == engine.Options()


async def test_a_game_stored_before_the_fixes_replays_from_the_store_as_it_was_played() -> None:
    old = engine.Options.from_dict(ROW_BEFORE)
    seed = 5
    played = random_game(engine, seed, 3, old)
    store = open_store("memory://")
    await store.create(GameRecord("old", "glow", 3, ROW_BEFORE, seed, ("x", "y", "z"), 0.0))
    for version, (seat, move) in enumerate(played.moves, start=1):
        await store.append("old", MoveRecord(version, seat, str(move)))
    manager = GameManager(engine, store)
    game = await manager.get("old")
    assert game.state.options == old
    # The header names the rules the game is played under, not just the stored keys.
    snapshot, _ = await manager.read("old", None)
    assert snapshot.options == old.to_dict() and snapshot.options["evening"] == "roll"
    assert game.state == played.state and engine.outcome(game.state) == played.outcome
    # Control: the same log under today's rules is another game (it stops or differs).
    try:
        today = replay(engine, seed, 3, engine.Options(board="archipelago"), played.moves)
    except EngineError:
        return
    today.options = played.state.options  # compare the play, not the option
    assert today != played.state
