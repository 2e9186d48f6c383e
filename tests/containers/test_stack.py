"""Every game service in the list and the gateway, each in its own container: a full game
of each game through the gateway, then the gateway's and the services' /metrics."""

from __future__ import annotations

import contextlib
import random
import time

import grpc
import pytest
from tabletop.gateway.v1 import catalog_pb2, catalog_pb2_grpc

from client.api import FINISHED, GameClient
from services import registry
from tests.containers.harness import Running, players, sample, scrape, start

pytestmark = pytest.mark.containers


@pytest.fixture
def stack():
    """The services (memory store), then the gateway routed to their loopback ports."""
    running: list[Running] = []
    try:
        services = {}
        for entry in registry.SERVICES:
            services[entry.name] = start(
                entry.name, env={"TABLETOP_STORE_URL": "memory://", "TABLETOP_ALLOW_SEED": "true"}
            )
            running.append(services[entry.name])
        routes = {f"TABLETOP_ROUTE_{name.upper()}": svc.address for name, svc in services.items()}
        gateway = start("gateway", env={**routes, "TABLETOP_HEALTH_INTERVAL_SECONDS": "0.5"})
        running.append(gateway)
        yield gateway, services
    finally:
        for container in reversed(running):
            with contextlib.suppress(Exception):
                container.container.stop()


async def test_a_full_game_of_each_game_through_the_gateway_and_the_metrics_show_it(stack):
    gateway, services = stack
    played = {}
    async with grpc.aio.insecure_channel(gateway.address) as channel:
        catalog = catalog_pb2_grpc.CatalogServiceStub(channel)
        deadline = time.monotonic() + 15
        while True:
            listed = await catalog.ListGames(catalog_pb2.ListGamesRequest(), timeout=5)
            up = {g.name: g.up for g in listed.games}
            if all(up.get(e.name) for e in registry.SERVICES) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert up == {e.name: True for e in registry.SERVICES}, up
        for i, entry in enumerate(registry.SERVICES):
            client = GameClient(entry.name, channel)
            game = await client.create(players(entry), seed=100 + i)
            result = await client.play_random(game, random.Random(i))
            assert result.final.game.status == FINISHED
            assert result.final.game.game_type == entry.name
            played[entry.name] = result

    # Envoy merges its latency histograms every second: scrape until they hold every call.
    def histograms_caught_up(gw: dict) -> bool:
        return all(
            sample(gw, "grpc_server_handling_seconds_count", grpc_type="unary",
                   grpc_service=e.service_name, grpc_method="SubmitMove")
            == played[e.name].moves + played[e.name].aborted
            for e in registry.SERVICES
        )  # fmt: skip

    deadline = time.monotonic() + 10
    gw = scrape(gateway.metrics_url)
    while not histograms_caught_up(gw) and time.monotonic() < deadline:
        time.sleep(0.5)
        gw = scrape(gateway.metrics_url)
    for entry in registry.SERVICES:
        result = played[entry.name]
        service = entry.service_name
        # Through the gateway: every accepted move, one CreateGame, every GetGame.
        ok = "grpc_server_handled_total"
        unary = {"grpc_type": "unary", "grpc_service": service}
        submit = {**unary, "grpc_method": "SubmitMove"}
        assert sample(gw, ok, **submit, grpc_code="OK") == result.moves
        assert sample(gw, ok, **unary, grpc_method="CreateGame", grpc_code="OK") == 1
        assert sample(gw, ok, **unary, grpc_method="ListMoves", grpc_code="OK") >= result.moves
        # Upstream calls: every SubmitMove reached the backend (Envoy, the gateway's data
        # path, counts them when they end; it has no upstream count by code).
        assert sample(gw, "grpc_client_started_total", **submit) == result.moves + result.aborted
        assert sample(gw, "tabletop_gateway_backend_up", grpc_service=service) == 1
        assert (
            sample(gw, "grpc_server_handling_seconds_count", **submit)
            == result.moves + result.aborted
        )

        own = scrape(services[entry.name].metrics_url)
        name = entry.name
        assert sample(own, "tabletop_moves_applied_total", game=name) == result.moves
        assert sample(own, "tabletop_games_created_total", game=name) == 1
        assert sample(own, "tabletop_games_finished_total", game=name) == 1
        assert (
            sample(
                own,
                "grpc_server_handled_total",
                grpc_type="unary",
                grpc_service=service,
                grpc_method="SubmitMove",
                grpc_code="OK",
            )
            == result.moves
        )
        assert sample(own, "tabletop_engine_move_seconds_count", game=name) == result.moves

    # Docker's own HEALTHCHECK (the image's probe, every 10s) agrees: all healthy.
    deadline = time.monotonic() + 25
    states = {}
    while time.monotonic() < deadline:
        states = {}
        for running in [gateway, *services.values()]:
            running.docker.reload()
            states[running.spec.host] = running.docker.attrs["State"]["Health"]["Status"]
        if all(s == "healthy" for s in states.values()):
            break
        time.sleep(0.5)
    assert set(states.values()) == {"healthy"}, states
