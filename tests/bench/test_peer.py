"""The peer benchmark (bench/peer), so it cannot rot:

- its boardgame.io game is our Channeling: seeded games of our engine replayed through
  bench/peer/channeling.js (bench/peer/replay.js) offer the same legal moves at every
  decision and end with the same scores and winner (a control shows the comparison
  catches one move too many);
- the whole harness runs at the smallest size (one game at once, one short round per
  side: our gateway and service, boardgame.io in memory and with FlatFile) and every
  side's figures come out positive, every move reached both players, and no player of
  boardgame.io's was ever shown the deck. Figures are never compared with a time;
- our players on Play sessions (ours.py --play) play games to their end through a real
  gateway and service, every move answered and counted once (a refused one as a failure,
  the control), and peer-ab plays both kinds of players in turns on one tree.

Without node (or without npm when bench/peer/node_modules is absent) the tests skip and
say why; with CI=true they fail instead (.ci/run installs node, npm and these packages).
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench import processes
from bench.peer import ab, harness, markdown, ours, report, section, where
from services.channeling.engine import moves as cm
from services.channeling.engine.turn import ENGINE

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def node_or_skip() -> str:
    try:
        return harness.node_ready()
    except harness.NodeMissing as missing:
        message = f"{missing}: the peer benchmark cannot run"
        if IN_CI:
            pytest.fail(f"CI=true and {message}", pytrace=False)
        pytest.skip(message)


def as_js(move: Any) -> list[Any]:
    """A move of our engine as channeling.js names it: [move name, ...args]."""
    if isinstance(move, cm.PlayGlyph):
        return ["playGlyph", move.glyph]
    if isinstance(move, cm.MoveDruid):
        return ["moveDruid", move.origin, move.target]
    if isinstance(move, cm.ChoosePath):
        return ["choosePath", list(move.cells)]
    assert isinstance(move, cm.FillGap)
    return ["fillGap", move.cell]


def recorded(seed: int) -> dict[str, Any]:
    """A seeded random game of our engine: the deal, and per decision the seat, every
    legal move and the one played; the final scores and winner."""
    state = ENGINE.new_game(seed, 2, None)
    deal = {
        "deck": list(state.deck),
        "grid": list(state.grid),
        "rowGlyphs": list(state.row_glyphs),
        "colGlyphs": list(state.col_glyphs),
    }
    rng = random.Random(seed)
    steps = []
    while ENGINE.outcome(state) is None:
        seat = state.current
        legal = ENGINE.legal_moves(state, seat)
        chosen = rng.choice(legal)
        steps.append({"seat": seat, "legal": [as_js(m) for m in legal], "move": as_js(chosen)})
        ENGINE.apply(state, seat, chosen)
    outcome = ENGINE.outcome(state)
    assert outcome is not None
    return {
        "seed": seed,
        "deal": deal,
        "steps": steps,
        "scores": list(outcome.scores),
        "winner": str(outcome.winners[0]),
    }


def replay(node: str, games: list[dict[str, Any]]) -> list[str | None]:
    run = subprocess.run(
        [node, str(harness.HERE / "replay.js")],
        cwd=harness.HERE,
        input=json.dumps(games),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return list(json.loads(run.stdout))


def test_the_boardgame_io_port_plays_our_channeling_move_for_move():
    node = node_or_skip()
    games = [recorded(seed) for seed in range(1, 21)]
    assert replay(node, games) == [None] * len(games)
    lengths = [len(g["steps"]) for g in games]
    assert 40 <= sum(lengths) / len(lengths) <= 110  # about 75 decisions a game

    # Control: one legal move too many in one decision is seen.
    broken = json.loads(json.dumps(games[0]))
    step = next(s for s in broken["steps"] if s["move"][0] == "playGlyph")
    step["legal"].append(["playGlyph", 99])
    found = replay(node, [broken])[0]
    assert found is not None and "playGlyph" in found


def test_the_peer_harness_measures_every_side_at_the_smallest_size(tmp_path):
    node_or_skip()
    results: dict[str, Any] = {}
    peer = section(
        results,
        tmp_path,
        tmp_path / "out",
        levels=[1],
        rounds=1,
        window=1.0,
        warmup=0.3,
        min_moves=5,  # FlatFile alone moves about once a second: the window waits for 5
        calibrate=0,
        per_table=2,
        idle=0.5,
    )
    assert not results.get("errors"), results["errors"]
    rows = {r["target"]: r for r in peer["rounds"]}
    assert set(rows) == set(harness.TARGETS)
    for target, row in rows.items():
        assert row["moves"] > 0, target
        assert row["server_cpu_us_per_move"] > 0 and row["client_cpu_us_per_move"] > 0, target
        assert all(us is not None and us >= 0 for us in row["parts_us_per_move"].values())
        # Both players hear of every move (the window may cut one in flight).
        assert 1.5 <= row["updates_per_move"] <= 2.5, (target, row)
        assert row["errors"] == {}, (target, row["errors"])
    assert set(rows["ours"]["parts_us_per_move"]) == {"service", "gateway", "envoy"}
    assert set(peer["idle_ms_per_second"]) == set(harness.TARGETS)
    assert all(x >= 0 for parts in peer["idle_ms_per_second"].values() for x in parts.values())
    assert rows["ours"]["parts_us_per_move"]["service"] > 0
    # The stream carries the moves (WatchGame's with_moves): no ListMoves per move.
    assert rows["ours"]["list_calls_per_move"] == 0
    for target in (harness.BGIO_MEMORY, harness.BGIO_FLATFILE):
        assert rows[target]["deck_seen"] == 0  # playerView kept the deck from every player
    ratios = {r["against"]: r for r in peer["ratios"]}
    assert set(ratios) == {harness.BGIO_MEMORY, harness.BGIO_FLATFILE}
    assert all(r["server_ratio"] > 0 for r in ratios.values())
    text = markdown(peer)
    assert "| 1 | boardgame.io, in memory |" in text and "ours / boardgame.io" in text
    # A later run without the section still shows these figures, from their own file.
    stored = tmp_path / "out" / "peer-latest.json"
    assert json.loads(stored.read_text())["rounds"] == peer["rounds"]
    assert report.lines({}, stored) == text.splitlines()
    assert report.lines({}, tmp_path / "none.json") == []


def test_profile_samples_go_to_the_kind_of_work_of_their_innermost_frame():
    outer = (
        "_run_module_as_main (<frozen runpy>:198);<module> (services/channeling/__main__.py:6);"
        "main (services/kit/server.py:462);Runner.run (asyncio/runners.py:118)"
    )
    call = f"{outer};ObservingInterceptor._wrap.<locals>.single (services/kit/interceptor.py:250)"
    submit = f"{call};handlers.<locals>.submit_move (services/kit/service.py:231)"
    raw = "\n".join(
        [
            f"{outer} 40",  # the loop itself: grpc.aio's Cython has no Python frame
            f"{submit};turn (services/kit/wire.py:168);FromNanoseconds (protobuf/x.py:1) 20",
            f"{submit};apply (services/kit/kernel.py:160);_play (engine/steps/play_glyph.py:9) 2",
            f"{submit};GameManager.submit (services/kit/games.py:600) 10",
            f"{call};bearer (services/kit/auth.py:40) 8",
            f"{call};AccessLog.record (services/kit/logs.py:80);dumps (json/__init__.py:1) 4",
            f"{outer};SqliteStore._write_loop (services/kit/store/sqlite.py:300) 5",
            f"{outer};ObservingInterceptor._wrap.<locals>.writer (services/kit/interceptor.py:270)"
            ";handlers.<locals>.watch_game (services/kit/service.py:255) 11",
        ]
    )
    assert dict(where.where(raw)) == {
        where.LOOP: 0.4,
        "building view, header and turn messages": 0.2,
        "the rules (engine)": 0.02,
        "handlers and the game manager (other code of ours)": 0.1,
        "auth, limits and the interceptor": 0.08,
        "access log and metrics": 0.04,
        "the store (SQLite append and its thread)": 0.05,
        "writing watch updates": 0.11,
    }
    assert where.where("") == []


@pytest.mark.parametrize("tries", [harness.PORT_TRIES, 1], ids=["another-port", "control-one-try"])
def test_a_boardgame_io_server_whose_port_was_taken_meanwhile_gets_another(
    tmp_path, monkeypatch, tries
):
    """The port chosen free is taken by someone else before Node listens (a loaded
    rehearsal): the server is started again on another. Control: one try fails."""
    node = node_or_skip()
    with socket.socket(socket.AF_INET6) as taken:
        taken.bind(("::", 0))
        taken.listen()
        port = taken.getsockname()[1]
        chosen = [port]  # the taken port first, then free ones
        free_port = processes.free_port
        monkeypatch.setattr(processes, "free_port", lambda: chosen.pop() if chosen else free_port())
        monkeypatch.setattr(harness, "PORT_TRIES", tries)
        if tries == 1:
            with pytest.raises(RuntimeError, match="EADDRINUSE"):
                with harness.bgio_server(node, "memory", tmp_path):
                    pass
            return
        with harness.bgio_server(node, "memory", tmp_path) as side:
            assert side.address.startswith("http://127.0.0.1:")
            assert not side.address.endswith(f":{port}")


@pytest.fixture(scope="module")
def our_side(tmp_path_factory: pytest.TempPathFactory) -> Iterator[harness.Side]:
    with harness.our_stack(tmp_path_factory.mktemp("ours")) as side:
        yield side


async def test_players_on_play_sessions_play_games_to_their_end_each_move_answered(our_side):
    counts = ours.Counts()
    player = ours.Player(our_side.address, False, counts, list_moves=False, play=True)
    try:
        games = [await player.setup(seed) for seed in (11, 12)]
        for game in games:
            await asyncio.wait_for(player.play(game), 120)  # raises unless both ended OK
    finally:
        await player.close()
    assert counts.finished == len(games)
    # Every decision of the finished games was a move sent, answered and accepted.
    assert counts.moves == counts.decisions > 0
    assert counts.sent == counts.answers == counts.moves
    assert counts.errors == {} and counts.listed == 0
    assert counts.updates == 2 * counts.moves  # both seats heard of every move
    # Play goes through Envoy to the service: Envoy is in what the side's CPU counts.
    names = {
        Path(f"/proc/{pid}/comm").read_text().strip()
        for pid in processes.tree(our_side.pids["gateway"])
    }
    assert "envoy" in names


async def test_a_refused_move_on_a_session_counts_as_a_failure_not_a_move(our_side, monkeypatch):
    """Control: a move for a version already gone is refused (an answer, the session
    open): it is counted by its code, as a failed SubmitMove is, and not as a move."""
    counts = ours.Counts()
    player = ours.Player(our_side.address, False, counts, list_moves=False, play=True)
    chosen = ours.Player._move_request

    def stale(self: ours.Player, game: ours.Game, seat: int, version: int, moves: list[Any]) -> Any:
        request = chosen(self, game, seat, version, moves)
        request.expected_version = version - 1
        return request

    monkeypatch.setattr(ours.Player, "_move_request", stale)
    try:
        game = await player.setup(13)
        playing = asyncio.ensure_future(player.play(game))

        async def answered() -> None:
            while not counts.answers:  # the refused move's seat waits for an update
                await asyncio.sleep(0.01)

        await asyncio.wait_for(answered(), 60)
        playing.cancel()
        await asyncio.gather(playing, return_exceptions=True)
    finally:
        await player.close()
    assert counts.sent == counts.answers == 1
    assert counts.moves == 0 and counts.errors == {"ABORTED": 1}


def test_peer_ab_plays_calls_and_play_sessions_in_turns_on_one_tree():
    out = ab.section(
        {ab.THIS: harness.ROOT},
        levels=[1],
        rounds=1,
        window=1.0,
        warmup=0.3,
        modes=["calls", "play"],
    )
    rows = {r["mode"]: r for r in out["rounds"]}
    assert set(rows) == {"calls", "play"}
    for mode, row in rows.items():
        assert row["client"] == mode  # the players the round asked for played it
        assert row["moves"] > 0 and row["server_cpu_us_per_move"] > 0, row
        assert row["errors"] == {}, row
        assert 1.5 <= row["updates_per_move"] <= 2.5, row
        assert set(row["parts_us_per_move"]) == {"service", "gateway", "envoy"}
    [ratio] = out["modes"]
    assert ratio["mode"] == "play" and ratio["server_ratio"] > 0
    text = "\n".join(ab.markdown(out))
    assert (
        "| 1 | this tree | Play session |" in text
        and "| 1 | this tree | WatchGame + SubmitMove |" in text
    )
