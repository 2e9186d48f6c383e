"""WatchGame's with_moves: a seat's stream carries exactly ListMoves' moves whenever it
puts that seat to act, and a spectator's stream, another seat's, or one that did not ask
never carries moves (they may reveal a hand). Every game, over real gRPC in this process."""

from __future__ import annotations

import contextlib
import random
from typing import Any

import grpc
import pytest
from tabletop.common.v1 import game_pb2

from client.api import GameClient, bearer
from services import registry
from services.kit import watchers
from tests.support import service_in_process

GAMES = registry.names()
MOVES = 14
IN_PROGRESS = game_pb2.GAME_STATUS_IN_PROGRESS


def _watch(client: GameClient, channel: grpc.aio.Channel, game_id: str, token: str | None,
           with_moves: bool) -> Any:  # fmt: skip
    pb2 = client.pb2
    call = channel.unary_stream(
        f"/{client.service}/WatchGame",
        request_serializer=pb2.WatchGameRequest.SerializeToString,
        response_deserializer=pb2.WatchGameResponse.FromString,
    )
    request = pb2.WatchGameRequest(game_id=game_id, with_moves=with_moves)
    return call(request, metadata=bearer(token), timeout=60)


async def _play_and_check(game: str, seed: int) -> dict[str, int]:
    """Play a game's first moves with every kind of stream open; check each message.
    Returns how many messages carried moves (and which kinds of stream got them)."""
    info = registry.by_name(game).engine().GAME
    carried = {"asked": 0, "to_act": 0}
    async with service_in_process(game) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient(game, channel)
            created = await client.create(info.min_players, seed=seed)
            gid, tokens = created.game_id, created.tokens
            seats = range(len(tokens))
            # (seat whose token it holds, asked for moves, stream)
            kinds: list[tuple[int | None, bool]] = [(None, True), (None, False)]
            kinds += [(s, True) for s in seats] + [(s, False) for s in seats]
            streams = [
                (s, wm, _watch(client, channel, gid, None if s is None else tokens[s], wm))
                for s, wm in kinds
            ]
            rng = random.Random(seed)
            try:
                for step in range(MOVES + 1):
                    if step:
                        header = (await client.get(gid)).game
                        if header.status != IN_PROGRESS:
                            break
                        seat = header.to_act[0]
                        listed = await client.moves(gid, tokens[seat])
                        await client.submit(gid, tokens[seat], rng.choice(list(listed.moves)),
                                            header.version)  # fmt: skip
                    # The game stands still until the next move: ListMoves lists the same.
                    listed_by_seat = {s: list((await client.moves(gid, tokens[s])).moves)
                                      for s in seats}  # fmt: skip
                    for seat, asked, stream in streams:
                        message = await stream.read()
                        assert message.HasField("view")
                        moves = list(message.moves)
                        if seat is None or not asked:
                            assert moves == [], (seat, asked)
                            continue
                        if seat in message.game.to_act and message.game.status == IN_PROGRESS:
                            # Exactly the seat's own legal moves, as ListMoves lists them.
                            assert moves == listed_by_seat[seat]
                            carried["to_act"] += 1
                        else:
                            assert moves == [] and listed_by_seat[seat] == []
                        carried["asked"] += bool(moves)
            finally:
                for _, _, stream in streams:
                    stream.cancel()
    return carried


@pytest.mark.parametrize("game", GAMES)
async def test_a_seat_stream_carries_exactly_its_listed_moves_and_no_other_does(game):
    carried = await _play_and_check(game, seed=11)
    assert carried["to_act"] > 1 and carried["asked"] == carried["to_act"]


async def test_the_control_a_leak_to_a_spectator_is_caught(monkeypatch):
    """Control: with the seat check switched off (a spectator's stream given the moves of
    the seat to act), the test above fails."""

    def leaky(self, game, snap):
        if snap is None or not snap.to_act:
            return []
        return list(self.engine.legal_moves(game.state, snap.to_act[0]))

    monkeypatch.setattr(watchers.Watchers, "_moves_now", leaky)
    with pytest.raises(AssertionError):
        await _play_and_check("channeling", seed=11)


async def test_the_control_moves_of_a_stale_version_are_caught(monkeypatch):
    """Control: moves listed once and reused for later versions differ from ListMoves'."""
    kept: dict[int, list[Any]] = {}

    def stale(self, game, snap):
        if snap is None or snap.viewer is None or snap.viewer not in snap.to_act:
            return []
        if snap.viewer not in kept:
            kept[snap.viewer] = list(self.engine.legal_moves(game.state, snap.viewer))
        return kept[snap.viewer]

    monkeypatch.setattr(watchers.Watchers, "_moves_now", stale)
    with pytest.raises(AssertionError):
        await _play_and_check("glow", seed=11)


async def test_resuming_with_moves_carries_them_on_the_last_message_only():
    info = registry.by_name("channeling").engine().GAME
    async with service_in_process("channeling") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("channeling", channel)
            created = await client.create(info.min_players, seed=4)
            gid, tokens = created.game_id, created.tokens
            for _ in range(4):
                header = (await client.get(gid)).game
                seat = header.to_act[0]
                listed = await client.moves(gid, tokens[seat])
                await client.submit(gid, tokens[seat], listed.moves[0], header.version)
            header = (await client.get(gid)).game
            seat = header.to_act[0]
            listed = list((await client.moves(gid, tokens[seat])).moves)
            pb2 = client.pb2
            call = channel.unary_stream(
                f"/{registry.by_name('channeling').service_name}/WatchGame",
                request_serializer=pb2.WatchGameRequest.SerializeToString,
                response_deserializer=pb2.WatchGameResponse.FromString,
            )
            stream = call(pb2.WatchGameRequest(game_id=gid, from_version=1, with_moves=True),
                          metadata=bearer(tokens[seat]), timeout=60)  # fmt: skip
            with contextlib.closing(_Cancel(stream)):
                messages = [await stream.read() for _ in range(header.version - 1)]
            assert [m.turn.version for m in messages] == list(range(2, header.version + 1))
            assert [list(m.moves) for m in messages[:-1]] == [[]] * (len(messages) - 1)
            assert list(messages[-1].moves) == listed and listed


class _Cancel:
    def __init__(self, stream: Any) -> None:
        self.stream = stream

    def close(self) -> None:
        self.stream.cancel()
