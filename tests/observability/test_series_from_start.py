"""Every series whose labels are known beforehand exists from the start, at 0, so a
service's /metrics has no empty family once it has answered a call and rate() sees the
first refusal (a series that appears at 1 is invisible to it).

The label values come from the code: the rejection reasons from the engine errors, the
auth failure reasons from the errors answered UNAUTHENTICATED; the limits are written as
lists (GAME_LIMITS, CLIENT_LIMITS), so each refusal is triggered or each raise site read,
and its label value must be in the list."""

from __future__ import annotations

import ast
import contextlib
import gc
import urllib.request

import grpc
import pytest
from prometheus_client import CollectorRegistry, Counter
from prometheus_client.parser import text_string_to_metric_families

from client.api import GameClient
from services import registry
from services.kit import auth, creators, engine, errors, status
from services.kit.limits import CLIENT_LIMITS, ClientLimits, Limits, auth_refusal
from services.kit.metrics import GAME_LIMITS, auth_reasons, rejection_reasons
from services.kit.overload import ConcurrencyLimit
from tests.support import ROOT, running

NAME = registry.SERVICES[0].name


def scrape(port: int) -> dict[str, dict[tuple[str, ...], float]]:
    """Each family on /metrics: its series, by label values (sorted by label name)."""
    body = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5).read().decode()
    return families(body)


def families(text: str) -> dict[str, dict[tuple[str, ...], float]]:
    found: dict[str, dict[tuple[str, ...], float]] = {}
    for family in text_string_to_metric_families(text):
        series = found.setdefault(family.name, {})
        for sample in family.samples:
            series[tuple(v for _, v in sorted(sample.labels.items()))] = sample.value
    return found


def empty(found: dict[str, dict[tuple[str, ...], float]]) -> list[str]:
    return sorted(name for name, series in found.items() if not series)


def test_control_a_family_without_a_series_is_seen_empty():
    text = (
        "# HELP tabletop_limited_total refused\n# TYPE tabletop_limited_total counter\n"
        "# HELP tabletop_watchers open\n# TYPE tabletop_watchers gauge\n"
        'tabletop_watchers{game="glow"} 0.0\n'
    )
    assert empty(families(text)) == ["tabletop_limited"]


async def refused(call) -> grpc.StatusCode:
    with pytest.raises(grpc.aio.AioRpcError) as error:
        await call
    return error.value.code()


async def test_a_service_that_answered_one_call_has_every_series_at_0_and_refusals_use_them(
    tmp_path,
):
    registry.by_name(NAME).engine()  # its engine errors, as the service process has them
    expected = {
        "tabletop_moves_rejected": {(NAME, reason) for reason in rejection_reasons()},
        "tabletop_auth_failures": {(NAME, reason) for reason in auth_reasons()},
        "tabletop_limits_hit": {(NAME, limit) for limit in GAME_LIMITS},
        "tabletop_limited": {(limit,) for limit in CLIENT_LIMITS},
        "tabletop_corrupt_games": {(NAME,)},
    }
    env = {"TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/game.db", "TABLETOP_ALLOW_SEED": "true"}
    with running(f"services.{NAME}", env, tmp_path / "service.log") as process:
        async with grpc.aio.insecure_channel(process.address) as channel:
            client = GameClient(NAME, channel)
            game = await client.create(seed=7)
            before = scrape(process.metrics_port)
            # A move by a seat whose decision it is not, a forged token, no token.
            state = await client.get(game.game_id)
            (acting,) = list(state.game.to_act)
            waiting = next(s for s in range(len(game.tokens)) if s != acting)
            move = (await client.moves(game.game_id, game.tokens[acting])).moves[0]
            code = await refused(client.submit(game.game_id, game.tokens[waiting], move))
            assert code == grpc.StatusCode.PERMISSION_DENIED
            forged = await refused(client.moves(game.game_id, "forged"))
            missing = await refused(client.submit(game.game_id, "", move))
            assert forged == missing == grpc.StatusCode.UNAUTHENTICATED
            after = scrape(process.metrics_port)
    assert not empty(before), empty(before)
    for family, series in expected.items():
        assert set(before[family]) == series, (family, sorted(before[family]))
        assert not any(before[family].values()), (family, before[family])
        # The refusals counted themselves in series that were there, not new ones.
        assert set(after[family]) == series, (family, sorted(after[family]))
    assert after["tabletop_moves_rejected"][(NAME, "NOT_YOUR_DECISION")] == 1
    assert after["tabletop_auth_failures"][(NAME, "BAD_TOKEN")] == 1
    assert after["tabletop_auth_failures"][(NAME, "MISSING_TOKEN")] == 1


def test_the_rejection_reasons_follow_the_engine_errors_an_engine_declares():
    class OutOfTurn(engine.IllegalMove):
        reason = "OUT_OF_TURN_FOR_THIS_TEST"

    assert "OUT_OF_TURN_FOR_THIS_TEST" in rejection_reasons()
    assert {"MALFORMED_MOVE", "ILLEGAL_MOVE", "NOT_YOUR_DECISION"} <= set(rejection_reasons())
    # Control: a platform error is not an engine's refusal.
    assert errors.StaleVersion.reason not in rejection_reasons()
    del OutOfTurn
    gc.collect()
    assert "OUT_OF_TURN_FOR_THIS_TEST" not in rejection_reasons()


def test_the_auth_reasons_are_those_of_the_errors_answered_unauthenticated():
    assert set(auth_reasons()) == {"MISSING_TOKEN", "BAD_TOKEN"}
    for cls in (auth.MissingToken, auth.BadToken):
        assert status.classify(cls("x"))[1] in auth_reasons()
    # Control: an error answered otherwise is not an auth failure.
    assert status.classify(errors.BadRequest("x"))[1] not in auth_reasons()


class Refused(Exception):
    pass


class Context:
    """The little of a servicer context the per-client limits read."""

    def __init__(self, metadata: tuple = ()) -> None:
        self.status = grpc.StatusCode.OK
        self.metadata = metadata

    def peer(self) -> str:
        return "ipv4:10.0.0.7:5000"

    def invocation_metadata(self) -> tuple:
        return self.metadata

    def code(self) -> grpc.StatusCode:
        return self.status

    async def abort(self, code, details, trailing_metadata=()) -> None:
        raise Refused(code)


def labels_of(counter: Counter) -> set[str]:
    return {
        s.labels["limit"]
        for family in counter.collect()
        for s in family.samples
        if s.name.endswith("_total")
    }


async def refuse_every_client_limit(limits: Limits, concurrent: int) -> set[str]:
    """Trigger each per-client limit as far as ``limits`` set them; the names counted."""
    counter = Counter("tabletop_limited", "refused", ["limit"], registry=CollectorRegistry())
    game_call = b"\x0a\x02ab"  # a game call naming game "ab"

    async def twice(guard, request, streaming: bool, metadata: tuple = ()) -> None:
        for _ in range(2):
            with contextlib.suppress(Refused):
                await guard.admit(request, Context(metadata), streaming)

    rate = Limits(rate_per_client=limits.rate_per_client, burst_per_client=limits.burst_per_client)
    await twice(ClientLimits(rate, counter), b"", False)
    streams = Limits(streams_per_client=limits.streams_per_client)
    await twice(ClientLimits(streams, counter), b"", True)
    size = Limits(max_message_bytes=limits.max_message_bytes)
    await twice(ClientLimits(size, counter), b"x" * 9, False)
    headers = (("x-a", "1"), ("x-b", "2"))  # 2 entries, 8 bytes
    entries = Limits(max_metadata_entries=limits.max_metadata_entries, max_metadata_bytes=0)
    await twice(ClientLimits(entries, counter), b"", False, headers)
    size = Limits(max_metadata_bytes=limits.max_metadata_bytes, max_metadata_entries=0)
    await twice(ClientLimits(size, counter), b"", False, headers)
    failing = ClientLimits(
        Limits(auth_failures_per_client=limits.auth_failures_per_client), counter
    )
    context = Context()
    ticket = await failing.admit(game_call, context, False)
    context.status = grpc.StatusCode.UNAUTHENTICATED
    failing.release(ticket, context)
    await failing.admit(game_call, Context(), False)
    auth_refusal()  # the lockout answers this call's failure, and counts it
    await twice(ConcurrencyLimit(concurrent, counter), b"", False)
    return labels_of(counter)


async def test_every_per_client_limit_refused_names_a_listed_limit():
    limits = Limits(
        rate_per_client=1,
        burst_per_client=1,
        streams_per_client=1,
        auth_failures_per_client=1,
        max_message_bytes=8,
        max_metadata_bytes=7,
        max_metadata_entries=1,
    )
    assert await refuse_every_client_limit(limits, concurrent=1) == set(CLIENT_LIMITS)


async def test_control_with_no_limit_set_nothing_is_refused():
    limits = Limits(max_message_bytes=0, max_metadata_bytes=0, max_metadata_entries=0)
    assert await refuse_every_client_limit(limits, concurrent=0) == set()


# Errors answered RESOURCE_EXHAUSTED: their ``limit`` names the game limit hit.
EXHAUSTED = {
    cls.__name__
    for cls in status.KNOWN
    if status.classify(cls.__new__(cls))[0] is grpc.StatusCode.RESOURCE_EXHAUSTED
}


def limits_raised(source: str) -> tuple[set[str], list[str]]:
    """The ``limit=`` strings of every RESOURCE_EXHAUSTED error made in ``source``, and
    the lines of those made without one (their label would be the reason)."""
    named: set[str] = set()
    unnamed: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        if name not in EXHAUSTED:
            continue
        given = [k.value for k in node.keywords if k.arg == "limit"]
        if not given:
            unnamed.append(f"line {node.lineno}")
        for value in given:
            named |= {
                c.value
                for c in ast.walk(value)
                if isinstance(c, ast.Constant) and isinstance(c.value, str)
            }
    return named, unnamed


# Where a per-client limit is raised as an error rather than refused by ClientLimits
# itself: Play answers a move over the rate or size with a refusal (session.py), which
# ClientLimits counted in tabletop_limited, not the game's tabletop_limits_hit.
CLIENT_LIMITS_RAISED = {"services/kit/limits.py", "services/kit/session.py"}


def test_every_game_limit_raised_is_listed():
    named: set[str] = set()
    for path in sorted((ROOT / "services").rglob("*.py")):
        found, unnamed = limits_raised(path.read_text())
        assert not unnamed, (path, unnamed)
        if str(path.relative_to(ROOT)) in CLIENT_LIMITS_RAISED:
            client = found - set(GAME_LIMITS)
            assert client <= set(CLIENT_LIMITS), (path, client - set(CLIENT_LIMITS))
            found -= client
        named |= found
    assert named - set(GAME_LIMITS) == set(), named - set(GAME_LIMITS)
    assert {"max_games", "waiting_per_client", "watch_stall", "watch_queue_limit"} <= named
    # The create quotas are named by whoever creates: every kind of creator's is listed.
    by_address = creators.Creators(games_per_client=1).owner((), "ipv4:10.0.0.7:5000")
    key = creators.AppKey("k", auth.token_hash("secret"), 1)
    by_key = creators.Creators({key.digest: key}).owner(
        (("authorization", "Bearer secret"),), "ipv4:10.0.0.7:5000"
    )
    assert {by_address.quota, by_key.quota} <= set(GAME_LIMITS)


def test_control_a_new_game_limit_and_one_without_a_name_are_found():
    source = (
        "raise LimitReached('full', limit='tables_per_room')\n"
        "raise errors.WatcherTooSlow('slow')\n"
        "raise BadRequest('no limit here')\n"
    )
    named, unnamed = limits_raised(source)
    assert named == {"tables_per_room"} and unnamed == ["line 2"]
    assert "tables_per_room" not in GAME_LIMITS
