"""The web app's image (nginx serving web/dist) as Kubernetes runs it: not root, a
read-only root filesystem with /tmp its only writable folder, on loopback ports of the
host's network. It serves index.html, the bundle and config.json with the headers of
`make run`'s server, answers its probes, and a page it serves plays through the gateway's
image. And the gateway's image reads the guests' key as the manifests give it: from a
read-only mount, mode 0440, readable through the pod's group."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from testcontainers.core.container import DockerContainer

from deploy.images import WEB_DIST, web_spec
from gateway.players.signing import SigningKey
from services import registry
from tests.containers.harness import Running, read_only_root, start
from tests.support import ROOT, free_port
from web import serve

pytestmark = pytest.mark.containers


@dataclass
class Web:
    container: DockerContainer
    port: int

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def docker(self):
        return self.container.get_wrapped_container()

    def logs(self) -> str:
        out, err = self.container.get_logs()
        return (out or b"").decode(errors="replace") + (err or b"").decode(errors="replace")

    def get(self, path: str, **headers: str) -> tuple[int, dict[str, str], bytes]:
        request = urllib.request.Request(self.url + path, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=5) as reply:
                return reply.status, dict(reply.headers), reply.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()


def _container(env: dict[str, str], port: int = 0) -> tuple[DockerContainer, int]:
    port = port or free_port()
    container = (
        read_only_root(DockerContainer(web_spec().tag()))
        .with_env("TABLETOP_WEB_HOST", "127.0.0.1")
        .with_env("TABLETOP_WEB_PORT", str(port))
    )
    for key, value in env.items():
        container = container.with_env(key, value)
    return container, port


@contextlib.contextmanager
def web(env: dict[str, str] | None = None, timeout: float = 30, port: int = 0) -> Iterator[Web]:
    """The web image on a free loopback port (or ``port``), once /healthz answers."""
    container, port = _container(env or {}, port)
    container.start()
    running = Web(container, port)
    try:
        deadline = time.monotonic() + timeout
        while True:
            running.docker.reload()
            if running.docker.status in ("exited", "dead"):
                raise RuntimeError(f"the web image exited:\n{running.logs()}")
            with contextlib.suppress(OSError):
                if running.get("/healthz")[0] == 200:
                    break
            if time.monotonic() > deadline:
                raise TimeoutError(f"the web image did not answer:\n{running.logs()}")
            time.sleep(0.1)
        yield running
    finally:
        container.stop()


def _assets() -> list[str]:
    """The bundle index.html names: the hashed JavaScript and CSS."""
    html = (WEB_DIST / "index.html").read_text()
    found = re.findall(r'(?:src|href)="([^":]+\.(?:js|css))"', html)
    assert any(f.endswith(".js") for f in found) and any(f.endswith(".css") for f in found)
    return found


def test_the_web_image_serves_the_app_as_deployed_and_answers_its_probes():
    with web() as running:
        # index.html, as built, revalidated on every load, with make run's headers.
        status, headers, body = running.get("/")
        assert status == 200 and body == (WEB_DIST / "index.html").read_bytes()
        assert headers["Content-Type"].startswith("text/html")
        assert headers["Cache-Control"] == "no-cache"
        assert headers["Content-Security-Policy"] == serve.content_policy("", 50051)
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["X-Frame-Options"] == "DENY"
        assert headers["Referrer-Policy"] == "no-referrer"
        # The bundle: the very files, gzipped on the wire, cached for good (hashed names).
        for asset in _assets():
            status, headers, body = running.get(f"/{asset}", **{"Accept-Encoding": "gzip"})
            assert status == 200, asset
            assert headers["Content-Encoding"] == "gzip"
            assert gzip.decompress(body) == (WEB_DIST / asset).read_bytes()
            assert headers["Cache-Control"] == "public, max-age=31536000, immutable"
            assert "Content-Security-Policy" in headers
            kind = "javascript" if asset.endswith(".js") else "text/css"
            assert kind in headers["Content-Type"]
        # config.json: the gateway on the page's own host, port 50051 (the image's default).
        status, headers, body = running.get("/config.json")
        assert status == 200 and headers["Content-Type"].startswith("application/json")
        assert json.loads(body) == {"gatewayPort": 50051}
        assert headers["Cache-Control"] == "no-cache"
        # The probes: Kubernetes' (/healthz, /) and Docker's own HEALTHCHECK.
        assert running.get("/healthz")[:1] == (200,)
        code, out = _exec(running, "python3", "/app/healthcheck.py")
        assert (code, out.strip()) == (0, "healthy")
        assert _docker_health(running) == "healthy", running.logs()
        # Not root; nothing but /tmp writable.
        assert _exec(running, "id", "-u") == (0, "10001\n")
        code, out = _exec(running, "sh", "-c", "touch /app/web/x 2>&1; touch /etc/x 2>&1")
        assert code != 0 and out.count("Read-only file system") == 2, out
        assert running.get("/nothing.js")[0] == 404
        # A failed request is logged as one JSON line; a served one is not.
        deadline = time.monotonic() + 5
        while '"status":404' not in running.logs() and time.monotonic() < deadline:
            time.sleep(0.1)
        lines = [json.loads(x) for x in running.logs().splitlines() if x.startswith("{")]
        requests = [x for x in lines if x.get("event") == "request"]
        assert [(r["path"], r["status"]) for r in requests] == [("/nothing.js", 404)]


def test_config_json_and_the_content_policy_name_the_gateway_from_the_settings():
    gateway = "https://play.tabletop.example.com"
    env = {"TABLETOP_WEB_GATEWAY": gateway, "TABLETOP_WEB_GATEWAY_PORT": "443"}
    with web(env) as running:
        status, headers, body = running.get("/config.json")
        assert status == 200
        assert json.loads(body) == {"gatewayPort": 443, "gateway": gateway}
        # The same policy as make run's server for the same settings.
        assert headers["Content-Security-Policy"] == serve.content_policy(gateway, 443)
        assert f"connect-src 'self' {gateway};" in headers["Content-Security-Policy"]


def test_a_setting_nginx_could_not_use_stops_the_start_with_its_name():
    container, _ = _container({"TABLETOP_WEB_GATEWAY": 'https://x.example"; return 200 "'})
    container.start()
    try:
        status = container.get_wrapped_container().wait(timeout=30)["StatusCode"]
        out, err = container.get_logs()
        text = (out or b"").decode() + (err or b"").decode()
        assert status != 0
        assert "configuration error: TABLETOP_WEB_GATEWAY=" in text
    finally:
        container.stop()


def test_docker_stop_is_a_graceful_stop():
    with web() as running:
        running.docker.stop(timeout=20)
        assert running.docker.wait(timeout=25)["StatusCode"] == 0
        assert running.docker.attrs["Config"]["StopSignal"] == "SIGQUIT"


CHROMIUM = os.environ.get("TABLETOP_TEST_CHROMIUM", "/usr/bin/chromium")


def test_a_page_the_web_image_serves_plays_through_the_gateways_image():
    """The two images as a browser meets them: the page from nginx, its gRPC-Web calls to
    the gateway's container on another port (so CORS, for the web image's origin), a
    table against a bot created and a move made by clicking."""
    why = None if Path(CHROMIUM).exists() else f"no Chromium at {CHROMIUM}"
    if why is None:
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            why = "no playwright package (the dev extra)"
    if why is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI=true and the browser cannot run: {why}")
        pytest.skip(why)
    from tests.web.conftest import ARGS
    from tests.web.test_play import create_table

    entry = registry.SERVICES[0]
    web_port = free_port()
    started: list[Running] = []
    try:
        game = start(entry.name, env={"TABLETOP_STORE_URL": "memory://",
                                      "TABLETOP_BOT_MS_PER_DECISION": "20"})  # fmt: skip
        started.append(game)
        gateway = start(
            "gateway",
            env={
                f"TABLETOP_ROUTE_{entry.name.upper()}": game.address,
                "TABLETOP_CORS_ORIGINS": f"http://127.0.0.1:{web_port}",
                "TABLETOP_HEALTH_INTERVAL_SECONDS": "0.5",
            },
        )
        started.append(gateway)
        env = {"TABLETOP_WEB_GATEWAY_PORT": str(gateway.port)}
        with web(env, port=web_port) as served, sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            page = browser.new_page()
            errors: list[str] = []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.goto(served.url + "/")
            page.wait_for_selector(f".game-card[data-game='{entry.name}']:not(.down)",
                                   timeout=60_000)  # fmt: skip
            app = type("App", (), {"url": served.url})
            create_table(page, app, entry.name, seats=["you", "bot"])
            page.wait_for_selector(".move-list button.move:not([disabled])", timeout=30_000)
            version = page.get_attribute(".page.game", "data-version")
            page.locator(".move-list button.move:not([disabled])").first.click()
            page.wait_for_function(
                "v => document.querySelector('.page.game')?.dataset.version !== v",
                arg=version, timeout=30_000,
            )  # fmt: skip
            assert not page.locator(".notice.error").count()
            browser.close()
            assert errors == []
    finally:
        for running in reversed(started):
            with contextlib.suppress(Exception):
                running.container.stop()


def _exec(running: Web, *command: str) -> tuple[int, str]:
    result = running.docker.exec_run(list(command))
    return result.exit_code, result.output.decode(errors="replace")


def _docker_health(running: Web, timeout: float = 40) -> str:
    deadline = time.monotonic() + timeout
    status = "none"
    while time.monotonic() < deadline:
        running.docker.reload()
        status = running.docker.attrs["State"].get("Health", {}).get("Status", "none")
        if status in ("healthy", "unhealthy"):
            return status
        time.sleep(0.5)
    return status


# --- the guests' key, as the manifests give it to the gateway -----------------------------


@contextlib.contextmanager
def _secret(mode: int = 0o440) -> Iterator[Path]:
    """A folder as Kubernetes mounts the Secret: the key made by the documented command,
    owned by root and the pod's fsGroup (10001), mode 0440."""
    folder = Path(tempfile.mkdtemp(prefix="tabletop-guest-key-"))
    try:
        pem = subprocess.run(
            [sys.executable, "-m", "gateway.players", "keygen"],
            cwd=ROOT, check=True, capture_output=True,
        ).stdout  # fmt: skip
        key = folder / "guest-signing-key.pem"
        key.write_bytes(pem)
        os.chown(key, 0, 10001)
        key.chmod(mode)
        folder.chmod(0o755)
        yield key
    finally:
        for path in folder.iterdir():
            path.unlink()
        folder.rmdir()


def test_the_gateway_image_reads_the_guests_key_from_a_read_only_mount_on_a_read_only_root():
    with _secret() as key:
        env = {"TABLETOP_GUEST_SIGNING_KEY_FILE": "/app/guest-key/guest-signing-key.pem"}
        mounts = {str(key.parent): "/app/guest-key"}
        gateway: Running = start("gateway", env=env, as_deployed=True, mounts=mounts)
        try:
            jwks_url = f"http://127.0.0.1:{gateway.metrics_port}/.well-known/jwks.json"
            with urllib.request.urlopen(jwks_url, timeout=5) as reply:
                (served,) = json.loads(reply.read())["keys"]
            # The very key of the Secret: every replica mounting it serves the same kid.
            assert served["kid"] == SigningKey.from_pem(key.read_bytes(), key).kid
            assert "guest_signing_key_readable" not in gateway.logs()  # 0440: not world's
        finally:
            gateway.container.stop()


def test_control_the_gateway_image_on_a_read_only_root_without_the_key_does_not_start():
    """As the manifests were before the Secret: the key's default place is on the root."""
    container = (
        read_only_root(DockerContainer(next(s for s in _specs() if s.service == "gateway").tag()))
        .with_env("TABLETOP_HOST", "127.0.0.1")
        .with_env("TABLETOP_PORT", str(free_port()))
        .with_env("TABLETOP_METRICS_PORT", str(free_port()))
    )
    container.start()
    try:
        status = container.get_wrapped_container().wait(timeout=60)["StatusCode"]
        out, err = container.get_logs()
        text = (out or b"").decode() + (err or b"").decode()
        assert status != 0
        assert "configuration error: TABLETOP_GUEST_SIGNING_KEY_FILE=" in text
    finally:
        container.stop()


def _specs():
    from deploy.images import images

    return images()
