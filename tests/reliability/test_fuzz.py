"""Fuzzing every RPC of every game service, directly and through the gateway.

Written against the service list: each game in it gets every test here. For each call:
well-typed requests with random values in every field (built from the descriptors, so a
new game's protos are covered as they are), moves of every kind from this game's other
states and other games, bytes that are not quite a request, unknown game ids, forged,
near-miss and replayed seat tokens, and garbage authorization headers. Every answer is OK
or a client-error status with a google.rpc.ErrorInfo whose reason the contract lists
(never UNKNOWN or INTERNAL) and no seat token in it; the service (and the gateway)
stay SERVING; a refused SubmitMove changes neither the game's version nor any seat's
view, and no other call moves the game at all.

``make test`` runs a fixed set of examples (derandomized, 15 per test), ``make soak`` a
larger one (100, TABLETOP_FUZZ_EXAMPLES); ``make fuzz FUZZ_SECONDS=600`` runs fresh ones
for that long (TABLETOP_FUZZ_SECONDS). The calls made are counted per
service and printed at the end of the run.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from services import registry
from tests.reliability import protofuzz
from tests.reliability.harness import (
    FUZZ_SECONDS,
    MAX_REQUEST,
    RPCS,
    Stack,
    Target,
    fixed_settings,
    long_settings,
    run_fuzz,
    share_of_fuzz_time,
)

GAMES = registry.names()
VIAS = ("direct", "gateway")
TARGETS = [(name, via) for name in GAMES for via in VIAS]
TESTS_PER_TARGET = 2 * len(RPCS) + 2  # well-typed and raw per RPC, moves, moves as bytes
SHARE = share_of_fuzz_time(len(TARGETS) * TESTS_PER_TARGET)
SETTINGS = long_settings() if FUZZ_SECONDS > 0 else fixed_settings()


@pytest.fixture(scope="module")
def stack() -> Iterator[Stack]:
    with Stack(GAMES) as running:
        yield running


@pytest.fixture(scope="module", params=TARGETS, ids=[f"{n}-{v}" for n, v in TARGETS])
def target(request, stack: Stack) -> Iterator[Target]:
    name, via = request.param
    aimed = Target(stack, name, via)
    aimed.setup()
    yield aimed
    aimed.close()


@pytest.fixture
def counted(target: Target, record_property) -> Iterator[Target]:
    """The target, with the calls this test made recorded for the run's summary."""
    before = dict(target.calls)
    answers = target.answers.copy()
    yield target
    record_property(
        "reliability_calls",
        {
            "what": "fuzz",
            "service": target.name,
            "via": target.via,
            "fuzzed": target.calls["fuzzed"] - before.get("fuzzed", 0),
            "total": sum(target.calls.values()) - sum(before.values()),
            "answers": dict(target.answers - answers),
        },
    )


# --- values that name the target's games, chosen when the call is made -------------------
#
# Strategies may not look at the live games (hypothesis replays its draws and needs them
# to be the same each time), so they draw numbers, and these turn a number into a value
# from the games as they are at the moment of the call.

SPECIAL = (
    "game_id",
    "move",
    "expected_version",
    "from_version",
    "request_id",
    "page_size",
    "players",
)


def game_id_for(target: Target, n: int) -> str:
    """Mostly the live game, sometimes the other two, now and then a near miss."""
    ids = [g.game_id for g in (target.live_a(), target.b, target.c)]
    if n % 4 != 3:  # (hypothesis likes 0 and the top of a range: both land here)
        return (ids[:1] * 4 + ids)[n % 7]
    near = [i[:-1] for i in ids] + [i + "x" for i in ids] + [i.upper() for i in ids]
    near += ["", " ", "\x00", "../" * 20, "x" * 129, *(g.game_id for g in target.foreign)]
    return near[n // 4 % len(near)]


def move_for(target: Target, n: int):
    """A move legal now (for some seat), or one legal in another game or state."""
    game = target.live_a()
    choices = game.legal * 2 + target.pool
    return choices[n % len(choices)] if choices else target.pb2.Move()


def special_value(target: Target, name: str, n: int):
    if name == "game_id":
        return game_id_for(target, n)
    if name == "move":
        return move_for(target, n)
    if name in ("expected_version", "from_version"):
        return target.live_a().version - 3 + n % 7
    if name == "request_id":
        return target.request_ids[n % len(target.request_ids)]
    if name == "page_size":
        return n % 1003 - 1
    return n % (target.info.max_players + 3) - 1  # players


def apply_plan(target: Target, request, plan: dict[str, int]) -> None:
    """Replace some of the request's random values by realistic ones."""
    fields = request.DESCRIPTOR.fields_by_name
    for name, n in plan.items():
        if name not in fields:
            continue
        value = special_value(target, name, n)
        if name == "move":
            request.move.CopyFrom(value)
        else:
            setattr(request, name, value)


# Each field the games share gets a realistic value about two times in three.
PLANS = st.fixed_dictionaries(
    {name: st.one_of(st.integers(0, 2**16), st.none(), st.integers(0, 2**16)) for name in SPECIAL}
).map(lambda plan: {k: v for k, v in plan.items() if v is not None})
METADATA = protofuzz.metadata()


def metadata_for(target: Target, md: protofuzz.Metadata) -> protofuzz.Metadata:
    return protofuzz.resolve(md, target.live_a().tokens, target.replayed())


def requests(target: Target, rpc: str) -> st.SearchStrategy:
    message = getattr(target.pb2, f"{rpc}Request")
    return protofuzz.messages(message.DESCRIPTOR)


# --- one example --------------------------------------------------------------------------


def send(target: Target, rpc: str, data: bytes, md: tuple, game_id: str = "") -> None:
    """Send one hostile call and check the answer, the game it named, and the service."""
    assume(len(data) < MAX_REQUEST)
    game = target.known(game_id) or target.live_a()
    if not game.state:
        target.refresh(game)
    outcome = target.raw(rpc, data, md)
    target.check_answer(outcome)
    target.check_game(game, outcome)
    if rpc == "SubmitMove" and outcome.ok:
        used = target.pb2.SubmitMoveRequest.FromString(data).request_id
        if used and used not in target.request_ids:
            target.request_ids.append(used)  # later examples reuse it, with other moves
    target.assert_up()


# --- the tests ----------------------------------------------------------------------------


@pytest.mark.parametrize("rpc", RPCS)
def test_well_typed_requests_with_random_values(counted: Target, rpc: str) -> None:
    target = counted

    @SETTINGS
    @given(request=requests(target, rpc), plan=PLANS, md=METADATA)
    def example(request, plan, md) -> None:
        apply_plan(target, request, plan)
        game_id = getattr(request, "game_id", "")
        send(target, rpc, request.SerializeToString(), metadata_for(target, md), game_id)

    run_fuzz(example, SHARE)
    target.assert_playable()


@pytest.mark.parametrize("rpc", RPCS)
def test_bytes_that_are_not_quite_a_request(counted: Target, rpc: str) -> None:
    target = counted
    message = getattr(target.pb2, f"{rpc}Request")

    @SETTINGS
    @given(data=protofuzz.raw_bytes(requests(target, rpc)), plan=PLANS, md=METADATA)
    def example(data: bytes, plan, md) -> None:
        if plan:  # aim the near miss at a live game: a real id, then the damage
            aimed = message()
            apply_plan(target, aimed, plan)
            data = aimed.SerializeToString() + data
        try:
            game_id = getattr(message.FromString(data), "game_id", "")
        except Exception:
            game_id = ""
        send(target, rpc, data, metadata_for(target, md), game_id)

    run_fuzz(example, SHARE)
    target.assert_playable()


def test_moves_of_every_kind_from_every_seat_and_token(counted: Target) -> None:
    """SubmitMove aimed at the live game: moves legal now, legal in other states, legal
    ones with one value changed a little, random ones of any kind; any seat's token or
    another game's, any expected version and request id."""
    target = counted
    index = st.integers(0, 2**16)

    donors = protofuzz.strings_in(target.pool)
    near = st.tuples(index, st.lists(index, min_size=3, max_size=3))

    @SETTINGS
    @given(
        chosen=st.one_of(index, near, protofuzz.messages(target.pb2.Move.DESCRIPTOR), index),
        offset=st.one_of(st.none(), st.integers(-2, 2)),
        rid=st.one_of(st.just(""), index, st.text(max_size=8)),
        seat=index,
    )
    def example(chosen, offset, rid, seat: int) -> None:
        game = target.live_a()
        if isinstance(chosen, int):
            move = move_for(target, chosen)
        elif isinstance(chosen, tuple):  # a legal move with one value changed a little
            move = protofuzz.near_miss(move_for(target, chosen[0]), chosen[1], donors)
        else:
            move = chosen
        if isinstance(rid, int):
            rid = target.request_ids[rid % len(target.request_ids)]
        request = target.pb2.SubmitMoveRequest(game_id=game.game_id, move=move, request_id=rid)
        if offset is not None:
            request.expected_version = game.version + offset
        tokens = game.tokens * 3 + target.b.tokens  # now and then another game's
        md = (("authorization", f"Bearer {tokens[seat % len(tokens)]}"),)
        send(target, "SubmitMove", request.SerializeToString(), md, game.game_id)

    run_fuzz(example, SHARE)
    target.assert_playable()


def test_moves_of_other_types_and_garbage_in_the_move_field(counted: Target) -> None:
    """The move field carrying another game's Move, another message, or random bytes."""
    target = counted
    number = target.pb2.SubmitMoveRequest.DESCRIPTOR.fields_by_name["move"].number
    others = [e.pb2() for e in registry.SERVICES if e.name != target.name]
    foreign = [protofuzz.messages(pb2.Move.DESCRIPTOR) for pb2 in others] + [
        protofuzz.messages(target.pb2.View.DESCRIPTOR),
        protofuzz.messages(target.pb2.SubmitMoveResponse.DESCRIPTOR),
    ]
    payloads = st.one_of(
        st.one_of(foreign).map(lambda m: m.SerializeToString()),
        protofuzz.raw_bytes(protofuzz.messages(target.pb2.Move.DESCRIPTOR)),
    )

    @SETTINGS
    @given(payload=payloads)
    def example(payload: bytes) -> None:
        game = target.live_a()
        seat = game.state[2][0] if game.state[2] else 0
        head = target.pb2.SubmitMoveRequest(game_id=game.game_id).SerializeToString()
        data = head + protofuzz.length_delimited(number, payload)
        md = (("authorization", f"Bearer {game.tokens[seat]}"),)
        send(target, "SubmitMove", data, md, game.game_id)

    run_fuzz(example, SHARE)
    target.assert_playable()
