"""The Channeling's engine values <-> its protobuf messages, and nothing else."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

from tabletop.channeling.v1 import channeling_pb2 as pb

from services.kit.encoding import field
from services.kit.engine import BadOptions, MalformedMove

from . import engine
from .engine import board
from .engine.content import CARD_BY_ID, GLYPH_INDEX, GLYPHS
from .engine.moves import MAX_PATH_CELLS
from .engine.state import BEYOND_SPLENDOR, BEYOND_VIGOR

_STEPS = {
    "play_glyph": pb.STEP_PLAY_GLYPH,
    "move_druid": pb.STEP_MOVE_DRUID,
    "choose_path": pb.STEP_CHOOSE_PATH,
    "replace_cards": pb.STEP_REPLACE_CARDS,
}


_OVERCHANNELING = {
    pb.OVERCHANNELING_UNSPECIFIED: BEYOND_SPLENDOR,
    pb.OVERCHANNELING_BEYOND_SPLENDOR: BEYOND_SPLENDOR,
    pb.OVERCHANNELING_BEYOND_VIGOR: BEYOND_VIGOR,
}


def options_from_proto(message: pb.Options) -> engine.Options:
    if message.overchanneling not in _OVERCHANNELING:
        names = ", ".join(pb.Overchanneling.keys())
        raise BadOptions(f"unknown overchanneling {message.overchanneling}; one of {names}")
    return engine.Options(overchanneling=_OVERCHANNELING[message.overchanneling])


def _cell(text: str, field: str) -> int:
    cell = board.parse_cell(text)
    if cell is None:
        raise MalformedMove(f"{field} must be a cell a1..d4, not {text[:8]!r}")
    return cell


def move_from_proto(message: pb.Move) -> engine.Move:
    kind = message.WhichOneof("kind")
    if kind == "play_glyph":
        glyph = message.play_glyph.glyph
        if glyph not in GLYPH_INDEX:
            raise MalformedMove(f"unknown glyph; glyphs are {', '.join(GLYPHS)}")
        return engine.PlayGlyph(GLYPH_INDEX[glyph])
    if kind == "move_druid":
        m = message.move_druid
        return engine.MoveDruid(_cell(m.origin, "origin"), _cell(m.target, "target"))
    if kind == "choose_path":
        cells = message.choose_path.cells
        if not 1 <= len(cells) <= MAX_PATH_CELLS:
            raise MalformedMove(f"a Leyline Path on a 4x4 grid has 1 to {MAX_PATH_CELLS} cells")
        return engine.ChoosePath(tuple(_cell(c, "cells") for c in cells))
    if kind == "fill_gap":
        return engine.FillGap(_cell(message.fill_gap.cell, "cell"))
    raise MalformedMove("the move names no decision (set one field of Move.kind)")


def move_to_proto(move: engine.Move) -> pb.Move:
    if isinstance(move, engine.PlayGlyph):
        return pb.Move(play_glyph=pb.PlayGlyph(glyph=GLYPHS[move.glyph]))
    if isinstance(move, engine.MoveDruid):
        return pb.Move(
            move_druid=pb.MoveDruid(origin=board.name(move.origin), target=board.name(move.target))
        )
    if isinstance(move, engine.ChoosePath):
        return pb.Move(choose_path=pb.ChoosePath(cells=[board.name(c) for c in move.cells]))
    return pb.Move(fill_gap=pb.FillGap(cell=board.name(move.cell)))


# Moves, cells and players serialized, kept by value (at most this many of each).
_KEPT_PARTS = 4096
_move_bytes: dict[engine.Move, bytes] = {}


def move_bytes(move: engine.Move) -> bytes:
    """``move_to_proto(move).SerializeToString()``, kept by the move's value: a seat's
    legal moves are listed with every update that puts it to act, mostly the same."""
    return _part(_move_bytes, move, move_to_proto)


_CARDS = {
    card_id: pb.Card(id=c.id, vigor=c.vigor, splendor=c.splendor)
    for card_id, c in CARD_BY_ID.items()
}


def _cell_message(cell: engine.CellView) -> pb.Cell:
    message = pb.Cell(cell=cell.cell, light_cubes=cell.light_cubes, dark_cubes=cell.dark_cubes)
    if cell.card is not None:
        message.card.CopyFrom(_CARDS[cell.card])
    if cell.druid is not None:
        message.druid = cell.druid
    return message


def _player_message(seat: engine.SeatView) -> pb.Player:
    return pb.Player(
        hand=seat.hand,
        played=seat.played,
        supply=seat.supply,
        acquired=[_CARDS[c] for c in seat.acquired],
        overchanneling=seat.overchanneling,
        splendor=seat.splendor,
    )


def view_to_proto(view: engine.View) -> pb.View:
    message = _head(view)
    message.cells.extend(_cell_message(c) for c in view.cells)
    message.players.extend(_player_message(seat) for seat in view.seats)
    message.MergeFrom(_tail(view))
    return message


def _head(view: engine.View) -> pb.View:
    """The View's fields numbered before its cells."""
    return pb.View(
        current=view.current,
        # A finished game has no step to play; the engine's view keeps the step the rules
        # would go on with (stored games' views are compared with it: tests/stored).
        step=pb.STEP_GAME_OVER if view.outcome is not None else _STEPS[view.step],
        turn=view.turn,
        glyph=view.glyph or "",
        moved=view.moved or "",
        stationary=view.stationary or "",
        row_glyphs=view.row_glyphs,
        col_glyphs=view.col_glyphs,
    )


def _tail(view: engine.View) -> pb.View:
    """The View's fields numbered after its players."""
    tail = pb.View(deck_count=view.deck_count, gaps=view.gaps)
    if view.end_triggered_by is not None:
        tail.end_triggered_by = view.end_triggered_by
    return tail


# A view's bytes, built from parts kept by their values (``view_bytes``). The View message
# shows nothing of the viewing seat (the Channeling hides only the deck, from everyone):
# every seat's view of a version is the same message, and a cell or a player unchanged
# since the last move is the same bytes.
_CELLS, _PLAYERS = 9, 10  # View's field numbers (tests/channeling/test_view_bytes.py)
_KEPT_VIEWS = 256
_cell_bytes: dict[engine.CellView, bytes] = {}
_player_bytes: dict[engine.SeatView, bytes] = {}
_view_bytes: OrderedDict[tuple[Any, ...], bytes] = OrderedDict()


def shown(view: engine.View) -> tuple[Any, ...]:
    """Everything ``view_to_proto`` reads from a view (all but the viewer, which the
    message does not show): the key of its bytes."""
    return (
        view.current,
        view.step,
        view.outcome is not None,
        view.turn,
        view.glyph,
        view.moved,
        view.stationary,
        view.row_glyphs,
        view.col_glyphs,
        view.cells,
        view.seats,
        view.deck_count,
        view.gaps,
        view.end_triggered_by,
    )


def view_bytes(view: engine.View) -> bytes:
    """``view_to_proto(view).SerializeToString()``, the same bytes: the fields in number
    order, each cell and player serialized once for every view that holds it unchanged,
    and a whole view once for every seat that sees it."""
    key = shown(view)
    found = _view_bytes.get(key)
    if found is not None:
        return found
    parts = [_head(view).SerializeToString()]
    parts += [field(_CELLS, _part(_cell_bytes, c, _cell_message)) for c in view.cells]
    parts += [field(_PLAYERS, _part(_player_bytes, s, _player_message)) for s in view.seats]
    parts.append(_tail(view).SerializeToString())
    data = b"".join(parts)
    if len(_view_bytes) >= _KEPT_VIEWS:
        _view_bytes.popitem(last=False)
    _view_bytes[key] = data
    return data


def _part(kept: dict[Any, bytes], value: Any, build: Any) -> bytes:
    """``build(value)``'s bytes, kept by value (at most _KEPT_PARTS, then begun afresh)."""
    found = kept.get(value)
    if found is None:
        if len(kept) >= _KEPT_PARTS:
            kept.clear()
        found = kept[value] = build(value).SerializeToString()
    return found
