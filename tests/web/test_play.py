"""A person plays each of the five games in the browser against an easy bot, to the end,
only by clicking: the lobby's form, then one of the listed moves each time it is their
turn, until the outcome shows.

``make test`` plays Shrine, Glow and a short Res Arcana Duo (a round limit of 6); The
Channeling and Shén, which tests/web/test_boards.py plays to the end in ``make test``, and
Res Arcana Duo's longer game are ``make soak``'s."""

from __future__ import annotations

import random
import time

import pytest

from tests.web.conftest import screenshot

pytestmark = pytest.mark.browser

# Options that keep a game short: Res Arcana Duo and Shén end after a round limit (a
# house rule each game's Options offers; bots and load tests use it too).
SHORT = {"resarcana": {"round_limit": "20"}, "shen": {"round_limit": "12"}}
MAX_DECISIONS = 1500
SOAK = pytest.mark.soak
GAMES = [
    pytest.param("channeling", SHORT.get("channeling"), id="channeling", marks=SOAK),
    pytest.param("shrine", None, id="shrine"),
    pytest.param("resarcana", {"round_limit": "6"}, id="resarcana-6-rounds"),
    pytest.param("resarcana", SHORT["resarcana"], id="resarcana", marks=SOAK),
    pytest.param("glow", None, id="glow"),
    pytest.param("shen", SHORT["shen"], id="shen", marks=SOAK),
]


def create_table(page, app, game: str, name: str = "Ann", options: dict[str, str] | None = None,
                 seats: list[str] | None = None) -> str:  # fmt: skip
    """Fill the lobby's form by clicking and typing as a person does; the game's id."""
    page.goto(f"{app.url}/#/{game}")
    page.fill("#your-name", name)
    for i, kind in enumerate(seats or []):
        page.select_option(f"select[aria-label='Seat {i + 1}']", kind)
    for field, value in (options or {}).items():
        page.fill(f"#option-{field}", value)
    page.click("button:has-text('Create table')")
    page.wait_for_selector(".page.game .seats")
    return page.get_attribute(".page.game", "data-game-id") or ""


def play_to_the_end(page, rng: random.Random, limit: int = MAX_DECISIONS) -> int:
    """Click a listed move whenever there is one, until the outcome shows."""
    decisions = 0
    while True:
        page.wait_for_selector(".outcome, .move-list button.move:not([disabled])", timeout=30_000)
        if page.locator(".outcome").count():
            return decisions
        version = page.get_attribute(".page.game", "data-version")
        buttons = page.locator(".move-list button.move:not([disabled])")
        count = buttons.count()
        if count == 0:
            continue
        buttons.nth(rng.randrange(count)).click()
        decisions += 1
        assert decisions <= limit, "the game did not end"
        # The move is made when the page's version moves on (or a refusal shows).
        page.wait_for_function(
            "v => document.querySelector('.page.game')?.dataset.version !== v"
            " || document.querySelector('.notice.error')",
            arg=version,
            timeout=30_000,
        )
        assert not page.locator(".notice.error").count(), page.inner_text(".notice.error")


@pytest.mark.parametrize(("game", "options"), GAMES)
def test_a_person_plays_a_whole_game_against_an_easy_bot_by_clicking(
    app, pages, tmp_path, game, options
):
    page = pages()
    started = time.monotonic()
    create_table(page, app, game, options=options)
    assert "You play" in page.inner_text(".you-are")
    seats = page.locator(".seats .seat").all_inner_texts()
    assert any("(you)" in s for s in seats) and any("Bot (easy)" in s for s in seats), seats
    screenshot(page, f"{game}-start", tmp_path)
    decisions = play_to_the_end(page, random.Random(game))
    outcome = page.inner_text(".outcome")
    assert "Game over" in outcome
    assert page.get_attribute(".page.game", "data-status") == "finished"
    # The history holds every move; the move list is gone.
    assert page.locator(".turns > li").count() >= decisions
    assert page.locator(".move-list").count() == 0
    screenshot(page, f"{game}-end", tmp_path)
    print(f"{game}: {decisions} decisions by clicking in {time.monotonic() - started:.1f} s")
