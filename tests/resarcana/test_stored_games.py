"""Games stored while the round limit was 20 by default replay as they were played.

Until the round limit became a house rule, opt-in, every Res Arcana Duo game was created
with ``round_limit`` 20, and the store wrote it into the row (``Options.to_dict``), as the
rows in tests/stored show. A row without the key takes it from ``STORED_BEFORE``.
"""

from __future__ import annotations

from services.kit.engine import replay
from services.kit.games import GameManager
from services.kit.store import open_store
from services.kit.store.base import GameRecord, MoveRecord
from services.kit.testing import random_game
from services.resarcana import engine as E

# A default game's row without the key (JSON: what to_dict writes, less round_limit).
ROW_WITHOUT_THE_LIMIT = {
    key: value for key, value in E.Options().to_dict().items() if key != "round_limit"
}


def test_a_stored_row_without_the_round_limit_keeps_20_and_a_new_game_has_none():
    assert "round_limit" not in ROW_WITHOUT_THE_LIMIT
    assert E.Options.from_dict(ROW_WITHOUT_THE_LIMIT) == E.Options(round_limit=20)
    # A row that carries the key (every row stored so far) keeps its own value.
    assert E.Options.from_dict({**ROW_WITHOUT_THE_LIMIT, "round_limit": 0}).round_limit == 0
    assert E.Options.from_dict({**ROW_WITHOUT_THE_LIMIT, "round_limit": 9}).round_limit == 9
    # New games: no limit, and the row says so explicitly.
    assert E.Options().round_limit == 0
    assert E.Options().to_dict()["round_limit"] == 0
    assert E.Options.from_dict(E.Options().to_dict()) == E.Options()


def ended_by_the_round_limit(options: E.Options) -> tuple[int, list]:
    """The first seed whose random game the round limit ends, and its moves."""
    for seed in range(300):
        played = random_game(E, seed, 2, options)
        if played.outcome.reason.startswith("ROUND_LIMIT"):
            return seed, played.moves
    raise AssertionError("no random game reached the round limit")


async def test_a_game_stored_without_the_round_limit_still_ends_at_round_20():
    seed, moves = ended_by_the_round_limit(E.Options.from_dict(ROW_WITHOUT_THE_LIMIT))
    store = open_store("memory://")
    await store.create(
        GameRecord("old", "resarcana", 2, ROW_WITHOUT_THE_LIMIT, seed, ("x", "y"), 0.0)
    )
    for version, (seat, move) in enumerate(moves, start=1):
        await store.append("old", MoveRecord(version, seat, str(move)))
    game = await GameManager(E, store).get("old")
    assert game.state.options == E.Options(round_limit=20)
    result = E.outcome(game.state)
    assert result is not None and result.reason.startswith("ROUND_LIMIT_")
    assert game.state.round == 20 and max(result.scores) < game.state.target_vp
    # Control: the same log as a new default game (no limit) leaves the game going on.
    unlimited = replay(E, seed, 2, E.Options(), moves)
    assert E.outcome(unlimited) is None and unlimited.round == 21
