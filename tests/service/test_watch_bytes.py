"""Each version's watch update is built and serialized once per seat (and once for every
spectator), and the bytes every stream gets are exactly the message each stream used to
build for itself (every game, the manager and the service's encoder without gRPC)."""

from __future__ import annotations

import contextlib
import importlib
import random
from typing import Any

import pytest

from services import registry
from services.kit import wire
from services.kit.games import GameManager
from services.kit.store import open_store
from services.kit.watchers import WatchItem

GAMES = registry.names()
MOVES = 12
COPIES = 2  # streams per seat without moves, and spectators


def _per_stream(pb2: Any, codec: Any, item: Any, game_id: str, game_type: str, moves: bool):
    """The message as the service built it for each stream before updates were shared
    (its own code, kept here as the reference), with the moves appended when asked."""
    response = pb2.WatchGameResponse()
    if item.turn is not None:
        response.turn.CopyFrom(wire.turn(item.turn))
    if item.snapshot is not None:
        response.game.CopyFrom(wire.header(item.snapshot))
        response.view.CopyFrom(codec.view_to_proto(item.snapshot.view))
    elif item.turn is not None:
        response.game.game_id = game_id
        response.game.game_type = game_type
        response.game.version = item.turn.version
    if moves and item.moves:
        response.moves.extend(codec.move_to_proto(m) for m in item.moves)
    return response


class Counting(wire.WatchUpdates):
    built = 0

    def message(self, item: Any, game_id: str, with_moves: bool = False, game: Any = None) -> Any:
        self.built += 1
        return super().message(item, game_id, with_moves, game)


@pytest.fixture(params=GAMES)
def game(request):
    entry = registry.by_name(request.param)
    return entry, entry.engine(), entry.pb2(), importlib.import_module(f"{entry.package}.codec")


async def test_each_seat_update_is_built_once_and_equals_the_per_stream_message(game):
    entry, engine, pb2, codec = game
    manager = GameManager(engine, open_store("memory://"))
    players = engine.GAME.min_players
    live, tokens = await manager.create(players, engine.Options(), seed=7)
    gid = live.record.game_id
    updates = Counting(
        pb2.WatchGameResponse,
        entry.name,
        lambda s: codec.view_to_proto(s.view),
        codec.move_to_proto,
    )

    # Per seat: COPIES streams without moves and one with; COPIES spectators.
    streams: list[tuple[int | None, bool, Any]] = []
    async with contextlib.AsyncExitStack() as stack:
        for seat in [*range(players), None]:
            token = tokens[seat] if seat is not None else None
            for with_moves in [False] * COPIES + ([True] if seat is not None else []):
                stream = await manager.watch(gid, token, None, with_moves)
                stack.push_async_callback(stream.aclose)
                streams.append((seat, with_moves, stream))
        rng = random.Random(3)
        built_before = 0
        versions = 0
        for step in range(MOVES + 1):
            if step:
                async with manager.locked(gid) as now:
                    if engine.outcome(now.state) is not None:
                        break
                    seat = engine.to_act(now.state)[0]
                    move = rng.choice(engine.legal_moves(now.state, seat))
                await manager.submit(gid, tokens[seat], lambda m=move: m, None, None)
            items = [(seat, wm, await anext(stream)) for seat, wm, stream in streams]
            versions += 1
            for _seat, wm, item in items:
                sent = updates.encode(item, gid, wm)
                reference = _per_stream(pb2, codec, item, gid, entry.name, wm)
                assert sent == reference.SerializeToString()
                assert pb2.WatchGameResponse.FromString(sent) == reference
            if step:
                # Every stream of a seat (and every spectator) holds the very same update.
                by_seat: dict[int | None, Any] = {}
                for seat, _wm, item in items:
                    assert by_seat.setdefault(seat, item) is item
                # So it is built once per seat and once for the spectators, not per stream.
                assert updates.built - built_before == players + 1
            built_before = updates.built
        assert versions > 2


async def test_the_control_streams_that_build_their_own_update_build_it_per_stream(game):
    """Control: with the items not shared (each stream its own copy, as before), the
    count above is per stream, so the test above would catch the sharing being lost."""
    entry, engine, pb2, codec = game
    manager = GameManager(engine, open_store("memory://"))
    live, tokens = await manager.create(engine.GAME.min_players, engine.Options(), seed=7)
    gid = live.record.game_id
    updates = Counting(
        pb2.WatchGameResponse,
        entry.name,
        lambda s: codec.view_to_proto(s.view),
        codec.move_to_proto,
    )
    streams = [await manager.watch(gid, tokens[0], None) for _ in range(3)]
    try:
        seat = engine.to_act(live.state)[0]
        move = engine.legal_moves(live.state, seat)[0]
        for s in streams:
            await anext(s)
        await manager.submit(gid, tokens[seat], lambda: move, None, None)
        items = [await anext(s) for s in streams]
        copies = [WatchItem(i.turn, i.snapshot, i.moves) for i in items]
        for item in copies:
            updates.encode(item, gid)
        assert updates.built == 3
        for item in items:
            updates.encode(item, gid)
        assert updates.built == 4
    finally:
        for s in streams:
            await s.aclose()


def test_moves_appended_to_the_bytes_equal_the_message_serialized_whole():
    """The encoder appends the moves' bytes to the shared message: true only while moves
    is the message's last field (a field added after it would break this)."""
    for name in GAMES:
        fields = registry.by_name(name).pb2().WatchGameResponse.DESCRIPTOR.fields
        assert max(f.number for f in fields) == fields_by_name(fields)["moves"].number


def fields_by_name(fields: Any) -> dict[str, Any]:
    return {f.name: f for f in fields}
