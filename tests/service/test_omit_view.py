"""SubmitMove's omit_view: the answer carries no view when it is set, the view by default,
and the move is applied either way (every game, over real gRPC in this process)."""

from __future__ import annotations

import grpc
import pytest

from client.api import GameClient
from services import registry
from tests.support import service_in_process

GAMES = registry.names()


@pytest.fixture(params=GAMES)
async def game(request):
    async with service_in_process(request.param) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient(request.param, channel)
            info = registry.by_name(request.param).engine().GAME
            yield client, await client.create(info.min_players, seed=5)


async def _next_move(client: GameClient, game_id: str, tokens: list[str]):
    header = (await client.get(game_id)).game
    seat = header.to_act[0]
    listed = await client.moves(game_id, tokens[seat])
    return seat, listed.moves[0], header.version


async def _submit(client, game_id, token, move, version, **fields):
    return await client.submit(game_id, token, move, version, **fields)


async def test_omit_view_answers_without_the_view_and_applies_the_move(game):
    client, created = game
    seat, move, version = await _next_move(client, created.game_id, created.tokens)
    reply = await _submit(client, created.game_id, created.tokens[seat], move, version,
                          omit_view=True)  # fmt: skip
    assert not reply.HasField("view")
    assert reply.game.version == version + 1
    assert reply.turn.version == version + 1 and reply.turn.seat == seat
    after = await client.get(created.game_id, created.tokens[seat])
    assert after.game.version == version + 1  # applied, and logged once
    assert [t.version for t in await client.history(created.game_id)] == [version + 1]


async def test_the_view_stays_the_default(game):
    client, created = game
    seat, move, version = await _next_move(client, created.game_id, created.tokens)
    reply = await _submit(client, created.game_id, created.tokens[seat], move, version)
    assert reply.HasField("view")
    assert reply.game.version == version + 1
    # The view answered is the seat's view of the game after the move.
    now = await client.get(created.game_id, created.tokens[seat])
    assert reply.view == now.view


async def test_a_retry_with_omit_view_gets_the_first_turn_without_a_view(game):
    client, created = game
    seat, move, version = await _next_move(client, created.game_id, created.tokens)
    token = created.tokens[seat]
    first = await _submit(client, created.game_id, token, move, version, request_id="r1")
    again = await _submit(client, created.game_id, token, move, version, request_id="r1",
                          omit_view=True)  # fmt: skip
    assert first.HasField("view") and not again.HasField("view")
    assert again.turn == first.turn
    assert (await client.get(created.game_id)).game.version == version + 1  # applied once
