"""A game service's oversized answer costs only the call that got it (issue 25, finding 3).

A refusal whose trailers held about 82 KB (a service echoing 200 unknown option keys)
made Envoy end its one connection to that service (one header over 64 KiB, beyond what
its HTTP/2 decoder took: a connection error), and every call of every other client on
that connection failed with it. Here a deliberately misbehaving backend (a small grpc.aio
server started by the test) answers ListGames with oversized trailers while other
clients, from other source addresses, call GetGame on the same backend through the same
Envoy (the gateway's bootstrap, gateway.envoy): none of them fails, and the caller gets
the answer a client gets directly (gRPC refuses metadata over 16 KiB). The control is
Envoy at its own header limits, where they do fail.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import time
import urllib.request
from collections.abc import AsyncIterator

import grpc
import pytest
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from gateway import envoy
from gateway.proxy import Envoy, binary
from services import registry
from services.kit.status import error_info
from tests.security.h2raw import RawCall
from tests.support import free_port

pytestmark = pytest.mark.skipif(binary() is None, reason="no Envoy binary")

GAME = registry.by_name("channeling")
SERVICE = GAME.service_name
OTHERS = [f"127.0.0.{n}" for n in range(2, 8)]  # other clients' source addresses
ATTACKS = 60  # oversized answers asked for while the others call
NOT_FOUND = str(grpc.StatusCode.NOT_FOUND.value[0]).encode()

# The answers, as trailers of a refusal: one header of 82 KB (beyond what Envoy's HTTP/2
# decoder took by default), or 200 headers of 410 bytes (82 KB in all); and one header
# beyond anything Envoy decodes (envoy.HEADER_FIELD_KB).
ONE_HEADER = (("x-echo", "k" * 82_000),)
MANY_HEADERS = tuple((f"x-echo-{i}", "k" * 400) for i in range(200))
UNREADABLE = (("x-echo", "k" * (envoy.HEADER_FIELD_KB + 8) * 1024),)


class Misbehaving(grpc.GenericRpcHandler):
    """A game service's shape: ListGames refused with ``trailers``, anything else
    NOT_FOUND, as a service asked for a game it does not have answers."""

    def __init__(self, trailers: tuple[tuple[str, str], ...]) -> None:
        self.trailers = trailers

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        if details.method == f"/{SERVICE}/ListGames":

            async def refuse(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
                await context.abort(grpc.StatusCode.INVALID_ARGUMENT, "no", self.trailers)

            return grpc.unary_unary_rpc_method_handler(refuse)

        async def missing(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
            await context.abort(grpc.StatusCode.NOT_FOUND, "no such game")

        return grpc.unary_unary_rpc_method_handler(missing)


@contextlib.asynccontextmanager
async def backend(trailers: tuple[tuple[str, str], ...]) -> AsyncIterator[int]:
    server = grpc.aio.server()
    served = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(served, server)
    server.add_generic_rpc_handlers([Misbehaving(trailers)])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    await served.set(SERVICE, health_pb2.HealthCheckResponse.SERVING)
    try:
        yield port
    finally:
        await server.stop(0)


@contextlib.asynccontextmanager
async def gateway_envoy(backend_port: int, *, envoy_limits: bool = False) -> AsyncIterator[Envoy]:
    """Envoy with the gateway's bootstrap in front of the backend; ``envoy_limits`` puts
    back Envoy's own limits on the answers it reads (the control)."""
    plan = envoy.Plan(
        host="127.0.0.1", port=free_port(), admin_port=free_port(), control_port=free_port(),
        routes={GAME.name: [f"127.0.0.1:{backend_port}"]}, health_interval=0.2,
        access_log=False,
    )  # fmt: skip
    config = envoy.bootstrap(plan)
    if envoy_limits:
        for cluster in config["static_resources"]["clusters"]:
            for options in cluster["typed_extension_protocol_options"].values():
                options.pop("common_http_protocol_options", None)
                options["explicit_http_config"]["http2_protocol_options"].pop(
                    "max_header_field_size_kb", None
                )
    proxy = Envoy(str(binary()), config, concurrency=1, drain_seconds=1)
    await proxy.start()
    proxy.port = plan.port  # type: ignore[attr-defined]
    try:
        deadline = time.monotonic() + 30
        while await asyncio.to_thread(raw_get, "127.0.0.1", plan.port) != NOT_FOUND:
            assert time.monotonic() < deadline, "the backend never became routable"
            await asyncio.sleep(0.1)
        yield proxy
    finally:
        await proxy.stop()


def raw_get(source: str, port: int) -> bytes | None:
    """One GetGame from ``source`` on a connection of its own: its grpc-status, or None
    when the stream was reset or the connection lost."""
    call = RawCall("127.0.0.1", port, f"/{SERVICE}/GetGame", b"", window=65_535, source=source)
    call.start()
    try:
        if not call.wait(10) or call.reset is not None:
            return None
        return call.trailer("grpc-status")
    finally:
        call.close()


def stat(proxy: Envoy, name: str) -> int:
    path = f"/stats?format=json&filter=^cluster\\.{GAME.name}\\.{name}$"
    with urllib.request.urlopen(f"http://{proxy.admin}{path}", timeout=5) as reply:
        stats = json.loads(reply.read()).get("stats", [])
    return int(stats[0]["value"]) if stats else 0


async def attack_beside_others(proxy: Envoy) -> tuple[collections.Counter, list, int]:
    """ATTACKS oversized answers asked for on one connection while six other addresses,
    each a new connection per call, and a client on a long-lived connection of its own
    call GetGame. (outcomes of the others' calls, the attacker's errors, calls by others)"""
    port = proxy.port  # type: ignore[attr-defined]
    outcomes: collections.Counter = collections.Counter()
    done = asyncio.Event()

    async def other(source: str) -> None:
        while not done.is_set():
            status = await asyncio.to_thread(raw_get, source, port)
            outcomes[status.decode() if status else "reset"] += 1

    async def long_lived() -> None:
        options = [("grpc.use_local_subchannel_pool", 1)]  # a connection of its own
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
            get = channel.unary_unary(f"/{SERVICE}/GetGame")
            while not done.is_set():
                try:
                    await get(b"", timeout=10)
                    outcomes["0"] += 1
                except grpc.aio.AioRpcError as error:
                    outcomes[str(error.code().value[0])] += 1

    others = [asyncio.ensure_future(other(s)) for s in OTHERS]
    others.append(asyncio.ensure_future(long_lived()))
    errors = []
    options = [("grpc.use_local_subchannel_pool", 1)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        list_games = channel.unary_unary(f"/{SERVICE}/ListGames")
        for _ in range(ATTACKS):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await list_games(b"", timeout=10)
            errors.append(caught.value)
            await asyncio.sleep(0.01)  # the others' calls get in between
    done.set()
    await asyncio.gather(*others)
    return outcomes, errors, sum(outcomes.values())


@pytest.mark.parametrize("answer", [ONE_HEADER, MANY_HEADERS], ids=["one-header", "many"])
async def test_an_oversized_answer_costs_only_the_call_that_got_it(answer):
    async with backend(answer) as port, gateway_envoy(port) as proxy:
        outcomes, errors, calls = await attack_beside_others(proxy)
        assert stat(proxy, "upstream_cx_protocol_error") == 0, "the connection was ended"
    assert calls >= len(OTHERS) + 1
    assert outcomes == {NOT_FOUND.decode(): calls}, f"other clients' calls failed: {outcomes}"
    # Passed on: the client judged it as it judges a service's answer directly.
    for error in errors:
        assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, error
        assert "metadata size exceeds" in (error.details() or ""), error


async def test_control_envoy_at_its_own_limits_fails_the_other_clients_calls():
    async with backend(ONE_HEADER) as port, gateway_envoy(port, envoy_limits=True) as proxy:
        outcomes, _, calls = await attack_beside_others(proxy)
        assert stat(proxy, "upstream_cx_protocol_error") >= ATTACKS
    failed = calls - outcomes[NOT_FOUND.decode()]
    assert failed > 0, f"the connection's end reached no other client: {outcomes}"


async def test_an_answer_beyond_what_envoy_reads_is_refused_with_a_reason():
    # One header over envoy.HEADER_FIELD_KB: no setting of Envoy's reads it; the upstream
    # connection ends (docs/design.md says what that costs) and the caller is told so in
    # our words, with an ErrorInfo, not in Envoy's.
    async with backend(UNREADABLE) as port, gateway_envoy(port) as proxy:
        options = [("grpc.use_local_subchannel_pool", 1)]
        address = f"127.0.0.1:{proxy.port}"  # type: ignore[attr-defined]
        async with grpc.aio.insecure_channel(address, options=options) as channel:
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await channel.unary_unary(f"/{SERVICE}/ListGames")(b"", timeout=10)
        assert stat(proxy, "upstream_cx_protocol_error") == 1
    assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
    info = error_info(caught.value)
    assert info is not None and info.reason == "BACKEND_UNAVAILABLE"
    assert info.metadata["upstream"] == "protocol_error"
    assert "reset reason" not in (caught.value.details() or "")
