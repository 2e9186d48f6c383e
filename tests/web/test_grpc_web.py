"""Browsers on the gateway's port (gateway/web.py): gRPC-Web over HTTP/1.1 and HTTP/2 for
unary calls and WatchGame, CORS with its preflights, the same limits as gRPC callers, and
a plain answer to what is not gRPC.

Each test runs ``python -m gateway`` (Envoy) in front of a real channeling service, both
on free ports, and speaks HTTP by hand (tests/web/grpcweb.py).
"""

from __future__ import annotations

import contextlib
import http.client
import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from tabletop.channeling.v1 import channeling_pb2 as pb

from client.api import GameClient
from gateway import envoy, web
from gateway.proxy import binary
from services import registry
from tests.support import Process, free_port, running, wait_serving
from tests.web.grpcweb import H2, frame, headers_for, http1, http1_stream

pytestmark = pytest.mark.skipif(binary() is None, reason="no Envoy binary")

GAME = registry.by_name("channeling")
SERVICE = f"/{GAME.service_name}"
ALLOWED = "http://127.0.0.1:8080"  # the default origin: the web app under make run
REFUSED = "http://evil.example"


@contextlib.contextmanager
def stack(tmp_path: Path, gateway: dict[str, str] | None = None,
          service: dict[str, str] | None = None) -> Iterator[tuple[Process, Process]]:  # fmt: skip
    routes = {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES}
    with running(f"services.{GAME.name}", {"TABLETOP_STORE_URL": "memory://", **(service or {})},
                 tmp_path / "svc.log") as svc:  # fmt: skip
        wait_serving(svc.address, GAME.service_name)
        env = {
            **routes,
            f"TABLETOP_ROUTE_{GAME.name.upper()}": svc.address,
            "TABLETOP_HEALTH_INTERVAL_SECONDS": "0.2",
            **(gateway or {}),
        }
        with running("gateway", env, tmp_path / "gw.log") as gw:
            wait_serving(gw.address, GAME.service_name)
            yield svc, gw


@pytest.fixture(scope="module")
def gw(tmp_path_factory) -> Iterator[Process]:
    with stack(tmp_path_factory.mktemp("web")) as (_, gateway):
        yield gateway


def create(port: int, over: str) -> pb.CreateGameResponse:
    body = frame(pb.CreateGameRequest(players=2).SerializeToString())
    path = f"{SERVICE}/CreateGame"
    if over == "http/1.1":
        reply = http1(port, "POST", path, body, headers_for(ALLOWED))
    else:
        h2 = H2(port)
        try:
            reply = h2.call("POST", path, body, headers_for(ALLOWED))
        finally:
            h2.close()
    assert reply.status == 200, reply.body
    assert reply.headers["content-type"].startswith("application/grpc-web")
    assert reply.code == 0, reply.grpc("grpc-message")
    assert reply.headers["access-control-allow-origin"] == ALLOWED
    assert len(reply.messages) == 1
    return pb.CreateGameResponse.FromString(reply.messages[0])


@pytest.mark.parametrize("over", ["http/1.1", "h2"])
def test_a_unary_call_over_grpc_web_reaches_the_game(gw, over):
    created = create(gw.port, over)
    assert created.game.game_type == "channeling" and len(created.seat_tokens) == 2
    # A refusal: its status, message and ErrorInfo readable from the trailer frame.
    body = frame(pb.GetGameRequest(game_id="no-such-game").SerializeToString())
    path = f"{SERVICE}/GetGame"
    if over == "http/1.1":
        reply = http1(gw.port, "POST", path, body, headers_for(ALLOWED))
    else:
        h2 = H2(gw.port)
        reply = h2.call("POST", path, body, headers_for(ALLOWED))
        h2.close()
    assert reply.code == grpc.StatusCode.NOT_FOUND.value[0]
    info = reply.error_info()
    assert info is not None and info.reason == "GAME_NOT_FOUND" and info.domain == "tabletop"
    # The browser may read the status headers only if they are exposed.
    exposed = reply.headers.get("access-control-expose-headers", "")
    assert {"grpc-status", "grpc-message", "grpc-status-details-bin"} <= {
        h.strip() for h in exposed.split(",")
    }


@pytest.mark.parametrize("over", ["http/1.1", "h2"])
async def test_watch_game_streams_each_move_as_it_is_made(gw, over):
    created = create(gw.port, "h2")
    game_id = created.game.game_id
    body = frame(pb.WatchGameRequest(game_id=game_id).SerializeToString())
    path = f"{SERVICE}/WatchGame"
    h2 = None
    if over == "http/1.1":
        conn, response, messages = http1_stream(gw.port, path, body, headers_for(ALLOWED))
        assert response.status == 200
        assert response.getheader("access-control-allow-origin") == ALLOWED
    else:
        h2 = H2(gw.port)
        messages = h2.stream(path, body, headers_for(ALLOWED))
    try:
        first = pb.WatchGameResponse.FromString(next(messages))
        assert first.game.version == 0 and first.HasField("view")
        async with grpc.aio.insecure_channel(gw.address) as channel:
            client = GameClient(GAME.name, channel)
            token = created.seat_tokens[0].token
            listed = await client.moves(game_id, token)
            await client.submit(game_id, token, listed.moves[0], expected_version=0)
        # The open stream carries the move, without a new request.
        update = pb.WatchGameResponse.FromString(next(messages))
        assert update.turn.version == 1 and update.game.version == 1
        assert update.turn.move_text == listed.labels[0]
    finally:
        if h2 is not None:
            h2.close()
        else:
            conn.close()


def preflight(port: int, origin: str, headers: str = "content-type,x-grpc-web,x-user-agent"):
    return http1(
        port, "OPTIONS", f"{SERVICE}/CreateGame",
        headers={"origin": origin, "access-control-request-method": "POST",
                 "access-control-request-headers": headers},
    )  # fmt: skip


def test_a_preflight_from_an_allowed_origin_is_answered_and_cached(gw):
    reply = preflight(gw.port, ALLOWED, "content-type,x-grpc-web,x-user-agent,authorization")
    assert reply.status == 200
    assert reply.headers["access-control-allow-origin"] == ALLOWED
    allowed = {h.strip() for h in reply.headers["access-control-allow-headers"].split(",")}
    assert {
        "content-type",
        "x-grpc-web",
        "x-user-agent",
        "authorization",
        "grpc-timeout",
    } <= allowed
    assert "POST" in reply.headers["access-control-allow-methods"]
    assert int(reply.headers["access-control-max-age"]) >= 600
    # No credentials: a token travels in a header the page sets, never in a cookie.
    assert "access-control-allow-credentials" not in reply.headers
    # Both spellings of the local address are the web app's under make run.
    assert (
        preflight(gw.port, "http://localhost:8080").headers.get("access-control-allow-origin")
        == "http://localhost:8080"
    )


def test_a_preflight_or_call_from_another_origin_is_not_allowed(gw):
    reply = preflight(gw.port, REFUSED)
    assert "access-control-allow-origin" not in reply.headers
    # An actual call from there (which a browser would not send, but a script could):
    # it is served, but without the header that would let a page read the answer.
    body = frame(pb.CreateGameRequest(players=2).SerializeToString())
    call = http1(gw.port, "POST", f"{SERVICE}/CreateGame", body, headers_for(REFUSED))
    assert call.code == 0
    assert "access-control-allow-origin" not in call.headers


@pytest.mark.parametrize("over", ["http/1.1", "h2"])
@pytest.mark.parametrize(
    ("method", "content_type", "says"),
    [
        ("GET", None, "no content-type"),
        ("POST", "application/json", "not gRPC or gRPC-Web"),
        ("POST", "application/proto", "not gRPC or gRPC-Web"),
        ("POST", "application/connect+proto", "Connect protocol"),
    ],
)
def test_what_is_not_grpc_is_told_why_not_that_a_game_is_down(gw, over, method, content_type, says):
    headers = {"content-type": content_type} if content_type else {}
    body = b"{}" if method == "POST" else b""
    path = f"{SERVICE}/CreateGame"
    if over == "http/1.1":
        reply = http1(gw.port, method, path, body, headers)
    else:
        h2 = H2(gw.port)
        reply = h2.call(method, path, body, headers)
        h2.close()
    text = reply.body.decode()
    assert reply.status == 415, text
    assert says in text and "gRPC-Web" in text
    assert "unavailable" not in text


def test_a_grpc_web_call_to_an_unknown_method_is_unimplemented(gw):
    body = frame(b"")
    for path in ("/tabletop.nope.v1.NopeService/Nothing", f"{SERVICE}/NoSuchMethod"):
        reply = http1(gw.port, "POST", path, body, headers_for(ALLOWED))
        assert reply.code == grpc.StatusCode.UNIMPLEMENTED.value[0], (path, reply.headers)


@pytest.mark.parametrize(
    ("setting", "allowed", "refused"),
    [
        ("https://games.example, https://play.example/",
         ["https://games.example", "https://play.example"], [ALLOWED, "https://games.example:8443"]),
        ("*", ["https://anywhere.example", ALLOWED], []),
    ],
)  # fmt: skip
def test_the_allowed_origins_are_a_setting(tmp_path, setting, allowed, refused):
    with stack(tmp_path, {"TABLETOP_CORS_ORIGINS": setting}) as (_, gw):
        for origin in allowed:
            reply = preflight(gw.port, origin)
            assert reply.headers["access-control-allow-origin"] == origin
            assert "access-control-allow-credentials" not in reply.headers
        # Control: the default origin is allowed no more.
        for origin in refused:
            assert "access-control-allow-origin" not in preflight(gw.port, origin).headers


async def test_grpc_web_callers_have_the_limits_and_address_grpc_callers_have(tmp_path):
    limits = {"TABLETOP_RATE_PER_CLIENT": "0.2", "TABLETOP_BURST_PER_CLIENT": "4"}
    streams = {"TABLETOP_TRUST_FORWARDED_FOR": "true", "TABLETOP_STREAMS_PER_CLIENT": "1"}
    with stack(tmp_path, limits, streams) as (_, gw):
        body = frame(pb.GetGameRequest(game_id="none").SerializeToString())
        path = f"{SERVICE}/GetGame"
        codes = []
        while len(codes) < 12 and grpc.StatusCode.RESOURCE_EXHAUSTED.value[0] not in codes:
            reply = http1(gw.port, "POST", path, body, headers_for(ALLOWED))
            codes.append(reply.code)
        assert codes[-1] == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0], codes
        assert codes.count(grpc.StatusCode.NOT_FOUND.value[0]) <= 4  # the burst at most
        info = reply.error_info()
        assert info is not None and info.reason == "RATE_LIMITED"
        assert int(info.metadata["retry_after_ms"]) >= 1
        # A refusal the page can read: HTTP 200 in gRPC-Web framing, with CORS headers.
        assert reply.status == 200
        assert reply.headers["access-control-allow-origin"] == ALLOWED
        assert reply.headers["content-type"].startswith("application/grpc-web")
        # Control: without x-grpc-web (which connect-web and grpc-web send) Envoy's own
        # HTTP answer is left as it is, which a gRPC-Web client reads as UNAVAILABLE.
        bare = http1(gw.port, "POST", path, body, {"content-type": "application/grpc-web+proto"})
        assert bare.status == 429 and bare.code == grpc.StatusCode.UNAVAILABLE.value[0]
        # A claimed address changes nothing; another real one has its own bucket.
        claimed = http1(gw.port, "POST", path, body,
                        headers_for(ALLOWED, {"x-forwarded-for": "10.1.2.3"}))  # fmt: skip
        assert claimed.code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0]
        other = http1(gw.port, "POST", path, body, headers_for(ALLOWED), source="127.0.0.2")
        assert other.code == grpc.StatusCode.NOT_FOUND.value[0]


async def test_the_services_see_a_grpc_web_callers_own_address(tmp_path):
    # One watch stream per client address at the service, which trusts x-forwarded-for:
    # what the gateway sets there decides who the client is.
    streams = {"TABLETOP_TRUST_FORWARDED_FOR": "true", "TABLETOP_STREAMS_PER_CLIENT": "1"}
    with stack(tmp_path, service=streams) as (_, gw):
        created = create(gw.port, "h2")
        body = frame(pb.WatchGameRequest(game_id=created.game.game_id).SerializeToString())
        path = f"{SERVICE}/WatchGame"
        first = H2(gw.port)
        opened = first.stream(path, body, headers_for(ALLOWED, {"x-forwarded-for": "10.0.0.1"}))
        assert pb.WatchGameResponse.FromString(next(opened)).game.version == 0
        try:
            # The same address claiming another: the gateway says who it is; refused.
            second = http1(gw.port, "POST", path, body,
                           headers_for(ALLOWED, {"x-forwarded-for": "10.0.0.2"}))  # fmt: skip
            assert second.code == grpc.StatusCode.RESOURCE_EXHAUSTED.value[0], second.trailers
            # Control: another real address has a stream of its own.
            other = H2(gw.port, source="127.0.0.2")
            got = other.stream(path, body, headers_for(ALLOWED))
            assert pb.WatchGameResponse.FromString(next(got)).game.version == 0
            other.close()
        finally:
            first.close()


@pytest.mark.parametrize("origins", [web.DEFAULT_ORIGINS, ("*",), ()])
def test_the_bootstrap_with_grpc_web_is_configuration_envoy_accepts(origins, tmp_path):
    plan = envoy.Plan(
        host="127.0.0.1", port=50050, admin_port=9901, control_port=40000,
        routes={"channeling": ["127.0.0.1:50052"]}, rate_per_client=30, cors_origins=origins,
    )  # fmt: skip
    config = envoy.bootstrap(plan)
    manager = config["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]
    names = [f["name"] for f in manager["typed_config"]["http_filters"]]
    assert names[:2] == [web.CORS, web.GRPC_WEB] and names[-1] == "envoy.filters.http.router"
    assert manager["typed_config"]["codec_type"] == "AUTO"
    checked = subprocess.run(
        [str(binary()), "--mode", "validate", "--config-yaml", json.dumps(config)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stdout[-2000:] + checked.stderr[-2000:]


def test_origins_are_read_as_the_browser_sends_them():
    assert web.origins(" http://a.example:8080/ ,https://b.example,,http://a.example:8080") == (
        "http://a.example:8080",
        "https://b.example",
    )
    assert web.origins("") == ()
    assert web.origins("*") == ("*",)
    with pytest.raises(SystemExit, match="TABLETOP_CORS_ORIGINS"):
        web.origins("games.example")


def test_before_the_web_filters_a_browser_got_what_the_issue_reported(tmp_path, monkeypatch):
    """Control for the tests above: the gateway's configuration without gateway.web's
    part answers an HTTP/1.1 gRPC-Web call with nothing, as issue 27 found."""
    monkeypatch.setattr(web, "filters", lambda: [])
    monkeypatch.setattr(web, "unroutable", lambda: [])
    monkeypatch.setattr(web, "cors_policy", lambda allowed: {})
    plan = envoy.Plan(host="127.0.0.1", port=0, admin_port=0, control_port=1, routes={})
    config = envoy.bootstrap(plan)
    manager = config["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]
    manager["typed_config"]["codec_type"] = "HTTP2"  # as it was
    port, admin = free_port(), free_port()
    listener = config["static_resources"]["listeners"][0]
    listener["address"]["socket_address"]["port_value"] = port
    config["admin"]["address"]["socket_address"]["port_value"] = admin
    envoy_process = subprocess.Popen(
        [str(binary()), "--config-yaml", json.dumps(config), "--disable-hot-restart",
         "--log-level", "error"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                reply = http1(
                    port, "POST", f"{SERVICE}/CreateGame", frame(b""), headers_for(ALLOWED)
                )
            except ConnectionRefusedError:
                assert time.monotonic() < deadline, "Envoy did not listen"
                time.sleep(0.1)
                continue
            except http.client.RemoteDisconnected:
                break  # curl's "(52) Empty reply from server"
            raise AssertionError(f"answered {reply.status}: the control does not hold")
    finally:
        envoy_process.kill()
        envoy_process.wait(10)


def test_a_game_whose_backends_are_down_is_refused_with_a_reason_over_grpc_web(tmp_path):
    with stack(tmp_path) as (svc, gw):
        created = create(gw.port, "http/1.1")  # control: routed while the backend is up
        svc.popen.kill()
        svc.popen.wait(10)
        time.sleep(1.0)  # a few of the gateway's 0.2 s health checks
        body = frame(pb.GetGameRequest(game_id=created.game.game_id).SerializeToString())
        reply = http1(gw.port, "POST", f"{SERVICE}/GetGame", body, headers_for(ALLOWED))
    assert reply.status == 200
    assert reply.code == grpc.StatusCode.UNAVAILABLE.value[0]
    info = reply.error_info()
    assert info is not None and info.reason == "BACKEND_UNAVAILABLE"
    assert reply.headers["access-control-allow-origin"] == ALLOWED
    assert str(svc.port) not in (reply.grpc("grpc-message") or "")
