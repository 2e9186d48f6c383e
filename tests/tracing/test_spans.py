"""The services' spans in one process: a call's server span and its children, bots and
the clock as traces of their own, nothing hidden on a span, and nothing at all when
tracing is off. Spans go through the real OTLP exporter to an in-process receiver."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator

import grpc
import pytest
import structlog

from client.api import GameClient, bearer
from services.channeling import engine as channeling
from services.kit import table as tables
from services.kit import tracing
from services.kit.games import GameManager
from services.kit.store import open_store
from tests.support import ROOT, service_in_process
from tests.tracing.receiver import Receiver, by_name, receiving, trace_of

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
CLIENT_SPAN = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{CLIENT_SPAN}-01"


@pytest.fixture
def traced(monkeypatch) -> Iterator[Receiver]:
    """Tracing on in this process, exporting to a receiver; off again after the test."""
    with receiving() as (receiver, endpoint):
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint)
        monkeypatch.setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
        with tracing.configured("tabletop-test") as on:
            assert on
            yield receiver


async def test_a_move_is_one_trace_from_the_callers_traceparent_to_the_store(traced):
    async with service_in_process("channeling") as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient("channeling", channel)
            game = await client.create(players=2, seed=3)
            listed = await client.moves(game.game_id, game.tokens[0])
            move = listed.moves[0]
            metadata = (*bearer(game.tokens[0]), ("traceparent", TRACEPARENT))
            request = client.pb2.SubmitMoveRequest(game_id=game.game_id, move=move)
            await client._method("SubmitMove")(request, metadata=metadata, timeout=10)
    spans = traced.wait_for(
        lambda got: (t := trace_of(got, TRACE)) and by_name(t, "store.append") and t
    )
    (server,) = [s for s in spans if s.name.endswith("/SubmitMove")]
    assert server.parent_id == CLIENT_SPAN  # the caller's span, from its traceparent
    assert server.kind == 2  # SERVER
    assert server.service == "tabletop-test"
    assert server.attributes["rpc.grpc.status_code"] == "OK"
    assert server.attributes["tabletop.game_id"] == game.game_id
    assert server.attributes["tabletop.seat"] == 0
    (append,) = by_name(spans, "store.append")
    (rules,) = by_name(spans, "rules.apply")
    (notify,) = by_name(spans, "watchers.notify")
    for child in (append, rules, notify):
        assert child.parent_id == server.span_id
    assert append.attributes["tabletop.version"] == rules.attributes["tabletop.version"] == 1
    assert rules.attributes["tabletop.game"] == "channeling"
    # Nothing hidden: no token and no move text anywhere on the trace.
    for span in spans:
        for value in span.attributes.values():
            assert game.tokens[0] not in str(value)
            assert str(move.text if hasattr(move, "text") else move) not in str(value)


async def test_a_callers_unsampled_traceparent_is_followed_no_span_is_sent(traced):
    unsampled = "9e5f1f0b2b1d4c5e8a7b6c5d4e3f2a1b"
    async with service_in_process("channeling") as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient("channeling", channel)
            game = await client.create(players=2)
            unsampled_md = (
                *bearer(game.tokens[0]),
                ("traceparent", f"00-{unsampled}-{CLIENT_SPAN}-00"),
            )
            request = client.pb2.ListMovesRequest(game_id=game.game_id)
            listed = await client._method("ListMoves")(request, metadata=unsampled_md, timeout=10)
            metadata = (*bearer(game.tokens[0]), ("traceparent", TRACEPARENT))
            request = client.pb2.SubmitMoveRequest(game_id=game.game_id, move=listed.moves[0])
            await client._method("SubmitMove")(request, metadata=metadata, timeout=10)
    # The sampled call's spans arrive; the unsampled one's never did (sent first).
    traced.wait_for(lambda got: by_name(trace_of(got, TRACE), "store.append"))
    assert trace_of(traced.snapshot(), unsampled) == []


@pytest.mark.parametrize("leaky", [False, True], ids=["type-only", "control-message"])
async def test_a_refused_move_marks_the_rules_span_by_type_only_never_its_message(
    traced, leaky, monkeypatch
):
    if leaky:
        # The control: the SDK's own handling puts the exception's message on the span.
        def with_message(tracer, name, attributes, parent):
            return tracer.start_as_current_span(name, context=parent)

        monkeypatch.setattr(tracing, "_current", with_message)
    async with service_in_process("channeling") as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            client = GameClient("channeling", channel)
            game = await client.create(players=2)
            listed = await client.moves(game.game_id, game.tokens[0])
            assert listed.moves
            # Well formed, but a druid move while the seat must play a glyph: the rules
            # refuse it, with a message about the move.
            bad = client.pb2.Move(move_druid=client.pb2.MoveDruid(origin="a1", target="d4"))
            metadata = (*bearer(game.tokens[0]), ("traceparent", TRACEPARENT))
            request = client.pb2.SubmitMoveRequest(game_id=game.game_id, move=bad)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await client._method("SubmitMove")(request, metadata=metadata, timeout=10)
    spans = traced.wait_for(lambda got: by_name(trace_of(got, TRACE), "rules.apply") and got)
    spans = trace_of(spans, TRACE)
    (server,) = [s for s in spans if s.name.endswith("/SubmitMove")]
    message = refused.value.details()
    assert message
    assert server.attributes["rpc.grpc.status_code"] == refused.value.code().name
    assert server.status != 2, "a refused move is the game working, not a server error"
    (rules,) = by_name(spans, "rules.apply")
    assert rules.status == 2
    shown = [s.status_message for s in spans] + [
        str(v) for s in spans for v in s.attributes.values()
    ]
    if leaky:
        assert any(message in text for text in shown)
        return
    assert not any(message in text for text in shown)
    assert rules.status_message.isidentifier()  # the exception's type alone


@pytest.mark.parametrize("roots", [True, False], ids=["roots", "control-children"])
async def test_bot_turns_and_the_clocks_firings_are_traces_of_their_own(traced, roots, monkeypatch):
    call_root = tracing.root
    if not roots:
        # The control: were they plain spans, they would hang under the call that
        # queued them (the bot queue's task inherits its context), which the test sees.
        monkeypatch.setattr(tracing, "root", tracing.span)
    now = [1_000_000.0]
    m = GameManager(channeling, open_store("memory://"), clock=lambda: now[0])
    await m.start()
    try:
        plan = tables.Plan(
            (tables.SeatPlan("reserved", "", "easy"), tables.SeatPlan("bot", "", "easy")),
            tables.Clock(per_decision=2.0),
        )
        game, tokens = await m.create(2, channeling.Options(), plan=plan)
        gid = game.record.game_id
        snap, _ = await m.read(gid, None)
        if 0 not in snap.to_act:
            await m.settle()
        # Seat 0's whole turn (a turn may be several decisions), then the bot's.
        while 0 in (await m.read(gid, None))[0].to_act:
            _, moves, _ = await m.legal_moves(gid, tokens[0])
            with call_root("test.call"):  # as a call would: the bot's turn is no child
                await m.submit(gid, tokens[0], lambda moves=moves: moves[0], None, None)
        await m.settle()
        now[0] += 60.0  # seat 0's deadline passes: the clock moves for it
        await m.sweep()
    finally:
        await m.close()
    if not roots:
        # The control: as plain spans, the bot's turn and the clock's firing have no
        # trace of their own (no call's span is current where they run).
        traced.wait_for(lambda got: by_name(got, "test.call"))
        time.sleep(1)  # what else was queued is sent meanwhile
        got = traced.snapshot()
        assert not [s for s in got if s.name in ("bot.turn", "clock.fire") and not s.parent_id]
        return
    spans = traced.wait_for(
        lambda got: by_name(got, "bot.turn") and by_name(got, "clock.fire") and got
    )
    calls = {s.trace_id for s in by_name(spans, "test.call")}
    for name in ("bot.turn", "clock.fire"):
        found = [s for s in by_name(spans, name) if s.attributes.get("tabletop.game_id") == gid]
        assert found, name
        for root in found:
            assert root.parent_id == "" and root.trace_id not in calls, name
            assert by_name(trace_of(spans, root.trace_id), "store.append"), name


def test_off_nothing_of_opentelemetry_is_loaded_and_no_exporter_thread_runs():
    """In a fresh interpreter: tracing off leaves OpenTelemetry unimported and no thread
    started; the same check with it on (the control) sees both."""
    probe = (
        "import json, sys, threading\n"
        "from services.kit import tracing\n"
        "on = tracing.setup('probe')\n"
        "with tracing.span('x', game_id='g'):\n"
        "    pass\n"
        "modules = sorted(m for m in sys.modules if m.startswith('opentelemetry'))\n"
        "threads = [t.name for t in threading.enumerate()]\n"
        "print(json.dumps({'on': on, 'modules': modules, 'threads': threads}))\n"
        "tracing.shutdown()\n"
    )

    def run(env: dict[str, str]) -> dict:
        clean = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
        out = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=ROOT,
            env={**clean, **env},
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    endpoint = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9"}
    for off in (
        {},
        {**endpoint, "OTEL_SDK_DISABLED": "true"},
        {**endpoint, "OTEL_TRACES_EXPORTER": "none"},
    ):
        found = run(off)
        assert found == {"on": False, "modules": [], "threads": ["MainThread"]}, off
    control = run(endpoint)
    assert control["on"] and control["modules"]
    assert any(t.startswith("OtelBatch") for t in control["threads"])


def test_exporters_and_protocols_from_the_standard_variables(monkeypatch):
    assert tracing.exporters({}) == ()
    assert tracing.exporters({"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://c:4317"}) == ("otlp",)
    assert tracing.exporters({"OTEL_TRACES_EXPORTER": "console"}) == ("console",)
    assert tracing.exporters({"OTEL_TRACES_EXPORTER": "otlp,none"}) == ()
    with pytest.raises(tracing.TracingConfigError, match="OTEL_TRACES_EXPORTER"):
        tracing.exporters({"OTEL_TRACES_EXPORTER": "zipkin"})
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://c:4318")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    with pytest.raises(tracing.TracingConfigError, match="OTEL_EXPORTER_OTLP_PROTOCOL"):
        tracing.setup("x")
    assert not tracing.enabled()
    assert tracing.service_name("python -m services.channeling") == "tabletop-channeling"
    assert tracing.service_name("python -m gateway") == "tabletop-gateway"


def test_log_lines_carry_the_current_spans_ids(traced, capsys):
    from services.kit import logs

    logs.configure("info", "json")
    try:
        with tracing.root("x"):
            expected = tracing.ids()
            structlog.get_logger("t").info("inside")
        structlog.get_logger("t").info("outside")
    finally:
        structlog.reset_defaults()
    inside, outside = (json.loads(line) for line in capsys.readouterr().out.splitlines()[-2:])
    assert expected is not None
    assert (inside["trace_id"], inside["span_id"]) == expected
    assert "trace_id" not in outside


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", "ftp://collector"),
        ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"),
        ("OTEL_TRACES_EXPORTER", "zipkin"),
    ],
)
def test_a_setting_it_cannot_honour_stops_the_process_at_start_naming_it(name, value):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env |= {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", name: value}
    env |= {"TABLETOP_PORT": "0", "TABLETOP_METRICS_PORT": "0", "TABLETOP_STORE_URL": "memory://"}
    ended = subprocess.run(
        [sys.executable, "-m", "services.channeling"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert ended.returncode != 0
    assert f"configuration error: {name}=" in ended.stderr
