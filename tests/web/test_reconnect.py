"""The gateway goes away while a person plays: the page says so, reconnects by itself when
the gateway is back, resumes the game from the last version it saw, and play goes on."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from tabletop.channeling.v1 import channeling_pb2 as pb
from tabletop.channeling.v1 import channeling_pb2_grpc

from services import registry
from tests.support import ROOT, Process, free_port, running, start_process, wait_serving
from tests.web.conftest import expect_console

pytestmark = pytest.mark.browser


def gateway_env(game_address: str, port: int, web_port: int) -> dict[str, str]:
    routes = {f"TABLETOP_ROUTE_{e.name.upper()}": "" for e in registry.SERVICES}
    return {
        **routes,
        "TABLETOP_ROUTE_CHANNELING": game_address,
        "TABLETOP_PORT": str(port),
        "TABLETOP_METRICS_PORT": "0",
        "TABLETOP_HEALTH_INTERVAL_SECONDS": "0.2",
        "TABLETOP_CORS_ORIGINS": f"http://127.0.0.1:{web_port}",
    }


def wait_routed(port: int, timeout: float = 30) -> None:
    """Until the gateway routes a call to the game (Envoy's own health check passed)."""
    deadline = time.monotonic() + timeout
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        service = channeling_pb2_grpc.ChannelingServiceStub(channel)
        while True:
            try:
                service.ListGames(pb.ListGamesRequest(page_size=1), timeout=2)
                return
            except grpc.RpcError:
                assert time.monotonic() < deadline, "the gateway does not route"
                time.sleep(0.1)


def open_when_served(page, url: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            page.goto(url)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


@contextlib.contextmanager
def static_server(web_port: int, gateway_port: int) -> Iterator[str]:
    env = {**os.environ, "TABLETOP_WEB_PORT": str(web_port),
           "TABLETOP_WEB_GATEWAY_PORT": str(gateway_port)}  # fmt: skip
    server = subprocess.Popen([sys.executable, str(ROOT / "web" / "serve.py")], env=env, cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        yield f"http://127.0.0.1:{web_port}"
    finally:
        server.terminate()
        server.wait(10)


def move_directly(address: str, page) -> str:
    """Ann's first legal move, sent to the service itself with her seat's token; its text."""
    game_id = page.get_attribute(".page.game", "data-game-id")
    (token,) = page.evaluate(
        "id => JSON.parse(localStorage.getItem('tabletop.seats.' + id)).map(s => s.token)", game_id
    )
    auth = [("authorization", f"Bearer {token}")]
    with grpc.insecure_channel(address) as channel:
        service = channeling_pb2_grpc.ChannelingServiceStub(channel)
        listed = service.ListMoves(pb.ListMovesRequest(game_id=game_id), metadata=auth, timeout=10)
        service.SubmitMove(pb.SubmitMoveRequest(game_id=game_id, move=listed.moves[0]),
                           metadata=auth, timeout=10)  # fmt: skip
    return listed.labels[0]


def test_the_page_says_the_gateway_is_down_and_reconnects_by_itself(pages, tmp_path: Path):
    game = {"TABLETOP_STORE_URL": "memory://", "TABLETOP_BOT_MS_PER_DECISION": "20",
            "TABLETOP_BOT_WORKERS": "1"}  # fmt: skip
    with running("services.channeling", game, tmp_path / "svc.log") as svc:
        wait_serving(svc.address, registry.by_name("channeling").service_name)
        port, web_port = free_port(), free_port()
        env = gateway_env(svc.address, port, web_port)
        gateway: Process = start_process("gateway", env, tmp_path / "gw1.log")
        wait_routed(port)
        with static_server(web_port, port) as url:
            page = pages()
            # While the gateway is away the browser logs its failed requests itself.
            expect_console(page, r"net::ERR_")
            open_when_served(page, f"{url}/#/channeling")
            page.fill("#your-name", "Ann")
            page.click("button:has-text('Create table')")
            page.wait_for_selector(".move-list button.move:not([disabled])", timeout=15_000)
            page.locator(".move-list button.move").first.click()
            page.wait_for_function("() => document.querySelectorAll('.turns > li').length > 0")
            version = page.get_attribute(".page.game", "data-version")

            gateway.popen.kill()  # Envoy, its child, dies with it
            gateway.popen.wait(10)
            banner = page.wait_for_selector("text=The live connection to the game was lost",
                                            timeout=15_000)  # fmt: skip
            assert "Reconnecting" in banner.inner_text()
            # The game goes on meanwhile (Ann's seat moves from another program, straight
            # at the service): the page catches up from the last version it saw.
            made = move_directly(svc.address, page)
            gateway = start_process("gateway", env, tmp_path / "gw2.log")
            page.wait_for_selector("text=Connection restored", timeout=30_000)
            assert page.locator("text=The live connection to the game was lost").count() == 0
            page.wait_for_function(
                f"() => Number(document.querySelector('.page.game').dataset.version) > {version}"
            )
            assert made in page.locator(".turns > li .what").all_inner_texts()
            # And play goes on, by clicking, through the new gateway.
            page.wait_for_selector(".move-list button.move:not([disabled])", timeout=15_000)
            before = page.locator(".turns > li").count()
            page.locator(".move-list button.move").first.click()
            page.wait_for_function(
                f"() => document.querySelectorAll('.turns > li').length > {before}"
            )
            gateway.stop()
