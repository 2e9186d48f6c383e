"""The Channeling's codec and options over the wire: the Overchanneling reading chosen at
creation reaches the engine and the header, every legal move round-trips through its
proto, and a game stored before the option existed replays under step 6."""

from __future__ import annotations

import random
import sqlite3

import grpc
import pytest
from tabletop.channeling.v1 import channeling_pb2 as pb
from tabletop.common.v1 import game_pb2

from client.api import GameClient
from client.render import channeling as render
from services.channeling import codec, engine
from services.channeling.engine.state import BEYOND_SPLENDOR, BEYOND_VIGOR
from services.kit.engine import BadOptions, EngineError, MalformedMove, replay
from services.kit.games import GameManager
from services.kit.store import open_store
from services.kit.testing import random_game
from tests.codec_checks import assert_round_trips
from tests.support import service_in_process


def test_overchanneling_option_maps_step_6_by_default_and_the_glossary_on_request():
    assert codec.options_from_proto(pb.Options()).overchanneling == BEYOND_SPLENDOR
    step_6 = pb.Options(overchanneling=pb.OVERCHANNELING_BEYOND_SPLENDOR)
    assert codec.options_from_proto(step_6).overchanneling == BEYOND_SPLENDOR
    glossary = pb.Options(overchanneling=pb.OVERCHANNELING_BEYOND_VIGOR)
    assert codec.options_from_proto(glossary) == engine.Options(overchanneling=BEYOND_VIGOR)
    with pytest.raises(BadOptions):
        codec.options_from_proto(pb.Options(overchanneling=7))


def test_every_legal_move_round_trips_through_its_proto():
    cases = set()
    for seed in range(3):
        state = engine.new_game(seed, 2, engine.Options())
        rng = random.Random(seed)
        while engine.outcome(state) is None:
            seat = engine.to_act(state)[0]
            moves = engine.legal_moves(state, seat)
            for move in moves:
                message = assert_round_trips(codec, pb.Move, render.move, move)
                cases.add(message.WhichOneof("kind"))
            engine.apply(state, seat, rng.choice(moves))
    assert cases == {"play_glyph", "move_druid", "choose_path", "fill_gap"}


@pytest.mark.parametrize(
    "message",
    [
        pb.Move(),
        pb.Move(play_glyph=pb.PlayGlyph(glyph="lava")),
        pb.Move(move_druid=pb.MoveDruid(origin="b2", target="e1")),
        pb.Move(choose_path=pb.ChoosePath(cells=[])),
        pb.Move(choose_path=pb.ChoosePath(cells=["a1"] * 8)),
        pb.Move(fill_gap=pb.FillGap(cell="a0")),
    ],
)
def test_a_malformed_proto_move_is_refused(message):
    with pytest.raises(MalformedMove):
        codec.move_from_proto(message)


def _header(options: dict[str, str] | None) -> game_pb2.GameHeader:
    header = game_pb2.GameHeader(game_type="channeling")
    if options is not None:
        header.options.update(options)
    return header


def test_the_board_says_which_overchanneling_reading_the_table_plays():
    view = codec.view_to_proto(engine.view(engine.new_game(1, 2, engine.Options()), None))
    assert "(step 6)" in render.board(view, _header({"overchanneling": "splendor"}))
    assert "(glossary)" in render.board(view, _header({"overchanneling": "vigor"}))
    assert "(step 6)" in render.board(view, _header(None))  # stored before the option


@pytest.mark.parametrize(
    ("chosen", "expected"),
    [
        (pb.OVERCHANNELING_UNSPECIFIED, BEYOND_SPLENDOR),
        (pb.OVERCHANNELING_BEYOND_VIGOR, BEYOND_VIGOR),
    ],
)
async def test_create_game_takes_the_overchanneling_reading_into_the_game(chosen, expected):
    async with service_in_process("channeling") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("channeling", channel)
            game = await client.create(2, options=pb.Options(overchanneling=chosen))
            assert game.response.game.options["overchanneling"] == expected
            async with running.manager.locked(game.game_id) as live:
                assert live.state.options.overchanneling == expected


def _a_game_the_readings_decide_differently() -> tuple[int, list]:
    """A seeded random game whose moves, replayed under the glossary, do not give the
    same game: the control that the stored-game test below can tell the readings apart."""
    for seed in range(20):
        played = random_game(engine, seed, 2, engine.Options())
        try:
            other = replay(
                engine, seed, 2, engine.Options(overchanneling=BEYOND_VIGOR), played.moves
            )
        except EngineError:
            return seed, played.moves
        if other.overchanneling != played.state.overchanneling:
            return seed, played.moves
    raise AssertionError("no game in 20 where the Overchanneling readings differ")


async def test_a_game_stored_without_the_overchanneling_key_replays_under_step_6(tmp_path):
    seed, moves = _a_game_the_readings_decide_differently()
    url = f"sqlite:///{tmp_path}/games.db"
    first = GameManager(engine, open_store(url), allow_seed=True)
    game, tokens = await first.create(2, engine.Options(), seed=seed)
    gid = game.record.game_id
    for seat, move in moves:
        await first.submit(gid, tokens[seat], lambda m=move: m, None, None)
    async with first.locked(gid) as live:
        expected = live.state
    await first.store.close()

    # The row as it was written before the option existed: the options had no field.
    with sqlite3.connect(tmp_path / "games.db") as db:
        db.execute("UPDATE games SET options = '{}' WHERE game_id = ?", (gid,))

    second = GameManager(engine, open_store(url))
    try:
        async with second.locked(gid) as live:
            assert live.state.options.overchanneling == BEYOND_SPLENDOR
            assert live.state == expected
    finally:
        await second.store.close()


def _finished_game(seed: int) -> tuple[engine.State, engine.State]:
    """A seeded random game played to its end: the state before its last move, and after."""
    played = random_game(engine, seed, 2, engine.Options())
    before = replay(engine, seed, 2, engine.Options(), played.moves[:-1])
    return before, played.state


@pytest.mark.parametrize("seed", [1, 2])
def test_a_finished_game_shows_no_step_to_play(seed):
    before, after = _finished_game(seed)
    finished = game_pb2.GameHeader(status=game_pb2.GAME_STATUS_FINISHED)
    in_progress = game_pb2.GameHeader(status=game_pb2.GAME_STATUS_IN_PROGRESS)
    view = codec.view_to_proto(engine.view(after, None))
    assert view.step == pb.STEP_GAME_OVER
    text = render.board(view, finished)
    assert "the game is over" in text
    assert not [step for step in render.STEPS.values() if f"to {step}" in text], text
    # The control: one move before the end, the view has a step to play and the board
    # names whose it is.
    view = codec.view_to_proto(engine.view(before, None))
    assert view.step != pb.STEP_GAME_OVER
    step = render.STEPS[view.step]
    assert f"{render.SEATS[view.current]} to {step}" in render.board(view, in_progress)


def test_a_game_the_service_ended_mid_turn_shows_no_step_to_play():
    """A resignation ends a game the rules would go on with: its view keeps the step it
    was in, and the header says the game is finished; the board says it is over."""
    state = engine.new_game(3, 2, engine.Options())
    view = codec.view_to_proto(engine.view(state, None))
    assert view.step == pb.STEP_PLAY_GLYPH
    finished = game_pb2.GameHeader(status=game_pb2.GAME_STATUS_FINISHED)
    text = render.board(view, finished)
    assert "the game is over" in text and "to play a glyph" not in text
