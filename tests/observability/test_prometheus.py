"""A real Prometheus scraping a real stack: every query of the dashboard and of the alert
rules returns data.

Every game service and the gateway run as their own processes on loopback (metrics on
127.0.0.1, memory stores); Debian's Prometheus scrapes them every second under the jobs
the dashboard and the rules expect (``tabletop-gateway``, ``tabletop-<game>``) and loads
rules.yaml. One random game of each kind is played to the end through the gateway, and
the refusals the alerts and panels count (their series exist at 0 from the start) are made
to happen once each, so each query sees a change:
a forged seat token (auth failures), a move by a seat whose decision it is not (moves
rejected), a second WatchGame stream where one is allowed (per-client limits, at the
gateway and at a game) and a CreateGame beyond a game's limit (limits hit).

How each query is asked (documented in docs/deploy.md):
- the dashboard's variables are replaced by their "All" value (``allValue``), and
  ``$__rate_interval`` by 1m (Grafana derives it from the scrape interval; a minute
  holds every sample of this run);
- an alert's ``<value> <op> <threshold>`` is asked without the comparison: the value
  must exist for every alert even where (as here) it is far from firing.
"Returns data" means at least one series, and a finite number in at least one of them
(a quantile over a window without calls is NaN, which would hide a broken histogram).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import subprocess
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
import yaml

from client.api import FINISHED, GameClient
from deploy.observability import generate
from services import registry
from tests.observability.rules import alerts, split
from tests.support import Process, free_port, start_process

RATE_INTERVAL = "1m"
LIMITED_GAME = registry.SERVICES[0].name  # one open stream per client, called directly
CAPPED_GAME = registry.SERVICES[-1].name  # TABLETOP_MAX_GAMES=2
SCRAPE = "1s"


def substitute(expr: str, board: dict) -> str:
    """A dashboard query as Grafana sends it with every variable on "All"."""
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            expr = expr.replace(f"${variable['name']}", variable["allValue"])
    return expr.replace("$__rate_interval", RATE_INTERVAL)


class Prometheus:
    def __init__(self, binary: str, config: Path, data: Path, log: Path) -> None:
        self.port = free_port()
        self._log = log.open("wb")
        self.popen = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={data}",
                f"--web.listen-address=127.0.0.1:{self.port}",
                "--log.level=warn",
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.log = log

    def get(self, path: str, **params: str) -> dict:
        url = f"http://127.0.0.1:{self.port}{path}"
        if params:
            url += "?" + urllib.parse.urlencode(params)
        with urllib.request.urlopen(url, timeout=10) as answer:
            return json.loads(answer.read())

    def wait_ready(self, timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.popen.poll() is not None:
                raise RuntimeError(f"prometheus exited:\n{self.log.read_text()}")
            with contextlib.suppress(OSError):
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.port}/-/ready", timeout=2
                ) as answer:
                    if answer.status == 200:
                        return
            time.sleep(0.2)
        raise TimeoutError(f"prometheus not ready:\n{self.log.read_text()}")

    def query(self, expr: str) -> list[dict]:
        answer = self.get("/api/v1/query", query=expr)
        assert answer["status"] == "success", (expr, answer)
        return answer["data"]["result"]

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.popen.terminate()
            try:
                self.popen.wait(15)
            except subprocess.TimeoutExpired:
                self.popen.kill()
                self.popen.wait(5)
        self._log.close()


@contextlib.contextmanager
def stack(tmp_path: Path) -> Iterator[dict[str, Process]]:
    """Every game service and the gateway as processes, by job name."""
    started: dict[str, Process] = {}
    try:
        for entry in registry.SERVICES:
            env = {"TABLETOP_STORE_URL": "memory://", "TABLETOP_ALLOW_SEED": "true"}
            if entry.name == LIMITED_GAME:
                env["TABLETOP_STREAMS_PER_CLIENT"] = "1"
            if entry.name == CAPPED_GAME:
                env["TABLETOP_MAX_GAMES"] = "2"
            started[generate.job_name(entry.host)] = start_process(
                entry.package, env, tmp_path / f"{entry.name}.log"
            )
        routes = {
            f"TABLETOP_ROUTE_{e.name.upper()}": started[generate.job_name(e.host)].address
            for e in registry.SERVICES
        }
        gateway_env = {
            **routes,
            "TABLETOP_STREAMS_PER_CLIENT": "1",
            "TABLETOP_HEALTH_INTERVAL_SECONDS": "0.5",
        }
        started[generate.job_name(registry.GATEWAY.host)] = start_process(
            "gateway", gateway_env, tmp_path / "gateway.log"
        )
        yield started
    finally:
        for process in started.values():
            if process.popen.poll() is None:
                process.popen.kill()
                process.popen.wait(10)


async def refused(call) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call
    return error.value.code()


async def second_stream_refused(client: GameClient, game_id: str) -> None:
    """Hold one WatchGame stream open and have a second one refused by the limit."""
    first = client.watch(game_id, timeout=30)
    try:
        assert (await first.read()).HasField("view")
        second = client.watch(game_id, timeout=30)
        assert await refused(second.read()) == grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        first.cancel()


async def play(gateway: str, services: dict[str, Process]) -> dict[str, int]:
    """One random game of each kind through the gateway, and one of each rare event."""
    moves: dict[str, int] = {}
    async with grpc.aio.insecure_channel(gateway) as channel:
        for index, entry in enumerate(registry.SERVICES):
            client = GameClient(entry.name, channel)
            game = await client.create(seed=100 + index)
            result = await client.play_random(game, random.Random(index))
            assert result.final.game.status == FINISHED
            moves[entry.name] = result.moves
        client = GameClient(registry.SERVICES[0].name, channel)
        game = await client.create(seed=7)
        # A forged seat token: an auth failure.
        assert await refused(client.moves(game.game_id, "forged")) == (
            grpc.StatusCode.UNAUTHENTICATED
        )
        # A move by a seat whose decision it is not: a rejected move.
        state = await client.get(game.game_id)
        (acting,) = list(state.game.to_act)
        waiting = next(s for s in range(len(game.tokens)) if s != acting)
        move = (await client.moves(game.game_id, game.tokens[acting])).moves[0]
        code = await refused(client.submit(game.game_id, game.tokens[waiting], move))
        assert code == grpc.StatusCode.PERMISSION_DENIED  # not this seat's decision
        # Two streams where the gateway allows one per client.
        await second_stream_refused(client, game.game_id)
        # CreateGame beyond a game's limit of games in progress.
        capped = GameClient(CAPPED_GAME, channel)
        code = None
        for _ in range(3):
            try:
                await capped.create()
            except grpc.aio.AioRpcError as error:
                code = error.code()
                break
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
    # Two streams where a game allows one per client, called directly.
    direct = services[generate.job_name(registry.by_name(LIMITED_GAME).host)].address
    async with grpc.aio.insecure_channel(direct) as channel:
        client = GameClient(LIMITED_GAME, channel)
        game = await client.create(seed=8)
        await second_stream_refused(client, game.game_id)
    return moves


def has_data(result: list[dict]) -> bool:
    return bool(result) and any(math.isfinite(float(r["value"][1])) for r in result)


def test_every_dashboard_and_alert_query_returns_data_from_a_real_prometheus(prometheus, tmp_path):
    board = json.loads((generate.HERE / generate.DASHBOARD).read_text())
    with stack(tmp_path) as services:
        targets = {job: f"127.0.0.1:{p.metrics_port}" for job, p in services.items()}
        config = generate.prometheus_config(targets, [str(generate.RULES)], interval=SCRAPE)
        (tmp_path / "prometheus.yml").write_text(yaml.safe_dump(config))
        server = Prometheus(
            prometheus, tmp_path / "prometheus.yml", tmp_path / "tsdb", tmp_path / "prom.log"
        )
        try:
            server.wait_ready()
            started = time.monotonic()
            gateway = services[generate.job_name(registry.GATEWAY.host)].address
            moves = asyncio.run(play(gateway, services))
            played = time.monotonic() - started
            # Two scrapes after the last call, and a rule evaluation on them.
            time.sleep(3)
            up = server.query("up")
            assert {r["metric"]["job"] for r in up if r["value"][1] == "1"} == set(targets)

            empty = []
            for title, expr in generate.queries(board):
                asked = substitute(expr, board)
                if not has_data(server.query(asked)):
                    empty.append(f"dashboard {title!r}: {asked}")
            for rule in alerts():
                value, _, _ = split(rule["expr"])
                if not has_data(server.query(value)):
                    empty.append(f"alert {rule['alert']}: {value}")
            assert not empty, "no data:\n" + "\n".join(empty)
            # The control: the same query on a metric name no process exports is empty,
            # so "returns data" is not true of any query whatever.
            title, expr = generate.queries(board)[0]
            renamed = substitute(expr, board).replace("grpc_server_", "grpc_servr_")
            assert renamed != substitute(expr, board) and server.query(renamed) == []

            # Every game's moves reached its series, counted as played.
            applied = server.query("sum by (game) (tabletop_moves_applied_total)")
            counted = {r["metric"]["game"]: float(r["value"][1]) for r in applied}
            assert counted == {name: float(n) for name, n in moves.items()}

            # The rules loaded and evaluate without error, none of them firing.
            groups = server.get("/api/v1/rules")["data"]["groups"]
            rules = [r for g in groups for r in g["rules"]]
            assert {r["name"] for r in rules} == {r["alert"] for r in alerts()}
            assert all(r["health"] == "ok" for r in rules), [
                (r["name"], r.get("lastError")) for r in rules
            ]
            assert not [r["name"] for r in rules if r["state"] == "firing"]
            print(f"\nplayed {sum(moves.values())} moves in {played:.1f}s: {moves}")
        finally:
            server.stop()
