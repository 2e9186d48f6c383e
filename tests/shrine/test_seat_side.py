"""The board from each player's side: "Players should orient the board between them so
that each player is seated on the side of either the Sun or the Moon glyph", and "Code
cards display a representation of the main board from your perspective".

The view says which side is nearest the viewer (``bottom_seat``); the renderer and the
command-line client draw the board (and the Code card) from that side, or from the seat
asked for with ``--as-seat``. Field names never turn: they are in moves and stored games.
"""

from __future__ import annotations

import asyncio
import random
import re

import grpc
import pytest
from tabletop.common.v1 import game_pb2
from tabletop.shrine.v1 import shrine_pb2 as pb

from client import __main__ as cli
from client import render as renderers
from client.api import GameClient
from client.game import Game, seat_side
from client.render import shrine as render
from services.shrine import codec, engine
from services.shrine.engine.content import BOARD
from tests.support import service_in_process

SUN, MOON = 0, 1
_ANSI = re.compile(r"\033\[[0-9;]*m")
_CELL = re.compile(r"│ (?:dial )?([a-d][1-4])\b")
_CODE_ROW = re.compile(r"^\s+([1-4]) (.*)$")


def _played(seed: int = 3, moves: int = 40) -> engine.State:
    state = engine.new_game(seed, 2, engine.Options())
    chooser = random.Random(seed)
    for _ in range(moves):
        seat = engine.to_act(state)[0]
        engine.apply(state, seat, chooser.choice(engine.legal_moves(state, seat)))
    return state


def _text(state, seat, as_seat=None) -> str:
    header = game_pb2.GameHeader(status=game_pb2.GAME_STATUS_IN_PROGRESS)
    message = codec.view_to_proto(engine.view(state, seat))
    return _ANSI.sub("", render.board(message, header, as_seat=as_seat))


def drawn_grid(text: str) -> dict[str, tuple[int, int]]:
    """Where each field and dial is drawn: (row from the top, column from the left)."""
    rows = [line for line in text.splitlines() if _CELL.search(line)]
    return {
        name: (r, c) for r, line in enumerate(rows) for c, name in enumerate(_CELL.findall(line))
    }


def expected_grid(bottom: int) -> dict[str, tuple[int, int]]:
    """Each corner and field at the place the seat's side puts it, from its name alone:
    Sun's side has row 1 nearest and column a on the left; Moon's is the half turn."""
    names = list(BOARD.field_names) + [d.corner for d in BOARD.dials]
    out = {}
    for name in names:
        column, row = "abcd".index(name[0]), int(name[1])
        out[name] = (4 - row, column) if bottom == SUN else (row - 1, 3 - column)
    return out


def drawn_bottom(text: str) -> int:
    """The seat the drawing puts at the bottom, told by where the fields are."""
    grid = drawn_grid(text)
    for bottom in (SUN, MOON):
        if grid == expected_grid(bottom):
            return bottom
    raise AssertionError(f"the board is drawn from neither side: {grid}")


def test_each_player_is_seated_on_the_side_of_their_glyph() -> None:
    """The view names the side nearest its viewer; a spectator sits on Sun's side."""
    state = engine.new_game(1, 2, engine.Options())
    assert engine.view(state, SUN).bottom_seat == SUN
    assert engine.view(state, MOON).bottom_seat == MOON
    assert engine.view(state, None).bottom_seat == SUN
    for seat in (SUN, MOON, None):
        view = engine.view(state, seat)
        assert codec.view_to_proto(view).bottom_seat == view.bottom_seat
        assert [f.name for f in view.fields] == list(BOARD.field_names)  # names do not turn


@pytest.mark.parametrize(("seat", "bottom"), [(SUN, SUN), (MOON, MOON), (None, SUN)])
def test_the_board_is_drawn_from_the_viewers_side(seat, bottom) -> None:
    state = _played()
    text = _text(state, seat)
    assert drawn_bottom(text) == bottom
    lines = text.splitlines()
    labels = [line for line in lines if re.match(r"^(Sun|Moon)\s+[a-d]\s", line)]
    near = "Sun" if bottom == SUN else "Moon"
    far = "Moon" if bottom == SUN else "Sun"
    assert labels[0].split()[0] == far and labels[-1].split()[0] == near
    assert labels[0].split()[1:] == (list("abcd") if bottom == SUN else list("dcba"))
    assert f"drawn from {near}'s side" in text


def test_code_cards_display_the_main_board_from_your_perspective() -> None:
    """Moon's Code card is drawn turned like the board, so each colour sits over its field."""
    state = _played()
    card = engine.view(state, MOON).players[MOON].code_card
    letters = {
        field: render.COLOURS[pb.Colour.Value(f"COLOUR_{colour.upper()}")][1]
        for field, colour in card.fields
    }
    for bottom in (MOON, SUN):
        lines = _text(state, MOON, as_seat=bottom).splitlines()
        head = next(i for i, line in enumerate(lines) if "Your Code card" in line)
        offset = lines[head].index("Your Code card")  # the card is drawn right of the board
        part = [line[offset:] for line in lines[head + 1 : head + 6]]
        columns = part[0].split()
        assert columns == (list("dcba") if bottom == MOON else list("abcd"))
        rows = [_CODE_ROW.match(line) for line in part[1:]]
        assert [m.group(1) for m in rows if m] == (list("1234") if bottom == MOON else list("4321"))
        for match in rows:
            row, line = match.group(1), match.group(0)
            first = line.index(row) + 2
            cells = [line[i : i + 3] for i in range(first, first + 12, 3)]
            for column, cell in zip(columns, cells, strict=True):
                name = f"{column}{row}"
                assert cell.strip().rstrip("*") == letters.get(name, ""), (bottom, name, line)


def test_dial_arrows_turn_with_the_board() -> None:
    """An arrow points at its field as drawn: from Moon's side every arrow is turned."""
    state = _played()
    sun, moon = _text(state, None, as_seat=SUN), _text(state, None, as_seat=MOON)
    turned = {"→": "←", "↗": "↙", "↑": "↓", "↖": "↘", "←": "→", "↙": "↗", "↓": "↑", "↘": "↖"}
    for dial in engine.view(state, None).dials:
        if dial.side == "removed":
            continue
        found = [re.search(rf"([→↗↑↖←↙↓↘]) {dial.facing}\b", t) for t in (sun, moon)]
        assert all(found), dial
        assert turned[found[0].group(1)] == found[1].group(1)


def test_as_seat_overrides_the_views_side_and_names_stay_absolute() -> None:
    """Control: the same view drawn from either side; the default follows the view."""
    state = _played()
    assert drawn_bottom(_text(state, MOON)) == MOON
    assert drawn_bottom(_text(state, MOON, as_seat=SUN)) == SUN
    assert drawn_bottom(_text(state, SUN, as_seat=MOON)) == MOON
    # every field keeps its name in the drawing, wherever it is drawn
    assert set(drawn_grid(_text(state, SUN, as_seat=MOON))) == set(drawn_grid(_text(state, SUN)))


# --- the command-line client ---------------------------------------------------------------


async def _cli(capsys, *argv: str) -> str:
    await asyncio.to_thread(cli.main, list(argv))
    return _ANSI.sub("", capsys.readouterr().out)


async def test_the_client_draws_from_the_tokens_seat_unless_as_seat_says(capsys) -> None:
    async with service_in_process("shrine") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            game = await GameClient("shrine", channel).create(2, seed=5)
        target = ("--target", running.address)
        gid = game.game_id
        sun, moon = game.tokens
        shown = {
            "moon token": await _cli(capsys, *target, "show", "shrine", gid, f"--token={moon}"),
            "sun token": await _cli(capsys, *target, "show", "shrine", gid, f"--token={sun}"),
            "spectator": await _cli(capsys, *target, "show", "shrine", gid),
            "moon as sun": await _cli(
                capsys, *target, "show", "shrine", gid, f"--token={moon}", "--as-seat", "sun"
            ),
            "spectator as 1": await _cli(capsys, *target, "show", "shrine", gid, "--as-seat", "1"),
            "spectator as Moon": await _cli(
                capsys, *target, "show", "shrine", gid, "--as-seat", "Moon"
            ),
        }
        assert {k: drawn_bottom(v) for k, v in shown.items()} == {
            "moon token": MOON,
            "sun token": SUN,
            "spectator": SUN,
            "moon as sun": SUN,
            "spectator as 1": MOON,
            "spectator as Moon": MOON,
        }
        # play: the board after the move is drawn from the player's side too
        first = (await asyncio.to_thread(_to_act, running.address, gid))[0]
        token = game.tokens[first]
        played = await _cli(capsys, *target, "play", "shrine", gid, f"--token={token}", "0")
        assert drawn_bottom(played) == first
        with pytest.raises(SystemExit, match="the seats are sun, moon"):
            await _cli(capsys, *target, "show", "shrine", gid, "--as-seat", "venus")


def _to_act(address: str, game_id: str) -> list[int]:
    with grpc.insecure_channel(address) as channel:
        game = Game("shrine", channel)
        return list(game.call("GetGame", game_id=game_id).game.to_act)


def test_as_seat_is_refused_for_a_board_without_sides() -> None:
    assert renderers.draws_from_seat("shrine")
    header = game_pb2.GameHeader(seats=[game_pb2.Seat(index=0, name="Light")])
    with grpc.insecure_channel("127.0.0.1:9") as channel:
        assert seat_side(Game("shrine", channel), None, header) is None
        others = [name for name in ("channeling", "glow") if not renderers.draws_from_seat(name)]
        assert others, "no other game left to try"
        for name in others:
            with pytest.raises(SystemExit, match="drawn the same for every seat"):
                seat_side(Game(name, channel), "0", header)
