"""The replica check's parts: a private PostgreSQL the nemesis may restart, replicas of one
game service and a gateway as processes, clients that play through any of them, the
nemesis and the checker.

Every client call goes to a connection picked at random: the gateway (which balances over
every replica) or one replica directly, and a retry may go elsewhere. Now and then two
moves for one version are sent at once through two connections (a race only one may
win). Each acknowledgement is recorded with the connection that gave it, the game, the
version, the request id and the move; the checker compares them with each other and
with the log as every replica serves it.

The pieces the single-node fault test already has (retries, watchers, the history check,
fixed ports) are imported from ``test_faults``, not repeated here.
"""

from __future__ import annotations

import asyncio
import os
import random
import shutil
import signal
import subprocess
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from client.api import FINISHED, GameClient
from services import registry
from tests.reliability.test_faults import (
    CALL_DEADLINE,
    Ack,
    Faults,
    Fleet,
    Game,
    Tally,
    check_watch,
    follow,
    patiently,
    stable_port,
)
from tests.support import ROOT, start_process, wait_serving

NAME = "channeling"  # short games: many of them end during one round of faults
SERVICE = registry.by_name(NAME).service_name
PLAYERS = registry.by_name(NAME).engine().GAME.min_players
RACE = 0.25  # share of decisions sent twice at once, through two connections
POSTGRES_DOWN_SECONDS = 2.0  # how long the server stays down when restarted
CATCH_UP_SECONDS = 30.0  # a replica still behind a game's last version after this is stuck


# --- PostgreSQL, ours to restart ----------------------------------------------------------


def postgres_installed() -> bool:
    return bool(list(Path("/usr/lib/postgresql").glob("*/bin/initdb"))) or bool(
        shutil.which("pg_config")
    )


class Postgres:
    """A throwaway server of its own (scripts/postgres.sh on another port and data
    directory): restarting it disturbs no other test using TABLETOP_TEST_POSTGRES_URL."""

    def __init__(self) -> None:
        self.port = stable_port()
        # Not under pytest's tmp_path: the server runs as the postgres user, who may not
        # enter root's private temporary directories.
        self.data = Path(f"/tmp/tabletop-replicas-{self.port}")
        self.url = ""

    def _script(self, action: str) -> str:
        env = {**os.environ, "PGPORT": str(self.port), "PGDATA_DIR": str(self.data)}
        done = subprocess.run(
            ["bash", str(ROOT / "scripts" / "postgres.sh"), action],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode != 0:
            raise RuntimeError(f"postgres.sh {action}: {done.stderr.strip()}")
        return done.stdout

    def start(self) -> str:
        out = self._script("start")
        self.url = out.strip().rpartition("=")[2]
        return self.url

    def running(self) -> bool:
        return self._postmaster() is not None

    def _postmaster(self) -> int | None:
        try:
            pid = int((self.data / "postmaster.pid").read_text().split()[0])
            os.kill(pid, 0)
        except (OSError, ValueError, IndexError):
            return None
        return pid

    def stop(self, immediate: bool) -> None:
        """``immediate``: SIGQUIT to the postmaster, a crash as far as clients can tell
        (recovery from the WAL at the next start); otherwise a fast shutdown."""
        if not immediate:
            self._script("stop")
            return
        pid = self._postmaster()
        if pid is None:
            return
        os.kill(pid, signal.SIGQUIT)
        deadline = time.monotonic() + 60
        while self._postmaster() is not None and time.monotonic() < deadline:
            time.sleep(0.05)

    async def restart(self, immediate: bool) -> None:
        await asyncio.to_thread(self.stop, immediate)
        try:
            await asyncio.sleep(POSTGRES_DOWN_SECONDS)
        finally:
            await asyncio.to_thread(self.start)

    def destroy(self) -> None:
        """Stopped and its files gone; safe to call whatever state it is in."""
        try:
            self._script("stop")
        finally:
            shutil.rmtree(self.data, ignore_errors=True)
            for log in self.data.parent.glob(f"{self.data.name}.*"):
                log.unlink(missing_ok=True)


# --- the replicas and the gateway ---------------------------------------------------------


class Cluster(Fleet):
    """``replicas`` processes of one game service on one PostgreSQL, and a gateway whose
    route lists them all, each on a fixed port."""

    def __init__(self, tmp: Path, replicas: int, store_url: str) -> None:
        super().__init__(tmp)
        self.replicas = [f"replica-{i + 1}" for i in range(replicas)]
        self.ports = {name: stable_port() for name in [*self.replicas, "gateway"]}
        self.store_url = store_url

    def env(self, name: str) -> dict[str, str]:
        common = {
            "TABLETOP_PORT": str(self.ports[name]),
            "TABLETOP_ACCESS_LOG": "false",
            "TABLETOP_DRAIN_SECONDS": "2",
            # One address makes every call here: no per-client limit is the subject.
            "TABLETOP_RATE_PER_CLIENT": "0",
            "TABLETOP_STREAMS_PER_CLIENT": "0",
            "TABLETOP_AUTH_FAILURES_PER_CLIENT": "0",
        }
        if name != "gateway":
            return {**common, "TABLETOP_STORE_URL": self.store_url}
        route = ",".join(self.address(r) for r in self.replicas)
        return {
            **common,
            f"TABLETOP_ROUTE_{NAME.upper()}": route,
            "TABLETOP_HEALTH_INTERVAL_SECONDS": "0.5",
        }

    async def start(self, name: str) -> None:
        module = "gateway" if name == "gateway" else f"services.{NAME}"
        self.starts[name] += 1
        log = self.tmp / f"{name}-{self.starts[name]}.log"
        process = await asyncio.to_thread(start_process, module, self.env(name), log, 60)
        self.running[name] = process
        self.started.append(process)

    def excerpts(self, lines: int = 30) -> list[str]:
        """Each logged traceback or unexpected error with what follows it, to say why."""
        found = []
        for process in self.started:
            text = process.lines()
            for at, line in enumerate(text):
                if '"unexpected error"' in line or "Traceback" in line:
                    found.append(f"{process.log.name}:\n" + "\n".join(text[at : at + lines]))
        return found

    async def serving(self) -> None:
        for name in self.replicas:
            await asyncio.to_thread(wait_serving, self.address(name), SERVICE, 60)
        await asyncio.to_thread(wait_serving, self.address("gateway"), SERVICE, 60)


# --- the clients --------------------------------------------------------------------------


@dataclass(frozen=True)
class Acked:
    """One acknowledgement, as the client that got it saw it."""

    game_id: str
    version: int
    seat: int
    move_text: str
    request_id: str
    via: str  # the connection that answered: "gateway" or a replica
    expected_version: int  # the version the move was sent for


@dataclass
class Played:
    """One game: the single-node test's record (for its checks) and what is ours."""

    game: Game
    acks: list[Acked] = field(default_factory=list)
    watched: list[tuple[int, int, str]] = field(default_factory=list)  # (version, seat, text)
    watched_via: str = ""


class RecordingClient:
    """A GameClient whose watch streams note every turn they deliver."""

    def __init__(self, client: GameClient, into: list[tuple[int, int, str]]) -> None:
        self._client = client
        self._into = into

    def watch(self, *args: Any, **kwargs: Any) -> Any:
        return _RecordingStream(self._client.watch(*args, **kwargs), self._into)


class _RecordingStream:
    def __init__(self, stream: Any, into: list[tuple[int, int, str]]) -> None:
        self._stream = stream
        self._into = into

    async def read(self) -> Any:
        message = await self._stream.read()
        if message is not grpc.aio.EOF and message.HasField("turn"):
            turn = message.turn
            self._into.append((turn.version, turn.seat, turn.move_text))
        return message

    def cancel(self) -> bool:
        return self._stream.cancel()


class Players:
    """Drivers, one per slot, each playing games to their end through random connections
    until told to stop starting new ones; a watcher follows each game."""

    def __init__(self, channels: dict[str, grpc.aio.Channel], seed: int) -> None:
        self.clients = {
            label: GameClient(NAME, channel, timeout=CALL_DEADLINE)
            for label, channel in channels.items()
        }
        self.labels = list(self.clients)
        self.rng = random.Random(seed)
        self.tally = Tally()
        self.played: list[Played] = []
        self.watchers: list[asyncio.Task[None]] = []
        self.stopping = False
        self.races = 0

    def acknowledged(self) -> int:
        return self.tally.acknowledged

    async def call(self, rng: random.Random, what: str, send: Any) -> Any:
        """``send(client)`` through a random connection, retried (elsewhere, perhaps)."""
        return await patiently(
            self.tally, what, lambda: send(self.clients[rng.choice(self.labels)])
        )

    async def drive(self) -> None:
        rng = random.Random(self.rng.random())
        while not self.stopping:
            created = await self.call(rng, "CreateGame", lambda c: c.create(PLAYERS))
            played = Played(Game(NAME, created.game_id, created.tokens))
            self.played.append(played)
            await self.play_to_end(played, rng)

    def watch(self, played: Played) -> None:
        """From version 1 on: a watch from version 0 means "from now" (see test_faults)."""
        label = self.labels[len(self.watchers) % len(self.labels)]
        played.watched_via = label
        client = RecordingClient(self.clients[label], played.watched)
        self.watchers.append(asyncio.create_task(follow(client, played.game, self.tally)))

    async def play_to_end(self, played: Played, rng: random.Random) -> None:
        game = played.game
        header = (await self.call(rng, "GetGame", lambda c: c.get(game.game_id))).game
        decisions = 0
        while header.status != FINISHED:
            seat = rng.choice(list(header.to_act))
            token = game.tokens[seat]
            listed = await self.call(rng, "ListMoves", lambda c, t=token: c.moves(game.game_id, t))
            if not listed.moves:
                header = listed.game
                continue
            decisions += 1
            racers = 2 if rng.random() < RACE else 1
            moves = [rng.choice(list(listed.moves)) for _ in range(racers)]
            via = rng.sample(self.labels, racers)
            self.races += racers > 1
            replies = await asyncio.gather(
                *(
                    self.submit(
                        played,
                        rng,
                        label,
                        token,
                        move,
                        listed.game.version,
                        f"{game.game_id}/{decisions}/{i}",
                    )
                    for i, (label, move) in enumerate(zip(via, moves, strict=True))
                )
            )
            won = [r for r in replies if r is not None]
            if not won:  # somebody else's version, or a replica behind: read again
                header = (await self.call(rng, "GetGame", lambda c: c.get(game.game_id))).game
                continue
            header = max((r.game for r in won), key=lambda g: g.version)
            if not self.watching(played):
                self.watch(played)
        game.final = header.version
        game.finished.set()
        if not self.watching(played):  # ended before any move was acknowledged here
            self.watch(played)

    def watching(self, played: Played) -> bool:
        return bool(played.watched_via)

    async def submit(
        self,
        played: Played,
        rng: random.Random,
        first: str,
        token: str,
        move: Any,
        version: int,
        request_id: str,
    ) -> Any:
        """The reply, or None when refused as stale (ABORTED). Each try after the first
        goes to a random connection, with the same request id and expected version."""
        game = played.game
        used: list[str] = []
        sent: list[float] = []

        def attempt() -> Any:
            label = rng.choice(self.labels) if used else first
            used.append(label)
            sent.append(time.time())
            client = self.clients[label]
            return client.submit(game.game_id, token, move, version, request_id)

        try:
            reply = await patiently(self.tally, "SubmitMove", attempt)
        except grpc.aio.AioRpcError as error:
            if error.code() != grpc.StatusCode.ABORTED:
                self.tally.unexpected.append(f"SubmitMove: {error.code()} {error.details()}")
                raise
            self.tally.aborted += 1
            return None
        turn = reply.turn
        played.acks.append(
            Acked(
                game.game_id,
                turn.version,
                turn.seat,
                turn.move_text,
                request_id,
                used[-1],
                version,
            )
        )
        game.acks.append(Ack(turn.version, turn.seat, turn.move_text))
        self.tally.acknowledged += 1
        if len(sent) > 1 and turn.applied_at.ToNanoseconds() / 1e9 < sent[-1]:
            self.tally.answers_lost += 1
        return reply


# --- the nemesis --------------------------------------------------------------------------


@dataclass
class Nemesis(Faults):
    """The single-node test's kills and pauses, aimed at replicas, and PostgreSQL
    restarted under the load: gently (a fast shutdown) or as a crash (SIGQUIT)."""

    postgres: Postgres | None = None
    slots: int = 1

    async def recovered(self) -> None:
        await self.fleet.serving()
        await self.progress(self.slots)

    async def restart_postgres(self, immediate: bool) -> None:
        assert self.postgres is not None
        await self.postgres.restart(immediate)
        self.injected["postgres " + ("SIGQUIT" if immediate else "fast stop")] += 1
        await self.recovered()

    async def pause_during_postgres_restart(self, name: str) -> None:
        """A replica paused while the server goes down and comes back: it wakes to
        connections that are gone."""
        assert self.postgres is not None
        self.fleet.signal(name, signal.SIGSTOP)
        self.injected[f"{name} SIGSTOP"] += 1
        try:
            await self.postgres.restart(immediate=True)
            self.injected["postgres SIGQUIT"] += 1
        finally:
            self.fleet.signal(name, signal.SIGCONT)
        await self.recovered()

    async def one_round(self) -> None:
        """Every replica killed once and paused once, PostgreSQL restarted both ways and
        once with a replica paused across the restart."""
        replicas = self.fleet.replicas
        for index, name in enumerate(replicas):
            await self.restart(name, signal.SIGKILL)
            await self.pause(replicas[(index + 1) % len(replicas)])
            if index == 0:
                await self.restart_postgres(immediate=False)
        await self.restart_postgres(immediate=True)
        await self.pause_during_postgres_restart(replicas[-1])

    async def random_until(self, stop: float, rng: random.Random) -> None:
        while time.monotonic() < stop:
            name = rng.choice(self.fleet.replicas)
            # SIGTERM drains a replica that clients call straight: every call is answered
            # UNAVAILABLE (never CANCELLED) and watch streams end with a resume version.
            fault = rng.choice(["kill", "term", "pause", "postgres", "postgres-crash", "both"])
            if fault == "pause":
                await self.pause(name)
            elif fault == "postgres":
                await self.restart_postgres(immediate=False)
            elif fault == "postgres-crash":
                await self.restart_postgres(immediate=True)
            elif fault == "both":
                await self.pause_during_postgres_restart(name)
            else:
                await self.restart(name, signal.SIGKILL if fault == "kill" else signal.SIGTERM)


# --- the checker --------------------------------------------------------------------------


def divergences(played: Played) -> list[str]:
    """Two acknowledgements of one version that differ (another request, seat or move),
    or an acknowledgement at another version than the one its move was sent for."""
    found = []
    by_version: dict[int, list[Acked]] = defaultdict(list)
    for ack in played.acks:
        by_version[ack.version].append(ack)
        if ack.version != ack.expected_version + 1:
            found.append(f"{ack}: acknowledged at a version it was not sent for")
    for acks in by_version.values():
        if len({(a.request_id, a.seat, a.move_text) for a in acks}) > 1:
            found.append(f"version acknowledged differently: {acks}")
    return found


def log_of(turns: list[Any]) -> list[tuple[int, int, str]]:
    return [(t.version, t.seat, t.move_text) for t in turns]


def check_log(played: Played, logs: dict[str, list[tuple[int, int, str]]]) -> list[str]:
    """Every replica serves the same log; versions strictly increase from 1; the game
    ended where its driver saw it end."""
    game = played.game
    problems = []
    first_label, first = next(iter(logs.items()))
    for label, log in logs.items():
        if log != first:
            problems.append(f"{game.game_id}: {label} serves another log than {first_label}")
    versions = [v for v, _, _ in first]
    if versions != list(range(1, len(versions) + 1)):
        problems.append(f"{game.game_id}: versions in the log {versions[:10]}...")
    if game.final != len(first):
        problems.append(
            f"{game.game_id}: the game ended at {game.final}, the log holds {len(first)}"
        )
    return problems


def check_watched(played: Played, spectator_log: list[tuple[int, int, str]]) -> list[str]:
    """Every version once, in order, from where the watcher started (test_faults'
    check), and each turn streamed the log's, as a spectator sees it."""
    problems = [f"via {played.watched_via}: {p}" for p in check_watch(played.game)]
    watched = played.watched
    if not watched:
        return problems  # it started at the last version: check_watch saw to that
    start = watched[0][0]
    if watched != spectator_log[start - 1 :]:
        return [
            *problems,
            f"{played.game.game_id}: watched via {played.watched_via} "
            f"{watched[:8]}..., the log from {start}: {spectator_log[start - 1 : start + 7]}...",
        ]
    return problems


async def caught_up(client: GameClient, game: Game, label: str) -> list[str]:
    """The replica shows the game at its last version (it heard of every move) in time."""
    deadline = time.monotonic() + CATCH_UP_SECONDS
    while True:
        version = (await client.get(game.game_id)).game.version
        if version == game.final:
            return []
        if time.monotonic() > deadline:
            return [f"{game.game_id}: {label} still at version {version} of {game.final}"]
        await asyncio.sleep(0.1)
