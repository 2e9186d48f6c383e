"""Issue 28 as it is judged, through the gateway with reflection alone: 20 guests signed
in by the gateway, ten strong (the kit's hard bot chooses their moves) and ten weak
(random among ListMoves' moves), play rated 2-player Channeling games; every game ends
rated and counted for both seats, the strong players' shown ratings end above the weak
ones', and the rebuild command a user runs finds the store's standings equal.
20 games under ``make test``, 100 under ``make soak``."""

from __future__ import annotations

import random
import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.judging.checks import games_counted, rebuild_equal, strong_above_weak
from tests.judging.gateway import CHANNELING, Guest, Reflected, judged_stack, rebuild_check, sign_in
from tests.judging.play import play_rated

TABLES_AT_ONCE = 4


def pairings(games: int, strong: list[Guest], weak: list[Guest]) -> list[list[Guest]]:
    """Each game a strong player against a weak one, everyone playing as often, sides
    taken in turn."""
    pairs = []
    for g in range(games):
        pair = [strong[g % len(strong)], weak[(g + g // len(weak)) % len(weak)]]
        pairs.append(pair if g % 2 else pair[::-1])
    return pairs


@pytest.mark.parametrize(
    "games", [20, pytest.param(100, marks=pytest.mark.soak)], ids=["20", "soak-100"]
)
def test_random_and_hard_guests_rated_through_the_gateway(games, tmp_path):
    path = tmp_path / "channeling.db"
    store_url = f"sqlite:///{path}"
    with judged_stack(tmp_path, store_url) as stack:
        guests = sign_in(
            stack.address, [f"Strong {i}" for i in range(10)] + [f"Weak {i}" for i in range(10)]
        )
        strong_guests, weak_guests = guests[:10], guests[10:]
        strong = {g.player_id for g in strong_guests}
        client = Reflected(stack.address, CHANNELING)
        try:
            pairs = pairings(games, strong_guests, weak_guests)
            with ThreadPoolExecutor(TABLES_AT_ONCE) as pool:
                game_ids = list(pool.map(
                    lambda n: play_rated(client, 1000 + n, pairs[n], strong, random.Random(n)),
                    range(games),
                ))  # fmt: skip
            assert len(set(game_ids)) == games
            for game_id, seats in zip(game_ids, pairs, strict=True):
                header = client.call("GetGame", {"gameId": game_id})["game"]
                assert header["status"] == "GAME_STATUS_FINISHED" and header["rated"] is True
                assert [s.get("playerId") for s in header["seats"]] == [g.player_id for g in seats]
            shown, counted = {}, {}
            for guest in guests:
                ratings = client.call("GetRatings", {"playerId": guest.player_id}, guest.token)
                (two,) = [r for r in ratings["ratings"] if r["shape"] == "2p"]
                shown[guest.player_id] = two.get("shown", 0)
                counted[guest.player_id] = two.get("games", 0)
        finally:
            client.close()
        assert games_counted(counted, games) == []
        assert strong_above_weak(shown, strong) == [], shown
        done = rebuild_check(store_url)
        assert rebuild_equal(done.returncode, done.stdout + done.stderr) == []
    # Controls, on these very results: the checks object to levels swapped, to a game
    # counted off, and to a standing the rebuild would not give.
    assert strong_above_weak(shown, set(shown) - strong)
    assert games_counted(counted, games + 1)
    with sqlite3.connect(path) as db:
        db.execute(
            "UPDATE ratings SET mu = mu + 1 WHERE player_id = ?", (weak_guests[0].player_id,)
        )
    tampered = rebuild_check(store_url)
    assert rebuild_equal(tampered.returncode, tampered.stdout + tampered.stderr)
    assert weak_guests[0].player_id in tampered.stdout
