"""Issue 28 as it is judged, for matchmaking: 100 guests signed in by the gateway open
FindMatch at once through it (a server stream, by reflection) for rated 2-player
Channeling; all are matched in pairs (50 games), none twice, each told its game id and
seat, and each game seats exactly its pair. With PostgreSQL, also with two replicas
behind the gateway's one route, sharing the pool."""

from __future__ import annotations

import os
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.judging.gateway import FORFEIT, Guest, Reflected, judged_stack, sign_in
from tests.ratings.test_store import schema_url

POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL")
PLAYERS = 100


def matched(client: Reflected, guest: Guest) -> dict[str, Any]:
    """FindMatch's ``found``: the stream read until it comes, then closed."""
    body = {"rated": True, "timeControl": FORFEIT}
    for message in client.stream("FindMatch", body, guest.token):
        if "found" in message:
            return message["found"]
        assert "waiting" in message, message
    raise AssertionError(f"{guest.name}'s stream ended without a match")


def matches_made(metrics_port: int | None) -> tuple[float, float]:
    """A replica's rated 2p tables made by matchmaking, and matches dissolved (/metrics)."""
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10).read()
    made = dissolved = 0.0
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            if sample.name == "tabletop_matches_total" and sample.labels["rated"] == "true":
                made += sample.value
            elif sample.name == "tabletop_matches_dissolved_total":
                dissolved += sample.value
    return made, dissolved


def pairing_problems(found: dict[str, dict[str, Any]], guests: list[Guest]) -> list[str]:
    """What is wrong with the matches FindMatch told: everyone in one 2-seat game."""
    problems = [f"{g.name} not matched" for g in guests if g.player_id not in found]
    tables: dict[str, list[int]] = {}
    for got in found.values():
        tables.setdefault(got["gameId"], []).append(got.get("seat", 0))
    problems += [f"{g} told seats {s}" for g, s in tables.items() if sorted(s) != [0, 1]]
    if len(tables) != len(guests) // 2:
        problems.append(f"{len(tables)} games for {len(guests)} players")
    return problems


@pytest.mark.parametrize("replicas", [1, 2], ids=["one-service", "two-replicas-postgres"])
def test_a_hundred_guests_at_once_are_all_matched_in_pairs_once(replicas, tmp_path):
    if replicas == 2 and not POSTGRES:
        pytest.skip("TABLETOP_TEST_POSTGRES_URL is not set (make test-postgres sets it)")
    url = schema_url(POSTGRES or "") if replicas == 2 else f"sqlite:///{tmp_path}/store.db"
    with judged_stack(tmp_path, url, replicas=replicas) as stack:
        guests = sign_in(stack.address, [f"Guest {i:03d}" for i in range(PLAYERS)])
        client = Reflected(stack.address, "tabletop.channeling.v1.ChannelingService")
        try:
            with ThreadPoolExecutor(PLAYERS) as pool:
                results = list(pool.map(lambda g: matched(client, g), guests))
            found = {g.player_id: got for g, got in zip(guests, results, strict=True)}
            assert pairing_problems(found, guests) == []
            assert all(got.get("rated") is True for got in found.values())
            seated: Counter[str] = Counter()
            for game_id in {got["gameId"] for got in found.values()}:
                header = client.call("GetGame", {"gameId": game_id})["game"]
                assert header["rated"] is True and len(header["seats"]) == 2
                for seat in header["seats"]:
                    player = seat["playerId"]
                    seated[player] += 1
                    told = found[player]
                    assert (told["gameId"], told.get("seat", 0)) == (game_id, seat.get("index", 0))
            assert seated == Counter({g.player_id: 1 for g in guests})
            # None matched twice: each guest's own games are the one it was told of.
            for guest in guests:
                mine = client.call("ListGames", {"mine": True, "pageSize": 100}, guest.token)
                assert [g["gameId"] for g in mine["games"]] == [found[guest.player_id]["gameId"]]
            pools = client.call("ListGames", {}).get("pools", [])
            assert sum(p.get("playersWaiting", 0) for p in pools) == 0
            # Each table made once, by one replica's matchmaker. A proposal may be
            # dissolved before any table (the accept step, docs/ratings.md: a replica slow
            # to accept under load) and its players matched again: the pairing check above
            # and the 50 tables made hold the guarantee, so dissolves are not counted here.
            made = [matches_made(r.metrics_port) for r in stack.replicas]
            assert sum(m for m, _ in made) == PLAYERS // 2, made
        finally:
            client.close()
    # Control: the pairing check objects to a player left out and to a seat told twice.
    assert pairing_problems({k: v for k, v in list(found.items())[1:]}, guests)
    first, second = list(found)[:2]
    twice = {
        **found,
        second: {
            **found[second],
            "seat": found[first].get("seat", 0),
            "gameId": found[first]["gameId"],
        },
    }
    assert pairing_problems(twice, guests)
