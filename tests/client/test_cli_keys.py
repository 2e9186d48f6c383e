"""The command-line client where the services require application keys for CreateGame:
``create`` and ``bot`` send ``--key`` (or TABLETOP_KEY) with it, and a seat token given
for play is not taken for the key."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.kit.admin import new_key
from tests.client.test_cli_tables import Stack, cli, created, gateway_stack, ok, refused, rpc

KEY, ENTRY = new_key("cli-tests", 5)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory) -> Iterator[Stack]:
    with gateway_stack(
        tmp_path_factory.mktemp("cli-keys"), {"TABLETOP_CREATE_KEYS": ENTRY}
    ) as running:
        yield running


def test_create_sends_the_key_given_with_key(keyed):
    game_id, tokens = created(ok(cli(keyed, "create", "glow", "--players", "2", "--key", KEY)))
    assert sorted(tokens) == [0, 1]
    assert rpc(keyed, "glow", "GetGame", tokens[1], game_id=game_id).game.viewer == 1


def test_create_and_bot_take_the_key_from_tabletop_key(keyed):
    ok(cli(keyed, "create", "channeling", env={"TABLETOP_KEY": KEY}))
    out = ok(cli(keyed, "bot", "channeling", env={"TABLETOP_KEY": KEY}, timeout=120))
    game_id = created(out)[0]
    assert rpc(keyed, "channeling", "GetGame", game_id=game_id).game.HasField("outcome")


def test_without_a_key_create_is_refused_with_the_reason(keyed):
    # Control: the same command without the key is refused by the service, so the tests
    # above pass only because the key was sent.
    refused(cli(keyed, "create", "glow", "--players", "2"), "UNAUTHENTICATED", "MISSING_TOKEN")
    refused(cli(keyed, "create", "glow", "--key", "not-a-key"), "UNAUTHENTICATED", "BAD_TOKEN")


def test_a_seat_token_is_not_sent_as_the_key(keyed):
    # TABLETOP_TOKEN is a seat's token for play: create must not offer it as a key.
    _, tokens = created(ok(cli(keyed, "create", "glow", "--players", "2", "--key", KEY)))
    refused(cli(keyed, "create", "glow", token=tokens[0]), "UNAUTHENTICATED", "MISSING_TOKEN")
