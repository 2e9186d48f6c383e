"""Games stored by an earlier release replay, with today's code, exactly as they were played.

The fixture (logs/games.jsonl.gz, made by make_fixture.py from an old checkout, see
logs/README.md) holds for each game what the store keeps (game type, seed, players, the
options dict as it was saved, the move log as text) and what the old code computed.

What must not change, and how it is compared:

- the options: rebuilt with the game's ``Options.from_dict`` as the store does, so a key
  added since takes its ``STORED_BEFORE`` value (the rule the game was played under);
- every move: its text parses with ``parse_move`` and prints back to the same text, and
  ``apply`` accepts it, in order, with the same seat; no outcome before the last move;
- the public facts along the way: every 50 moves the spectator view, read as plain data
  (field names and values, see ``make_fixture.canonical``), has the digest the old code
  computed; a difference names the 50 moves it lies in;
- the end: the same outcome (scores, winners, reason, details), the same version (the
  number of moves), and the same digest of every seat's and the spectator's final view;
  ``services.kit.engine.replay`` rebuilds an equal state.

A view may gain a field that shows something new (Shrine's ``bottom_seat`` and
``no_claim``; Glow's ``rerolls_due``): such fields are listed by name in
``ADDED_VIEW_FIELDS`` and left out of the digests, at any depth. Any other new field
fails the test by name, so a field is only ever left out on purpose; a field that
disappeared fails too.

Controls: with a game's ``STORED_BEFORE`` entry removed (a stored row then takes the
fixed rule), the games that went through that rule must fail this same comparison, so
the fixture is shown to guard each migration. test_old_store_rows_load_through_the_manager
takes the rows an old SQLite store wrote, opens them with today's store (which migrates
the file) and loads every game through the GameManager, the path the service uses; with
Glow's migration switched off the same path refuses (quarantines) an old Glow game.
"""

from __future__ import annotations

import gzip
import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest

from services import registry
from services.kit.engine import EngineError, replay
from services.kit.errors import PlatformError
from services.kit.games import GameManager
from services.kit.store import open_store
from tests.stored.make_fixture import CHECKPOINT, digest, field_names, outcome_dict, top_fields

LOGS = Path(__file__).parent / "logs"
# Games stored by the release with tables and bots, before the engines moved onto the
# kit's kernel (logs-2026-12/README.md): today's default options and one configuration
# per option away from its default.
LOGS_2026_12 = Path(__file__).parent / "logs-2026-12"

# View fields added after the fixture was made: new information, not a changed fact.
ADDED_VIEW_FIELDS: Mapping[str, frozenset[str]] = {
    "shrine": frozenset({"bottom_seat", "no_claim"}),
    "glow": frozenset({"rerolls_due"}),
}

# Which fixture games go through the rule each STORED_BEFORE entry keeps (make_fixture's
# Watch names them); an entry not listed here is checked against every game of its type.
EXERCISED_BY: Mapping[tuple[str, str], str] = {
    ("glow", "evening"): "evening_die_shows_colour",
    ("glow", "simultaneous"): "cromaug_raises_fallen_now",
    ("shen", "captures_at_once"): "shen_capture_order_mattered",
}

# STORED_BEFORE entries for a key every stored row already carries (Res Arcana wrote its
# round limit, 20 by default, into every row): a safety net for a row without the key,
# which no stored game can go through; checked instead by every row carrying it (the
# game's own tests replay a row without it: tests/resarcana/test_stored_games.py).
CARRIED_BY_EVERY_ROW: frozenset[tuple[str, str]] = frozenset({("resarcana", "round_limit")})


def added_fields(record: Mapping[str, Any]) -> frozenset[str]:
    """The view fields left out of this game's digests: those added after it was stored
    (a game stored since then has them in its views, and they are compared)."""
    added = ADDED_VIEW_FIELDS.get(record["game"], frozenset())
    return added - frozenset(record["view_field_names"])


def _load_games(logs: Path = LOGS) -> list[dict[str, Any]]:
    with gzip.open(logs / "games.jsonl.gz", "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines]


GAMES = _load_games()
GAMES_2026_12 = _load_games(LOGS_2026_12)


def _id(record: Mapping[str, Any]) -> str:
    return f"{record['label']}-seed{record['seed']}"


def engine_of(game: str) -> Any:
    return registry.by_name(game).engine()


def _views_match(engine: Any, state: Any, record: Mapping[str, Any], drop: frozenset[str]) -> str:
    """'' when every final view has its stored digest, else what differs."""
    players = record["players"]
    seats: list[int | None] = [None, *range(players)]
    names = set(field_names(engine.view(state, None)))
    for seat in range(players):
        names |= set(field_names(engine.view(state, seat)))
    stored = set(record["view_field_names"])
    gained = sorted(names - stored - drop)
    lost = sorted(stored - names)
    if gained or lost:
        return (
            f"the views' fields changed: gained {gained}, lost {lost} (a field that "
            "only shows something new goes in ADDED_VIEW_FIELDS)"
        )
    for seat in seats:
        key = "spectator" if seat is None else str(seat)
        view = engine.view(state, seat)
        if digest(view, drop) != record["views"][key]:
            if seat is None:
                now = top_fields(view, drop)
                differ = sorted(k for k, v in record["spectator_fields"].items() if now.get(k) != v)
                return f"the final spectator view differs in {differ}"
            return f"the final view of seat {seat} differs"
    return ""


def divergence(record: Mapping[str, Any]) -> str:
    """'' when today's code replays the stored game as it was played; else the first
    difference, with the move where it shows."""
    game = record["game"]
    engine = engine_of(game)
    drop = added_fields(record)
    options = engine.GAME.options_type.from_dict(record["options"])
    state = engine.new_game(record["seed"], record["players"], options)
    moves = []
    last = len(record["moves"])
    for n, (seat, text) in enumerate(record["moves"], start=1):
        where = f"move {n} of {last} (seat {seat}: {text!r})"
        try:
            move = engine.parse_move(text)
        except EngineError as exc:
            return f"{where} no longer parses: {exc}"
        if str(move) != text:
            return f"{where} now prints as {str(move)!r}"
        if engine.outcome(state) is not None:
            return f"{where}: the game already ended ({engine.outcome(state).reason})"
        try:
            engine.apply(state, seat, move)
        except EngineError as exc:
            rule = getattr(exc, "rule", "")
            return f"{where} refused: {exc.reason} {rule!r} {exc.message}"
        moves.append((seat, move))
        checkpoint = record["checkpoints"].get(str(n))
        if checkpoint is not None and digest(engine.view(state, None), drop) != checkpoint:
            return (
                f"the spectator view after move {n} differs from the stored game's: the "
                f"replay diverged within moves {n - CHECKPOINT + 1}..{n}"
            )
    outcome = engine.outcome(state)
    if outcome is None:
        return f"no outcome after the last move ({last})"
    if outcome_dict(outcome) != record["outcome"]:
        return f"outcome {outcome_dict(outcome)} != stored {record['outcome']}"
    if len(moves) != record["version"]:
        return f"version {len(moves)} != stored {record['version']}"
    problem = _views_match(engine, state, record, drop)
    if problem:
        return problem
    rebuilt = replay(engine, record["seed"], record["players"], options, moves)
    if rebuilt != state:
        return "services.kit.engine.replay rebuilt a different state"
    return ""


def test_the_fixture_covers_every_game_and_the_rules_fixed_since():
    assert {r["game"] for r in GAMES} == set(registry.names())
    assert len({r["label"] for r in GAMES}) >= 12
    exercised = {flag for r in GAMES for flag in r["exercises"]}
    assert {
        "evening_die_shows_colour",
        "cromaug_raises_fallen_now",
        "shen_two_groups_surrounded",
        "shen_capture_order_mattered",
    } <= exercised
    three_or_more = [r for r in GAMES if r["game"] == "shen" and r["players"] >= 3]
    assert any(r["exercises"].get("shen_two_groups_surrounded") for r in three_or_more)


@pytest.mark.parametrize("record", GAMES, ids=_id)
def test_a_stored_game_replays_as_it_was_played(record):
    assert divergence(record) == ""


def test_the_2026_12_fixture_covers_every_game_and_every_option_away_from_its_default():
    assert {r["game"] for r in GAMES_2026_12} == set(registry.names())
    for game in registry.names():
        defaults = engine_of(game).GAME.options_type().to_dict()
        changed = {
            key
            for r in GAMES_2026_12
            if r["game"] == game
            for key, value in r["options"].items()
            if value != defaults[key]
        }
        # Options that only make a game from given cards (Shén's realms, decks and anchor
        # points) or the round limit Res Arcana then always had are played at their defaults.
        left = set(defaults) - changed - {"anchor_points", "decks", "realms", "victory_points"}
        assert left <= {"round_limit", "setup"} if game == "resarcana" else not left, (game, left)


@pytest.mark.parametrize("record", GAMES_2026_12, ids=_id)
def test_a_game_stored_in_2026_12_replays_as_it_was_played(record):
    assert divergence(record) == ""


def _stored_before_entries() -> list[tuple[str, str]]:
    entries = []
    for game in registry.names():
        options_type = engine_of(game).GAME.options_type
        keys = sorted(
            set(options_type.STORED_BEFORE) - {k for g, k in CARRIED_BY_EVERY_ROW if g == game}
        )
        entries += [(game, key) for key in keys]
    return entries


@pytest.mark.parametrize("game,key", sorted(CARRIED_BY_EVERY_ROW), ids=lambda v: str(v))
def test_every_stored_row_carries_a_key_whose_migration_no_game_goes_through(game, key):
    assert key in engine_of(game).GAME.options_type.STORED_BEFORE
    rows = [r for r in GAMES + GAMES_2026_12 if r["game"] == game]
    assert rows and all(key in r["options"] for r in rows)


@pytest.mark.parametrize("game,key", _stored_before_entries(), ids=lambda v: str(v))
def test_without_its_migration_a_game_that_used_the_old_rule_diverges(game, key, monkeypatch):
    """The control: drop one STORED_BEFORE entry (stored rows then take the fixed rule)
    and the stored games that went through the old rule fail the comparison above."""
    options_type = engine_of(game).GAME.options_type
    flag = EXERCISED_BY.get((game, key))
    games = [r for r in GAMES if r["game"] == game and (flag is None or r["exercises"].get(flag))]
    assert games, f"no stored {game} game goes through the rule {key!r} keeps"
    stored_before = {k: v for k, v in options_type.STORED_BEFORE.items() if k != key}
    monkeypatch.setattr(options_type, "STORED_BEFORE", stored_before)
    problems = {_id(r): divergence(r) for r in games}
    caught = {name: problem for name, problem in problems.items() if problem}
    assert caught, f"no stored game notices {game}'s {key!r} migration switched off"
    if flag is not None:  # each game that went through the old rule notices it
        assert caught == problems, f"unnoticed: {sorted(set(problems) - set(caught))}"


@pytest.mark.parametrize("label", ["glow-3p-archipelago", "shen-3p"])
def test_with_no_migration_at_all_the_searched_game_diverges(label, monkeypatch):
    """STORED_BEFORE switched off as a whole, on the game searched for because it goes
    through a changed rule (Cromaug's raise, two associations surrounded at once)."""
    record = next(r for r in GAMES if r["label"] == label and r.get("searched_for"))
    options_type = engine_of(record["game"]).GAME.options_type
    assert options_type.STORED_BEFORE, f"{record['game']} has no migration to switch off"
    assert divergence(record) == ""
    monkeypatch.setattr(options_type, "STORED_BEFORE", {})
    assert divergence(record) != ""


# --- through a real store ----------------------------------------------------------------


def _old_store_file(path: Path, logs: Path = LOGS) -> list[str]:
    """An SQLite file with the tables and rows an old store wrote; returns the game ids."""
    with gzip.open(logs / "old_sqlite_store.json.gz", "rt", encoding="utf-8") as dump_file:
        dump = json.load(dump_file)
    conn = sqlite3.connect(path)
    try:
        for sql in dump["schema"]:
            conn.execute(sql)
        for table, content in dump["tables"].items():
            columns = content["columns"]
            marks = ", ".join("?" for _ in columns)
            conn.executemany(
                f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", content["rows"]
            )
        conn.commit()
        (ids,) = zip(*conn.execute("SELECT game_id FROM games ORDER BY game_id"), strict=True)
    finally:
        conn.close()
    return list(ids)


@pytest.mark.parametrize("logs", [LOGS, LOGS_2026_12], ids=lambda p: p.name)
async def test_old_store_rows_load_through_the_manager(tmp_path, logs):
    path = tmp_path / "old.db"
    ids = _old_store_file(path, logs)
    by_id = {r["game_id"]: r for r in _load_games(logs) if "game_id" in r}
    assert set(ids) == set(by_id)
    assert {r["game"] for r in by_id.values()} == set(registry.names())
    store = open_store(f"sqlite:///{path}")
    problems = {}
    try:
        managers = {name: GameManager(engine_of(name), store) for name in registry.names()}
        for game_id in ids:
            record = by_id[game_id]
            manager = managers[record["game"]]
            engine = manager.engine
            try:
                async with manager.locked(game_id) as live:
                    # The live game holds every option it is played under: the stored
                    # keys unchanged, and later ones as STORED_BEFORE says.
                    options = live.record.options
                    assert {k: options[k] for k in record["options"]} == record["options"]
                    migrated = engine.GAME.options_type.from_dict(record["options"])
                    assert options == migrated.to_dict()
                    assert live.version == record["version"]
                    outcome = engine.outcome(live.state)
                    problem = (
                        f"outcome {outcome}"
                        if outcome is None or outcome_dict(outcome) != record["outcome"]
                        else _views_match(
                            engine,
                            live.state,
                            record,
                            added_fields(record),
                        )
                    )
                _, turns = await manager.history(game_id, None, 0, record["version"])
                assert [t.version for t in turns] == list(range(1, record["version"] + 1))
            except PlatformError as exc:  # GameCorrupt: a move did not replay
                quarantined = [q.reason for q in await store.quarantined() if q.game_id == game_id]
                problem = f"{exc.reason}: {exc.message} {quarantined}"
            if problem:
                problems[_id(record)] = problem
        assert problems == {}
        assert await store.quarantined() == []
    finally:
        await store.close()


@pytest.mark.parametrize(
    "field,change",
    [
        ("outcome", lambda r: r["outcome"]["scores"].__setitem__(0, r["outcome"]["scores"][0] + 1)),
        ("views", lambda r: r["views"].__setitem__("1", "0" * 20)),
        ("checkpoints", lambda r: r["checkpoints"].__setitem__("50", "0" * 20)),
        ("moves", lambda r: r["moves"].__setitem__(-1, [1 - r["moves"][-1][0], r["moves"][-1][1]])),
        ("view_field_names", lambda r: r["view_field_names"].remove("cells")),
    ],
    ids=["outcome", "final view", "checkpoint", "seat of a move", "view fields"],
)
def test_the_comparison_notices_each_stored_fact(field, change):
    """A control of the comparison itself: one stored fact changed, the game is reported."""
    record = json.loads(json.dumps(next(r for r in GAMES if r["game"] == "channeling")))
    assert divergence(record) == ""
    change(record)
    assert divergence(record) != ""


async def test_through_the_store_too_a_game_needs_its_migration(tmp_path, monkeypatch):
    """The control of the store path: with Glow's STORED_BEFORE switched off, the manager
    cannot replay an old store's Glow game (it quarantines it)."""
    ids = _old_store_file(tmp_path / "old.db")
    glow = [r["game_id"] for r in GAMES if r.get("game_id") in ids and r["game"] == "glow"]
    assert glow
    engine = engine_of("glow")
    monkeypatch.setattr(engine.GAME.options_type, "STORED_BEFORE", {})
    store = open_store(f"sqlite:///{tmp_path / 'old.db'}")
    try:
        manager = GameManager(engine, store)
        with pytest.raises(PlatformError) as refused:
            await manager.get(glow[0])
        assert refused.value.reason == "GAME_CORRUPT"
        assert [q.game_id for q in await store.quarantined()] == [glow[0]]
    finally:
        await store.close()
