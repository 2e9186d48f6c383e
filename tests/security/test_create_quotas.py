"""Who may create games: a quota of games in progress per client address, or per
application key; one address (or key) can no longer fill a service for everyone."""

from __future__ import annotations

import random

import grpc
import pytest
from prometheus_client import REGISTRY

from client.api import CreatedGame, GameClient
from services import registry
from services.kit import auth, config, creators
from services.kit.creators import Creators, KeyConfigError, load_keys, parse_keys
from services.kit.status import error_info
from tests.support import running, service_in_process

NAME = registry.names()[0]
PLAYERS = registry.by_name(NAME).engine().GAME.min_players


def hits(limit: str) -> float:
    return (
        REGISTRY.get_sample_value("tabletop_limits_hit_total", {"game": NAME, "limit": limit})
        or 0.0
    )


async def create(channel, address: str | None = None, key: str | None = None):
    client = GameClient(NAME, channel)
    metadata = []
    if address:
        metadata.append(("x-forwarded-for", address))
    if key:
        metadata.append(("authorization", f"Bearer {key}"))
    request = client.pb2.CreateGameRequest(players=PLAYERS)
    reply = await client._method("CreateGame")(request, metadata=metadata or None, timeout=30)
    tokens = [t.token for t in sorted(reply.seat_tokens, key=lambda t: t.seat)]
    return CreatedGame(reply.game.game_id, tokens, reply)


async def expect_refused(call, code: grpc.StatusCode, reason: str, limit: str | None = None):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() == code, caught.value
    info = error_info(caught.value)
    assert info.reason == reason
    if limit is not None:
        assert info.metadata["limit"] == limit


async def test_one_address_cannot_fill_the_service_for_everyone():
    """The attack: one address creating games it never plays. Before, it filled
    TABLETOP_MAX_GAMES for every client; now it stops at its own quota."""
    policy = Creators(games_per_client=3, trust_forwarded_for=True)
    async with service_in_process(NAME, max_games=10, creators=policy) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            for _ in range(3):
                await create(channel, "203.0.113.7")
            before = hits("games_per_client")
            for _ in range(5):
                await expect_refused(
                    create(channel, "203.0.113.7"),
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    "LIMIT_REACHED",
                    "games_per_client",
                )
            assert hits("games_per_client") == before + 5
            # Everyone else still creates games.
            for other in ("198.51.100.1", "198.51.100.2", "198.51.100.3"):
                assert (await create(channel, other)).game_id


async def test_a_finished_game_frees_its_place_and_the_count_survives_a_restart(tmp_path):
    url = f"sqlite:///{tmp_path}/quota.db"
    policy = Creators(games_per_client=2)  # the peer's address: 127.0.0.1
    async with service_in_process(NAME, url, creators=policy) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            first = await create(channel)
            await create(channel)
            await expect_refused(
                create(channel), grpc.StatusCode.RESOURCE_EXHAUSTED, "LIMIT_REACHED"
            )
    async with service_in_process(NAME, url, creators=policy) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            await expect_refused(
                create(channel),
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "LIMIT_REACHED",
                "games_per_client",
            )
            await GameClient(NAME, channel).play_random(first, random.Random(2))
            assert (await create(channel)).game_id
            await expect_refused(
                create(channel), grpc.StatusCode.RESOURCE_EXHAUSTED, "LIMIT_REACHED"
            )


async def test_with_keys_creating_a_game_needs_one_and_each_key_has_its_quota():
    small, large = auth.new_token(), auth.new_token()
    keys = parse_keys(
        f"small:{auth.token_hash(small)}:1, large:{auth.token_hash(large)}", default_games=3
    )
    async with service_in_process(NAME, creators=Creators(keys, games_per_client=1)) as svc:
        async with grpc.aio.insecure_channel(svc.address) as channel:
            await expect_refused(create(channel), grpc.StatusCode.UNAUTHENTICATED, "MISSING_TOKEN")
            await expect_refused(
                create(channel, key=auth.new_token()),
                grpc.StatusCode.UNAUTHENTICATED,
                "BAD_TOKEN",
            )
            game = await create(channel, key=small)
            before = hits("games_per_key")
            await expect_refused(
                create(channel, key=small),
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "LIMIT_REACHED",
                "games_per_key",
            )
            assert hits("games_per_key") == before + 1
            # The per-address quota does not apply with keys; each key has its own.
            for _ in range(3):
                await create(channel, key=large)
            await expect_refused(
                create(channel, key=large), grpc.StatusCode.RESOURCE_EXHAUSTED, "LIMIT_REACHED"
            )
            # The seats of a game made with a key are played with seat tokens, as ever.
            client = GameClient(NAME, channel)
            assert (await client.get(game.game_id, game.tokens[0])).game.viewer == 0


def test_key_entries_from_the_environment_and_a_file(tmp_path):
    a, b = auth.token_hash("a" * 43), auth.token_hash("b" * 43)
    file = tmp_path / "keys"
    file.write_text(f"# mounted\nweb:{b}:7\n\n")
    keys = load_keys(f"cli:{a.upper()}", str(file), default_games=5)
    assert {(k.name, k.games) for k in keys.values()} == {("cli", 5), ("web", 7)}
    assert set(keys) == {a, b}  # hashes only, lower case
    for bad, says in [
        ("cli", "NAME:SHA256"),
        (f"cli:{a[:-1]}", "64 hex digits"),
        (f"cli:{a}:many", "whole number"),
        (f"one:{a},two:{a}", "same hash"),
        (f"has space:{a}", "NAME:SHA256"),
    ]:
        with pytest.raises(KeyConfigError, match=says):
            parse_keys(bad, 1)
    with pytest.raises(KeyConfigError, match="cannot read"):
        load_keys("", str(tmp_path / "missing"), 1)
    # Keys asked for but none given (a Secret mounted empty, every entry commented out):
    # refused, never read as "no keys", which lets anyone create games.
    empty = tmp_path / "empty"
    for inline, file_text in [("", ""), ("", "# web:...\n"), ("# cli", None), (" , ", None)]:
        if file_text is not None:
            empty.write_text(file_text)
        with pytest.raises(KeyConfigError, match="no key entries"):
            load_keys(inline, str(empty) if file_text is not None else "", 1)
    assert load_keys("", "", 1) == {}  # control: keys not asked for, none required


def test_settings_build_the_policy_and_a_bad_entry_exits_with_one_line():
    settings = [
        *creators.settings(),
        config.Setting("trust_forwarded_for", "T", "false", "bool", ""),
    ]
    cfg = config.load(settings, {"TABLETOP_GAMES_PER_CLIENT": "4"})
    policy = creators.from_config(cfg)
    assert policy.keys == {} and policy.games_per_client == 4
    cfg = config.load(settings, {"TABLETOP_CREATE_KEYS": "x:nothex"})
    with pytest.raises(SystemExit) as caught:
        creators.from_config(cfg)
    assert str(caught.value).startswith("configuration error: TABLETOP_CREATE_KEYS")


async def test_a_service_process_reads_its_keys_from_a_mounted_file(tmp_path):
    key = auth.new_token()
    file = tmp_path / "keys"
    file.write_text(f"app:{auth.token_hash(key)}:1\n")
    env = {"TABLETOP_STORE_URL": "memory://", "TABLETOP_CREATE_KEYS_FILE": str(file)}
    with running(f"services.{NAME}", env, tmp_path / "service.log") as process:
        async with grpc.aio.insecure_channel(process.address) as channel:
            await expect_refused(create(channel), grpc.StatusCode.UNAUTHENTICATED, "MISSING_TOKEN")
            await create(channel, key=key)
            await expect_refused(
                create(channel, key=key),
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                "LIMIT_REACHED",
                "games_per_key",
            )
