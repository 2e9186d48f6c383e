"""``make run`` as a person sees it (services/run.py): "ready" once the gateway routes, one
line per call, the web app's address, and without a built web app, how to get one."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import grpc
import pytest
from tabletop.channeling.v1 import channeling_pb2 as pb
from tabletop.channeling.v1 import channeling_pb2_grpc

from services import registry, run
from tests.support import free_port
from tests.web.conftest import make_run


@pytest.mark.browser  # needs the built web app, as the browser tests do
def test_ready_is_printed_once_the_gateway_routes_every_game(app):
    # The moment "ready" was printed, every call went through at the first try.
    assert app.routed_at_ready == {"catalog": "OK", **{e.name: "OK" for e in registry.SERVICES}}
    ready = [line for line in app.lines if line.startswith("ready:")]
    assert ready[0].startswith(f"ready: gateway on 127.0.0.1:{app.gateway_port}")
    assert ready[1].strip() == f"ready: play in a browser, open {app.url}"


async def test_the_wait_for_ready_sees_a_gateway_that_does_not_route():
    """Control: with nothing routing on the port, every game and the catalog are missing."""
    missing = await run.routes_every_game(free_port(), list(registry.SERVICES), timeout=0.5)
    assert missing == ["its catalog", *registry.names()]


@pytest.mark.browser
def test_one_line_per_call_the_services(app):
    with grpc.insecure_channel(f"127.0.0.1:{app.gateway_port}") as channel:
        service = channeling_pb2_grpc.ChannelingServiceStub(channel)
        for _ in range(3):
            service.ListGames(pb.ListGamesRequest(page_size=1), timeout=10)
    lines = [line.split("|", 1) for line in app.lines if "|" in line]
    records = []
    for process, text in lines:
        try:
            records.append((process.strip(), json.loads(text)))
        except ValueError:
            continue
    calls = [(p, r) for p, r in records if r.get("event") in ("rpc", "call")]
    assert calls, "no access line at all"
    # Every call's line is the service's; the gateway's Envoy writes none under make run.
    assert {p for p, r in calls} <= set(registry.names())
    assert not [r for p, r in calls if r.get("logger") == "envoy"]


def test_the_gateways_access_log_is_off_under_make_run_unless_asked():
    assert run.gateway_settings({}, 8080)["TABLETOP_ACCESS_LOG"] == "false"
    # Control: a person who wants Envoy's line back sets it.
    assert run.gateway_settings({"TABLETOP_ACCESS_LOG": "true"}, 8080)["TABLETOP_ACCESS_LOG"] == (
        "true"
    )
    # The web app's origin is allowed by the gateway, on the port it is served on.
    origins = run.gateway_settings({}, 8123)["TABLETOP_CORS_ORIGINS"]
    assert origins == "http://127.0.0.1:8123,http://localhost:8123"


def test_without_the_web_app_the_games_run_and_make_run_says_how_to_get_it(tmp_path):
    missing = tmp_path / "no-dist"
    with make_run(tmp_path / "run.log", TABLETOP_WEB_DIST=str(missing), want_web=False) as app:
        text = "".join(app.lines)
        assert run.NOT_BUILT in text and "make web" in text
        assert "open http" not in text
        assert app.routed_at_ready["channeling"] == "OK"


def test_the_services_trust_the_gateways_guests_unless_told_otherwise():
    env: dict[str, str] = {}
    run.trust_guests(env, 9400)
    assert env == {
        "TABLETOP_JWT_JWKS_URL": "http://127.0.0.1:9400/.well-known/jwks.json",
        "TABLETOP_JWT_ISSUER": "tabletop-guests",
    }
    # A person's own settings win; the gateway's issuer, when renamed, follows.
    mine = {"TABLETOP_JWT_JWKS_URL": "https://id.example/jwks", "TABLETOP_GUEST_ISSUER": "g"}
    run.trust_guests(mine, 9400)
    assert mine["TABLETOP_JWT_JWKS_URL"] == "https://id.example/jwks"
    assert mine["TABLETOP_JWT_ISSUER"] == "g"
    # Nothing to trust: a provider's key file instead, guests off, or no metrics port.
    for given, port in (
        ({"TABLETOP_JWT_PUBLIC_KEY_FILE": "/keys/provider.pem"}, 9400),
        ({"TABLETOP_GUEST_SIGNIN": "false"}, 9400),
        ({}, 0),
    ):
        env = dict(given)
        run.trust_guests(env, port)
        assert env == given


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _environ(pid: int) -> dict[str, str]:
    raw = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
    return dict(item.decode().split("=", 1) for item in raw if b"=" in item)


@pytest.mark.browser
def test_under_make_run_with_free_ports_the_services_fetch_the_jwks_the_gateway_serves(app):
    """Each service is given the JWKS URL on the gateway's actual metrics port (a free
    one here), and that URL answers with the guests' key."""
    modules = {}
    for pid in _children(app.process.pid):
        command = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        if b"-m" in command:
            modules[command[command.index(b"-m") + 1].decode()] = _environ(pid)
    gateway = [modules["gateway"]]
    services = [modules[e.package] for e in registry.SERVICES]
    metrics = int(gateway[0]["TABLETOP_METRICS_PORT"])
    assert metrics != 0
    urls = {e["TABLETOP_JWT_JWKS_URL"] for e in services}
    assert urls == {f"http://127.0.0.1:{metrics}/.well-known/jwks.json"}
    assert {e["TABLETOP_JWT_ISSUER"] for e in services} == {"tabletop-guests"}
    with urllib.request.urlopen(urls.pop(), timeout=10) as reply:
        keys = json.loads(reply.read())["keys"]
    assert keys and all(k["kid"] for k in keys)
