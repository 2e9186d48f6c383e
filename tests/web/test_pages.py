"""The web app's pages against ``make run``'s processes: two people at one table, a reload,
clocks, refusals, spectators, bad input (a forged token, an unknown game, another
origin), and the phone-sized screen."""

from __future__ import annotations

import importlib
import os
import random
import re
import subprocess
import sys
import time
from typing import Any

import grpc
import pytest
from google.protobuf.message import Message

from services import registry
from tests.support import ROOT, free_port
from tests.web.conftest import expect_console, screenshot
from tests.web.test_play import create_table

pytestmark = pytest.mark.browser


def stub(app, game: str) -> tuple[Any, Any, grpc.Channel]:
    pb2 = registry.by_name(game).pb2()
    grpc_module = importlib.import_module(f"tabletop.{game}.v1.{game}_pb2_grpc")
    channel = grpc.insecure_channel(f"127.0.0.1:{app.gateway_port}")
    return getattr(grpc_module, f"{game.capitalize()}ServiceStub")(channel), pb2, channel


def bearer(token: str) -> list[tuple[str, str]]:
    return [("authorization", f"Bearer {token}")]


def seat_tokens(page) -> list[dict[str, Any]]:
    """The seats this page's browser holds for its game (localStorage)."""
    game_id = page.get_attribute(".page.game", "data-game-id")
    return page.evaluate("id => JSON.parse(localStorage.getItem('tabletop.seats.' + id) || '[]')",
                         game_id)  # fmt: skip


def history_texts(page) -> list[str]:
    return page.locator(".turns > li .what").all_inner_texts()


def next_to_move(a, b, timeout: float = 15) -> tuple[Any, Any]:
    """(the page with a move to make, the other one)."""
    deadline = time.monotonic() + timeout
    selector = ".move-list button.move:not([disabled])"
    while time.monotonic() < deadline:
        for mover, other in ((a, b), (b, a)):
            if mover.locator(selector).count():
                return mover, other
        a.wait_for_timeout(50)
    raise AssertionError("neither page has a move to make")


def test_two_people_at_one_table_see_each_others_moves_live(app, pages, tmp_path):
    ann, bob = pages(), pages()  # two contexts: two browsers' storage
    game_id = create_table(ann, app, "channeling", "Ann", seats=["you", "open"])
    assert "Waiting for one more player" in ann.inner_text(".waiting")
    # Bob finds the table in the lobby and joins it by name.
    bob.goto(f"{app.url}/#/channeling")
    bob.fill("#your-name", "Bob")
    row = bob.locator(f".table-row[data-game-id='{game_id}']")
    row.wait_for(timeout=15_000)
    assert "Ann" in row.inner_text() and "open" in row.inner_text()
    row.locator("button:has-text('Join')").click()
    bob.wait_for_selector(".page.game .seats")
    assert "You play Dark" in bob.inner_text(".you-are")
    # Ann's page learns it from its stream: the game has started, her move.
    ann.wait_for_selector(".move-list button.move", timeout=10_000)
    assert "Bob" in ann.inner_text(".seats")
    screenshot(ann, "two-people-ann", tmp_path)

    movers = []
    while len(set(movers)) < 2 or len(movers) < 4:
        assert len(movers) < 40, "one of them never had a move"
        mover, other = next_to_move(ann, bob)
        movers.append(mover is ann)
        label = mover.locator(".move-list button.move").first.inner_text()
        before = len(history_texts(other))
        mover.locator(".move-list button.move").first.click()
        # The mover's page has the answer; the other page has it live, within a second.
        mover.wait_for_function(f"() => document.querySelectorAll('.turns > li').length > {before}")
        shown = time.monotonic()
        other.wait_for_function(
            f"() => document.querySelectorAll('.turns > li').length > {before}", timeout=1000
        )
        elapsed = time.monotonic() - shown
        assert history_texts(other)[0] == label
        print(f"{label!r} on the other page {elapsed * 1000:.0f} ms after the mover's")
    screenshot(bob, "two-people-bob", tmp_path, docs="web-game")


def test_a_reload_keeps_the_seat_and_a_new_tab_too(app, pages):
    page = pages()
    game_id = create_table(page, app, "glow")
    page.wait_for_selector(".move-list button.move:not([disabled])", timeout=15_000)
    page.locator(".move-list button.move").first.click()
    page.wait_for_function("() => document.querySelectorAll('.turns > li').length > 0")
    version = page.get_attribute(".page.game", "data-version")
    page.reload()
    page.wait_for_selector(".page.game .seats")
    assert "You play" in page.inner_text(".you-are")
    assert "(you)" in page.inner_text(".seats")
    assert page.get_attribute(".page.game", "data-game-id") == game_id
    assert int(page.get_attribute(".page.game", "data-version") or 0) >= int(version or 0)
    page.wait_for_selector(".move-list button.move", timeout=15_000)
    # Another tab of the same browser, on the game's address: the same seat.
    tab = pages(context=page.context)
    tab.goto(page.url)
    tab.wait_for_selector(".page.game .seats")
    assert "You play" in tab.inner_text(".you-are")
    # Control: another browser (no storage) is a spectator there.
    other = pages()
    other.goto(page.url)
    other.wait_for_selector(".page.game .seats")
    assert "spectator" in other.inner_text(".you-are")
    assert other.locator(".move-list").count() == 0


def clock_seconds(text: str) -> float:
    parts = re.sub(r"[^0-9:.]", "", text).split(":")
    return float(parts[-1]) + 60 * float(parts[-2] or 0)


def test_a_clock_counts_down_from_the_servers_deadline_and_a_timeout_shows(app, pages, tmp_path):
    page = pages()
    page.goto(f"{app.url}/#/channeling")
    page.fill("#your-name", "Ann")
    page.check("input[name=clock][value=move]")
    page.fill("#per-move", "4")
    page.click("button:has-text('Create table')")
    page.wait_for_selector(".seat.acting .clock.running")
    first = clock_seconds(page.inner_text(".seat.acting .clock.running"))
    deadline = int(page.get_attribute(".seat.acting .clock.running", "data-deadline") or 0)
    page.wait_for_timeout(700)
    second = clock_seconds(page.inner_text(".seat.acting .clock.running"))
    assert 0 < second < first <= 4.0, (first, second)
    screenshot(page, "clock", tmp_path)
    # The countdown is the service's deadline, not a guess of the page's.
    game_id = page.get_attribute(".page.game", "data-game-id")
    service, pb2, channel = stub(app, "channeling")
    header = service.GetGame(pb2.GetGameRequest(game_id=game_id), timeout=10).game
    channel.close()
    acting = header.seats[header.to_act[0]]
    server = acting.deadline.seconds * 1000 + acting.deadline.nanos // 1_000_000
    assert deadline == server
    # Nobody moves: the service's bot moves for Ann when her time is out, and the page
    # says so (the clock's event) without being asked.
    page.wait_for_selector(".feed .event.timeout", timeout=15_000)
    assert "ran out of time" in page.inner_text(".feed")
    assert "bot moved" in page.inner_text(".history")


def test_a_refused_move_shows_its_reason_and_the_page_catches_up(app, pages):
    page = pages()
    game_id = create_table(page, app, "channeling", seats=["you", "open"])
    service, pb2, channel = stub(app, "channeling")
    service.JoinGame(pb2.JoinGameRequest(game_id=game_id, player_name="Bob"), timeout=10)
    page.wait_for_selector(".move-list button.move:not([disabled])", timeout=10_000)
    # The page stops hearing the game (its stream cut off), and the same seat moves from
    # elsewhere (its token, used by another program): the page's moves are now stale.
    page.route("**/WatchGame", lambda route: route.abort())
    expect_console(page, r"Failed to load resource: net::ERR_FAILED")
    page.reload()
    page.wait_for_selector(".move-list button.move:not([disabled])", timeout=10_000)
    page.wait_for_selector("text=The live connection to the game was lost")
    (ann,) = [s["token"] for s in seat_tokens(page) if s["seat"] == 0]
    listed = service.ListMoves(pb2.ListMovesRequest(game_id=game_id), metadata=bearer(ann),
                               timeout=10)  # fmt: skip
    service.SubmitMove(
        pb2.SubmitMoveRequest(game_id=game_id, move=listed.moves[0], expected_version=1),
        metadata=bearer(ann), timeout=10,
    )  # fmt: skip
    channel.close()
    page.locator(".move-list button.move").first.click()
    notice = page.wait_for_selector(".notice.error")
    text = notice.inner_text()
    assert "refused" in text and "STALE_VERSION" in text and "version 2" in text, text
    # It reloads the game: the move made elsewhere is there, and the seat's new moves.
    page.wait_for_function("() => document.querySelector('.page.game').dataset.version === '2'")
    page.wait_for_selector(".move-list button.move:not([disabled])", timeout=10_000)


def test_a_forged_or_stale_token_starts_over_as_a_spectator_and_says_why(app, pages):
    service, pb2, channel = stub(app, "shrine")
    created = service.CreateGame(pb2.CreateGameRequest(players=2), timeout=10)
    channel.close()
    game_id = created.game.game_id
    page = pages()
    page.goto(f"{app.url}/#/")
    page.evaluate(
        "([id, token]) => localStorage.setItem('tabletop.seats.' + id, JSON.stringify(["
        "{game: 'shrine', gameId: id, seat: 0, seatName: 'Sun', token, savedAt: Date.now()}]))",
        [game_id, "forged-" + created.seat_tokens[0].token[7:]],
    )
    page.goto(f"{app.url}/#/shrine/{game_id}")
    try:
        notice = page.wait_for_selector(".notice.warn")
    except Exception:
        raise AssertionError(page.inner_text("body")) from None
    assert "spectator" in notice.inner_text() and "not valid" in notice.inner_text()
    assert "You are watching as a spectator" in page.inner_text(".you-are")
    assert page.locator(".move-list").count() == 0
    assert seat_tokens(page) == []  # forgotten, so the next visit is a plain spectator's
    # Control: the real token keeps the seat.
    page.evaluate(
        "([id, token]) => localStorage.setItem('tabletop.seats.' + id, JSON.stringify(["
        "{game: 'shrine', gameId: id, seat: 0, seatName: 'Sun', token, savedAt: Date.now()}]))",
        [game_id, created.seat_tokens[0].token],
    )
    page.reload()
    page.wait_for_selector(".page.game .seats")
    assert "You play Sun" in page.inner_text(".you-are")


def test_a_game_id_that_does_not_exist_says_so(app, pages):
    page = pages()
    page.goto(f"{app.url}/#/glow/no-such-game")
    notice = page.wait_for_selector(".notice.error")
    assert "There is no glow game with the id “no-such-game”" in notice.inner_text()
    page.click("text=See the tables of Glow")
    page.wait_for_selector("#new-table")
    page.goto(f"{app.url}/#/no-such-kind-of-game")
    assert "There is no game called" in page.wait_for_selector(".notice.error").inner_text()


def texts(message: Message) -> set[str]:
    """Every string of a message and its submessages (what a page could print)."""
    found: set[str] = set()
    for field, value in message.ListFields():
        values = value if field.is_repeated else [value]
        for v in values:
            if isinstance(v, Message):
                found |= texts(v)
            elif isinstance(v, str):
                found.add(v)
    return found


def seen_by(service, pb2, game_id: str, token: str | None) -> set[str]:
    """The strings a caller is given: its view, the history's moves and events."""
    metadata = bearer(token) if token else None
    got = service.GetGame(pb2.GetGameRequest(game_id=game_id), metadata=metadata, timeout=10)
    history = service.GetHistory(pb2.GetHistoryRequest(game_id=game_id), metadata=metadata,
                                 timeout=10)  # fmt: skip
    found = texts(got.view)
    for turn in history.turns:
        found.add(turn.move_text)
        found |= {e.text for e in turn.events}
    return found


@pytest.mark.parametrize("game", ["resarcana", "shen"])
def test_a_spectators_page_holds_nothing_the_spectators_view_hides(app, pages, tmp_path, game):
    service, pb2, channel = stub(app, game)
    created = service.CreateGame(pb2.CreateGameRequest(players=2), timeout=10)
    game_id = created.game.game_id
    tokens = [t.token for t in created.seat_tokens]
    rng = random.Random(game)
    for _ in range(25):  # random moves, so hands, drafts and tokens hold secrets
        header = service.GetGame(pb2.GetGameRequest(game_id=game_id), timeout=10).game
        if header.status != 1 or not header.to_act:
            break
        seat = header.to_act[0]
        listed = service.ListMoves(pb2.ListMovesRequest(game_id=game_id),
                                   metadata=bearer(tokens[seat]), timeout=10)  # fmt: skip
        service.SubmitMove(pb2.SubmitMoveRequest(game_id=game_id, move=rng.choice(listed.moves)),
                           metadata=bearer(tokens[seat]), timeout=10)  # fmt: skip
    spectator = seen_by(service, pb2, game_id, None)
    hidden = set()
    for token in tokens:
        # What a seat is told and a spectator is not (not even inside a longer text, such
        # as a card's cost inside its public description).
        told = seen_by(service, pb2, game_id, token) - spectator
        hidden |= {h for h in told if len(h) >= 3 and not any(h in s for s in spectator)}
    channel.close()
    assert hidden, "the game has no secret yet: the check would check nothing"
    print(f"{game}: {len(hidden)} strings only seats see, such as {sorted(hidden)[:3]}")

    page = pages()
    page.goto(f"{app.url}/#/{game}/{game_id}")
    page.wait_for_selector(".page.game .board-area > *")
    page.wait_for_selector(".turns > li")
    text = page.inner_text("body")
    screenshot(page, f"{game}-spectator", tmp_path)
    leaked = sorted(h for h in hidden if h in text)
    assert not leaked, f"the spectator's page shows {leaked}"
    # Control: a seat's own page shows its secrets (the check can see them).
    own = pages()
    own.goto(f"{app.url}/#/")
    own.evaluate(
        "([g, id, token]) => localStorage.setItem('tabletop.seats.' + id, JSON.stringify(["
        "{game: g, gameId: id, seat: 0, seatName: '', token, savedAt: Date.now()}]))",
        [game, game_id, tokens[0]],
    )
    own.goto(f"{app.url}/#/{game}/{game_id}")
    own.wait_for_selector(".page.game .board-area > *")
    own.wait_for_selector(".turns > li")
    assert any(h in own.inner_text("body") for h in hidden)


def test_a_page_served_from_an_origin_not_allowed_is_refused_by_cors(app, pages, tmp_path):
    """The same app from another port (another origin) cannot call the gateway."""
    port = free_port()
    env = {
        "TABLETOP_WEB_PORT": str(port),
        "TABLETOP_WEB_GATEWAY_PORT": str(app.gateway_port),
        "TABLETOP_LOG_FORMAT": "json",
    }
    server = subprocess.Popen([sys.executable, str(ROOT / "web" / "serve.py")],
                              env={**os.environ, **env}, cwd=ROOT,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        page = pages()
        expect_console(page, r"blocked by CORS policy", r"net::ERR_FAILED")
        deadline = time.monotonic() + 20
        while True:
            try:
                page.goto(f"http://127.0.0.1:{port}/#/")
                break
            except Exception:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        notice = page.wait_for_selector(".notice.error", timeout=15_000)
        assert "cannot be listed" in notice.inner_text()
        assert page.locator(".game-card").count() == 0
        assert any("blocked by CORS policy" in e for e in page.console.errors)
        # Control: from the web app's own origin the same page lists the games.
        mine = pages()
        mine.goto(f"{app.url}/#/")
        mine.wait_for_selector(".game-card")
    finally:
        server.terminate()
        server.wait(10)


@pytest.mark.parametrize("game", ["channeling", "resarcana"])
def test_readable_on_a_phone(app, pages, tmp_path, game):
    page = pages(width=390, height=844)
    create_table(page, app, game, options={"resarcana": {"round_limit": "20"}}.get(game))
    page.wait_for_selector(".move-list button.move", timeout=15_000)
    # Nothing wider than the screen: no sideways scrolling of the page.
    width = page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= 390, width
    # Every move is a target a finger can hit, and they can be reached by keyboard.
    box = page.locator(".move-list button.move").first.bounding_box()
    assert box is not None and box["height"] >= 36
    page.keyboard.press("Tab")
    screenshot(page, f"{game}-phone", tmp_path)
    page.goto(f"{app.url}/#/{game}")
    page.wait_for_selector("#new-table")
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    screenshot(page, f"{game}-lobby-phone", tmp_path)


def test_the_moves_can_be_played_with_the_keyboard_alone(app, pages):
    page = pages()
    create_table(page, app, "channeling")
    page.wait_for_selector(".move-list button.move:not([disabled])", timeout=15_000)
    before = len(history_texts(page))
    # From the top of the page, Tab reaches a move; Enter plays it.
    page.locator("body").focus()
    for _ in range(60):
        page.keyboard.press("Tab")
        if page.evaluate("() => document.activeElement?.classList.contains('move')"):
            break
    else:
        raise AssertionError("no move can be reached with Tab")
    page.keyboard.press("Enter")
    page.wait_for_function(f"() => document.querySelectorAll('.turns > li').length > {before}")


def test_the_lobby_shows_waiting_tables_with_their_seats_clocks_and_options(app, pages, tmp_path):
    host = pages()
    # A table of three waiting for two people: its clock and an option of the game's own.
    host.goto(f"{app.url}/#/glow")
    host.fill("#your-name", "Ann")
    host.select_option("#players", "3")
    host.select_option("select[aria-label='Seat 2']", "open")
    host.select_option("select[aria-label='Seat 3']", "open")
    host.check("input[name=clock][value=bank]")
    host.fill("#bank", "15")
    host.fill("#increment", "10")
    host.select_option("#option-board", label="archipelago")
    host.click("button:has-text('Create table')")
    host.wait_for_selector(".waiting")
    game_id = host.get_attribute(".page.game", "data-game-id")
    assert "Waiting for 2 more players" in host.inner_text(".waiting")

    guest = pages()
    guest.goto(f"{app.url}/#/glow")
    row = guest.locator(f".table-row[data-game-id='{game_id}']")
    row.wait_for(timeout=15_000)
    text = row.inner_text()
    assert "Ann" in text and "open" in text
    assert "15 min bank + 10 s" in text and "board: archipelago" in text
    assert "Join (2 open)" in text
    guest.fill("#your-name", "Bob")
    screenshot(guest, "lobby", tmp_path, docs="web-lobby")
    # A name is needed to join; then Bob holds a seat, and the lobby says so.
    guest.fill("#your-name", "")
    row.locator("button:has-text('Join')").click()
    assert "Write your name first" in guest.wait_for_selector(".notice.error").inner_text()
    guest.fill("#your-name", "Bob")
    row.locator("button:has-text('Join')").click()
    guest.wait_for_selector(".page.game .waiting")
    assert "Waiting for one more player" in guest.inner_text(".waiting")
    host.wait_for_function(
        "() => document.querySelector('.waiting')?.innerText.includes('one more player')"
    )
    assert "Bob" in host.inner_text(".seats")


def test_resigning_ends_the_game_and_shows_the_outcome(app, pages):
    page = pages()
    create_table(page, app, "shrine")
    page.wait_for_selector(".move-list button.move:not([disabled])", timeout=15_000)
    page.click("button:has-text('Resign')")
    page.click("button:has-text('No')")  # a second thought first: nothing happens
    assert page.locator(".outcome").count() == 0
    page.click("button:has-text('Resign')")
    page.click("button:has-text('Yes, resign')")
    outcome = page.wait_for_selector(".outcome").inner_text()
    assert "Game over" in outcome and "resigned" in outcome.lower()
    assert "(Bot (easy)) wins" in outcome or "Bot (easy)" in outcome
    assert page.locator(".move-list").count() == 0
