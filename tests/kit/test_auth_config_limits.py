"""Seat tokens, configuration and the gateway's limits."""

from __future__ import annotations

import hmac
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import fields as dataclass_fields_of
from typing import Any, ClassVar

import pytest

from services import registry
from services.kit import auth, config
from services.kit.engine import BadOptions, Options, Rng
from services.kit.limits import FailureWindow, RateLimiter, StreamCounter, client_of, game_of


def test_tokens_are_256_random_bits_and_only_their_hash_is_kept():
    tokens = {auth.new_token() for _ in range(100)}
    assert len(tokens) == 100
    assert all(len(t) == 43 for t in tokens)  # 32 bytes in url-safe base64
    token = tokens.pop()
    digest = auth.token_hash(token)
    assert len(digest) == 64 and token not in digest


def test_a_token_names_its_seat_of_its_game_only():
    mine = [auth.new_token() for _ in range(3)]
    hashes = [auth.token_hash(t) for t in mine]
    assert [auth.seat_of(t, hashes) for t in mine] == [0, 1, 2]
    assert auth.seat_of(None, hashes) is None
    with pytest.raises(auth.BadToken):
        auth.seat_of(auth.new_token(), hashes)


def test_tokens_are_compared_in_constant_time_against_every_seat(monkeypatch):
    calls = []
    real = hmac.compare_digest

    def spy(a, b):
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(auth.hmac, "compare_digest", spy)
    mine = [auth.new_token() for _ in range(4)]
    hashes = [auth.token_hash(t) for t in mine]
    assert auth.seat_of(mine[0], hashes) == 0
    assert len(calls) == 4  # no early exit after the first seat matched


@pytest.mark.parametrize(
    ("header", "expected"),
    [("Bearer abc", "abc"), ("bearer  abc ", "abc"), (b"Bearer xyz", "xyz")],
)
def test_bearer_header(header, expected):
    assert auth.bearer([("authorization", header)]) == expected
    assert auth.bearer([("other", "x")]) is None


@pytest.mark.parametrize("header", ["Basic abc", "Bearer", "abc", "Bearer " + "x" * 300])
def test_bad_authorization_headers(header):
    with pytest.raises(auth.BadToken):
        auth.bearer([("authorization", header)])


def test_config_reads_parses_and_names_the_bad_variable():
    settings = [
        config.Setting("port", "T_PORT", "50", "port", "a port"),
        config.Setting("on", "T_ON", "false", "bool", "a flag"),
        config.Setting("rate", "T_RATE", "1.5", "float", "a rate"),
    ]
    loaded = config.load(settings, {"T_ON": "yes"})
    assert (loaded.port, loaded.on, loaded.rate) == (50, True, 1.5)
    with pytest.raises(config.ConfigError, match="T_PORT"):
        config.load(settings, {"T_PORT": "99999"})
    with pytest.raises(config.ConfigError, match="T_ON"):
        config.load(settings, {"T_ON": "maybe"})
    text = config.help_text("prog", "does things", settings)
    assert "T_PORT" in text and "(default: 50)" in text


@dataclass(frozen=True)
class Sample(Options):
    size: int = 8
    names: tuple[str, ...] = ("a", "b")
    limit: int | None = None


def test_options_round_trip_through_json_and_refuse_unknown_keys():
    opts = Sample(size=6, names=("x",), limit=3)
    assert Sample.from_dict(opts.to_dict()) == opts
    assert opts.to_dict() == {"size": 6, "names": ["x"], "limit": 3}
    with pytest.raises(BadOptions):
        Sample.from_dict({"size": 1, "colour": "red"})


@dataclass(frozen=True)
class Revised(Options):
    """Options after a rule fix: new games play ``rule="fixed"``, older stored ones not."""

    STORED_BEFORE: ClassVar[Mapping[str, Any]] = {"rule": "old"}
    size: int = 8
    rule: str = "fixed"


def test_stored_options_missing_a_later_option_replay_under_the_old_rule():
    assert Revised().rule == "fixed"
    assert Revised.from_dict(Revised().to_dict()).rule == "fixed"
    # A row stored before the option existed keeps the rule it was played under.
    assert Revised.from_dict({"size": 6}) == Revised(size=6, rule="old")
    # Control: without the migration the same row would take the new rule.
    unmigrated = dataclass(frozen=True)(type("Unmigrated", (Revised,), {"STORED_BEFORE": {}}))
    assert unmigrated.from_dict({"size": 6}).rule == "fixed"
    assert [f.name for f in dataclass_fields_of(Revised)] == ["size", "rule"]


def test_rng_compares_by_state_and_hides_it():
    a, b = Rng(5), Rng(5)
    assert a == b
    a.random()
    assert a != b
    assert "5" not in repr(b) and repr(b) == "Rng(<hidden>)"
    import copy
    import pickle

    assert copy.deepcopy(a) == a and pickle.loads(pickle.dumps(a)) == a


def test_rate_limiter_allows_a_burst_then_the_rate():
    now = [0.0]
    limiter = RateLimiter(rate=2, burst=3, clock=lambda: now[0])
    assert [limiter.acquire("c") for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limiter.acquire("c") == pytest.approx(0.5)
    assert limiter.acquire("other") == 0.0  # per client
    now[0] += 0.5
    assert limiter.acquire("c") == 0.0
    assert RateLimiter(rate=0, burst=1).acquire("c") == 0.0


def test_stream_counter_and_client_identity():
    counter = StreamCounter(2)
    assert counter.try_open("a") and counter.try_open("a")
    assert not counter.try_open("a")
    counter.close("a")
    assert counter.try_open("a")
    assert client_of("ipv4:10.1.2.3:5555") == "ipv4:10.1.2.3"
    assert client_of("ipv6:[::1]:40000") == "ipv6:[::1]"
    assert client_of(None) == "unknown"


def test_failure_window_blocks_after_the_limit_until_the_window_passes():
    now = [0.0]
    window = FailureWindow(limit=2, window=10, clock=lambda: now[0])
    assert window.blocked_for("c") == 0.0
    window.record("c")
    now[0] = 1
    window.record("c")
    assert window.blocked_for("c") == pytest.approx(9.0)
    assert window.blocked_for("d") == 0.0
    now[0] = 10.5
    assert window.blocked_for("c") == 0.0  # the first failure left the window
    assert FailureWindow(limit=0, window=10).blocked_for("c") == 0.0


@pytest.mark.parametrize("name", registry.names())
def test_the_game_id_is_read_from_every_game_request_without_decoding_it(name):
    pb2 = registry.by_name(name).pb2()
    for method in ("GetGame", "ListMoves", "SubmitMove", "WatchGame", "GetHistory"):
        request = getattr(pb2, f"{method}Request")(game_id="Ab_9-x" * 3)
        assert game_of(request.SerializeToString()) == "Ab_9-x" * 3, method
    assert game_of(pb2.CreateGameRequest(players=2).SerializeToString()) is None
    assert game_of(pb2.GetGameRequest().SerializeToString()) is None
    assert game_of(b"\x0a\x7f") is None  # a length beyond the bytes
    assert game_of("not bytes") is None
