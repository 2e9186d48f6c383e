"""The web app in a real browser: Debian's chromium driven by Playwright (its own browser
download cannot be reached here), against the processes as ``make run`` starts them
(services.run: every game service, the gateway and the static server), on free ports.

Every page a test opens fails the test on a console error or an uncaught exception,
unless the test names the exact messages it expects (``expect_console``).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.support import ROOT

CHROMIUM = os.environ.get("TABLETOP_TEST_CHROMIUM", "/usr/bin/chromium")
DIST = ROOT / "web" / "dist" / "index.html"
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run",
]  # fmt: skip
# Set TABLETOP_WEB_SCREENSHOTS to a folder to keep the screenshots the tests take there
# (docs/ holds two of them); otherwise they go to each test's own temporary folder.
SHOTS = os.environ.get("TABLETOP_WEB_SCREENSHOTS", "")


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if not DIST.exists():
        return "the web app is not built (make web)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "no playwright package (the dev extra)"
    return None


def pytest_collection_modifyitems(config, items):
    why = _missing()
    # In CI (.ci/run installs chromium and builds the app) a missing one is a failure.
    if why is None or os.environ.get("CI") == "true":
        return
    for item in items:
        if "browser" in item.keywords:
            item.add_marker(pytest.mark.skip(reason=why))


@dataclass
class App:
    """``make run``'s processes: the web app's address and the gateway's port."""

    url: str
    gateway_port: int
    process: subprocess.Popen[bytes]
    log: Path
    lines: list[str] = field(default_factory=list)
    # Each routed call tried once the moment "ready" was printed: its status code.
    routed_at_ready: dict[str, str] = field(default_factory=dict)


def probe(port: int) -> dict[str, str]:
    """The catalog and each game's lobby through the gateway, once each, no retry."""
    import grpc
    from tabletop.gateway.v1 import catalog_pb2

    from services import registry

    codes: dict[str, str] = {}
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        calls = [("catalog", "/tabletop.gateway.v1.CatalogService/ListGames",
                  catalog_pb2.ListGamesRequest())]  # fmt: skip
        for entry in registry.SERVICES:
            pb2 = entry.pb2()
            calls.append((entry.name, f"/{entry.service_name}/ListGames", pb2.ListGamesRequest()))
        for name, method, request in calls:
            call = channel.unary_unary(method, request_serializer=lambda m: m.SerializeToString(),
                                       response_deserializer=lambda b: b)  # fmt: skip
            try:
                call(request, timeout=5)
                codes[name] = "OK"
            except grpc.RpcError as error:
                codes[name] = error.code().name
    return codes


def _read(process: subprocess.Popen[bytes], log: Path, lines: list[str]) -> None:
    with log.open("w") as out:
        assert process.stdout is not None
        for raw in process.stdout:
            line = raw.decode(errors="replace")
            lines.append(line)
            out.write(line)
            out.flush()


@contextlib.contextmanager
def make_run(log: Path, want_web: bool = True, **settings: str) -> Iterator[App]:
    env = {
        **os.environ,
        "TABLETOP_STORE_URL": "memory://",
        "TABLETOP_WEB_PORT": "0",
        "TABLETOP_BOT_MS_PER_DECISION": "20",
        "TABLETOP_BOT_WORKERS": "1",
        "TABLETOP_BOT_WARM": "false",
        "TABLETOP_CLOCK_INTERVAL_SECONDS": "0.1",
        "TABLETOP_LOG_FORMAT": "json",
        **settings,
    }
    process = subprocess.Popen(
        [sys.executable, "-u", "-c",
         "import asyncio, sys; from services import run; "
         "sys.exit(asyncio.run(run.run(free_ports=True)))"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip
    lines: list[str] = []
    reader = threading.Thread(target=_read, args=(process, log, lines), daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    url, port = "", 0
    try:
        while (want_web and not url) or not port:
            text = "".join(lines)
            if (found := re.search(r"ready: play in a browser, open (\S+)", text)) is not None:
                url = found.group(1)
            if (found := re.search(r"ready: gateway on 127\.0\.0\.1:(\d+)", text)) is not None:
                port = int(found.group(1))
            assert process.poll() is None, f"make run ended:\n{text[-4000:]}"
            assert time.monotonic() < deadline, f"make run not ready:\n{text[-4000:]}"
            time.sleep(0.1)
        yield App(url, port, process, log, lines, routed_at_ready=probe(port))
    finally:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


@pytest.fixture(scope="session")
def app(tmp_path_factory) -> Iterator[App]:
    with make_run(tmp_path_factory.mktemp("make-run") / "run.log") as running:
        yield running


# One browser per module, not per session: Playwright's sync API keeps an event loop
# running in this thread while it is started, and pytest-asyncio cannot run an async test
# (test_grpc_web.py, test_make_run.py) beside it in the same worker.
@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield chromium
        chromium.close()


class Console:
    """What a page said on its console, and the messages a test expects there."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.expected: list[re.Pattern[str]] = []

    def unexpected(self) -> list[str]:
        return [e for e in self.errors if not any(p.search(e) for p in self.expected)]


@pytest.fixture
def pages(browser, request, tmp_path) -> Iterator[Callable[..., object]]:
    """``pages(width=1280, height=860)``: a new page in a context of its own (its own
    storage: another person); console errors and uncaught exceptions fail the test."""
    contexts = []
    consoles: list[Console] = []

    def open_page(width: int = 1280, height: int = 860, context=None):
        if context is None:
            context = browser.new_context(viewport={"width": width, "height": height})
            contexts.append(context)
        page = context.new_page()
        console = Console()
        consoles.append(console)
        page.on(
            "console",
            lambda m: console.errors.append(m.text) if m.type in ("error", "assert") else None,
        )
        page.on("pageerror", lambda e: console.errors.append(f"uncaught: {e}"))
        page.console = console  # type: ignore[attr-defined]
        return page

    yield open_page
    for context in contexts:
        context.close()
    problems = [e for c in consoles for e in c.unexpected()]
    assert not problems, f"console errors: {problems}"


def expect_console(page, *patterns: str) -> None:
    """Console errors matching ``patterns`` are the test's to expect (and check)."""
    page.console.expected.extend(re.compile(p) for p in patterns)


def screenshot(page, name: str, tmp_path: Path, docs: str = "") -> Path:
    """A screenshot for a person to look at: in the test's folder, or TABLETOP_WEB_SCREENSHOTS;
    with ``docs``, TABLETOP_WEB_DOCS=1 writes it to docs/<docs>.png (the README shows them)."""
    folder = Path(SHOTS) if SHOTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path))
    if docs and os.environ.get("TABLETOP_WEB_DOCS") == "1":
        page.screenshot(path=str(ROOT / "docs" / f"{docs}.png"))
    return path
