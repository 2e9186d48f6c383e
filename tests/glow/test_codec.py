"""Glow's codec, its command-line renderer, and what reaches each seat over gRPC.

Random games: every legal move round-trips through its proto (and the renderer writes
it as the engine does), every view converts, and a view's bytes do not change when
only what that seat may not know changes. Malformed protos are refused. Over a real
in-process service: every seat's and the spectator's views, watch streams and
histories carry nothing hidden from them (face-down spells of others, the deck, the
seed), and the renderer draws the views.
"""

from __future__ import annotations

import asyncio
import itertools
import random

import grpc
import pytest
from google.protobuf import text_format
from tabletop.glow.v1 import glow_pb2 as pb

from client.api import GameClient
from client.render import colour
from client.render import glow as render
from services.glow import codec, engine
from services.kit.engine import BadOptions, MalformedMove
from services.kit.testing import random_game, random_game_count
from tests.codec_checks import assert_round_trips, header_for, wire_bytes
from tests.leaks import assert_seed_free, watchers_at_the_start
from tests.support import service_in_process

from .helpers import _twin

CONFIGS = [(board, players) for board in ("province", "archipelago") for players in (2, 3, 4)]


@pytest.mark.parametrize(("board", "players"), CONFIGS)
def test_random_games_round_trip_every_move_and_convert_every_view(board, players) -> None:
    kinds: set[str] = set()
    journey = {"go", "camp"} if board == "province" else {"sail"}
    wanted = {"adventurer", "take", "reroll", "pick", "ready", "resolve", "end"} | journey
    # The configured number of games, then a few more until every common kind was listed.
    games = random_game_count(2)
    for seed in itertools.count():
        if seed >= games and (wanted <= kinds or seed >= games + 8):
            break
        state = engine.new_game(seed, players, engine.Options(board=board))
        rng = random.Random(seed)
        step = 0
        while engine.outcome(state) is None:
            for seat in engine.to_act(state):
                for move in engine.legal_moves(state, seat):
                    message = assert_round_trips(codec, pb.Move, render.move, move)
                    kinds.add(message.WhichOneof("kind"))
            if step % 5 == 0:
                for viewer in [*range(players), None]:
                    seen = codec.view_to_proto(engine.view(state, viewer))
                    assert seen.IsInitialized() and seen.ByteSize() > 0
                    twin = codec.view_to_proto(engine.view(_twin(state, viewer), viewer))
                    assert wire_bytes(twin) == wire_bytes(seen), "the proto view shows hidden facts"
            seat = rng.choice(engine.to_act(state))
            engine.apply(state, seat, rng.choice(engine.legal_moves(state, seat)))
            step += 1
        final = codec.view_to_proto(engine.view(state, None))
        assert final.step == pb.STEP_OVER and len(final.players) == players
    assert wanted <= kinds


def _until_a_spell_is_cast(players: int):
    for seed in range(100):
        state = engine.new_game(seed, players, engine.Options())
        rng = random.Random(seed)
        while engine.outcome(state) is None:
            seat = rng.choice(engine.to_act(state))
            engine.apply(state, seat, rng.choice(engine.legal_moves(state, seat)))
            if any(p.hidden_spells for p in state.players):
                return state
    raise AssertionError("no spell was cast in 100 games")


def test_a_view_shows_the_own_face_down_spell_only_to_its_owner() -> None:
    state = _until_a_spell_is_cast(3)
    owner = next(i for i, p in enumerate(state.players) if p.hidden_spells)
    for viewer in [0, 1, 2, None]:
        player = codec.view_to_proto(engine.view(state, viewer)).players[owner]
        assert player.face_down_spell_count == len(state.players[owner].hidden_spells)
        shown = [s.id for s in player.own_face_down_spells]
        assert shown == (state.players[owner].hidden_spells if viewer == owner else [])


def test_options() -> None:
    assert codec.options_from_proto(pb.Options()) == engine.Options(board="province")
    assert codec.options_from_proto(pb.Options(board=pb.BOARD_PROVINCE)).board == "province"
    assert codec.options_from_proto(pb.Options(board=pb.BOARD_ARCHIPELAGO)).board == "archipelago"
    with pytest.raises(BadOptions):
        codec.options_from_proto(pb.Options(board=7))


def _malformed() -> list[pb.Move]:
    m = pb.Move
    lumipili, token = pb.REROLL_SOURCE_LUMIPILI, pb.REROLL_SOURCE_TOKEN
    return [
        m(),
        m(adventurer=pb.ChooseAdventurer(adventurer="nobody")),
        m(adventurer=pb.ChooseAdventurer()),
        m(take=pb.Take(space=-1)),
        m(take=pb.Take(space=5)),
        m(black=pb.MoveBlackDie()),
        m(black=pb.MoveBlackDie(stay=False)),
        m(black=pb.MoveBlackDie(space=9)),
        m(die=pb.ChooseSketalDie()),
        m(die=pb.ChooseSketalDie(colour=99)),
        m(bury=pb.Bury(space=7)),
        m(reroll=pb.UseReroll()),
        m(reroll=pb.UseReroll(source=token, companion=18)),
        m(reroll=pb.UseReroll(source=lumipili)),
        m(reroll=pb.UseReroll(source=lumipili, companion=47)),
        m(reroll=pb.UseReroll(source=12)),
        m(pay=pb.PayReroll()),
        m(pay=pb.PayReroll(source=pb.REROLL_SOURCE_SCORE_TRACK, companion=1)),
        m(pick=pb.PickDie(die=-1)),
        m(pick=pb.PickDie(die=30)),
        m(face=pb.ChooseFace()),
        m(face=pb.ChooseFace(symbol=42)),
        m(resolve=pb.Resolve()),
        m(resolve=pb.Resolve(adventurer=False)),
        m(resolve=pb.Resolve(companion=0)),
        m(resolve=pb.Resolve(companion=47)),
        m(resolve=pb.Resolve(spell=0)),
        m(resolve=pb.Resolve(spell=8)),
        m(raise_companion=pb.Raise()),
        m(raise_companion=pb.Raise(nobody=False)),
        m(raise_companion=pb.Raise(companion=99)),
        m(lose=pb.Lose()),
        m(lose=pb.Lose(companion=-3)),
        m(cancel=pb.CancelSpell()),
        m(cancel=pb.CancelSpell(face_down=False)),
        m(cancel=pb.CancelSpell(revealed=9)),
        m(go=pb.Go(spot=12)),
        m(go=pb.Go(spot=61, payment=pb.PAYMENT_DIE)),
        m(go=pb.Go(spot=-1, payment=pb.PAYMENT_FREE)),
        m(go=pb.Go(spot=3, payment=9)),
        m(sail=pb.Sail(from_island=12, to_island=0)),
        m(sail=pb.Sail(from_island=0, to_island=-1)),
    ]


@pytest.mark.parametrize(
    "message",
    _malformed(),
    ids=lambda m: text_format.MessageToString(m, as_one_line=True) or "empty",
)
def test_malformed_moves_are_refused(message) -> None:
    with pytest.raises(MalformedMove):
        codec.move_from_proto(message)


def test_edge_values_that_are_well_formed() -> None:
    cases = {
        "black stay": pb.Move(black=pb.MoveBlackDie(stay=True)),
        "black 0": pb.Move(black=pb.MoveBlackDie(space=0)),
        "raise none": pb.Move(raise_companion=pb.Raise(nobody=True)),
        "cancel hidden": pb.Move(cancel=pb.CancelSpell(face_down=True)),
        "resolve adventurer": pb.Move(resolve=pb.Resolve(adventurer=True)),
        "resolve spell 7": pb.Move(resolve=pb.Resolve(spell=7)),
        "reroll lumipili 18": pb.Move(
            reroll=pb.UseReroll(source=pb.REROLL_SOURCE_LUMIPILI, companion=18)
        ),
        "pay track": pb.Move(pay=pb.PayReroll(source=pb.REROLL_SOURCE_SCORE_TRACK)),
        "go 0": pb.Move(go=pb.Go(spot=0, payment=pb.PAYMENT_FREE)),
        "go 60 foot": pb.Move(go=pb.Go(spot=60, payment=pb.PAYMENT_FOOTPRINT)),
        "sail 11 10": pb.Move(sail=pb.Sail(from_island=11, to_island=10)),
        "die black": pb.Move(die=pb.ChooseSketalDie(colour=pb.COLOUR_BLACK)),
        "face curse": pb.Move(face=pb.ChooseFace(symbol=pb.SYMBOL_CURSE)),
        "pick 29": pb.Move(pick=pb.PickDie(die=29)),
        "adventurer moloch": pb.Move(adventurer=pb.ChooseAdventurer(adventurer="moloch")),
    }
    for text, message in cases.items():
        move = codec.move_from_proto(message)
        assert str(move) == text
        assert codec.move_to_proto(move) == message
        assert render.move(message) == text


# ---- over a real service: nothing hidden reaches a seat ---------------------------------

SEED = 7_349_108_252_113  # long enough that its digits cannot appear by chance


def _secret_game(players: int, board: str):
    """A seeded random game in which Xar'gok casts face-down spells."""
    for seed in range(SEED, SEED + 200):
        played = random_game(engine, seed, players, engine.Options(board=board))
        state = engine.new_game(seed, players, engine.Options(board=board))
        secrets = 0
        for seat, move in played.moves:
            secrets += sum(e.kind == "spell_secret" for e in engine.apply(state, seat, move))
        if secrets:
            return seed, played.moves
    raise AssertionError("no game with a face-down spell")


@pytest.mark.parametrize("board", ["province", "archipelago"])
async def test_views_streams_and_history_carry_nothing_hidden_from_each_seat(board) -> None:
    players = 3
    seed, moves = _secret_game(players, board)
    options = engine.Options(board=board)
    # The states and events as the engine has them, version by version.
    state = engine.new_game(seed, players, options)
    expected_views = [
        {s: codec.view_to_proto(engine.view(state, s)) for s in [*range(players), None]}
    ]
    events: list[list] = [[]]
    twin_checked = 0
    for version, (seat, move) in enumerate(moves, start=1):
        events.append(engine.apply(state, seat, move))
        expected_views.append(
            {s: codec.view_to_proto(engine.view(state, s)) for s in [*range(players), None]}
        )
        if any(p.hidden_spells for p in state.players) and version % 3 == 0:
            for s in [*range(players), None]:
                twin = codec.view_to_proto(engine.view(_twin(state, s), s))
                assert wire_bytes(twin) == wire_bytes(expected_views[-1][s])
                twin_checked += 1
    assert twin_checked

    async with service_in_process("glow") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("glow", channel)
            game = await client.create(
                players,
                seed=seed,
                options=pb.Options(board=pb.Board.Value(f"BOARD_{board.upper()}")),
            )
            assert_seed_free(seed, game.response)
            viewers = [*range(players), None]
            watchers = await watchers_at_the_start(
                client, game.game_id, [None if s is None else game.tokens[s] for s in viewers]
            )
            for version, (seat, move) in enumerate(moves, start=1):
                reply = await client.submit(
                    game.game_id, game.tokens[seat], codec.move_to_proto(move), version - 1
                )
                assert reply.game.version == version
                assert_seed_free(seed, reply)
                assert wire_bytes(reply.view) == wire_bytes(expected_views[version][seat])
            streams = await asyncio.wait_for(asyncio.gather(*watchers), 60)

            secret_turns = 0
            for viewer, stream in zip(viewers, streams, strict=True):
                token = None if viewer is None else game.tokens[viewer]
                got = await client.get(game.game_id, token)
                assert_seed_free(seed, got)
                assert wire_bytes(got.view) == wire_bytes(expected_views[-1][viewer])
                assert stream[0].view.ByteSize() and not stream[0].HasField("turn")
                turns = [u.turn for u in stream if u.HasField("turn")]
                history = await client.history(game.game_id, token)
                assert [t.version for t in turns] == [t.version for t in history]
                assert len(history) == len(moves)
                for update in stream:
                    assert_seed_free(seed, update)
                    if update.HasField("view"):
                        version = update.game.version
                        assert wire_bytes(update.view) == wire_bytes(
                            expected_views[version][viewer]
                        )
                for source in (turns, history):
                    for turn in source:
                        assert_seed_free(seed, turn)
                        seat, move = moves[turn.version - 1]
                        assert turn.move_text == str(move)  # no Glow move is secret
                        visible = [e for e in events[turn.version] if e.visible_to(viewer)]
                        assert [(e.kind, e.text) for e in turn.events] == [
                            (e.kind, e.text) for e in visible
                        ]
                        for event in turn.events:
                            if event.kind == "spell_secret":
                                assert event.seat == viewer, "a face-down spell told to another"
                                secret_turns += 1
            assert secret_turns, "the game cast no face-down spell"


# ---- the renderer --------------------------------------------------------------------


@pytest.mark.parametrize(("board", "players"), [("province", 4), ("archipelago", 3)])
def test_the_renderer_draws_every_step(board, players, monkeypatch) -> None:
    state = engine.new_game(5, players, engine.Options(board=board))
    rng = random.Random(5)
    drawn = set()
    for enabled in (False, True):
        monkeypatch.setattr(colour, "ENABLED", enabled)
        text = render.board(
            codec.view_to_proto(engine.view(state, 0)), header_for(engine, "glow", state, 0)
        )
        assert "Meeting track" in text
    monkeypatch.setattr(colour, "ENABLED", False)
    while True:
        for viewer in (0, None):
            view = codec.view_to_proto(engine.view(state, viewer))
            text = render.board(view, header_for(engine, "glow", state, viewer))
            lines = text.splitlines()
            assert "Meeting track" in text and "Player 1" in text
            assert max(len(line) for line in lines) <= 100, "wider than 100 columns"
            title = "The Province of Shadows" if board == "province" else "Archipelago"
            assert title in text
            drawn.add(view.step)
        if engine.outcome(state) is not None:
            break
        seat = rng.choice(engine.to_act(state))
        engine.apply(state, seat, rng.choice(engine.legal_moves(state, seat)))
    assert len(drawn) == 6  # every step of the day, and the end
