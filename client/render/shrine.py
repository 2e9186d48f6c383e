"""Shrine: Duel of Light as text: the board with its four dials and where they face, the
Offering, the pouch and the Treasury, each player board, and for the caller only their
Code card and Shape hand. Fits a 100-column terminal.

The board is drawn from one seat's side ("seated on the side of either the Sun or the
Moon glyph"): the view's ``bottom_seat`` (the caller's seat, Sun for a spectator), or the
seat asked for. From Moon's side the board and the Code card are turned half round: row 4
nearest, columns d to a. Field names never turn (b1 is b1 from either side), because
moves and stored games use them; the margins label the rows and columns where they are
drawn."""

from __future__ import annotations

import re

from tabletop.shrine.v1 import shrine_pb2 as pb

from client.render.colour import paint

COLOURS: dict[int, tuple[str, str]] = {
    pb.COLOUR_RED: ("red", "R"),
    pb.COLOUR_YELLOW: ("yellow", "Y"),
    pb.COLOUR_BLUE: ("blue", "B"),
    pb.COLOUR_ORANGE: ("orange", "O"),
    pb.COLOUR_GREEN: ("green", "G"),
    pb.COLOUR_PURPLE: ("purple", "P"),
}
POWERS = {
    value.number: value.name.removeprefix("TREASURE_POWER_").lower()
    for value in pb.TreasurePower.DESCRIPTOR.values
    if value.number
}
SIDES = {
    pb.DIAL_SIDE_ACTIVE: "active",
    pb.DIAL_SIDE_INACTIVE: "inactive",
    pb.DIAL_SIDE_REMOVED: "on track",
}
SEATS = ("Sun", "Moon")
COLUMNS = "abcd"
CELL = 12  # characters inside a board cell
ARROWS = {
    (1, 0): "→",
    (1, 1): "↗",
    (0, 1): "↑",
    (-1, 1): "↖",
    (-1, 0): "←",
    (-1, -1): "↙",
    (0, -1): "↓",
    (1, -1): "↘",
}
LEGEND = (
    "    ◎a1 the field dial a1 faces · #Sun/#Moon a Block token and its claim · * a target · "
    "R+B a stack"
)
_ANSI = re.compile(r"\033\[[0-9;]*m")


def _width(text: str) -> int:
    return len(_ANSI.sub("", text))


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _colour_name(colour: int) -> str:
    return COLOURS.get(colour, ("?", "?"))[0]


def _coloured(colour: int, text: str | None = None) -> str:
    name, _ = COLOURS.get(colour, ("none", "·"))
    if colour not in COLOURS:
        return paint(text or "·", "dim")
    return paint(text or name, name, "bold")


def _letter(colour: int) -> str:
    return _coloured(colour, COLOURS[colour][1]) if colour in COLOURS else paint("·", "dim")


def _xy(name: str) -> tuple[int, int]:
    return COLUMNS.index(name[0]), int(name[1]) - 1


def _side(view, as_seat: int | None) -> int:
    """The seat whose side is drawn at the bottom: the one asked for, else the view's."""
    seat = as_seat if as_seat is not None else view.bottom_seat
    return seat if seat in (0, 1) else 0


def _rows(bottom: int) -> list[int]:
    """Board rows from the top of the drawing down: Sun's side is row 1, Moon's row 4."""
    return [4, 3, 2, 1] if bottom == 0 else [1, 2, 3, 4]


def _columns(bottom: int) -> str:
    return COLUMNS if bottom == 0 else COLUMNS[::-1]


# -- the board ----------------------------------------------------------------------------


def _field_cell(field, facing: dict[str, tuple[str, bool]]) -> list[str]:
    top = field.name + ("*" if field.printed_target else "")
    if field.name in facing:
        corner, active = facing[field.name]
        mark = f"◎{corner}"
        top = _pad(top, CELL - len(mark) - 1) + paint(mark, "cyan" if active else "grey")
    if not field.lenses:
        lenses = paint("·", "dim")
    elif len(field.lenses) == 1:
        lenses = _coloured(field.lenses[0])
    else:
        stack = "+".join(_letter(c) for c in field.lenses)
        lenses = f"{stack} {_coloured(field.shows)}"
    block = ""
    if field.HasField("blocked_by"):
        who = SEATS[field.blocked_by] if field.blocked_by in (0, 1) else "?"
        claim = " target" if field.claimed_target else " (none)" if field.no_claim else ""
        block = paint(f"#{who}{claim}", "magenta", "bold")
    return [top, lenses, block]


def _dial_cell(dial, bottom: int) -> list[str]:
    if dial.side == pb.DIAL_SIDE_REMOVED:
        return [
            paint(f"dial {dial.corner}", "dim"),
            paint("(left)", "dim"),
            paint("on track", "dim"),
        ]
    x0, y0 = _xy(dial.corner)
    x1, y1 = _xy(dial.facing)
    turn = 1 if bottom == 0 else -1  # from Moon's side, up the page is towards Sun
    arrow = ARROWS.get((turn * (x1 - x0), turn * (y1 - y0)), "?")
    active = dial.side == pb.DIAL_SIDE_ACTIVE
    style = ("yellow", "bold") if active else ("grey",)
    return [
        paint(f"dial {dial.corner}", "bold"),
        paint(f" {arrow} {dial.facing}", *style),
        paint(SIDES.get(dial.side, "?"), "green" if active else "grey"),
    ]


def _board_lines(view, bottom: int) -> list[str]:
    fields = {f.name: f for f in view.fields}
    dials = {d.corner: d for d in view.dials}
    facing = {
        d.facing: (d.corner, d.side == pb.DIAL_SIDE_ACTIVE)
        for d in view.dials
        if d.side != pb.DIAL_SIDE_REMOVED
    }
    rule = "─" * (CELL + 1)
    columns, rows = _columns(bottom), _rows(bottom)
    letters = "".join(f"{c:^{CELL + 2}}" for c in columns)
    lines = [f"{SEATS[1 - bottom]:4}" + letters]
    lines.append("   ┌" + "┬".join([rule] * 4) + "┐")
    for row in rows:
        cells = []
        for column in columns:
            name = f"{column}{row}"
            if name in dials:
                cells.append(_dial_cell(dials[name], bottom))
            elif name in fields:
                cells.append(_field_cell(fields[name], facing))
            else:
                cells.append(["", "", ""])
        for i in range(3):
            label = f" {row} " if i == 1 else "   "
            lines.append(label + "│" + "│".join(" " + _pad(c[i], CELL) for c in cells) + "│")
        last = row == rows[-1]
        lines.append(
            "   " + ("└" + "┴".join([rule] * 4) + "┘" if last else "├" + "┼".join([rule] * 4) + "┤")
        )
    lines.append(f"{SEATS[bottom]:4}" + letters)
    return lines


def _table_lines(view) -> list[str]:
    pouch = " ".join(f"{_coloured(c.colour)} {c.count}" for c in view.pouch_colours)
    lines = [
        f"Offering  {_coloured(view.offering, None if view.offering else '(empty)')}",
        f"Pouch {view.pouch:2}  {pouch}",
    ]
    aside = [c for c in view.set_aside if c.count]
    if aside:
        lines.append("Set aside " + " ".join(f"{_coloured(c.colour)} {c.count}" for c in aside))
    lines.append(f"Treasury  {view.treasury}")
    track = " ".join(f"[{s.treasure}:{s.dial or '—'}]" for s in view.progress_track)
    lines.append(f"Track     {track}")
    lines.append(f"Code set  {_coloured(view.code_set)}")
    if view.radiant_shapes:
        decks = " ".join(f"{d.size}f:{d.cards}" for d in view.shape_decks)
        lines.append(f"Shapes    {decks}")
    return lines


def _code_lines(card, bottom: int) -> list[str]:
    """The Code card aligned with the board as drawn ("using the Sun and Moon glyphs as
    reference points")."""
    colours = {f.field: f.colour for f in card.fields}
    targets = set(card.targets)
    columns = _columns(bottom)
    lines = [
        "",
        paint(f"Your Code card {card.id}", "bold"),
        "     " + "".join(f" {c} " for c in columns),
    ]
    for row in _rows(bottom):
        out = f"   {row} "
        for column in columns:
            name = f"{column}{row}"
            if name in colours:
                out += " " + _letter(colours[name]) + ("*" if name in targets else " ")
            else:
                out += "   "
        lines.append(out)
    lines.append("targets (*): " + " ".join(card.targets))
    return lines


# -- players and Shape cards ----------------------------------------------------------------


def _shape_card(card, label: str = "") -> list[str]:
    bonus = "/".join(str(d) for d in card.bonus_decks) if card.bonus_decks else "—"
    rows = [row.replace("X", "■").replace(".", "·") for row in card.pattern]
    head = label or f"#{card.id} {card.size}f"
    return [
        paint(head, "bold"),
        *(" " + r for r in rows),
        f"T{card.treasure} or {card.unlock_treasure}+U",
        f"bonus {bonus}",
    ]


def _cards_lines(cards, labels=None, indent: int = 8, width: int = 15) -> list[str]:
    """Shape cards side by side, as many to a row as fit in 100 columns."""
    blocks = [_shape_card(c, labels[i] if labels else "") for i, c in enumerate(cards)]
    per_row = max(1, (100 - indent) // width)
    lines: list[str] = []
    for start in range(0, len(blocks), per_row):
        chunk = blocks[start : start + per_row]
        height = max(len(b) for b in chunk)
        for i in range(height):
            parts = [_pad(b[i] if i < len(b) else "", width) for b in chunk]
            lines.append(" " * indent + "".join(parts).rstrip())
    return lines


def _power(power) -> str:
    prices = "/".join(str(p) for p in power.prices)
    name = f"{POWERS.get(power.power, '?')} {prices}"
    state = paint("●" * power.treasure, "red") if power.blocked else paint("open", "green")
    return _pad(f"{name}: {state}", 25)


def _player_lines(view, header, player) -> list[str]:
    turn = player.seat == view.current and header.status == 1
    mark = paint("→ ", "bold") if turn else "  "
    name = paint(player.name, "yellow" if player.seat == 0 else "azure", "bold")
    start = " (start)" if player.starting_player else ""
    lines = [
        f"{mark}{name}{start}  Treasure {paint(str(player.treasure), 'bold')}"
        f"  Serpents {player.serpents}  Blocks {player.block_tokens}"
        f"  Passes {player.passes}/2  Debts {player.debts}/3"
        + (f"  Shapes in hand {player.shapes_in_hand}" if view.radiant_shapes else "")
    ]
    powers = [_power(p) for p in player.powers]
    lines.append("    powers " + "".join(powers[:3]).rstrip())
    lines.append("           " + "".join(powers[3:]).rstrip())
    if view.radiant_shapes:
        proof = " ".join(f"{t.field}{_letter(t.colour)}" for t in player.proof) or "none"
        left = " ".join(f"{_letter(c.colour)}{c.count}" for c in player.proof_tokens_left)
        lines.append(f"    proof  {proof}   tokens left {left}")
        if player.completed:
            done = " ".join(f"#{c.id}" for c in player.completed)
            lines.append(f"    completed Shape cards {done}")
    if player.hand:  # only in the owner's view
        lines.append(
            paint("    your Shape cards:", "bold")
            + paint("  reward T<n> Treasure only, or <n>+U Treasure and Unlock", "dim")
        )
        lines.extend(_cards_lines(player.hand))
    return lines


# -- the whole view ------------------------------------------------------------------------


def board(view, header, as_seat: int | None = None) -> str:
    """The whole view as text, the board drawn from ``as_seat``'s side (default: the
    view's ``bottom_seat``: the caller's own seat, Sun for a spectator)."""
    bottom = _side(view, as_seat)
    left = _board_lines(view, bottom)
    right = _table_lines(view)
    for player in view.players:
        if player.HasField("code_card"):
            right.extend(_code_lines(player.code_card, bottom))
    right = [""] * 2 + right
    width = max(_width(line) for line in left) + 3
    lines = [
        _pad(left[i] if i < len(left) else "", width) + (right[i] if i < len(right) else "")
        for i in range(max(len(left), len(right)))
    ]
    lines = [line.rstrip() for line in lines]
    lines.append(paint(LEGEND, "dim"))
    lines.append(
        paint(
            f"    drawn from {SEATS[bottom]}'s side ({SEATS[bottom]} at the bottom);"
            " field names are the same from either side",
            "dim",
        )
    )
    who = SEATS[view.current] if view.current in (0, 1) else "?"
    if header.status == 1:
        lines.append(paint(f"turn {view.turn}: {who}: {view.step_text}", "bold"))
        did = []
        if view.powers_used_this_turn:
            did.append(f"Treasure Powers used {view.powers_used_this_turn}")
        if view.placed_this_turn:
            did.append("Lens placed")
        if did:
            lines.append(f"    this turn: {', '.join(did)}")
    if view.HasField("completing"):
        on = " ".join(view.completing_fields)
        ignored = f", ignoring {view.completing_ignored}" if view.completing_ignored else ""
        lines.append(
            f"completing Shape card #{view.completing.id}" + (f" on {on}" if on else "") + ignored
        )
        lines.extend(_cards_lines([view.completing], indent=4))
    if view.drawn:
        if view.drawn_cards:
            lines.append("drawn Shape cards: keep one")
            lines.extend(
                _cards_lines(
                    view.drawn_cards,
                    labels=[f"keep {i}: #{c.id}" for i, c in enumerate(view.drawn_cards)],
                    indent=4,
                )
            )
        else:
            lines.append(f"{who} drew {view.drawn} Shape cards and keeps one")
    for player in view.players:
        lines.append("")
        lines.extend(_player_lines(view, header, player))
    return "\n".join(lines)


# -- moves -------------------------------------------------------------------------------


def move(message) -> str:
    """The move's text form, the same as the engine's ``str(move)``."""
    kind = message.WhichOneof("kind")
    if kind is None:
        return "?"
    body = getattr(message, kind)
    if kind in ("unlock", "serpent"):
        return f"{kind} {POWERS.get(body.power, '?')}"
    if kind in ("draw", "bonus"):
        return f"{kind} {body.deck}"
    if kind == "keep":
        return f"keep {body.index}"
    if kind == "shape":
        return f"shape {body.card}"
    if kind == "place":
        return f"place {body.field}"
    if kind == "overwrite":
        return f"overwrite {body.field} {_colour_name(body.colour)}"
    if kind == "relocate":
        return f"relocate {body.origin} {_colour_name(body.colour)} {body.destination}"
    if kind == "block":
        claim = " target" if body.target else " noclaim" if body.no_claim else ""
        return f"block {body.field}{claim}"
    if kind == "at":
        ignored = f" ignore {body.ignored}" if body.ignored else ""
        return f"at {' '.join(body.fields)}{ignored}"
    if kind == "claim":
        return f"claim {_colour_name(body.colour)}"
    if kind == "reward":
        if not body.unlock:
            return "reward treasure"
        return f"reward unlock {POWERS.get(body.unlock, '?')}"
    if kind == "pass_turn":
        return "pass"
    return kind  # debt, refresh, search, accept, done, skip
