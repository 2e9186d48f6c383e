"""Checks every game's codec tests share: a move survives the proto, the wire and back,
and the client renders it as the engine writes it."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any


def assert_round_trips(codec, move_type, render_move: Callable[[Any], str], move) -> Any:
    """``move`` -> proto -> bytes -> proto -> ``move``, rendered as ``str(move)``; the proto."""
    message = codec.move_to_proto(move)
    assert codec.move_from_proto(message) == move, move
    assert codec.move_from_proto(move_type.FromString(message.SerializeToString())) == move, move
    assert render_move(message) == str(move)
    return message


def assert_every_kind_round_trips(
    parse_move, kinds: Iterable, codec, move_type, render_move, texts: Iterable[str]
) -> set[str]:
    """One move text per kind (a move's kind is its type: one dataclass per kind): every
    kind is there, every oneof case is reached, each round-trips. Returns the cases."""
    moves = [parse_move(text) for text in texts]
    assert {type(m) for m in moves} == set(kinds)
    cases = {codec.move_to_proto(m).WhichOneof("kind") for m in moves}
    assert cases == {f.name for f in move_type.DESCRIPTOR.oneofs_by_name["kind"].fields}
    for move in moves:
        assert_round_trips(codec, move_type, render_move, move)
    return cases


def wire_bytes(message) -> bytes:
    """A message's bytes, deterministic (map order), to compare two views exactly."""
    return message.SerializeToString(deterministic=True)


def header_for(engine, game_type: str, state, viewer: int | None):
    """The GameHeader a service sends with ``state``'s view, as the renderers take it."""
    from tabletop.common.v1 import game_pb2

    done = engine.outcome(state) is not None
    header = game_pb2.GameHeader(
        game_type=game_type,
        seats=[
            game_pb2.Seat(index=i, name=n)
            for i, n in enumerate(engine.GAME.seat_names(len(state.players)))
        ],
        status=game_pb2.GAME_STATUS_FINISHED if done else game_pb2.GAME_STATUS_IN_PROGRESS,
        to_act=engine.to_act(state),
    )
    if viewer is not None:
        header.viewer = viewer
    return header
