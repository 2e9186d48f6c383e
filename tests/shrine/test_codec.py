"""Shrine's codec (engine <-> protobuf), what the protos show each seat, and the
command-line renderer.

Every legal move of seeded random games round-trips through its proto; every view
converts; malformed protos are refused with MalformedMove. The leak tests read the proto
views of every seat and of a spectator, and a real in-process service's WatchGame
streams and GetHistory as each seat, and check them against the engine's leak rules:
no opponent's Code card or Shape hand, no drawn cards but the drawer's, no Code card
returned to the box, no Shape deck order, no seed.
"""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest
from google.protobuf import text_format
from tabletop.common.v1 import game_pb2
from tabletop.shrine.v1 import shrine_pb2 as pb

from client.api import FINISHED, GameClient
from client.render import shrine as render
from services.kit import wire
from services.kit.engine import MalformedMove
from services.kit.games import event_dict
from services.kit.testing import random_game_count
from services.shrine import codec, engine
from services.shrine.engine.content import CONTENT
from tests.codec_checks import assert_every_kind_round_trips, assert_round_trips
from tests.leaks import check_seat_outputs, follow, views_now
from tests.shrine.invariants import check_view
from tests.support import service_in_process

CONFIGURATIONS = {
    "base": engine.Options(),
    "radiant_shapes": engine.Options(radiant_shapes=True),
}
GAMES = random_game_count(12)
SEATS = (0, 1, None)

# One move of every kind, in the engine's text forms (README, "Move text forms").
EVERY_KIND = [
    "unlock overwriting",
    "draw 4",
    "keep 1",
    "pass",
    "debt",
    "serpent relocating",
    "refresh",
    "search",
    "accept",
    "place c2",
    "overwrite c2 red",
    "relocate b1 blue c3",
    "block b2",
    "block b2 target",
    "block b2 noclaim",
    "done",
    "shape 17",
    "at b1 b2 c2",
    "at b1 b2 c2 ignore c2",
    "claim purple",
    "reward treasure",
    "reward unlock inactive",
    "bonus 5",
    "skip",
]


def random_states(options: engine.Options, games: int = GAMES):
    """Every state of ``games`` seeded random games, with the legal moves of the seat to act."""
    for seed in range(games):
        state = engine.new_game(seed, 2, options)
        chooser = random.Random(seed)
        while True:
            seat = engine.to_act(state)[0] if engine.outcome(state) is None else None
            moves = engine.legal_moves(state, seat) if seat is not None else []
            yield state, moves
            if not moves:
                return
            engine.apply(state, seat, chooser.choice(moves))


# --- moves --------------------------------------------------------------------------------


def test_every_kind_has_a_case_and_round_trips():
    assert_every_kind_round_trips(
        engine.parse_move, engine.MOVE_TYPES, codec, pb.Move, render.move, EVERY_KIND
    )


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_every_legal_move_of_random_games_round_trips(name: str):
    kinds = set()
    for _, moves in random_states(CONFIGURATIONS[name]):
        for move in moves:
            assert_round_trips(codec, pb.Move, render.move, move)
            kinds.add(type(move))
    assert len(kinds) >= 12  # random play reaches most decisions


def test_a_shapes_fields_may_come_in_any_order():
    message = pb.Move(at=pb.ShapeFields(fields=["c2", "b1", "b2"], ignored="c2"))
    assert codec.move_from_proto(message) == engine.parse_move("at b1 b2 c2 ignore c2")


MALFORMED = {
    "no decision": pb.Move(),
    "unknown field": pb.Move(place=pb.Place(field="a1")),  # a corner holds a dial
    "empty field": pb.Move(place=pb.Place()),
    "field text": pb.Move(place=pb.Place(field="b2 ")),
    "relocate origin": pb.Move(
        relocate=pb.Relocate(origin="z9", colour=pb.COLOUR_RED, destination="b2")
    ),
    "relocate destination": pb.Move(
        relocate=pb.Relocate(origin="b1", colour=pb.COLOUR_RED, destination="")
    ),
    "no Lens colour": pb.Move(overwrite=pb.Overwrite(field="c2")),
    "complex Lens": pb.Move(overwrite=pb.Overwrite(field="c2", colour=pb.COLOUR_GREEN)),
    "unknown colour": pb.Move(overwrite=pb.Overwrite(field="c2", colour=99)),
    "claim no colour": pb.Move(claim=pb.Claim()),
    "claim unknown colour": pb.Move(claim=pb.Claim(colour=-3)),
    "unlock no power": pb.Move(unlock=pb.Unlock()),
    "unlock unknown power": pb.Move(unlock=pb.Unlock(power=7)),
    "serpent no power": pb.Move(serpent=pb.Serpent()),
    "reward unknown power": pb.Move(reward=pb.Reward(unlock=42)),
    "no such deck": pb.Move(draw=pb.Draw(deck=7)),
    "negative deck": pb.Move(bonus=pb.Bonus(deck=-1)),
    "keep 2": pb.Move(keep=pb.Keep(index=2)),
    "keep -1": pb.Move(keep=pb.Keep(index=-1)),
    "no such Shape card": pb.Move(shape=pb.CompleteShape(card=999)),
    "Shape card 0": pb.Move(shape=pb.CompleteShape()),
    "no fields": pb.Move(at=pb.ShapeFields()),
    "a field twice": pb.Move(at=pb.ShapeFields(fields=["b1", "b1"])),
    "too many fields": pb.Move(at=pb.ShapeFields(fields=["b1"] * 13)),
    "unknown shape field": pb.Move(at=pb.ShapeFields(fields=["b1", "x7"])),
    "ignored not in fields": pb.Move(at=pb.ShapeFields(fields=["b1", "b2"], ignored="c2")),
    "ignored unknown": pb.Move(at=pb.ShapeFields(fields=["b1", "b2"], ignored="q")),
    "block a target claiming nothing": pb.Move(
        block=pb.Block(field="b2", target=True, no_claim=True)
    ),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_moves_are_refused(name: str):
    with pytest.raises(MalformedMove):
        codec.move_from_proto(MALFORMED[name])


def test_options():
    assert codec.options_from_proto(pb.Options()) == engine.Options()
    on = codec.options_from_proto(pb.Options(radiant_shapes=True))
    assert on == engine.Options(radiant_shapes=True)


# --- views and what they show ---------------------------------------------------------------


def shape_ids(message) -> set[int]:
    """The ids of every ShapeCard message anywhere in ``message``."""
    found: set[int] = set()

    def walk(node) -> None:
        if isinstance(node, pb.ShapeCard):
            found.add(node.id)
            return
        for field, value in node.ListFields():
            if field.type != field.TYPE_MESSAGE:
                continue
            for item in value if field.is_repeated else [value]:
                walk(item)

    walk(message)
    return found


def secret_code_ids(state, seat: int | None) -> list[str]:
    """Code card ids this seat may not see: the others' and those returned to the box."""
    in_play = [p.code for p in state.players]
    hidden = [CONTENT.codes[c].id for s, c in enumerate(in_play) if s != seat]
    hidden += [CONTENT.codes[c].id for c in CONTENT.code_sets[state.code_set] if c not in in_play]
    return hidden


def check_proto_view(state, message: pb.View, seat: int | None) -> None:
    """The proto view shows ``seat`` its own secrets and nothing else hidden."""
    text = text_format.MessageToString(message)
    for other, player in enumerate(message.players):
        own = state.players[other]
        if other == seat:
            assert player.code_card.id == CONTENT.codes[own.code].id
            assert [c.id for c in player.hand] == sorted(own.hand)
        else:
            assert not player.HasField("code_card"), "another seat's Code card is shown"
            assert not player.hand, "another seat's Shape cards are shown"
        assert player.shapes_in_hand == len(own.hand)
    for code_id in secret_code_ids(state, seat):
        assert f'"{code_id}"' not in text, "a hidden Code card id is shown"
    drawer = state.current if state.drawn else None
    if seat is not None and seat == drawer:
        assert [c.id for c in message.drawn_cards] == state.drawn
    else:
        assert not message.drawn_cards, "drawn Shape cards are shown to another seat"
    assert message.drawn == len(state.drawn)
    # Shape cards named anywhere: the seat's own, and those face up on the table.
    allowed = {c for p in state.players for c in p.completed}
    if state.shape >= 0:
        allowed.add(state.shape)
    if seat is not None:
        allowed |= set(state.players[seat].hand)
        if seat == drawer:
            allowed |= set(state.drawn)
    assert shape_ids(message) <= allowed, "a hidden Shape card is shown"
    assert [d.cards for d in message.shape_decks] == [
        len(state.deck(d.size)) for d in message.shape_decks
    ]


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_every_view_converts_and_shows_each_seat_only_what_it_may_see(name: str):
    for state, _ in random_states(CONFIGURATIONS[name]):
        for seat in SEATS:
            seen = engine.view(state, seat)
            check_view(state, seen, seat)
            message = codec.view_to_proto(seen)
            assert pb.View.FromString(message.SerializeToString()) == message
            check_proto_view(state, message, seat)
            assert len(message.fields) == 12 and len(message.dials) == 4
            assert len(message.players) == 2


def test_the_view_carries_what_the_engine_view_holds():
    """Field by field, the proto says what the engine's view says (names for enums)."""
    colour = {v.number: v.name.removeprefix("COLOUR_").lower() for v in pb.Colour.DESCRIPTOR.values}
    colour[pb.COLOUR_UNSPECIFIED] = "none"
    side = {
        v.number: v.name.removeprefix("DIAL_SIDE_").lower() for v in pb.DialSide.DESCRIPTOR.values
    }
    step = {v.number: v.name.removeprefix("STEP_") for v in pb.Step.DESCRIPTOR.values}
    checked = 0
    for state, _ in random_states(CONFIGURATIONS["radiant_shapes"], games=3):
        for seat in SEATS:
            seen = engine.view(state, seat)
            message = codec.view_to_proto(seen)
            assert step[message.step] == seen.step and message.step_text == seen.step_text
            assert (message.turn, message.current) == (seen.turn, seen.current)
            assert message.bottom_seat == seen.bottom_seat
            assert colour[message.code_set] == seen.code_set
            assert colour[message.offering] == seen.offering
            for f, m in zip(seen.fields, message.fields, strict=True):
                assert m.name == f.name and m.dial == f.dial and m.central == f.central
                assert tuple(colour[c] for c in m.lenses) == f.lenses
                assert colour[m.shows] == f.shows
                who = seen.seats[m.blocked_by] if m.HasField("blocked_by") else ""
                assert who == f.blocked_by and m.claimed_target == f.claimed_target
                assert m.no_claim == f.no_claim
            for d, m in zip(seen.dials, message.dials, strict=True):
                assert (m.corner, tuple(m.fields), m.facing) == (d.corner, d.fields, d.facing)
                assert side[m.side] == d.side
            assert [(t.treasure, t.dial) for t in message.progress_track] == list(
                seen.progress_track
            )
            assert [(colour[c.colour], c.count) for c in message.pouch_colours] == list(
                seen.pouch_colours
            )
            assert message.pouch == seen.pouch and message.treasury == seen.treasury
            assert [(d.size, d.cards) for d in message.shape_decks] == list(seen.shape_decks)
            assert (message.completing.id if message.HasField("completing") else -1) == (
                seen.completing
            )
            for p, m in zip(seen.players, message.players, strict=True):
                assert (m.seat, m.name, m.treasure) == (p.seat, p.name, p.treasure)
                assert (m.serpents, m.block_tokens, m.passes, m.debts) == (
                    p.serpents,
                    p.block_tokens,
                    p.passes,
                    p.debts,
                )
                assert [(w.name, tuple(w.prices), w.treasure, w.blocked) for w in m.powers] == [
                    (w.name, w.prices, w.treasure, w.blocked) for w in p.powers
                ]
                assert [(t.field, colour[t.colour]) for t in m.proof] == list(p.proof)
                assert [c.id for c in m.completed] == list(p.completed)
                checked += 1
    assert checked > 100


# --- over a real service: views, WatchGame and GetHistory as every seat ---------------------


@pytest.mark.parametrize("radiant_shapes", [False, True])
async def test_no_output_path_of_the_service_shows_a_seat_what_it_may_not_see(radiant_shapes):
    seed = 4_242_424_242_4242
    options = engine.Options(radiant_shapes=radiant_shapes)
    async with service_in_process("shrine") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("shrine", channel)
            game = await client.create(
                2, seed=seed, options=pb.Options(radiant_shapes=radiant_shapes)
            )
            tokens = [*game.tokens, None]
            streams = [client.watch(game.game_id, token) for token in tokens]
            firsts = [await s.read() for s in streams]
            result = await client.play_random(game, random.Random(seed % 1000))
            final = result.final.game.version
            assert result.final.game.status == FINISHED
            watched = [
                [first, *await asyncio.wait_for(follow(s, final), 60)]
                for first, s in zip(firsts, streams, strict=True)
            ]
            for s in streams:
                s.cancel()
            histories = [await client.history(game.game_id, token) for token in tokens]
            finals = [await client.get(game.game_id, token) for token in tokens]

    # Replay the game in the engine: the truth each output is checked against.
    state = engine.new_game(seed, 2, options)
    states = {0: _snapshot_views(state)}
    events = {}
    for turn in histories[2]:
        assert turn.move_text, "every Shrine move is public: a spectator sees its text"
        move = engine.parse_move(turn.move_text)
        events[turn.version] = (turn.seat, str(move), engine.apply(state, turn.seat, move))
        states[turn.version] = _snapshot_views(state)
    assert engine.outcome(state) is not None and len(events) == final
    private = [e for _, _, logged in events.values() for e in logged if e.to is not None]
    assert bool(private) == radiant_shapes  # Shape cards drawn: told only to their drawer

    for index, seat in enumerate(SEATS):
        text = check_seat_outputs(
            seed=seed,
            final=final,
            final_reply=finals[index],
            history=histories[index],
            updates=watched[index],
            views={version: per_seat[index] for version, per_seat in states.items()},
            check_turn=lambda turn, seat=seat: check_turn(turn, events[turn.version], seat),
        )
        for code_id in secret_code_ids(state, seat):
            assert f'"{code_id}"' not in text


def _snapshot_views(state):
    return views_now(state, SEATS, engine.view, check_view, codec.view_to_proto, check_proto_view)


def check_turn(turn, logged, seat: int | None) -> None:
    mover, text, events = logged
    assert turn.seat == mover and turn.move_text == text
    visible = [e for e in events if e.visible_to(seat)]
    expected = [wire.event({k: v for k, v in event_dict(e).items() if k != "to"}) for e in visible]
    assert list(turn.events) == expected, "a turn shows events this seat may not see"


# --- the renderer ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_the_renderer_draws_every_view_of_a_random_game(name: str):
    for state, moves in random_states(CONFIGURATIONS[name], games=2):
        finished = engine.outcome(state) is not None
        status = game_pb2.GAME_STATUS_FINISHED if finished else game_pb2.GAME_STATUS_IN_PROGRESS
        header = game_pb2.GameHeader(status=status)
        for seat in SEATS:
            text = render.board(codec.view_to_proto(engine.view(state, seat)), header)
            assert "dial a1" in text and "Sun" in text and "Moon" in text
            assert ("Your Code card" in text) == (seat is not None)
            assert max(len(line) for line in text.splitlines()) <= 100
        for move in moves:
            assert render.move(codec.move_to_proto(move)) == str(move)
    assert render.move(pb.Move()) == "?"
