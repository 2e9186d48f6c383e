"""Matchmaking and rating figures, in process, on a simulated clock (issue 28's bench).

    python -m bench.matchmaking            # 1,000 players over a simulated minute
    python -m bench.matchmaking --players 5000 --seconds 300 --seed 2

**pools**: for a 2-player shape (Channeling), Glow at four and Shén's 2v2, ``--players``
players arrive at uniformly random moments over ``--seconds`` simulated seconds, with
mixed ratings (mu from a normal of mean 25, sd 6: about 240 points; sigma from 1.5 to a
newcomer's 8.3). The pool is matched at every arrival and on a 250 ms timer, as the
service will. Printed: matches made per CPU second of ``Pool.add`` and ``Pool.match``
(process time, the simulated clock costs nothing), the players' waits in simulated
seconds (p50, p90, p99, max), the wait of the player whose arrival completed each table
(the issue's "from the second player's FindMatch"), and the rating gap inside tables.
Then the cost of one ``match`` call with every player waiting at once.

**ratings**: the CPU cost of ``rate_game`` per finished game, for each kind of shape;
then how shown ratings develop (docs/ratings.md's table): 200 players whose skills are
spread as a normal of sd 6 mu play rounds of random 2-player games, each result drawn
from openskill's own prediction for their true skills; printed after 10, 30, 100 and 300
games each: the median shown rating and sigma of the players of average skill (within
1.5 mu of 25), and the whole population's 10th, 50th and 90th percentiles.

**through the service** (``python -m bench --only matchmaking``; here ``--service``):
a Channeling service in this process on a SQLite store, ``--service-players`` players
(of mixed ratings, written to its store first) each opening a FindMatch stream over gRPC
at a random moment of ``--service-seconds`` real seconds; with ``--service-postgres
URL``, two replicas sharing the pool on PostgreSQL (the accept step), the streams
alternating between them. Printed: tables made (within the arrivals, per second, and
when the last was), and for each table the wait from the second player's FindMatch to
both having MatchFound (p50, p99). Then the rating update's cost inside the store's
transaction: the finishing append of a rated table against the same append without its
rating, wall and CPU, and the rating's parts alone.

Figures, never pass/fail; the waits depend only on the seed, the costs on the machine.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from services import registry
from services.kit import matchmaking as mm
from services.kit import ratings
from services.kit.engine import Outcome

TICK = 0.25  # the service's matching timer, in seconds


def _shape(game: str, name: str) -> ratings.Shape:
    return ratings.parse_shape(registry.by_name(game).engine().GAME, name)


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


@dataclass
class PoolFigures:
    shape: str
    players: int
    matched: int
    tables: int
    cpu_seconds: float
    calls: int
    waits: list[float]
    last_waits: list[float]
    gaps: list[float]

    @property
    def matches_per_cpu_second(self) -> float:
        return self.tables / self.cpu_seconds if self.cpu_seconds else float("inf")


def simulate(shape: ratings.Shape, players: int, seconds: float, seed: int) -> PoolFigures:
    rng = random.Random(seed)
    arrivals = sorted(rng.uniform(0.0, seconds) for _ in range(players))
    entries = [
        mm.Entry(
            f"player-{i}",
            ratings.Rating(rng.gauss(25.0, 6.0), rng.uniform(1.5, ratings.NEW.sigma)),
            at,
        )
        for i, at in enumerate(arrivals)
    ]
    pool = mm.Pool(shape, rated=True, rng=random.Random(seed))
    waits: list[float] = []
    last_waits: list[float] = []
    gaps: list[float] = []
    cpu = 0.0
    calls = 0
    tables = 0

    def run(now: float) -> None:
        nonlocal cpu, calls, tables
        start = time.process_time()
        made = pool.match(now)
        cpu += time.process_time() - start
        calls += 1
        for match in made:
            tables += 1
            match_waits = match.waits()
            waits.extend(match_waits)
            last_waits.append(min(match_waits))
            points = [e.points for e in match.entries]
            gaps.append(max(points) - min(points))

    now, tick, i = 0.0, 0.0, 0
    end = seconds + 600.0  # the last arrivals' windows need time to widen
    while now < end and (i < len(entries) or len(pool)):
        next_arrival = entries[i].joined_at if i < len(entries) else float("inf")
        if next_arrival <= tick:
            now = next_arrival
            start = time.process_time()
            pool.add(entries[i])
            cpu += time.process_time() - start
            i += 1
        else:
            now = tick
            tick += TICK
        run(now)
    return PoolFigures(shape.key, players, len(waits), tables, cpu, calls, waits, last_waits, gaps)


def one_call(shape: ratings.Shape, players: int, seed: int) -> tuple[float, int]:
    """The CPU seconds of one match call with ``players`` waiting since t=0."""
    rng = random.Random(seed)
    pool = mm.Pool(shape, rng=random.Random(seed))
    for i in range(players):
        pool.add(mm.Entry(f"p{i}", ratings.Rating(rng.gauss(25.0, 6.0), 3.0), 0.0))
    start = time.process_time()
    made = pool.match(5.0)
    return time.process_time() - start, len(made)


def rating_cost(shape: ratings.Shape, games: int, seed: int) -> float:
    """Microseconds of CPU per ``rate_game`` call for a game of ``shape``."""
    rng = random.Random(seed)
    n = shape.players
    cases = []
    for g in range(256):
        seats = [
            ratings.SeatPlayer(
                f"p{g}-{s}",
                ratings.Standing(
                    ratings.Rating(rng.gauss(25, 5), rng.uniform(1, 8)), rng.randrange(50)
                ),
            )
            for s in range(n)
        ]
        scores = tuple(rng.randrange(50) for _ in range(n))
        side = rng.randrange(len(shape.seating))
        cases.append((seats, Outcome(scores, shape.seating[side], "BENCH")))
    start = time.process_time()
    for g in range(games):
        seats, outcome = cases[g % len(cases)]
        ratings.rate_game(shape, seats, outcome)
    return (time.process_time() - start) / games * 1e6


def population(players: int, rounds: int, seed: int) -> list[tuple[int, int, float, list[int]]]:
    """(games each, average players' median shown, their median sigma, population
    p10/p50/p90 shown) after 10, 30, 100 and 300 rounds (those within ``rounds``)."""
    shape = _shape("channeling", "2p")
    rng = random.Random(seed)
    skill = [rng.gauss(25.0, 6.0) for _ in range(players)]
    names = [f"p{i}" for i in range(players)]
    book = ratings.Book()
    found = []
    count = 0
    for done in range(1, rounds + 1):
        order = list(range(players))
        rng.shuffle(order)
        for a, b in zip(order[::2], order[1::2], strict=True):
            truth = [[ratings.Rating(skill[a], 1e-9).model_rating()]]
            truth.append([ratings.Rating(skill[b], 1e-9).model_rating()])
            win = 0 if rng.random() < ratings.MODEL.predict_win(truth)[0] else 1
            outcome = Outcome((1 - win, win), (win,), "BENCH")
            book.rate(ratings.RatedGame(f"g{count}", shape, (names[a], names[b]), outcome))
            count += 1
        if done in (10, 30, 100, 300):
            average = [
                book.standing(shape, names[i]) for i in range(players) if abs(skill[i] - 25) < 1.5
            ]
            everyone = sorted(book.standing(shape, n).shown for n in names)
            deciles = statistics.quantiles(everyone, n=10)
            found.append(
                (
                    done,
                    round(statistics.median(s.shown for s in average)),
                    statistics.median(s.rating.sigma for s in average),
                    [round(deciles[0]), round(statistics.median(everyone)), round(deciles[8])],
                )
            )
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--players", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--rating-games", type=int, default=5000)
    parser.add_argument("--population-rounds", type=int, default=300)
    parser.add_argument("--service", action="store_true", help="only the service figures")
    parser.add_argument("--service-players", type=int, default=1000)
    parser.add_argument("--service-seconds", type=float, default=60.0)
    parser.add_argument(
        "--service-postgres",
        default="",
        help="a PostgreSQL URL: two replicas sharing the pool there (in a schema of the"
        " bench's own) instead of one service on SQLite",
    )
    args = parser.parse_args(argv)
    if args.service:
        section(False, args.service_players, args.service_seconds, args.seed, args.service_postgres)
        return

    window = mm.Window()
    print(
        f"pools: {args.players} players over {args.seconds:g} simulated s, matched at every"
        f" arrival and every {TICK:g} s; window ±{window.start:g} points + {window.widen:g}/s"
    )
    header = (
        f"  {'shape':<15}{'tables':>7}{'matched':>9}{'tables/cpu s':>14}{'calls':>7}"
        f"{'wait p50':>10}{'p90':>7}{'p99':>7}{'max':>7}{'last p50':>10}{'last p99':>9}"
        f"{'gap p50':>9}{'gap p99':>9}"
    )
    print(header)
    for game, name in (("channeling", "2p"), ("glow", "4p"), ("shen", "2v2")):
        f = simulate(_shape(game, name), args.players, args.seconds, args.seed)
        print(
            f"  {f.shape:<15}{f.tables:>7}{f.matched:>9}{f.matches_per_cpu_second:>14,.0f}"
            f"{f.calls:>7}{_percentile(f.waits, 0.5):>9.2f}s{_percentile(f.waits, 0.9):>6.1f}s"
            f"{_percentile(f.waits, 0.99):>6.1f}s{max(f.waits, default=0):>6.1f}s"
            f"{_percentile(f.last_waits, 0.5):>9.2f}s{_percentile(f.last_waits, 0.99):>8.2f}s"
            f"{_percentile(f.gaps, 0.5):>9.0f}{_percentile(f.gaps, 0.99):>9.0f}"
        )
    print("one match call, everyone waiting at once:")
    for game, name in (("channeling", "2p"), ("glow", "4p"), ("shen", "2v2")):
        shape = _shape(game, name)
        for n in (100, 1000):
            seconds, tables = one_call(shape, n, args.seed)
            print(f"  {shape.key:<15}{n:>6} waiting: {seconds * 1e3:8.1f} ms, {tables} tables")
    print(f"rating update, CPU per finished game ({args.rating_games} games each):")
    for game, name in (
        ("channeling", "2p"),
        ("glow", "4p"),
        ("shen", "6p"),
        ("shen", "2v2"),
        ("shen", "3v3"),
    ):
        shape = _shape(game, name)
        micros = [rating_cost(shape, args.rating_games, args.seed + r) for r in range(3)]
        print(f"  {shape.key:<15}{statistics.median(micros):8.1f} µs (median of 3 runs)")
    print("shown ratings over rated games (200 players, skills sd 6 mu, random pairings):")
    print(f"  {'games':>6}{'average player':>16}{'its sigma':>11}   population p10 / p50 / p90")
    for games, shown, sigma, spread in population(200, args.population_rounds, args.seed):
        print(f"  {games:>6}{shown:>16}{sigma:>11.1f}   {' / '.join(map(str, spread))}")


# --- through the service ---------------------------------------------------------


def _players() -> tuple[object, Callable[[str], str]]:
    """A players' policy trusting a key of the bench's own, and a signer of its tokens."""
    import jwt
    from cryptography.hazmat.primitives.asymmetric import ec

    from services.kit.players import StaticKey, Verifier, public_jwk
    from services.kit.players.seats import PlayerPolicy

    private = ec.generate_private_key(ec.SECP256R1())
    verifier = Verifier(
        StaticKey(public_jwk(private.public_key()), "bench"), issuer="bench", audience="bench"
    )

    def sign(player: str) -> str:
        now = int(time.time())
        claims = {"iss": "bench", "aud": "bench", "sub": player, "iat": now, "exp": now + 3600}
        return jwt.encode(claims, private, algorithm="ES256", headers={"kid": "bench"})

    return PlayerPolicy(verifier), sign


async def _service_figures(
    players: int, seconds: float, seed: int, work: str, postgres: str = ""
) -> dict:
    import asyncio

    import grpc

    from services.kit.games import GameManager
    from services.kit.metrics import GameMetrics
    from services.kit.server import create_server
    from services.kit.service import GameService
    from services.kit.store import open_store
    from services.kit.store.ratings import Entry

    rng = random.Random(seed)
    spec = GameService.load(registry.by_name("channeling"))
    # SQLite: one process. PostgreSQL: two replicas sharing the pool (the accept step),
    # the players' streams alternating between them.
    urls = [postgres, postgres] if postgres else [f"sqlite:///{work}/match.db?synchronous=normal"]
    stores = [open_store(url) for url in urls]
    store = stores[0]
    policy, sign = _players()
    managers = []
    for each in stores:
        manager = GameManager(spec.engine, each, metrics=GameMetrics("channeling"))
        manager.players = policy  # type: ignore[assignment]
        await manager.start()
        managers.append(manager)
    ids = [f"bench-player-{i:05d}" for i in range(players)]
    tokens = {p: sign(p) for p in ids}
    await store.replace_ratings(  # type: ignore[attr-defined]
        "channeling",
        [
            Entry(p, p, "2p", ratings.Standing(
                ratings.Rating(rng.gauss(25, 6), rng.uniform(1.5, 25 / 3)), 20))
            for p in ids
        ],
        time.time(),
    )  # fmt: skip
    servers = [create_server("127.0.0.1:0", spec, m, access_log=False) for m in managers]
    for server, _, _ in servers:
        await server.start()
    pb2 = spec.pb2
    asked: dict[str, float] = {}
    found: dict[str, tuple[str, float]] = {}
    try:
        channels = [grpc.aio.insecure_channel(f"127.0.0.1:{port}") for _, port, _ in servers]
        try:
            calls = [
                channel.unary_stream(
                    f"/{spec.name}/FindMatch",
                    request_serializer=pb2.FindMatchRequest.SerializeToString,
                    response_deserializer=pb2.FindMatchResponse.FromString,
                )
                for channel in channels
            ]
            arrivals = sorted(rng.uniform(0, seconds) for _ in ids)
            start = time.perf_counter()

            async def one(player: str, at: float) -> None:
                await asyncio.sleep(max(0.0, start + at - time.perf_counter()))
                asked[player] = time.perf_counter()
                stream = calls[len(asked) % len(calls)](
                    pb2.FindMatchRequest(),
                    metadata=(("authorization", f"Bearer {tokens[player]}"),),
                )
                async for message in stream:
                    if message.HasField("found"):
                        found[player] = (message.found.game_id, time.perf_counter())
                        return

            tasks = [asyncio.ensure_future(one(p, at)) for p, at in zip(ids, arrivals, strict=True)]
            _, pending = await asyncio.wait(tasks, timeout=seconds + 120)
            for task in pending:
                task.cancel()
            elapsed = time.perf_counter() - start
        finally:
            for channel in channels:
                await channel.close()
    finally:
        for server, _, _ in servers:
            await server.stop(0)
        for each in stores:
            await each.close()
    tables: dict[str, list[str]] = {}
    for player, (game_id, _) in found.items():
        tables.setdefault(game_id, []).append(player)
    waits = [
        max(found[p][1] for p in pair) - max(asked[p] for p in pair)
        for pair in tables.values()
        if len(pair) == 2
    ]
    return {
        "players": players,
        "seconds": seconds,
        "tables": len(tables),
        "matched_players": len(found),
        "tables_per_second": len(tables) / elapsed if elapsed else 0.0,
        "elapsed_seconds": elapsed,
        "tables_in_arrivals": sum(
            1 for pair in tables.values() if max(found[p][1] for p in pair) - start <= seconds
        ),
        "store": "postgres, two replicas" if postgres else "sqlite",
        "wait_p50_ms": _percentile(waits, 0.5) * 1e3,
        "wait_p99_ms": _percentile(waits, 0.99) * 1e3,
    }


async def _store_rating_cost(games: int, work: str) -> dict:
    """Per finishing append, with and without its rating (SQLite): wall milliseconds and
    CPU microseconds (process time: the store's writer thread included), each the better
    of two alternating rounds; then the rating's parts on their own: openskill's update
    of two newcomers, and the kit's ``RatingJob.rate`` (the ranks, the model, the new
    standings)."""
    from openskill.models import PlackettLuce

    from services.kit.ratings.job import RatingJob
    from services.kit.store import GameRecord, MoveRecord, open_store

    shape = _shape("channeling", "2p")
    store = open_store(f"sqlite:///{work}/cost.db?synchronous=normal")
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}

    def job_of(gid: str, g: int) -> RatingJob:
        return RatingJob(
            gid, shape, (f"a{g % 50}", f"b{g % 37}"), ("A", "B"), Outcome((1, 0), (0,), "RULES")
        )

    try:
        for round_ in range(2):
            for label in ("without rating", "with rating"):
                ids = [f"{label.split()[0]}-{round_}-{g}" for g in range(games)]
                for gid in ids:
                    await store.create(GameRecord(gid, "channeling", 2, {}, 1, ("", ""), 0.0))
                start, cpu_start = time.perf_counter(), time.process_time()
                for g, gid in enumerate(ids):
                    job = job_of(gid, g) if label == "with rating" else None
                    await store.append(
                        gid, MoveRecord(1, 0, "@resign", applied_at=1.0, finished=True, rating=job)
                    )
                w = (time.perf_counter() - start) / games * 1e3
                c = (time.process_time() - cpu_start) / games * 1e6
                wall[label] = min(wall.get(label, w), w)
                cpu[label] = min(cpu.get(label, c), c)
    finally:
        await store.close()
    model = PlackettLuce()
    start = time.process_time()
    for _ in range(games):
        model.rate([[model.rating()], [model.rating()]], ranks=[1.0, 2.0])
    openskill_us = (time.process_time() - start) / games * 1e6
    job = job_of("alone", 0)
    start = time.process_time()
    for _ in range(games):
        job.rate({})
    job_us = (time.process_time() - start) / games * 1e6
    return {
        "append_ms": wall,
        "rating_ms": wall["with rating"] - wall["without rating"],
        "append_cpu_us": cpu,
        "rating_cpu_us": cpu["with rating"] - cpu["without rating"],
        "openskill_cpu_us": openskill_us,
        "job_rate_cpu_us": job_us,
    }


def _bench_schema(base: str) -> str:
    """A fresh schema of the bench's own on ``base`` (its ratings are replaced)."""
    import uuid

    import psycopg

    name = "bench_match_" + uuid.uuid4().hex[:12]
    with psycopg.connect(base, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {name}")
    sep = "&" if "?" in base else "?"
    return f"{base}{sep}options=-csearch_path%3D{name}"


def section(
    quick: bool = False, players: int = 0, seconds: float = 0.0, seed: int = 1, postgres: str = ""
) -> dict:
    """The service figures, printed and returned (``python -m bench --only matchmaking``)."""
    import asyncio
    import tempfile

    players = players or (200 if quick else 1000)
    seconds = seconds or (10.0 if quick else 60.0)
    with tempfile.TemporaryDirectory(prefix="bench-match-") as work:
        url = _bench_schema(postgres) if postgres else ""
        figures = asyncio.run(_service_figures(players, seconds, seed, work, url))
        cost = asyncio.run(_store_rating_cost(100 if quick else 500, work))
    figures["store_rating"] = cost
    print(
        f"matchmaking through the service ({figures['store']}): {players} players over"
        f" {seconds:g} s, {figures['matched_players']} matched, {figures['tables']} tables"
        f" ({figures['tables_in_arrivals']} within the arrivals' {seconds:g} s,"
        f" {figures['tables_in_arrivals'] / seconds:.1f}/s; the last at"
        f" {figures['elapsed_seconds']:.0f} s),"
        f" second FindMatch to both matched p50 {figures['wait_p50_ms']:.1f} ms,"
        f" p99 {figures['wait_p99_ms']:.1f} ms",
        flush=True,
    )
    print(
        f"rating in the finishing append (SQLite): {cost['append_ms']['without rating']:.2f}"
        f" ms without, {cost['append_ms']['with rating']:.2f} ms with (wall);"
        f" CPU {cost['append_cpu_us']['without rating']:.0f} µs without,"
        f" {cost['append_cpu_us']['with rating']:.0f} µs with:"
        f" {cost['rating_cpu_us']:.0f} µs a game; alone: openskill"
        f" {cost['openskill_cpu_us']:.0f} µs, RatingJob.rate {cost['job_rate_cpu_us']:.0f} µs",
        flush=True,
    )
    return figures


if __name__ == "__main__":
    main()
