"""A damaged store is the service's fault: DATA_LOSS, quarantine, an operator's export,
and a SQLite file that fails its check on open is not served."""

from __future__ import annotations

import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys

import grpc
import pytest
from prometheus_client import REGISTRY

from client.api import GameClient
from services import registry
from services.kit.status import error_info
from services.kit.store import StoreCorrupt
from services.kit.store.sqlite import SqliteStore
from tests.support import ROOT, running, service_in_process

NAME = "resarcana"  # it has secret moves: their stored text is hidden information
PLAYERS = registry.by_name(NAME).engine().GAME.min_players
GARBAGE = "zz-stored-text-nobody-may-read"


def corrupt_games() -> float:
    return REGISTRY.get_sample_value("tabletop_corrupt_games_total", {"game": NAME}) or 0.0


async def play_some(client: GameClient, moves: int, seed: int):
    game = await client.create(PLAYERS, seed=seed)
    rng = random.Random(seed)
    for _ in range(moves):
        state = await client.get(game.game_id)
        seat = state.game.to_act[0]
        listed = await client.moves(game.game_id, game.tokens[seat])
        await client.submit(game.game_id, game.tokens[seat], rng.choice(list(listed.moves)))
    return game


def stored(path, query: str, *args) -> list[tuple]:
    conn = sqlite3.connect(path)
    try:
        with conn:
            return conn.execute(query, args).fetchall()
    finally:
        conn.close()


async def expect_data_loss(call, secrets: list[str]) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() == grpc.StatusCode.DATA_LOSS, caught.value
    assert error_info(caught.value).reason == "GAME_CORRUPT"
    text = caught.value.details() + repr(caught.value.trailing_metadata())
    for secret in secrets:
        assert secret not in text


@pytest.mark.parametrize("column", ["move", "events"])
async def test_a_row_that_cannot_be_replayed_is_data_loss_and_quarantines_the_game(
    tmp_path, column
):
    path = tmp_path / "games.db"
    url = f"sqlite:///{path}"
    async with service_in_process(NAME, url) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient(NAME, channel)
            damaged = await play_some(client, 6, seed=3)
            sound = await play_some(client, 6, seed=4)
    texts = [
        r[0] for r in stored(path, "SELECT move FROM moves WHERE game_id = ?", damaged.game_id)
    ]
    value = GARBAGE if column == "move" else "{" + GARBAGE
    stored(path, f"UPDATE moves SET {column} = ? WHERE game_id = ? AND version = 3",
           value, damaged.game_id)  # fmt: skip
    before = corrupt_games()
    async with service_in_process(NAME, url) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient(NAME, channel)
            for token in (None, *damaged.tokens):
                await expect_data_loss(client.get(damaged.game_id, token), [GARBAGE, *texts])
                await expect_data_loss(client.history(damaged.game_id, token), [GARBAGE])
            seat_move = (await client.moves(sound.game_id, sound.tokens[0])).moves
            move = seat_move[0] if seat_move else registry.by_name(NAME).pb2().Move()
            await expect_data_loss(client.submit(damaged.game_id, damaged.tokens[0], move), [])
            stream = client.watch(damaged.game_id)
            await expect_data_loss(stream.read(), [GARBAGE])
            # Counted once, however many calls hit it; the other game plays on.
            assert corrupt_games() == before + 1
            assert (await client.get(sound.game_id)).game.version == 6
            listed = await svc.store.quarantined()
            assert [q.game_id for q in listed] == [damaged.game_id]
            assert "move 3" in listed[0].reason and GARBAGE not in listed[0].reason
    # Still quarantined after a restart, without replaying (or counting) it again.
    async with service_in_process(NAME, url) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            await expect_data_loss(GameClient(NAME, channel).get(damaged.game_id), [GARBAGE])
    assert corrupt_games() == before + 1
    rows = stored(path, "SELECT version, move FROM moves WHERE game_id = ?", damaged.game_id)
    assert len(rows) == 6, "a quarantined game's rows are kept as they are"


def admin(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "services.kit.admin", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


async def test_a_served_corrupt_game_is_logged_and_an_operator_lists_and_exports_it(tmp_path):
    path = tmp_path / "games.db"
    url = f"sqlite:///{path}"
    async with service_in_process(NAME, url) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            game = await play_some(GameClient(NAME, channel), 4, seed=5)
    ((original,),) = stored(
        path, "SELECT move FROM moves WHERE game_id = ? AND version = 2", game.game_id
    )
    stored(path, "UPDATE moves SET move = ? WHERE game_id = ? AND version = 2",
           GARBAGE, game.game_id)  # fmt: skip
    env = {"TABLETOP_STORE_URL": url, "TABLETOP_ACCESS_LOG": "false"}
    with running(f"services.{NAME}", env, tmp_path / "service.log") as process:
        async with grpc.aio.insecure_channel(process.address) as channel:
            await expect_data_loss(GameClient(NAME, channel).get(game.game_id), [GARBAGE])
        logged = [json.loads(line) for line in process.lines() if line.startswith("{")]
    quarantined = [r for r in logged if r.get("event") == "game_quarantined"]
    assert [(r["game_id"], r["version"], r["level"]) for r in quarantined] == [
        (game.game_id, 2, "error")
    ]
    assert GARBAGE not in (tmp_path / "service.log").read_text()

    listing = admin("quarantined", "--store", url)
    assert listing.returncode == 0, listing.stderr
    (line,) = listing.stdout.splitlines()
    assert line.split("\t")[:2] == [game.game_id, NAME]
    out = tmp_path / "export.json"
    exported = admin("export", game.game_id, "--store", url, "--out", str(out))
    assert exported.returncode == 0, exported.stderr
    rows = json.loads(out.read_text())
    assert rows["game"]["game_id"] == game.game_id
    assert [m["version"] for m in rows["moves"]] == [1, 2, 3, 4]
    assert rows["moves"][1]["move"] == GARBAGE  # exactly as stored, for the operator
    assert rows["quarantine"]["reason"].startswith("move 2")
    missing = admin("export", "no-such-game", "--store", url)
    assert missing.returncode == 1 and "no game" in missing.stderr

    # Repaired (here: the original row put back), released, and it plays on.
    stored(path, "UPDATE moves SET move = ? WHERE game_id = ? AND version = 2",
           original, game.game_id)  # fmt: skip
    released = admin("release", game.game_id, "--store", url)
    assert released.returncode == 0, released.stderr
    assert admin("quarantined", "--store", url).stdout == ""
    async with service_in_process(NAME, url) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            assert (await GameClient(NAME, channel).get(game.game_id)).game.version == 4


async def filled(path) -> None:
    async with service_in_process(NAME, f"sqlite:///{path}") as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient(NAME, channel)
            for seed in range(40):
                await play_some(client, 3, seed=seed)
    stored(path, "PRAGMA wal_checkpoint(TRUNCATE)")


def truncate(path) -> None:
    size = path.stat().st_size
    with path.open("r+b") as f:
        f.truncate(size // 2 + 1000)  # mid-page, as a crash during a copy leaves it


def scramble_a_page(path) -> None:
    page = stored(path, "PRAGMA page_size")[0][0]
    pages = path.stat().st_size // page
    assert pages >= 8, "enough pages to damage one in the middle"
    with path.open("r+b") as f:
        f.seek(page * (pages // 2))
        f.write(random.Random(1).randbytes(page))


def scramble_a_page_header(path) -> None:
    """The b-tree header of a page a quarter in: quick_check answers with a row, not an
    error, and SQLite writes that row over two lines ('*** in database main ***', then
    the page's problem)."""
    page = stored(path, "PRAGMA page_size")[0][0]
    pages = path.stat().st_size // page
    with path.open("r+b") as f:
        f.seek(page * (pages // 4))
        f.write(b"\xff" * 12)
    ((first,), *_) = stored(path, "PRAGMA quick_check")
    assert "\n" in first, "SQLite's own answer spans lines"


@pytest.mark.parametrize(
    "damage",
    [truncate, scramble_a_page, scramble_a_page_header],
    ids=["truncated", "random", "page-header"],
)
async def test_a_damaged_sqlite_file_is_refused_on_open_with_one_line(tmp_path, damage):
    path = tmp_path / "games.db"
    await filled(path)
    control = tmp_path / "control.db"
    shutil.copy(path, control)
    damage(path)
    sound = SqliteStore(f"sqlite:///{control}")  # the undamaged copy opens
    await sound.close()
    if damage is not truncate:
        # Control: without the check this file opens as if sound; the check finds it.
        unchecked = SqliteStore(f"sqlite:///{path}?check=none")
        await unchecked.close()
    with pytest.raises(StoreCorrupt) as caught:
        SqliteStore(f"sqlite:///{path}")
    assert str(path) in str(caught.value) and "restore it from a backup" in str(caught.value)
    assert "\n" not in str(caught.value)

    result = subprocess.run(
        [sys.executable, "-m", f"services.{NAME}"],
        cwd=ROOT,
        env={**os.environ, "TABLETOP_STORE_URL": f"sqlite:///{path}", "TABLETOP_PORT": "0",
             "TABLETOP_METRICS_PORT": "0", "TABLETOP_HOST": "127.0.0.1"},
        capture_output=True,
        text=True,
        timeout=60,
    )  # fmt: skip
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("not serving: sqlite file"), result.stderr
    assert "Traceback" not in result.stderr + result.stdout


async def test_a_file_from_before_owners_gets_the_column_on_open(tmp_path):
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE games (game_id TEXT PRIMARY KEY, game_type TEXT NOT NULL, players"
        " INTEGER NOT NULL, options TEXT NOT NULL, seed TEXT NOT NULL, token_hashes TEXT"
        " NOT NULL, version INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL,"
        " updated_at REAL NOT NULL, finished_at REAL);"
        "INSERT INTO games VALUES ('g', 'shen', 2, '{}', '7', '[]', 0, 1.0, 1.0, NULL);"
    )
    conn.close()
    store = SqliteStore(f"sqlite:///{path}")
    columns = [r[1] for r in stored(path, "PRAGMA table_info(games)")]
    assert columns[10:] == [
        "owner",
        "table_config",
        "lobby",
        "waiting",
        "due_at",
        "bot_turn",
        "human_at",
        "bot_seats",
    ]
    assert stored(path, "SELECT game_id, owner FROM games") == [("g", None)]
    assert (await store.load("g")).owner is None
    await store.close()
