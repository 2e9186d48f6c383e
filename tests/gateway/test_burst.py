"""A burst of calls on one connection: every call answered, every refusal ours.

gRPC's core used to cancel part of a burst of a few thousand calls (CANCELLED, no
ErrorInfo, never counted) before the application saw them. See services/kit/overload.py.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import signal

import grpc
import pytest
from prometheus_client import REGISTRY

from client.api import GameClient
from services import registry
from services.kit import overload
from services.kit.games import GameManager
from services.kit.metrics import GameMetrics
from services.kit.server import create_server, set_serving
from services.kit.service import GameService
from services.kit.status import error_info
from services.kit.store import open_store
from tests.support import gateway_in_process, running, service_in_process

NAME = "channeling"
SERVICE = registry.by_name(NAME).service_name
GET = {"grpc_type": "unary", "grpc_service": SERVICE, "grpc_method": "GetGame"}


def outcomes(results: list) -> collections.Counter:
    """OK, or (code, ErrorInfo reason, its limit) for each call."""
    seen: collections.Counter = collections.Counter()
    for result in results:
        if isinstance(result, grpc.aio.AioRpcError):
            info = error_info(result)
            reason = info.reason if info else None
            seen[(result.code().name, reason, info.metadata.get("limit") if info else None)] += 1
        elif isinstance(result, BaseException):
            raise result
        else:
            seen["OK"] += 1
    return seen


def handled_total(registry_=REGISTRY, labels=GET) -> float:
    total = 0.0
    for family in registry_.collect():
        for sample in family.samples:
            if sample.name == "grpc_server_handled_total" and all(
                sample.labels.get(k) == v for k, v in labels.items()
            ):
                total += sample.value
    return total


async def burst(address: str, calls: int) -> collections.Counter:
    async with grpc.aio.insecure_channel(address) as channel:  # one connection
        client = GameClient(NAME, channel)
        game = await client.create(2)
        results = await asyncio.gather(
            *(client.get(game.game_id) for _ in range(calls)), return_exceptions=True
        )
    return outcomes(results)


async def test_3000_calls_at_once_to_a_service_are_all_answered():
    async with service_in_process(NAME) as svc:
        before = handled_total()
        seen = await burst(svc.address, 3000)
    assert seen == {"OK": 3000}, seen
    assert handled_total() == before + 3000


async def test_1600_calls_at_once_through_the_gateway_are_all_answered():
    async with service_in_process(NAME) as svc:
        async with gateway_in_process({NAME: [svc.address]}) as (port, gateway):
            before = handled_total(gateway.registry)
            seen = await burst(f"127.0.0.1:{port}", 1600)
            after = handled_total(gateway.registry)
    assert seen == {"OK": 1600}, seen
    assert after == before + 1600


@contextlib.asynccontextmanager
async def limited_service(store_url: str, max_concurrent_calls: int):
    spec = GameService.load(registry.by_name(NAME))
    store = open_store(store_url)
    manager = GameManager(spec.engine, store, metrics=GameMetrics(NAME))
    await manager.start()
    server, port, health = create_server(
        "127.0.0.1:0", spec, manager, access_log=False, max_concurrent_calls=max_concurrent_calls
    )
    await server.start()
    await set_serving(health, [spec.name], True)
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(0)
        await store.close()


LIMIT = ("RESOURCE_EXHAUSTED", "LIMIT_REACHED", "max_concurrent_calls")


async def test_beyond_the_concurrency_limit_a_service_refuses_with_a_reason_and_counts(tmp_path):
    label = {"limit": "max_concurrent_calls"}
    # CreateGame waits for the store's write, so calls pile up in flight.
    async with limited_service(f"sqlite:///{tmp_path}/burst.db", 5) as address:
        before = REGISTRY.get_sample_value("tabletop_limited_total", label) or 0.0
        async with grpc.aio.insecure_channel(address) as channel:
            client = GameClient(NAME, channel)
            results = await asyncio.gather(
                *(client.create(2) for _ in range(300)), return_exceptions=True
            )
        seen = outcomes(results)
        counted = (REGISTRY.get_sample_value("tabletop_limited_total", label) or 0.0) - before
    assert seen[LIMIT], f"300 creates at once must exceed 5 in flight: {seen}"
    assert seen["OK"] + seen[LIMIT] == 300, seen
    assert counted == seen[LIMIT]


async def test_beyond_the_concurrency_limit_the_gateway_refuses_with_a_reason_and_counts(
    tmp_path,
):
    label = {"limit": "max_concurrent_calls"}
    env = {"TABLETOP_STORE_URL": "memory://"}
    with running(f"services.{NAME}", env, tmp_path / "svc.log") as svc:
        # A stopped backend (its health not checked again) holds every forwarded call
        # until the upstream deadline: 20 stay in flight, the rest must be refused.
        async with gateway_in_process(
            {NAME: [svc.address]}, max_concurrent_calls=20, unary_timeout=2.0
        ) as (port, gateway):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(NAME, channel, timeout=None)  # the gateway's deadline
                game = await client.create(2)
                svc.popen.send_signal(signal.SIGSTOP)
                try:
                    results = await asyncio.gather(
                        *(client.get(game.game_id) for _ in range(400)), return_exceptions=True
                    )
                finally:
                    svc.popen.send_signal(signal.SIGCONT)
            seen = outcomes(results)
            counted = gateway.registry.get_sample_value("tabletop_gateway_limited_total", label)
            refused_code = {**GET, "grpc_code": "RESOURCE_EXHAUSTED"}
            handled = gateway.registry.get_sample_value("grpc_server_handled_total", refused_code)
    waited = seen[("DEADLINE_EXCEEDED", "DEADLINE_EXCEEDED", None)]
    assert 0 < waited <= 20, seen
    assert seen[LIMIT] + waited == 400, seen
    assert counted == seen[LIMIT] == handled


async def test_control_the_cores_default_queue_cancels_part_of_a_burst(monkeypatch):
    """Without the deeper queue the same burst loses calls to CANCELLED: the cause."""
    monkeypatch.setattr(overload, "core_options", lambda: [])
    async with service_in_process(NAME) as svc:
        seen = await burst(svc.address, 3000)
    cancelled = seen[("CANCELLED", None, None)]
    if not cancelled:
        pytest.xfail(f"this run's burst fit in the core's default queue: {seen}")
    assert cancelled + seen["OK"] == 3000
