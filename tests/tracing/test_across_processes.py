"""One trace across processes, as deployed: a client's SubmitMove through the gateway
(Envoy) to a game service and its store, exported by each process to an OTLP receiver;
a move made with the CLI found there too; and with tracing off, nothing sent."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import grpc
import pytest

from client.api import GameClient, bearer
from gateway.proxy import binary
from tests.gateway.test_envoy_data_path import GAME, stack
from tests.support import ROOT, Process
from tests.tracing.receiver import by_name, receiving, trace_of

pytestmark = pytest.mark.skipif(binary() is None, reason="no Envoy binary")

TRACE = "0af7651916cd43dd8448eb211c80319c"
CLIENT_SPAN = "b7ad6b7169203331"
SERVICE = f"tabletop-{GAME.name}"
ENVOY = "tabletop-gateway-envoy"


def otel(endpoint: str) -> dict[str, str]:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": endpoint, "OTEL_BSP_SCHEDULE_DELAY": "100"}


async def _game(gw: Process) -> tuple[GameClient, str, list[str], grpc.aio.Channel]:
    channel = grpc.aio.insecure_channel(gw.address)
    client = GameClient(GAME.name, channel)
    # Envoy's own health check of the service may pass a moment after the gateway's.
    for _ in range(300):
        try:
            game = await client.create(players=2)
            return client, game.game_id, game.tokens, channel
        except grpc.aio.AioRpcError as exc:
            if exc.code() != grpc.StatusCode.UNAVAILABLE:
                raise
            await asyncio.sleep(0.1)
    raise AssertionError("the game service never became routable")


def _log_lines(process: Process) -> list[dict]:
    out = []
    for line in process.lines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            out.append(record)
    return out


def _said(*processes: Process) -> str:
    """What the processes logged of their calls' ends and their exports (a span lost in
    an export that failed, or a call that never ended, shows here)."""
    words = ("WatchGame", "export", "Export", "cancel")
    return "\n".join(
        f"{p.log.name}: {line}"
        for p in processes
        for line in p.lines()
        if any(w in line for w in words)
    )


def _ancestry(spans, span) -> list[str]:
    """The span ids from ``span`` up to the trace's root (or its first unknown parent)."""
    ids = {s.span_id: s for s in spans}
    chain = [span.span_id]
    while span.parent_id in ids:
        span = ids[span.parent_id]
        chain.append(span.span_id)
    chain.append(span.parent_id)
    return chain


async def test_a_submitted_move_is_one_trace_through_envoy_to_the_store(tmp_path: Path):
    with receiving() as (receiver, endpoint):
        env = otel(endpoint)
        with stack(tmp_path, gateway=env, service=env) as (svc, gw):
            client, game_id, tokens, channel = await _game(gw)
            async with channel:
                listed = await client.moves(game_id, tokens[0])
                request = client.pb2.SubmitMoveRequest(game_id=game_id, move=listed.moves[0])
                metadata = (*bearer(tokens[0]), ("traceparent", f"00-{TRACE}-{CLIENT_SPAN}-01"))
                await client._method("SubmitMove")(request, metadata=metadata, timeout=10)

            def whole(got):
                # Every span from the append up to the client's: Envoy sends its ingress
                # and upstream spans in batches of their own.
                trace = trace_of(got, TRACE)
                appended = by_name(trace, "store.append")
                linked = appended and _ancestry(trace, appended[0])[-1] == CLIENT_SPAN
                return linked and trace

            spans = receiver.wait_for(whole, timeout=60)
            log = _log_lines(svc)
    (server,) = [s for s in spans if s.service == SERVICE and s.name.endswith("/SubmitMove")]
    (append,) = by_name(spans, "store.append")
    envoys = [s for s in spans if s.service == ENVOY]
    # The store append is the service call's child; the call's parent is an Envoy span,
    # and Envoy's spans lead back to the client's span, the trace's origin.
    assert append.parent_id == server.span_id
    assert server.parent_id in {s.span_id for s in envoys}
    chain = _ancestry(spans, append)
    assert chain[-1] == CLIENT_SPAN
    assert {s.span_id for s in envoys} & set(chain)
    assert server.attributes["tabletop.game_id"] == game_id
    # The service's access line for the call carries the trace and the call's span.
    (line,) = [
        r for r in log if r.get("event") == "rpc" and r.get("method", "").endswith("/SubmitMove")
    ]
    assert (line["trace_id"], line["span_id"]) == (TRACE, server.span_id)
    assert all(tokens[0] not in json.dumps(s.attributes) for s in spans)


async def test_a_watch_is_one_trace_through_envoy_the_gateways_relay_and_the_service(
    tmp_path: Path,
):
    watch_trace = "5b8aa5a2d2c872e8321cf37308d69df2"
    with receiving() as (receiver, endpoint):
        env = otel(endpoint)
        with stack(tmp_path, gateway=env, service=env) as (svc, gw):
            client, game_id, _, channel = await _game(gw)
            async with channel:
                request = client.pb2.WatchGameRequest(game_id=game_id)
                stream = client._method("WatchGame", streaming=True)(
                    request,
                    metadata=(("traceparent", f"00-{watch_trace}-{CLIENT_SPAN}-01"),),
                    timeout=30,
                )
                async for _ in stream:
                    break  # the view: the relay and the service have each begun
                stream.cancel()

            def whole(got):
                trace = trace_of(got, watch_trace)
                watched = [s for s in trace if s.name.endswith("/WatchGame")]
                services = {s.service for s in watched}
                relays = [s for s in watched if s.service == "tabletop-gateway"]
                # Envoy's spans for the stream (its ingress and its upstream call) too.
                linked = relays and _ancestry(trace, relays[0])[-1] == CLIENT_SPAN
                return {SERVICE, "tabletop-gateway"} <= services and linked and trace

            try:
                spans = receiver.wait_for(whole, timeout=60)
            except AssertionError as missing:  # a load flake not reproduced yet: say more
                raise AssertionError(f"{missing}\n{_said(svc, gw)}") from None
    (relay,) = [s for s in spans if s.service == "tabletop-gateway"]
    (served,) = [s for s in spans if s.service == SERVICE and s.name.endswith("/WatchGame")]
    # Client -> (Envoy) -> the gateway's relay -> the service: each the next one's parent.
    assert served.parent_id == relay.span_id
    assert any(s.service == ENVOY for s in spans)
    assert relay.attributes["rpc.grpc.status_code"] == "CANCELLED"


async def test_a_move_made_with_the_cli_is_a_trace_in_the_collector(tmp_path: Path):
    with receiving() as (receiver, endpoint):
        env = otel(endpoint)
        with stack(tmp_path, gateway=env, service=env) as (_svc, gw):
            _, game_id, tokens, channel = await _game(gw)
            await channel.close()
            clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
            played = subprocess.run(
                [sys.executable, "-m", "client", "--target", gw.address, "play", GAME.name,
                 game_id, "--token", tokens[0], "1"],
                cwd=ROOT, env=clean, capture_output=True, text=True, timeout=60,
            )  # fmt: skip
            assert played.returncode == 0, played.stderr

            def found(got):
                calls = [
                    s
                    for s in got
                    if s.service == SERVICE
                    and s.name.endswith("/SubmitMove")
                    and s.attributes.get("tabletop.game_id") == game_id
                ]
                for call in calls:
                    trace = trace_of(got, call.trace_id)
                    envoys = [s for s in trace if s.service == ENVOY]
                    # Envoy's spans (its ingress, its upstream call) come in batches.
                    if (
                        call.parent_id in {s.span_id for s in envoys}
                        and any(s.parent_id == "" for s in envoys)
                        and by_name(trace, "store.append")
                    ):
                        return call, trace
                return None

            call, trace = receiver.wait_for(found, timeout=60)
    # The CLI sends no traceparent: Envoy's span starts the trace, the service's is under it.
    assert call.parent_id in {s.span_id for s in trace if s.service == ENVOY}
    assert any(s.parent_id == "" for s in trace if s.service == ENVOY)


async def test_off_no_span_reaches_the_collector_and_log_lines_carry_no_trace(tmp_path: Path):
    """The control: the same move with tracing switched off (OTEL_SDK_DISABLED, the
    endpoint still set) sends nothing, from Envoy or the service."""
    with receiving() as (receiver, endpoint):
        env = {**otel(endpoint), "OTEL_SDK_DISABLED": "true"}
        with stack(tmp_path, gateway=env, service=env) as (svc, gw):
            client, game_id, tokens, channel = await _game(gw)
            async with channel:
                listed = await client.moves(game_id, tokens[0])
                request = client.pb2.SubmitMoveRequest(game_id=game_id, move=listed.moves[0])
                metadata = (*bearer(tokens[0]), ("traceparent", f"00-{TRACE}-{CLIENT_SPAN}-01"))
                await client._method("SubmitMove")(request, metadata=metadata, timeout=10)
            time.sleep(3)  # well past the 100 ms batch delay every process was given
            log = _log_lines(svc)
        assert receiver.snapshot() == [] and receiver.exports == 0
    calls = [r for r in log if r.get("event") == "rpc"]
    assert calls and not any("trace_id" in r for r in calls)
