"""Matchmaking pools on an injected clock: windows that widen with the wait, no one
matched twice, N-player and team tables, bots after their wait, replacing and putting
back entries."""

from __future__ import annotations

import itertools
import random

import pytest

from services.channeling import engine as channeling
from services.glow import engine as glow
from services.kit import matchmaking as mm
from services.kit import ratings
from services.kit.matchmaking import pool as pool_module
from services.shen import engine as shen

DUEL = ratings.parse_shape(channeling.GAME, "2p")
GLOW4 = ratings.parse_shape(glow.GAME, "4p")
SHEN2V2 = ratings.parse_shape(shen.GAME, "2v2")
SHEN2V2V2 = ratings.parse_shape(shen.GAME, "2v2v2")


def at(points: float, sigma: float = 2.0) -> ratings.Rating:
    """A rating whose skill estimate is ``points`` on the shown scale's points."""
    return ratings.Rating(points / ratings.POINTS_PER_MU, sigma)


def entry(player: str, points: float, joined: float = 0.0, bots=None) -> mm.Entry:
    return mm.Entry(player, at(points), joined, bots)


def pool(shape=DUEL, seed: int = 1, **window) -> mm.Pool:
    return mm.Pool(shape, rated=True, window=mm.Window(**window), rng=random.Random(seed))


def test_close_ratings_match_at_once() -> None:
    p = pool()
    p.add(entry("ada", 1000))
    assert p.match(0.0) == []  # alone
    p.add(entry("bo", 1060))
    (match,) = p.match(0.0)
    assert sorted(match.players) == ["ada", "bo"]
    assert match.rated and match.made_at == 0.0 and len(match.seats) == 2
    assert len(p) == 0


def test_far_ratings_match_once_the_windows_have_widened_enough() -> None:
    """300 points apart, both from t=0: the window (100 + 10/s) reaches 300 at 20 s."""
    p = pool()
    p.add(entry("ada", 1000))
    p.add(entry("bo", 1300))
    for now in (0.0, 5.0, 10.0, 19.9):
        assert p.match(now) == [], now
    (match,) = p.match(20.0)
    assert sorted(match.players) == ["ada", "bo"]
    assert match.waits() == [20.0, 20.0]


def test_control_a_window_that_never_widens_leaves_the_far_pair_waiting() -> None:
    p = pool(widen=0.0)
    p.add(entry("ada", 1000))
    p.add(entry("bo", 1300))
    for now in (0.0, 20.0, 1000.0, 1e6):
        assert p.match(now) == []
    assert len(p) == 2


def test_the_widest_window_is_a_bound() -> None:
    p = pool(most=500.0)
    p.add(entry("ada", 1000))
    p.add(entry("bo", 1501))  # beyond the widest window (500)
    assert p.match(1e6) == []
    p.add(entry("cy", 1500))
    (match,) = p.match(1e6)
    assert sorted(match.players) == ["ada", "cy"]


def test_both_windows_must_hold_the_other() -> None:
    """A player waiting a minute accepts 500 points either side; a newcomer 300 points
    away waits until its own window reaches 300 (20 s later)."""
    p = pool()
    p.add(entry("old", 1000, joined=0.0))
    p.add(entry("new", 1300, joined=60.0))
    assert p.match(60.0) == []
    assert p.match(79.9) == []
    (match,) = p.match(80.0)
    assert sorted(match.players) == ["new", "old"]


def test_the_longest_waiting_player_is_served_first_with_its_nearest() -> None:
    p = pool()
    p.add(entry("first", 1000, joined=0.0))
    p.add(entry("near", 1050, joined=5.0))
    p.add(entry("nearer", 1020, joined=6.0))
    (match,) = p.match(6.0)
    assert sorted(match.players) == ["first", "nearer"]
    assert [e.player for e in p] == ["near"]


def test_a_removed_player_is_never_matched() -> None:
    p = pool()
    p.add(entry("ada", 1000))
    p.add(entry("bo", 1000))
    assert p.remove("bo") is not None
    assert p.remove("bo") is None
    assert p.match(100.0) == []
    p.add(entry("cy", 1010, joined=100.0))
    (match,) = p.match(100.0)
    assert sorted(match.players) == ["ada", "cy"]


def test_a_hundred_newcomers_at_once_are_all_matched_in_pairs() -> None:
    p = pool()
    for i in range(100):
        p.add(mm.Entry(f"guest-{i}", ratings.NEW, 0.0))
    matches = p.match(0.0)
    players = [name for m in matches for name in m.players]
    assert len(matches) == 50 and len(players) == 100 and len(set(players)) == 100
    assert len(p) == 0


def test_a_hundred_players_at_mixed_ratings_are_all_matched_in_pairs() -> None:
    """100 players at once, ratings spread (sd 200 points): matched as the windows
    widen, every one once, each pair within both windows when it was made (the last two
    are the ones left far apart once their neighbours were taken: they meet when the
    window reaches their distance)."""
    rng = random.Random(5)
    window = mm.Window()
    p = pool()
    for i in range(100):
        p.add(entry(f"p{i}", rng.gauss(1500, 200)))
    seen: list[str] = []
    for second in range(0, 181):
        for match in p.match(float(second)):
            a, b = match.entries
            assert abs(a.points - b.points) <= window.at(second) + 1e-9
            seen.extend(match.players)
    assert len(seen) == 100 and len(set(seen)) == 100
    assert len(p) == 0


def test_no_one_is_matched_twice_in_a_busy_pool() -> None:
    """Players arrive at random over ten minutes, some leave, some come back with a
    new request; each request is matched at most once, never after it was withdrawn."""
    rng = random.Random(11)
    p = pool(seed=3)
    live: dict[str, int] = {}  # player -> serial of its current request
    matched: list[tuple[str, int]] = []
    withdrawn: set[tuple[str, int]] = set()
    serial = itertools.count()
    now = 0.0
    while now < 600.0:
        now += rng.expovariate(2.0)
        player = f"p{rng.randrange(150)}"
        if player in live and rng.random() < 0.3:
            p.remove(player)
            withdrawn.add((player, live.pop(player)))
        elif player not in live:
            live[player] = next(serial)
            p.add(mm.Entry(player, at(rng.gauss(1500, 250)), now))
        for match in p.match(now):
            for name in match.players:
                matched.append((name, live.pop(name)))
    assert len(matched) > 300
    assert len(set(matched)) == len(matched)
    assert not withdrawn & set(matched)
    assert set(live) == {e.player for e in p}


def test_a_table_of_four_fills_with_four_close_players() -> None:
    p = pool(GLOW4)
    for name in ("a", "b", "c"):
        p.add(entry(name, 1000))
    assert p.match(0.0) == []
    p.add(entry("d", 1030))
    (match,) = p.match(0.0)
    assert sorted(match.players) == ["a", "b", "c", "d"] and len(match.seats) == 4
    for i in range(9):
        p.add(entry(f"x{i}", 1000 + i))
    matches = p.match(1.0)
    assert len(matches) == 2 and len(p) == 1
    players = [n for m in matches for n in m.players]
    assert len(set(players)) == 8


def test_every_member_of_a_group_is_within_every_others_window() -> None:
    """Four players at 1000, 1090, 1180, 1270: each near its neighbour, but the ends
    270 apart: no table of four until the windows reach 270 (17 s)."""
    p = pool(GLOW4)
    for i, name in enumerate("abcd"):
        p.add(entry(name, 1000 + 90 * i))
    assert p.match(16.9) == []
    (match,) = p.match(17.0)
    assert sorted(match.players) == list("abcd")


def team_of(match: mm.Match, shape: ratings.Shape) -> list[set[str]]:
    return [{match.seats[s].player for s in side} for side in shape.seating]


def test_teams_are_balanced_by_rating() -> None:
    """2v2 at 1000, 1100, 1200, 1300 points: 1000+1300 against 1100+1200."""
    p = pool(SHEN2V2)
    for name, points in (("w", 1000), ("x", 1100), ("y", 1200), ("z", 1300)):
        p.add(entry(name, points))
    (match,) = p.match(30.0)
    assert sorted(map(sorted, team_of(match, SHEN2V2))) == [["w", "z"], ["x", "y"]]


def test_three_teams_of_two_are_balanced() -> None:
    p = pool(SHEN2V2V2)
    for i, name in enumerate("abcdef"):
        p.add(entry(name, 1000 + 50 * i))
    (match,) = p.match(30.0)
    teams = team_of(match, SHEN2V2V2)
    assert sorted(map(sorted, teams)) == [["a", "f"], ["b", "e"], ["c", "d"]]


def test_control_unbalanced_teams_are_seen(monkeypatch) -> None:
    """Control: with the balancing replaced by the first split, the strongest two play
    together, which the balance test above would catch."""
    monkeypatch.setattr(
        pool_module, "seat", lambda shape, group, skills, rng: _first_split(shape, group)
    )
    p = pool(SHEN2V2)
    for name, points in (("w", 1000), ("x", 1100), ("y", 1200), ("z", 1300)):
        p.add(entry(name, points))
    (match,) = p.match(30.0)
    assert sorted(map(sorted, team_of(match, SHEN2V2))) != [["w", "z"], ["x", "y"]]


def _first_split(shape: ratings.Shape, group: list) -> list:
    ordered = sorted(group, key=lambda e: e.points)
    seats: dict[int, object] = {}
    members = iter(ordered)
    for side in shape.seating:
        for s in side:
            seats[s] = next(members)
    return [seats[s] for s in range(shape.players)]


def test_sides_are_at_random() -> None:
    """Which player takes which side: over many seeds, each of two players sits at
    seat 0 sometimes; each 2v2 team takes each side sometimes."""
    first_seat = set()
    team_side = set()
    for seed in range(40):
        p = pool(seed=seed)
        p.add(entry("ada", 1000))
        p.add(entry("bo", 1000))
        (match,) = p.match(0.0)
        first_seat.add(match.seats[0].player)
        q = pool(SHEN2V2, seed=seed)
        for name, points in (("w", 1000), ("x", 1010), ("y", 1020), ("z", 1030)):
            q.add(entry(name, points))
        (four,) = q.match(0.0)
        team_side.add(frozenset(team_of(four, SHEN2V2)[0]))
    assert first_seat == {"ada", "bo"}
    assert team_side == {frozenset("wz"), frozenset("xy")}


def test_bots_fill_the_table_after_their_wait() -> None:
    p = pool()
    p.add(entry("ada", 1000, bots=mm.BotFill(30.0, "hard")))
    assert p.match(29.9) == []
    (match,) = p.match(30.0)
    assert match.players == ("ada",)
    assert sorted(type(s).__name__ for s in match.seats) == ["Bot", "Entry"]
    assert mm.Bot("hard") in match.seats
    assert not match.rated  # a table with a bot is never rated


def test_control_without_bots_a_lone_player_waits() -> None:
    p = pool()
    p.add(entry("ada", 1000))
    assert p.match(1e6) == []


def test_bots_fill_an_n_player_table_with_the_players_due_them() -> None:
    """Glow at four: two players due hard bots join one table with two bots; a player
    who asked for none, and one due easy bots, are not put at it."""
    p = pool(GLOW4)
    p.add(entry("a", 1000, bots=mm.BotFill(10.0, "hard")))
    p.add(entry("b", 1020, bots=mm.BotFill(10.0, "hard")))
    p.add(entry("c", 1010))
    p.add(entry("d", 1400, bots=mm.BotFill(60.0, "easy")))  # too far for a table of four
    assert p.match(9.0) == []
    (match,) = p.match(10.0)
    assert sorted(match.players) == ["a", "b"]
    assert match.seats.count(mm.Bot("hard")) == 2
    assert sorted(e.player for e in p) == ["c", "d"]


def test_a_human_table_comes_before_bots() -> None:
    p = pool()
    p.add(entry("ada", 1000, bots=mm.BotFill(0.0, "easy")))
    p.add(entry("bo", 1000))
    (match,) = p.match(0.0)
    assert sorted(match.players) == ["ada", "bo"] and match.rated


def test_a_second_request_replaces_the_first_and_keeps_the_place() -> None:
    p = pool()
    p.add(entry("ada", 1000, joined=0.0))
    old = p.add(entry("ada", 1000, joined=50.0))
    assert old is not None and old.joined_at == 0.0
    assert len(p) == 1 and p.get("ada").joined_at == 0.0


def test_matched_players_put_back_keep_their_wait() -> None:
    """A match whose table cannot be made (bo left the moment it was made): ada goes
    back first, with its original join time, and is matched with the next arrival."""
    p = pool()
    p.add(entry("ada", 1000, joined=0.0))
    p.add(entry("bo", 1000, joined=10.0))
    (match,) = p.match(10.0)
    ada = next(e for e in match.entries if e.player == "ada")
    p.put_back([ada])
    p.add(entry("cy", 1000, joined=20.0))
    (again,) = p.match(20.0)
    assert sorted(again.players) == ["ada", "cy"]
    assert max(again.waits()) == 20.0


def test_pools_hold_each_player_once() -> None:
    pools = mm.Pools(rng=random.Random(1))
    rated = mm.PoolKey.of(DUEL, None, {}, True)
    casual = mm.PoolKey.of(DUEL, None, {}, False)
    glow4 = mm.PoolKey.of(GLOW4, {"bank": 300.0}, {"variant": "base"}, True)
    assert pools.add(rated, entry("ada", 1000)) is None
    replaced = pools.add(glow4, entry("ada", 1000, joined=5.0))
    assert replaced is not None and replaced[0] == rated
    assert pools.where("ada") == glow4 and len(pools) == 1
    assert pools.sizes() == {glow4: 1}
    pools.add(rated, entry("bo", 1000))
    pools.add(casual, entry("cy", 1000))
    assert pools.match(5.0) == []  # each alone in its pool: never matched across pools
    pools.add(rated, entry("di", 1000))
    ((key, match),) = pools.match(5.0)
    assert key == rated and sorted(match.players) == ["bo", "di"] and match.rated
    assert pools.where("bo") is None and pools.remove("bo") is None
    assert pools.remove("cy") is not None and pools.sizes() == {glow4: 1}


def test_put_back_respects_a_newer_request() -> None:
    pools = mm.Pools(rng=random.Random(1))
    rated = mm.PoolKey.of(DUEL, None, {}, True)
    other = mm.PoolKey.of(DUEL, None, {}, False)
    pools.add(rated, entry("ada", 1000))
    pools.add(rated, entry("bo", 1000))
    ((_, match),) = pools.match(0.0)
    pools.add(other, entry("ada", 1000, joined=1.0))  # ada asked again, elsewhere
    pools.put_back(rated, list(match.entries))
    assert pools.where("ada") == other and pools.where("bo") == rated


def test_a_full_service_refuses_new_players_only() -> None:
    pools = mm.Pools(max_entries=2)
    key = mm.PoolKey.of(DUEL, None, {}, True)
    pools.add(key, entry("a", 1000))
    pools.add(key, entry("b", 2000))
    with pytest.raises(mm.PoolFull):
        pools.add(key, entry("c", 1000))
    pools.add(key, entry("a", 1000, joined=3.0))  # a replacement is no new player
    assert len(pools) == 2


def test_pool_keys_are_canonical() -> None:
    a = mm.PoolKey.of(DUEL, {"bank": 60.0, "increment": 1.0}, {"x": 1, "y": "z"}, True)
    b = mm.PoolKey.of(DUEL, {"increment": 1.0, "bank": 60.0}, {"y": "z", "x": 1}, True)
    assert a == b and hash(a) == hash(b)
    assert a != mm.PoolKey.of(DUEL, {"bank": 60.0, "increment": 1.0}, {"x": 1, "y": "z"}, False)


def test_bad_bot_fill_is_refused() -> None:
    with pytest.raises(ValueError):
        mm.BotFill(10.0, "grandmaster")
    with pytest.raises(ValueError):
        mm.BotFill(-1.0)
    with pytest.raises(ValueError):
        mm.Window(start=100.0, most=50.0)


def test_the_same_chance_makes_the_same_matches() -> None:
    def run(seed: int) -> list:
        rng = random.Random(99)
        p = pool(SHEN2V2, seed=seed)
        for i in range(40):
            p.add(entry(f"p{i}", rng.gauss(1500, 150), joined=i * 0.5))
        return [m.seats for t in range(40) for m in p.match(float(t))]

    assert run(1) == run(1)
    assert run(1) != run(2)
