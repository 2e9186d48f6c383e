"""Signed-in players in the browser: two guests find a rated match, play it from their
pages, see it in My games (live), one resigns and both ratings move, beside the seats
and on the ratings page; a rated table made from the lobby's form; the leaderboard,
paged; leaving the match page leaves the pool; the token is refreshed before it expires.

What a page shows is compared with what the gateway answers the same player over gRPC,
never with a number written here.
"""

from __future__ import annotations

import time

import grpc
import pytest
from google.protobuf import duration_pb2
from tabletop.channeling.v1 import channeling_pb2, channeling_pb2_grpc
from tabletop.common.v1 import table_pb2
from tabletop.gateway.v1 import players_pb2, players_pb2_grpc

from tests.web.conftest import screenshot

pytestmark = pytest.mark.browser

FORFEIT = table_pb2.TimeControl(
    per_decision=duration_pb2.Duration(seconds=300), on_timeout=table_pb2.TIMEOUT_ACTION_FORFEIT
)
MINE = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)
OPEN = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_OPEN)


class Gateway:
    """The gateway over native gRPC, as a player: what the pages are compared with."""

    def __init__(self, port: int) -> None:
        self.channel = grpc.insecure_channel(f"127.0.0.1:{port}")
        self.players = players_pb2_grpc.PlayersServiceStub(self.channel)
        self.channeling = channeling_pb2_grpc.ChannelingServiceStub(self.channel)

    def sign_in(self, name: str) -> players_pb2.SignInResponse:
        reply: players_pb2.SignInResponse = self.players.SignIn(
            players_pb2.SignInRequest(player_name=name), timeout=10
        )
        return reply

    def rating(self, player_id: str, shape: str = "2p") -> tuple[int, bool, int]:
        got = self.channeling.GetRatings(
            channeling_pb2.GetRatingsRequest(player_id=player_id), timeout=10
        )
        (r,) = [r for r in got.ratings if r.shape == shape]
        return r.shown, r.provisional, r.games

    def waiting(self, rated: bool) -> int:
        """Players in channeling's 2p pools, rated or casual, as the service counts them."""
        listed = self.channeling.ListGames(channeling_pb2.ListGamesRequest(page_size=1), timeout=10)
        return sum(p.players_waiting for p in listed.pools if p.rated == rated)

    def rated_game(self, winner: str, loser: str) -> None:
        """A rated table of ``winner`` and ``loser``, ended by the loser resigning."""
        created = self.channeling.CreateGame(
            channeling_pb2.CreateGameRequest(
                players=2, seats=[MINE, OPEN], time_control=FORFEIT, rated=True
            ),
            metadata=[("authorization", f"Bearer {winner}")],
            timeout=10,
        )
        game_id = created.game.game_id
        self.channeling.JoinGame(
            channeling_pb2.JoinGameRequest(game_id=game_id),
            metadata=[("authorization", f"Bearer {loser}")],
            timeout=10,
        )
        self.channeling.Resign(
            channeling_pb2.ResignRequest(game_id=game_id),
            metadata=[("authorization", f"Bearer {loser}")],
            timeout=10,
        )


@pytest.fixture(scope="module")
def gateway(app):
    g = Gateway(app.gateway_port)
    yield g
    g.channel.close()


def sign_in(page, app, name: str) -> str:
    """Sign in as a new guest from the account page, by typing and clicking; its id."""
    page.goto(f"{app.url}/#/account")
    page.fill("#guest-name", name)
    page.click("button:has-text('Sign in as a guest')")
    page.wait_for_selector("#account-id")
    assert page.inner_text("#account-name") == name
    assert page.inner_text(".player-bar .signed-in").endswith(name)
    return page.inner_text("#account-id")


def version(page) -> int:
    return int(page.get_attribute(".page.game", "data-version") or "-1")


def move_once(pages_: list, at_least: int) -> None:
    """Whichever page has its move listed clicks the first; every page sees the move."""
    for page in pages_:
        page.wait_for_function(
            "n => Number(document.querySelector('.page.game')?.dataset.version) >= n", arg=at_least
        )
    deadline = time.monotonic() + 30
    while True:
        for page in pages_:
            button = page.locator(".move-list button.move:not([disabled])")
            if button.count():
                before = version(page)
                button.first.click()
                for p in pages_:
                    p.wait_for_function(
                        "v => Number(document.querySelector('.page.game')?.dataset.version) > v",
                        arg=before,
                        timeout=20_000,
                    )
                assert not page.locator(".notice.error").count(), page.inner_text(".notice.error")
                return
        assert time.monotonic() < deadline, "no page had a move to make"
        time.sleep(0.1)


def seat_ratings(page) -> dict[str, str]:
    """The seats' players and the ratings shown beside them: {player name: "750?"}."""
    found: dict[str, str] = {}
    for seat in page.locator(".seats .seat").all():
        name = seat.locator(".player-link").inner_text()
        found[name] = seat.locator(".rating").inner_text().strip()
    return found


def shown(rating: tuple[int, bool, int]) -> str:
    return f"{rating[0]}{'?' if rating[1] else ''}"


def test_two_guests_match_play_see_my_games_and_their_ratings_move(app, pages, gateway, tmp_path):
    ada, bo = pages(), pages()
    ada_id = sign_in(ada, app, "Ada")
    bo_id = sign_in(bo, app, "Bo")
    assert ada_id != bo_id

    # Ada waits in the rated pool: the page shows the pool as the service counts it.
    ada.goto(f"{app.url}/#/channeling")
    ada.click("#play-rated")
    ada.wait_for_selector("#match-pool")
    wait_until(lambda: gateway.waiting(rated=True) == 1, "Ada is not in the pool")
    assert int(ada.inner_text("#match-pool")) == 1
    screenshot(ada, "match-waiting", tmp_path)
    # Bo asks too: both are matched and taken to the same game.
    bo.goto(f"{app.url}/#/channeling")
    bo.click("#play-rated")
    for page in (ada, bo):
        page.wait_for_selector(".page.game[data-status='in progress'] .seats")
    game_id = ada.get_attribute(".page.game", "data-game-id")
    assert game_id and bo.get_attribute(".page.game", "data-game-id") == game_id
    wait_until(lambda: gateway.waiting(rated=True) == 0, "a matched player is still waiting")
    for page, name in ((ada, "Ada"), (bo, "Bo")):
        assert "rated" in page.inner_text(".game-sub")
        you = page.locator(".seats .seat.mine").inner_text()
        assert name in you and "(you)" in you, you
    # Beside each seat, the player's rating as the service has it (a newcomer's).
    before = {"Ada": gateway.rating(ada_id), "Bo": gateway.rating(bo_id)}
    assert seat_ratings(ada) == {n: shown(r) for n, r in before.items()} == seat_ratings(bo)

    # A few moves, each from the page whose turn it is (the player's token acts).
    for n in range(4):
        move_once([ada, bo], n)

    # My games, in another tab of Ada's browser (the same player), while Bo is to play:
    # the game is under "Others to play", and moves to "Your turn" live when Bo moves
    # (WatchMyGames' YOUR_TURN).
    # (A turn may hold several decisions of one seat: move until the turn changes.)
    def ada_acts() -> bool:
        return ada.locator(".seats .seat.mine.acting").count() > 0

    while ada_acts():
        move_once([ada, bo], version(ada))
    mine = pages(context=ada.context)
    mine.goto(f"{app.url}/#/me")
    mine.wait_for_selector(".page.mine[data-live='yes']")
    mine.wait_for_selector(f"#their-turn [data-game-id='{game_id}']")
    assert mine.locator(f"#your-turn [data-game-id='{game_id}']").count() == 0
    while not ada_acts():
        move_once([ada, bo], version(ada))
    mine.wait_for_selector(f"#your-turn [data-game-id='{game_id}']", timeout=15_000)
    assert mine.locator(f"#their-turn [data-game-id='{game_id}']").count() == 0
    screenshot(mine, "my-games", tmp_path, docs="web-my-games")
    # Bo's My games lists the same game; the link opens its page with Bo's seat.
    bo_mine = pages(context=bo.context)
    bo_mine.goto(f"{app.url}/#/me")
    bo_mine.click(f"[data-game-id='{game_id}'] .my-game-link")
    bo_mine.wait_for_selector(".page.game .seats .seat.mine")
    assert "Bo" in bo_mine.inner_text(".seats .seat.mine")

    # Ada resigns: the game is over on both pages, and rated.
    ada.click("button:has-text('Resign')")
    ada.click("button:has-text('Yes, resign')")
    for page in (ada, bo):
        page.wait_for_selector(".outcome")
    after = {"Ada": gateway.rating(ada_id), "Bo": gateway.rating(bo_id)}
    assert after["Ada"][2] == after["Bo"][2] == before["Ada"][2] + 1
    assert after["Bo"][0] > after["Ada"][0]  # the one who stayed won
    # The seats show the ratings after the game, as the service has them.
    for page in (ada, bo):
        page.wait_for_function(
            "want => [...document.querySelectorAll('.seats .seat .rating')]"
            ".map(e => e.textContent.trim()).join() === want",
            arg=",".join(shown(after[n]) for n in seat_ratings(page)),
            timeout=15_000,
        )
    screenshot(bo, "rated-game-over", tmp_path)

    # Ada's ratings page: the 2p row as GetRatings answers it, reached from the seat's link.
    ada.click(".seats .seat.mine .player-link")
    row = ada.locator("#ratings-channeling tr[data-shape='2p']")
    row.wait_for()
    assert row.get_attribute("data-games") == str(after["Ada"][2])
    assert row.locator(".rating").inner_text() == shown(after["Ada"])
    assert "(you)" in ada.inner_text("h1")
    screenshot(ada, "ratings", tmp_path)


def test_a_rated_table_from_the_lobby_form_seats_the_players_by_their_tokens(
    app, pages, gateway, tmp_path
):
    cy, di = pages(), pages()
    sign_in(cy, app, "Cy")
    sign_in(di, app, "Di")
    cy.goto(f"{app.url}/#/channeling")
    cy.check("#rated")
    assert cy.input_value("select[aria-label='Seat 2']") == "open"  # a rated table: no bot
    screenshot(cy, "lobby-signed-in", tmp_path, docs="web-lobby-signed-in")
    cy.click("button:has-text('Create table')")
    cy.wait_for_selector(".page.game[data-status='waiting for players']")
    game_id = cy.get_attribute(".page.game", "data-game-id")
    # No seat token is kept: the seat is the player's.
    assert cy.evaluate(f"localStorage.getItem('tabletop.seats.{game_id}')") is None
    got = gateway.channeling.GetGame(channeling_pb2.GetGameRequest(game_id=game_id), timeout=10)
    assert got.game.rated and got.game.seats[0].player_name == "Cy"
    assert got.game.seats[0].player_id and got.game.seats[0].player_id.startswith("guest-")
    # Di joins from the lobby's list; Di's My games shows it; Cy's first tab plays.
    di.goto(f"{app.url}/#/channeling")
    di.click(f"[data-game-id='{game_id}'] button:has-text('Join')")
    for page in (cy, di):
        page.wait_for_selector(".page.game[data-status='in progress']")
    move_once([cy, di], 0)
    # Another tab of Cy's browser plays the same seat: signed in, no seat token.
    cy2 = pages(context=cy.context)
    cy2.goto(f"{app.url}/#/channeling/{game_id}")
    cy2.wait_for_selector(".page.game .seats .seat.mine")
    assert "Cy" in cy2.inner_text(".seats .seat.mine")
    screenshot(cy2, "rated-table-second-tab", tmp_path)


def test_the_leaderboard_pages_list_established_players_as_the_service_ranks_them(
    app, pages, gateway, tmp_path
):
    # Three guests play ten rated games or more each (over gRPC, quickly); a fourth, one.
    a, b, c, d = (gateway.sign_in(n) for n in ("Lea", "Max", "Ned", "Ola"))
    for i in range(10):
        gateway.rated_game(a.token, b.token)
        if i % 2:
            gateway.rated_game(c.token, b.token)
        else:
            gateway.rated_game(a.token, c.token)
    gateway.rated_game(d.token, a.token)
    board = gateway.channeling.ListLeaderboard(
        channeling_pb2.ListLeaderboardRequest(shape="2p", page_size=100), timeout=10
    )
    ranked = [e.player_name for e in board.entries if e.player_name in ("Lea", "Max", "Ned", "Ola")]
    assert sorted(ranked) == ["Lea", "Max", "Ned"]  # Ola, with one game, is provisional

    page = pages()
    page.goto(f"{app.url}/#/leaderboard/channeling?shape=2p&size=2")
    page.wait_for_selector(".leaderboard-table")
    seen = page.locator(".leaderboard-table tbody tr td:nth-child(2)").all_inner_texts()
    assert len(seen) == 2
    screenshot(page, "leaderboard", tmp_path)
    while page.locator("#next-page").count():
        page.click("#next-page")
        # The next page is drawn when its first rank follows the last one seen.
        page.wait_for_function(
            "n => document.querySelector('.leaderboard-table tbody tr td')?.textContent === n",
            arg=str(len(seen) + 1),
        )
        seen += page.locator(".leaderboard-table tbody tr td:nth-child(2)").all_inner_texts()
    assert seen == [e.player_name for e in board.entries]
    assert "Ola" not in seen
    # The ranks run on across pages.
    assert page.locator(".leaderboard-table tbody tr td:first-child").last.inner_text() == str(
        len(seen)
    )


def test_cancel_and_leaving_the_match_page_leave_the_pool(app, pages, gateway):
    page = pages()
    sign_in(page, app, "Pat")
    assert gateway.waiting(rated=False) == 0
    page.goto(f"{app.url}/#/match/channeling?rated=0")
    page.wait_for_selector("#match-pool")
    wait_until(lambda: gateway.waiting(rated=False) == 1, "Pat is not in the pool")
    page.click("#match-cancel")
    page.wait_for_selector(".page.lobby")
    wait_until(lambda: gateway.waiting(rated=False) == 0, "Cancel did not leave the pool")
    # Back in the pool, then away to another page: the stream closes.
    page.goto(f"{app.url}/#/match/channeling?rated=0")
    page.wait_for_selector("#match-pool")
    wait_until(lambda: gateway.waiting(rated=False) == 1, "Pat is not back in the pool")
    page.goto(f"{app.url}/#/me")
    wait_until(lambda: gateway.waiting(rated=False) == 0, "leaving the page did not leave the pool")
    # And closing the tab.
    page.goto(f"{app.url}/#/match/channeling?rated=0")
    page.wait_for_selector("#match-pool")
    wait_until(lambda: gateway.waiting(rated=False) == 1, "Pat is not back in the pool")
    page.close()
    wait_until(lambda: gateway.waiting(rated=False) == 0, "closing the tab did not leave the pool")


def test_the_token_is_refreshed_before_it_expires_and_keeps_the_player(app, browser, pages):
    context = browser.new_context()
    page = pages(context=context)
    try:
        page.clock.install()
        player_id = sign_in(page, app, "Quin")
        stored = page.evaluate("JSON.parse(localStorage.getItem('tabletop.player'))")
        life_s = stored["lifeMs"] / 1000
        assert 0 < life_s <= 3600 * 24
        # Before the refresh is due, nothing changes.
        signed = "JSON.parse(localStorage.getItem('tabletop.player')).signedAt"
        page.clock.fast_forward(int(life_s * 0.5 * 1000))
        time.sleep(0.5)
        assert page.evaluate(signed) == stored["signedAt"]
        # Past 80% of its life the page signs in again with its refresh token. (A second
        # of real time first: tokens signed in the same second are the same bytes.)
        time.sleep(1.1)
        page.clock.fast_forward(int(life_s * 0.35 * 1000))
        # (Polled from here: the page's own timers run on the clock the test moves.)
        wait_until(lambda: page.evaluate(signed) != stored["signedAt"], "not refreshed", 45)
        renewed = page.evaluate("JSON.parse(localStorage.getItem('tabletop.player'))")
        assert renewed["playerId"] == player_id
        assert renewed["token"] != stored["token"]
        assert renewed["refreshToken"] != stored["refreshToken"]
        # The new token works: My games answers live.
        page.goto(f"{app.url}/#/me")
        page.wait_for_selector(".page.mine[data-live='yes']")
    finally:
        context.close()


def wait_until(check, why: str, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, why
        time.sleep(0.1)


def test_a_forged_player_token_in_storage_is_refused_and_the_page_says_why(app, pages, gateway):
    page = pages()
    sign_in(page, app, "Ray")
    real = page.evaluate("JSON.parse(localStorage.getItem('tabletop.player')).token")
    created = gateway.channeling.CreateGame(
        channeling_pb2.CreateGameRequest(players=2, seats=[MINE, OPEN]),
        metadata=[("authorization", f"Bearer {real}")],
        timeout=10,
    )
    game_id = created.game.game_id
    # Another guest's signature on Ray's claims: a token the gateway's key never signed.
    other = gateway.sign_in("Sam").token
    forged = real.rsplit(".", 1)[0] + "." + other.rsplit(".", 1)[1]
    page.evaluate(
        "t => { const s = JSON.parse(localStorage.getItem('tabletop.player'));"
        " s.token = t; localStorage.setItem('tabletop.player', JSON.stringify(s)); }",
        forged,
    )
    page.goto(f"{app.url}/#/channeling/{game_id}")
    page.reload()  # the session is read from storage at start
    notice = page.wait_for_selector(".notice.warn").inner_text()
    assert "spectator" in notice and "sign-in was refused" in notice, notice
    assert "TOKEN_INVALID" in notice, notice
    assert "You are watching as a spectator" in page.inner_text(".you-are")
    page.goto(f"{app.url}/#/me")
    assert "TOKEN_INVALID" in page.wait_for_selector(".page.mine .notice.error").inner_text()
    # Control: the real token plays the seat.
    page.evaluate(
        "t => { const s = JSON.parse(localStorage.getItem('tabletop.player'));"
        " s.token = t; localStorage.setItem('tabletop.player', JSON.stringify(s)); }",
        real,
    )
    page.goto(f"{app.url}/#/channeling/{game_id}")
    page.reload()
    page.wait_for_selector(".page.game .seats .seat.mine")
    assert "You play" in page.inner_text(".you-are")
