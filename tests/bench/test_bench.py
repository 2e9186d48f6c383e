"""The benchmark code, run briefly so it cannot rot: every piece of ``python -m bench
--quick`` for a moment, the report it writes, and the Locust user's player and
interceptor. Figures must come out; their values are never asserted (benchmarks are
not tests)."""

from __future__ import annotations

import asyncio
import contextlib
import json
import random

import grpc
import pytest

from bench import envoyproxy, report
from bench.__main__ import run
from bench.engine import configurations, measure
from bench.memory import heap_share
from bench.play import GamePlayer, ReportingInterceptor, RpcFailure, method_name
from bench.rpc import MoveScripts
from services import registry
from tests.support import service_in_process

GAMES = registry.names()


@pytest.mark.parametrize("name", GAMES)
def test_engine_figures_and_move_scripts_for_every_game(name):
    engine = registry.by_name(name).engine()
    for label, players, options in configurations(engine):
        figures = measure(engine, players, options, label, seconds=0, min_games=1)
        assert figures.games == 1 and figures.decisions > 0
        assert figures.median_decision_us > 0 and figures.cost_by_move_number
    scripts = MoveScripts(name, count=1)
    assert scripts.mean_length > 0


@pytest.mark.parametrize("name", GAMES)
async def test_heap_share_for_every_game(name):
    share = await heap_share(name, games=2)
    assert share.at_start_bytes > 0 and share.mid_game_bytes > 0


def test_envoy_routes_every_game_by_service_name():
    routes = {name: [f"127.0.0.1:{5000 + i}"] for i, name in enumerate(GAMES)}
    config = envoyproxy.config(routes, 9000, 9001)
    manager = config["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]
    prefixes = [
        r["match"]["prefix"]
        for r in manager["typed_config"]["route_config"]["virtual_hosts"][0]["routes"]
    ]
    assert prefixes == [f"/{registry.by_name(n).service_name}/" for n in GAMES]
    clusters = config["static_resources"]["clusters"]
    assert [c["name"] for c in clusters] == GAMES
    assert all(c["lb_policy"] == "ROUND_ROBIN" for c in clusters)


def test_a_quick_run_writes_every_section_and_the_report(tmp_path):
    game = GAMES[0]
    out = tmp_path / "results"
    results = run(
        [
            "--quick",
            "--games", game,
            "--concurrency", "1,32",
            "--seconds", "0.2",
            # Long enough for 32 clients' first calls through the gateway to be answered
            # on a loaded machine (0.1 s once left its window with no call at all).
            "--warmup", "0.3",
            "--engine-seconds", "0.01",
            "--live-games", "40",
            "--heap-games", "2",
            "--watch-games", "2",
            "--store-levels", "2",
            "--out", str(out),
        ]
    )  # fmt: skip
    assert not results["errors"], results["errors"]
    assert json.loads((out / "latest.json").read_text())["games"] == [game]
    assert results["engine"][0]["decisions"] > 0
    assert [r["concurrency"] for r in results["rpc"]["echo"]] == [1, 32]
    assert all(r["calls"] > 0 for r in results["rpc"]["echo"])
    series = results["rpc"]["games"][game]
    for target in ("direct", "gateway", *(("envoy",) if envoyproxy.binary() else ())):
        assert [r["calls"] > 0 for r in series[target]] == [True, True], target
        assert "service" in series[target][0]["cpu_cores"]
    stores = {r["target"] for r in results["stores"]["rows"]}
    assert {"memory", "sqlite (synchronous=full)", "sqlite (synchronous=normal)"} <= stores
    assert results["memory"]["service"][0]["live_games"] == 40
    assert results["memory"]["heap"][0]["mid_game_bytes"] > 0
    watchers = results["memory"]["watchers"][0]
    assert watchers["watchers"] > 0 and watchers["cpu_us_per_move_watched"] > 0
    kinds = {t["kind"] for t in results["targets"]}
    assert {"engine", "direct", "tail", "gateway", "memory", "watcher"} <= kinds
    if envoyproxy.binary():
        assert {"gateway_cpu", "envoy"} <= kinds

    # The report rewrites only its own section, and again from the same JSON alike.
    doc = tmp_path / "BENCHMARKS.md"
    # A marker no figure contains ("old" alone is in "hold the GIL", which a stored peer
    # profile's lines say).
    doc.write_text(
        f"# Benchmarks\n\nbefore\n\n{report.BEGIN}\nOLD-FIGURES\n{report.END}\n\nafter\n"
    )
    report.update(doc, results)
    first = doc.read_text()
    assert first.startswith("# Benchmarks\n\nbefore\n") and first.endswith("\nafter\n")
    assert "OLD-FIGURES" not in first and "### Targets of the issue" in first
    assert "Provisional figures" in first  # a --quick run says so
    report.update(doc, results)
    assert doc.read_text() == first


def test_method_names_for_locust():
    assert method_name("/tabletop.glow.v1.GlowService/SubmitMove") == "GlowService/SubmitMove"


@pytest.mark.parametrize("name", GAMES)
async def test_the_locust_player_plays_a_game_to_the_end_and_reports_each_call(name):
    events: list[dict] = []
    async with service_in_process(name) as svc:

        def play() -> tuple[int, list[str]]:
            with grpc.insecure_channel(svc.address) as plain:
                channel = grpc.intercept_channel(
                    plain, ReportingInterceptor(lambda **event: events.append(event))
                )
                player = GamePlayer(name, channel, random.Random(7))
                for _ in range(100_000):
                    done = player.step()
                    if done is not None:
                        break
                else:
                    raise AssertionError("the game did not end")
                with contextlib.suppress(grpc.RpcError):  # reported with its status
                    player._call("GetGame", game_id="no-such-game")
                return done.moves, [e["name"] for e in events]

        moves, names = await asyncio.to_thread(play)
    service = registry.by_name(name).service_name.rsplit(".", 1)[-1]
    assert moves > 0
    assert names.count(f"{service}/SubmitMove") == moves
    assert names.count(f"{service}/CreateGame") == 1
    assert all(e["request_type"] == "grpc" and e["response_time"] >= 0 for e in events)
    assert all(e["exception"] is None for e in events[:-1])
    last = events[-1]
    assert isinstance(last["exception"], RpcFailure) and last["context"]["code"] == "NOT_FOUND"
