"""Write the stored-game fixture (tests/stored/logs/) from an OLD checkout of the engines.

Stored games are users' data: a game stored by an earlier release must replay, move by
move, to the same states and outcome with every later release. This script plays seeded
random games with the engines it imports and writes what the store holds for each (game
type, seed, players, the options as ``Options.to_dict()`` saved them, the move log as
text) together with what that code computed (outcome, version, view digests). The
replay test (test_replay_stored_logs.py) checks the current code against it.

It is run once, against the release the fixture stands for, never against new code
(that would only prove the new code agrees with itself)::

    git clone -q /path/to/repo /tmp/old-main && git -C /tmp/old-main checkout -q <commit>
    cd /tmp/old-main && mkdir -p gen && python -m grpc_tools.protoc -I protos \\
        --python_out=gen --grpc_python_out=gen $(find protos -name '*.proto')
    PYTHONPATH=/tmp/old-main:/tmp/old-main/gen python tests/stored/make_fixture.py \\
        --out tests/stored/logs        # run from this repository's root

``canonical`` and ``digest`` below are also what the test uses to compare views; they
read a view as plain data (field names and values, never class names), so a later
refactor of the view classes keeps the digests.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import enum
import gzip
import hashlib
import importlib
import json
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

CHECKPOINT = 50  # the spectator view is digested every this many moves

# --- comparing views: shared with the test -----------------------------------------------


def canonical(value: Any, drop: frozenset[str] = frozenset()) -> Any:
    """``value`` as plain JSON data: dataclasses and named tuples become dicts of their
    fields (names in ``drop`` left out, at any depth), tuples lists, enums their values.
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: canonical(getattr(value, f.name), drop)
            for f in dataclasses.fields(value)
            if f.name not in drop
        }
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return {k: canonical(getattr(value, k), drop) for k in value._fields if k not in drop}
    if isinstance(value, Mapping):
        return {str(k): canonical(v, drop) for k, v in value.items() if str(k) not in drop}
    if isinstance(value, enum.Enum):
        return canonical(value.value, drop)
    if isinstance(value, (list, tuple)):
        return [canonical(v, drop) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((canonical(v, drop) for v in value), key=json.dumps)
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return repr(value)
    raise TypeError(f"no canonical form for {type(value).__name__}")


def digest(value: Any, drop: frozenset[str] = frozenset()) -> str:
    text = json.dumps(canonical(value, drop), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def field_names(value: Any) -> list[str]:
    """Every field name in a view's canonical form, at any depth (a view's shape)."""
    names: set[str] = set()

    def walk(v: Any) -> None:
        if isinstance(v, dict):
            names.update(v)
            for item in v.values():
                walk(item)
        elif isinstance(v, list):
            for item in v:
                walk(item)

    walk(canonical(value))
    return sorted(names)


def top_fields(view: Any, drop: frozenset[str] = frozenset()) -> dict[str, str]:
    """A digest per top-level field of a view: says which part differs."""
    plain = canonical(view, drop)
    return {
        k: hashlib.sha256(json.dumps(v, sort_keys=True).encode()).hexdigest()[:12]
        for k, v in plain.items()
    }


def outcome_dict(outcome: Any) -> dict[str, Any]:
    return {
        "scores": list(outcome.scores),
        "winners": list(outcome.winners),
        "reason": outcome.reason,
        "details": list(outcome.details),
    }


# --- the configurations ------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Config:
    label: str
    game: str
    players: int
    options: Mapping[str, Any]
    seeds: tuple[int, ...]


CONFIGS = (
    Config("channeling", "channeling", 2, {}, (1, 2, 3, 4, 5)),
    Config("shrine-base", "shrine", 2, {}, (1, 2, 3)),
    Config("shrine-radiant", "shrine", 2, {"radiant_shapes": True}, (1, 2, 3)),
    Config("resarcana-first", "resarcana", 2, {"setup": "first_game"}, (1, 2, 3)),
    Config("resarcana-full", "resarcana", 2, {}, (1, 2, 3)),
    Config("glow-2p-province", "glow", 2, {}, (1, 2, 3)),
    Config("glow-3p-archipelago", "glow", 3, {"board": "archipelago"}, (1, 2)),
    Config("glow-4p-province", "glow", 4, {}, (1, 2)),
    Config("shen-2p", "shen", 2, {}, (1, 2)),
    Config("shen-4p-teams", "shen", 4, {"teams": 2}, (1,)),
    Config("shen-3p", "shen", 3, {}, (1, 2)),
    Config("shen-6p", "shen", 6, {}, (1,)),
)

# Options added by later releases, each away from its default: ``--variants`` plays these
# too (a fixture made from a release that has them; the old release above had none).
VARIANTS = (
    Config("channeling-vigor", "channeling", 2, {"overchanneling": "vigor"}, (1, 2)),
    Config("glow-2p-roll-arrival", "glow", 2, {"evening": "roll", "simultaneous": "arrival"}, (1,)),
    Config("glow-4p-archipelago", "glow", 4, {"board": "archipelago"}, (1,)),
    Config(
        "resarcana-amber-in-order",
        "resarcana",
        2,
        {"places": "amber", "collect_in_turn_order": True, "first_player": 1},
        (1,),
    ),
    Config("shen-2p-round-limit", "shen", 2, {"round_limit": 40}, (1,)),
    Config("shen-3p-one-by-one", "shen", 3, {"captures_at_once": False}, (1,)),
    Config("shen-2p-deck-60", "shen", 2, {"deck_size": 60, "size": 10}, (1,)),
)

# Searched for a game that exercises a rule fixed later (see ``Watch``), unless a game of
# that configuration above already does; the first configuration to find one ends a group.
SEARCHES = (
    # Cromaug raises a companion another seat sent to the cemetery this Noon.
    ("glow", "glow-3p-archipelago", 3, {"board": "archipelago"}, "cromaug_raises_fallen_now"),
    ("glow", "glow-4p-province", 4, {}, "cromaug_raises_fallen_now"),
    ("glow", "glow-2p-province", 2, {}, "cromaug_raises_fallen_now"),
    # Three players: one counter leaves two associations surrounded and the old engine,
    # removing one before checking the other, lets the second survive.
    ("shen", "shen-3p", 3, {}, "shen_capture_order_mattered"),
)


# --- watching for the rules fixed later -----------------------------------------------


class Watch:
    """Notes, while the old engine plays, which later-fixed rules a game went through.

    - ``evening_die_shows_colour``: a Glow Evening began with a small die showing an
      element (the old engine rolled it again; the rulebook places it as shown).
    - ``cromaug_raise`` / ``cromaug_raises_fallen_now``: Cromaug took a companion back,
      / one that another seat sent to the cemetery during the same Noon.
    - ``shen_two_groups_surrounded``: one Shén counter left two or more opponents'
      associations surrounded; ``shen_capture_order_mattered``: the old engine removed
      fewer counters than were surrounded (the first removal freed the other).
    """

    def __init__(self, game: str) -> None:
        self.game = game
        self.flags: dict[str, int] = {}
        self._undo: list[Callable[[], None]] = []
        self.noon_cemetery: set[int] | None = None
        self.fallen_by: dict[int, int] = {}

    def note(self, flag: str) -> None:
        self.flags[flag] = self.flags.get(flag, 0) + 1

    def __enter__(self) -> Watch:
        if self.game == "glow":
            self._wrap_glow()
        elif self.game == "shen":
            self._wrap_shen()
        return self

    def __exit__(self, *exc: object) -> None:
        for undo in reversed(self._undo):
            undo()

    def _patch(self, module: Any, name: str, new: Any) -> None:
        old = getattr(module, name)
        setattr(module, name, new)
        self._undo.append(lambda: setattr(module, name, old))

    def _wrap_glow(self) -> None:
        game = importlib.import_module("services.glow.engine.game")
        dice = importlib.import_module("services.glow.engine.dice")
        content = importlib.import_module("services.glow.engine.content")
        original = game.evening

        def evening(state: Any) -> Any:
            for player in state.players:
                if any(dice.symbol(state, d) in content.ELEMENTS for d in player.small_dice):
                    self.note("evening_die_shows_colour")
                    break
            return original(state)

        self._patch(game, "evening", evening)

    def glow_move(self, before_step: int, state: Any, seat: int, move: Any, cemetery: set) -> None:
        """Called after each Glow move with the step and cemetery before it."""
        moves = importlib.import_module("services.glow.engine.moves")
        noon = importlib.import_module("services.glow.engine.state").NOON
        if move.kind == moves.RAISE and move.a != moves.NONE:
            self.note("cromaug_raise")
            if self.fallen_by.get(move.a, seat) != seat:
                self.note("cromaug_raises_fallen_now")
        if before_step == noon:
            for c in set(state.cemetery) - cemetery:
                self.fallen_by[c] = seat
        if state.step != noon:
            self.fallen_by = {}

    def _wrap_shen(self) -> None:
        shen = importlib.import_module("services.shen.engine.shen")
        original = shen.place

        def place(state: Any, seat: int, v: int, events: list) -> Any:
            state.counters[v] = seat
            surrounded = 0
            total = 0
            done: set[int] = set()
            for w in state.board.links[v]:
                owner = state.counters.get(w)
                if owner is None or owner == seat or state.teammates(seat, owner) or w in done:
                    continue
                group, free = shen.association(state, owner, w)
                done.update(group)
                if not free and not any(g in state.stones for g in group):
                    surrounded += 1
                    total += len(group)
            del state.counters[v]
            before = len(state.counters)
            result = original(state, seat, v, events)
            removed = before + 1 - len(state.counters)
            if surrounded >= 2:
                self.note("shen_two_groups_surrounded")
                if removed < total:
                    self.note("shen_capture_order_mattered")
            return result

        self._patch(shen, "place", place)


# --- playing and recording ------------------------------------------------------------


def engine_of(game: str) -> Any:
    return importlib.import_module(f"services.{game}.engine")


def play(game: str, seed: int, players: int, options_kw: Mapping[str, Any]) -> dict[str, Any]:
    """One seeded random game to its end, recorded as the store and the old code saw it."""
    from services.kit.testing import choose

    engine = engine_of(game)
    options = engine.GAME.options_type(**options_kw)
    stored_options = options.to_dict()
    state = engine.new_game(seed, players, options)
    rng = random.Random(seed * 7919 + 17)
    log: list[list[Any]] = []
    checkpoints: dict[str, str] = {}
    with Watch(game) as watch:
        while engine.outcome(state) is None:
            seat, move = choose(engine, state, rng)
            before_step = getattr(state, "step", None)
            cemetery = set(getattr(state, "cemetery", ()))
            engine.apply(state, seat, move)
            text = str(move)
            if engine.parse_move(text) != move:
                raise AssertionError(f"{game}: {text!r} does not parse back")
            log.append([seat, text])
            if game == "glow":
                watch.glow_move(before_step, state, seat, move, cemetery)
            if len(log) % CHECKPOINT == 0 and engine.outcome(state) is None:
                checkpoints[str(len(log))] = digest(engine.view(state, None))
            if len(log) > 100_000:
                raise AssertionError(f"{game} seed {seed}: no end after 100000 moves")
    spectator = engine.view(state, None)
    return {
        "game": game,
        "seed": seed,
        "players": players,
        "options": stored_options,
        "moves": log,
        "version": len(log),
        "outcome": outcome_dict(engine.outcome(state)),
        "views": {
            "spectator": digest(spectator),
            **{str(s): digest(engine.view(state, s)) for s in range(players)},
        },
        "spectator_fields": top_fields(spectator),
        "view_field_names": sorted(
            set(field_names(spectator)).union(
                *(field_names(engine.view(state, s)) for s in range(players))
            )
        ),
        "checkpoints": checkpoints,
        "exercises": dict(sorted(watch.flags.items())),
    }


def search(
    game: str, players: int, options: Mapping[str, Any], flag: str, seeds: Iterable[int], budget
) -> tuple[dict[str, Any] | None, int]:
    """The first seed whose game goes through ``flag``; and how many seeds were tried."""
    tried = 0
    started = time.monotonic()
    for seed in seeds:
        if time.monotonic() - started > budget:
            break
        tried += 1
        record = play(game, seed, players, options)
        if record["exercises"].get(flag):
            return record, tried
    return None, tried


# --- what an old store holds --------------------------------------------------------------


async def _store_rows(records: list[dict[str, Any]], path: Path) -> None:
    from services.kit.games import GameManager
    from services.kit.store import open_store

    store = open_store(f"sqlite:///{path}")
    try:
        for i, record in enumerate(records):
            tick = iter(range(10**9))
            manager = GameManager(
                engine_of(record["game"]),
                store,
                clock=lambda i=i, tick=tick: 1_700_000_000.0 + 10_000.0 * i + next(tick),
            )
            engine = manager.engine
            options = engine.GAME.options_type.from_dict(record["options"])
            live, tokens = await manager.create(record["players"], options, seed=record["seed"])
            record["game_id"] = live.record.game_id
            for n, (seat, text) in enumerate(record["moves"]):
                await manager.submit(
                    live.record.game_id,
                    tokens[seat],
                    lambda text=text, engine=engine: engine.parse_move(text),
                    n,
                    f"r{n}",
                )
    finally:
        await store.close()


def store_dump(records: list[dict[str, Any]]) -> dict[str, Any]:
    """The rows an old SQLite store wrote for these games, through its GameManager."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "old.db"
        asyncio.run(_store_rows(records, path))
        conn = sqlite3.connect(path)
        try:
            schema = [
                sql
                for (sql,) in conn.execute(
                    "SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid"
                )
            ]
            tables = {}
            for (table,) in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid"
            ):
                cur = conn.execute(f"SELECT * FROM {table} ORDER BY 1, 2")
                tables[table] = {
                    "columns": [d[0] for d in cur.description],
                    "rows": [list(row) for row in cur],
                }
        finally:
            conn.close()
    return {"schema": schema, "tables": tables}


# --- main ---------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("tests/stored/logs"))
    parser.add_argument("--search-seeds", type=int, default=300)
    parser.add_argument("--search-seconds", type=float, default=240.0)
    parser.add_argument("--variants", action="store_true", help="also play VARIANTS")
    parser.add_argument("--commit", default="", help="the commit, when the tree is no clone")
    args = parser.parse_args(argv)
    import services

    source = Path(services.__file__).resolve().parent.parent
    commit = (
        subprocess.run(
            ["git", "-C", str(source), "rev-parse", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        or args.commit
    )
    args.out.mkdir(parents=True, exist_ok=True)

    records: list[dict[str, Any]] = []
    for config in (*CONFIGS, *(VARIANTS if args.variants else ())):
        for seed in config.seeds:
            started = time.monotonic()
            record = play(config.game, seed, config.players, config.options)
            record["label"] = config.label
            records.append(record)
            print(
                f"{config.label} seed {seed}: {record['version']} moves, "
                f"{time.monotonic() - started:.1f}s, {record['exercises']}",
                file=sys.stderr,
            )
    searched: list[dict[str, Any]] = []
    found: set[tuple[str, str]] = set()  # (group, flag) found
    for group, label, players, options, flag in SEARCHES:
        if (group, flag) in found or any(
            r["label"] == label and r["exercises"].get(flag) for r in records
        ):
            found.add((group, flag))
            continue
        seeds = range(1000, 1000 + args.search_seeds)
        record, tried = search(group, players, options, flag, seeds, args.search_seconds)
        searched.append(
            {"label": label, "flag": flag, "seeds_tried": tried, "found": record is not None}
        )
        print(f"search {label} for {flag}: {tried} seeds, found={bool(record)}", file=sys.stderr)
        if record is not None:
            record["label"] = label
            record["searched_for"] = flag
            records.append(record)
            found.add((group, flag))

    # A few games per game type through a real old store: the shortest two of each.
    by_game: dict[str, list[dict[str, Any]]] = {}
    for record in records:
        by_game.setdefault(record["game"], []).append(record)
    stored = [r for rs in by_game.values() for r in sorted(rs, key=lambda r: r["version"])[:2]]
    dump = store_dump(stored)

    with gzip.open(args.out / "games.jsonl.gz", "wt", encoding="utf-8") as out:
        for record in records:
            out.write(json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n")
    with gzip.open(args.out / "old_sqlite_store.json.gz", "wt", encoding="utf-8") as out:
        json.dump(dump, out, sort_keys=True, separators=(",", ":"))
    meta = {
        "commit": commit,
        "python": sys.version.split()[0],
        "checkpoint_every": CHECKPOINT,
        "games": len(records),
        "store_games": [r["game_id"] for r in stored],
        "searches": searched,
    }
    (args.out / "meta.json").write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n")
    print(json.dumps(meta, indent=2), file=sys.stderr)


if __name__ == "__main__":
    main()
