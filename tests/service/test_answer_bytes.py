"""A move's answers made of bytes serialized once (services/kit/encoding.py): for every
game, seat and spectator, SubmitMove's answer, ListMoves' and each watch update read as
exactly the message built whole (equal messages: a map's entries, as in a Struct, may be
written in another order by two copies of one message); each seat's header at a
version is built once however many answers carry it; and a header is never reused for a
snapshot that differs in anything it shows (the viewing seat above all)."""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import random
from typing import Any

import pytest
from google.protobuf import struct_pb2

from services import registry
from services.kit import encoding, games, wire
from services.kit.games import GameManager
from services.kit.store import open_store

GAMES = registry.names()
MOVES = 10


@pytest.fixture(params=GAMES)
def game(request):
    entry = registry.by_name(request.param)
    return entry, entry.engine(), entry.pb2(), importlib.import_module(f"{entry.package}.codec")


class CountingHeaders:
    """wire.header, counting the headers built."""

    def __init__(self) -> None:
        self.built = 0
        self._header = wire.header

    def __call__(self, snap: Any) -> Any:
        self.built += 1
        return self._header(snap)


def _encoder(codec: Any, key: Any = encoding.header_key) -> encoding.Encoder:
    return encoding.Encoder(
        lambda s: codec.view_to_proto(s.view),
        key,
        getattr(codec, "view_bytes", None),
        getattr(codec, "move_bytes", lambda m: codec.move_to_proto(m).SerializeToString()),
    )


def _fresh_turn(manager: GameManager, record: Any, seat: int | None) -> Any:
    """The turn as ``seat`` sees it, built afresh (nothing shared with another seat)."""
    kept = manager._turns
    manager._turns = type(kept)()
    try:
        return manager.turn_for(record, seat)
    finally:
        manager._turns = kept


async def _play(engine: Any, manager: GameManager, gid: str, tokens: dict[int, str], seed: int):
    """Random moves; yields after each with the seat that moved and its turn."""
    rng = random.Random(seed)
    for _ in range(MOVES):
        async with manager.locked(gid) as now:
            if engine.outcome(now.state) is not None:
                return
            seat = engine.to_act(now.state)[0]
            move = rng.choice(engine.legal_moves(now.state, seat))
        snap, turn = await manager.submit(gid, tokens[seat], lambda m=move: m, None, None)
        yield seat, snap, turn


async def test_answers_equal_the_messages_built_whole(game, monkeypatch):
    entry, engine, pb2, codec = game
    counting = CountingHeaders()
    monkeypatch.setattr(wire, "header", counting)
    manager = GameManager(engine, open_store("memory://"))
    players = engine.GAME.min_players
    live, tokens = await manager.create(players, engine.Options(), seed=11)
    gid = live.record.game_id
    encoder = _encoder(codec)
    updates = wire.WatchUpdates(
        pb2.WatchGameResponse, entry.name, lambda s: codec.view_to_proto(s.view),
        codec.move_to_proto, encoder,
    )  # fmt: skip
    watchers = [*range(players), None]
    async with contextlib.AsyncExitStack() as stack:
        streams = []
        for seat in watchers:
            stream = await manager.watch(gid, tokens[seat] if seat is not None else None, None)
            stack.push_async_callback(stream.aclose)
            streams.append(stream)
            await anext(stream)
        played = 0
        async for mover, snap, turn in _play(engine, manager, gid, tokens, seed=5):
            played += 1
            before = counting.built
            # SubmitMove's answer, as the mover gets it.
            sent = encoder.answer(encoder.header(snap), encoder.turn(turn), snap)
            async with manager.locked(gid) as now:
                record = now.recent[-1]
                # The mover's snapshot is the one its watcher was queued: as if built now.
                assert snap == manager.snapshot(now, mover)
            whole = pb2.SubmitMoveResponse(
                game=counting._header(snap),
                turn=wire.turn(_fresh_turn(manager, record, mover)),
                view=codec.view_to_proto(snap.view),
            )
            assert pb2.SubmitMoveResponse.FromString(sent) == whole
            assert pb2.SubmitMoveResponse.FromString(sent).game.viewer == mover
            # Every seat's and the spectators' update.
            for seat, stream in zip(watchers, streams, strict=True):
                item = await anext(stream)
                if seat == mover:  # one snapshot and one turn for the answer and the seat's
                    assert item.snapshot is snap  # watchers
                    assert item.turn is turn
                # As the service writes it: the header, turn and view shared.
                data = updates.encode(item, gid)
                reference = pb2.WatchGameResponse(
                    game=counting._header(item.snapshot),
                    turn=wire.turn(_fresh_turn(manager, record, seat)),
                    view=codec.view_to_proto(item.snapshot.view),
                )
                got = pb2.WatchGameResponse.FromString(data)
                assert got == reference
                # With the seat's legal moves (a stream that asked with_moves).
                if seat is not None:
                    _, moves, _ = await manager.legal_moves(gid, tokens[seat])
                    reference.moves.extend(codec.move_to_proto(m) for m in moves)
                    full = encoder.with_moves(data, moves)
                    assert pb2.WatchGameResponse.FromString(full) == reference
                if hasattr(engine, "reseat_view"):  # one view built a version, others reseated
                    async with manager.locked(gid) as now:
                        assert item.snapshot.view == engine.view(now.state, seat)
                assert got.game.HasField("viewer") == (seat is not None)
                if seat is not None:
                    assert got.game.viewer == seat
            # ListMoves of each seat: the header of that seat at this version.
            for seat in range(players):
                listed_snap, moves, _ = await manager.legal_moves(gid, tokens[seat])
                answer = encoding.listed(
                    encoder.header(listed_snap),
                    [codec.move_to_proto(m).SerializeToString() for m in moves],
                    [str(m) for m in moves],
                )
                whole_list = pb2.ListMovesResponse(
                    game=counting._header(listed_snap),
                    moves=[codec.move_to_proto(m) for m in moves],
                    labels=[str(m) for m in moves],
                )
                assert pb2.ListMovesResponse.FromString(answer) == whole_list
            # One header per seat and one for the spectators at this version, not one per
            # answer (the mover's answer, every update, every ListMoves: 2 * seats + 2).
            if snap.outcome is not None:
                continue  # a finished game's header is built each time
            for _ in range(3):  # called again: still none built
                for seat in range(players):
                    async with manager.locked(gid) as now:
                        encoder.header(manager.snapshot(now, seat, with_view=False))
            assert counting.built - before == players + 1
        assert played > 2


async def test_a_header_is_reused_only_for_a_snapshot_that_shows_the_same(game):
    """Each thing the header shows, changed alone at the same version, gets a header
    built afresh: equal to wire.header's for the changed snapshot."""
    _, engine, _, codec = game
    manager = GameManager(engine, open_store("memory://"))
    live, _ = await manager.create(engine.GAME.min_players, engine.Options(), seed=3)
    async with manager.locked(live.record.game_id) as now:
        snap = manager.snapshot(now, 0)
    encoder = _encoder(codec)
    encoder.header(snap)
    seat = snap.seats[0]
    changes = {
        "viewer": 1,
        "to_act": (1,),
        "waiting": not snap.waiting,
        "seats": (dataclasses.replace(seat, player_name=seat.player_name + "x"), *snap.seats[1:]),
        "updated_at": snap.updated_at + 1,
        "rematch_offers": (0,),
        "rematch_game_id": "next",
        "version": snap.version + 1,
        "options": dict(snap.options),  # an equal copy: a new object is not trusted
    }
    for name, value in changes.items():
        changed = dataclasses.replace(snap, **{name: value})
        assert encoder.header(changed) == wire.header(changed).SerializeToString(), name
        assert encoder.header(snap) == wire.header(snap).SerializeToString(), name


async def test_the_control_a_key_without_the_viewer_would_send_a_seat_another_header(game):
    """Control: were the key to leave out the viewing seat, seat 1 would be answered with
    the header built for seat 0 (its viewer, and whatever else a seat's header holds):
    the checks above compare with the header built whole, so they would catch it."""
    _, engine, _, codec = game
    manager = GameManager(engine, open_store("memory://"))
    live, _ = await manager.create(engine.GAME.min_players, engine.Options(), seed=3)
    async with manager.locked(live.record.game_id) as now:
        first, second = manager.snapshot(now, 0), manager.snapshot(now, 1)

    def blind(snap: Any) -> Any:
        return encoding.header_key(dataclasses.replace(snap, viewer=None))

    encoder = _encoder(codec, blind)
    encoder.header(first)
    assert encoder.header(second) != wire.header(second).SerializeToString()
    assert _encoder(codec).header(second) == wire.header(second).SerializeToString()


def test_the_answers_fields_are_numbered_as_the_encoder_writes_them():
    """SubmitMoveResponse and WatchGameResponse: game 1, turn 2, view 3; ListMovesResponse:
    game 1, moves 2, labels 3 (in every game's protos)."""
    for name in GAMES:
        pb2 = registry.by_name(name).pb2()
        for message in (pb2.SubmitMoveResponse, pb2.WatchGameResponse):
            numbers = {f.name: f.number for f in message.DESCRIPTOR.fields}
            assert numbers["game"] == encoding.GAME
            assert numbers["turn"] == encoding.TURN
            assert numbers["view"] == encoding.VIEW
        watch = {f.name: f.number for f in pb2.WatchGameResponse.DESCRIPTOR.fields}
        assert watch["moves"] == encoding.MOVES
        listed = {f.name: f.number for f in pb2.ListMovesResponse.DESCRIPTOR.fields}
        assert listed == {
            "game": encoding.GAME,
            "moves": encoding.LISTED_MOVES,
            "labels": encoding.LISTED_LABELS,
        }
        assert {f.name for f in pb2.SubmitMoveResponse.DESCRIPTOR.fields} == {
            "game",
            "turn",
            "view",
        }


async def test_a_header_carries_its_own_options_struct(game):
    """The options' Struct is built once per options object: each header still carries
    exactly its snapshot's options (compared with a Struct built from the dict)."""
    _, engine, _, _ = game
    manager = GameManager(engine, open_store("memory://"))
    live, _ = await manager.create(engine.GAME.min_players, engine.Options(), seed=3)
    async with manager.locked(live.record.game_id) as now:
        snap = manager.snapshot(now, 0)
    variants = [snap.options, {"a": 1}, {"a": 2, "b": [1, "x"]}, {"a": 1}, snap.options]
    for options in variants:
        expected = struct_pb2.Struct()
        expected.update(options)
        for _ in range(2):  # built, then reused
            assert wire.header(dataclasses.replace(snap, options=options)).options == expected


async def test_seats_shown_the_same_turn_share_it_and_no_seat_gets_anothers(monkeypatch):
    """A turn is one object (and one serialization) for the seats shown the same move
    text and events, and its own for a seat shown other events or text: Res Arcana's
    secret moves and private events (a seat's own draw) are the case. Control: a key
    without what is shown gives a seat the turn built for the seat before it."""

    async def turns(key: Any) -> tuple[int, int, int]:
        monkeypatch.setattr(games, "turn_key", key)
        entry = registry.by_name("resarcana")
        engine = entry.engine()
        manager = GameManager(engine, open_store("memory://"))
        players = engine.GAME.min_players
        live, tokens = await manager.create(players, engine.Options(), seed=11)
        gid = live.record.game_id
        shared = private = wrong = 0
        for seed in range(4):
            async for _, _, _ in _play(engine, manager, gid, tokens, seed=seed):
                async with manager.locked(gid) as now:
                    record = now.recent[-1]
                seen = [manager.turn_for(record, seat) for seat in (*range(players), None)]
                fresh = [_fresh_turn(manager, record, s) for s in (*range(players), None)]
                wrong += sum(a != b for a, b in zip(seen, fresh, strict=True))
                same = [(t.move_text, t.events) for t in fresh]
                for i in range(len(seen)):
                    for j in range(i):
                        if same[i] == same[j]:
                            shared += seen[i] is seen[j]
                        else:
                            private += 1
        return shared, private, wrong

    real = games.turn_key
    shared, private, wrong = await turns(real)
    assert shared > 0 and private > 0 and wrong == 0
    _, _, wrong = await turns(lambda move, shown, visible: (id(move),))
    assert wrong > 0
