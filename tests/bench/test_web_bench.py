"""The web app's benchmark (bench/web.py), so it cannot rot: the size of a build is summed
from its gzipped JavaScript and CSS; a page's clock is set against Python's; and against
``make run``'s processes, a few moves clicked in Chromium come out as positive figures, every
move reaching the other page. A control slows the other page's watch stream and the
figures see it. Never a time compared with a goal: the figures are the bench's to print.

Without Chromium, Playwright or a built web app the browser tests skip and say why; with
CI=true they fail instead (.ci/run installs chromium and builds the app).
"""

from __future__ import annotations

import gzip
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench import web

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
MISSING = web.missing()
needs_browser = pytest.mark.skipif(
    MISSING is not None and not IN_CI, reason=f"bench/web.py cannot time a move: {MISSING}"
)
# Every chunk of a WatchGame answer held this long before the page reads it.
DELAY_MS = 400
SLOW_WATCH = f"""
(() => {{
  const fetch = window.fetch.bind(window);
  window.fetch = async (input, init) => {{
    const url = typeof input === 'string' ? input : input.url;
    const response = await fetch(input, init);
    if (!url.endsWith('/WatchGame') || !response.body) return response;
    const slow = new TransformStream({{
      async transform(chunk, out) {{
        await new Promise((r) => setTimeout(r, {DELAY_MS}));
        out.enqueue(chunk);
      }},
    }});
    const {{status, statusText, headers}} = response;
    return new Response(response.body.pipeThrough(slow), {{status, statusText, headers}});
  }};
}})();
"""


def test_sizes_sum_the_gzipped_javascript_and_css_of_a_build(tmp_path: Path) -> None:
    (tmp_path / "index.html").write_text("<!doctype html>" * 200)
    (tmp_path / "config.json").write_text("{}")
    (tmp_path / "app-X.js").write_text("export const move = 'Channel the tide';\n" * 500)
    (tmp_path / "app-X.css").write_text(".page.game { color: teal; }\n" * 100)
    figures = web.sizes(tmp_path)
    assert [a["file"] for a in figures["assets"]] == ["app-X.css", "app-X.js"]
    for asset in figures["assets"]:
        data = (tmp_path / asset["file"]).read_bytes()
        assert asset["bytes"] == len(data)
        assert 0 < asset["gzip_bytes"] < asset["bytes"]  # repetitive text compresses
        assert gzip.decompress(gzip.compress(data, 9, mtime=0)) == data
    assert figures["gzip_bytes"] == sum(a["gzip_bytes"] for a in figures["assets"])
    assert figures["met"] == (figures["gzip_bytes"] < web.SIZE_GOAL_BYTES)
    assert "KB" in web.lines({"size": figures})[0]


def test_sizes_without_a_build_say_how_to_get_one(tmp_path: Path) -> None:
    assert "make web" in web.sizes(tmp_path)["skipped"]


class FakePage:
    """A page whose clock is Python's moved by ``ahead_ms``, read after a short pause."""

    def __init__(self, ahead_ms: float) -> None:
        self.ahead_ms = ahead_ms

    def evaluate(self, expression: str) -> float:
        assert expression == "performance.timeOrigin + performance.now()"
        time.sleep(0.001)
        return time.time() * 1000 + self.ahead_ms


@pytest.mark.parametrize("ahead_ms", [0.0, 5_000.0, -1_234.5])
def test_a_pages_clock_is_set_against_pythons(ahead_ms: float) -> None:
    # The zero case is the control: a page on Python's clock is not found ahead of it.
    offset, half = web.clock_offset(FakePage(ahead_ms), tries=10)
    assert half > 0
    assert abs(offset - ahead_ms) <= half + 0.5


def test_percentiles_of_moves() -> None:
    figures = web._percentiles([float(v) for v in range(1, 101)])
    assert figures["min_ms"] == 1 and figures["max_ms"] == 100
    assert figures["p50_ms"] == 50.5
    assert 99 <= figures["p99_ms"] <= 100
    assert web._percentiles([]) == {}


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    with web.make_run(tmp_path_factory.mktemp("bench-web")) as app:
        yield app


def _check(figures: dict[str, Any], moves: int) -> None:
    assert figures["moves"] == moves and figures["missed"] == 0, figures
    assert figures["page_errors"] == []
    timed = ("request_to_shown", "request_to_painted", "request_to_answer", "request_to_received")
    for name in timed:
        series = figures[name]
        assert series["min_ms"] > 0, (name, series)
        assert series["min_ms"] <= series["p50_ms"] <= series["p99_ms"] <= series["max_ms"]
    shown, painted = figures["request_to_shown"], figures["request_to_painted"]
    assert painted["min_ms"] >= shown["min_ms"]  # painted after the DOM shows it
    assert figures["clock_uncertainty_ms"] > 0


@pytest.mark.browser
@needs_browser
def test_moves_clicked_in_one_page_are_timed_to_the_other(running: tuple[str, int]) -> None:
    url, port = running
    figures = web.measure(url, port, moves=4)
    _check(figures, 4)
    lines = web.lines({"size": web.sizes(), "latency": figures})
    assert any("p99" in line and "4 moves" in line for line in lines), lines


@pytest.mark.browser
@needs_browser
def test_control_a_slower_other_page_is_seen_in_the_figures(running: tuple[str, int]) -> None:
    url, port = running
    figures = web.measure(url, port, moves=2, extra_script=SLOW_WATCH)
    _check(figures, 2)
    # Every move reached the other page through its slowed stream: never sooner than that.
    assert figures["request_to_shown"]["min_ms"] >= DELAY_MS - figures["clock_uncertainty_ms"]
    # The stream's chunks are noted as they arrive, before the delay the page then adds:
    # each move shown at least that delay after its chunk came.
    received, shown = figures["request_to_received"], figures["request_to_shown"]
    uncertainty = figures["clock_uncertainty_ms"]
    assert shown["min_ms"] >= received["min_ms"] + DELAY_MS - uncertainty, figures
