"""The Channeling as text: the 4x4 grid with its glyph labels, cubes and Druids."""

from __future__ import annotations

from client.render.colour import paint

SEATS = ("Light", "Dark")
STEPS = {1: "play a glyph", 2: "move a Druid", 3: "choose a Leyline Path", 4: "replace cards"}
GAME_OVER = 5  # tabletop.channeling.v1.STEP_GAME_OVER
FINISHED = 2  # tabletop.common.v1.GAME_STATUS_FINISHED
# The game's Overchanneling reading, as the header's options name it; a game stored
# before the option existed has no key and plays step 6.
OVERCHANNELING = {
    "splendor": "Overchanneling: cubes beyond the card's Splendor are kept (step 6)",
    "vigor": "Overchanneling: cubes beyond the card's Vigor are kept (glossary)",
}


def _cell(cell) -> list[str]:
    if not cell.HasField("card"):
        return ["   (gap)    ", "            "]
    card = f"V{cell.card.vigor} S{cell.card.splendor}"
    druid = ""
    if cell.HasField("druid"):
        druid = paint("☼L", "yellow", "bold") if cell.druid == 0 else paint("☾D", "magenta", "bold")
        druid_plain = 2
    else:
        druid_plain = 0
    top = f" {card}" + " " * (10 - len(card) - druid_plain) + druid + " "
    cubes = ""
    if cell.light_cubes:
        cubes = paint(f"{cell.light_cubes} light", "yellow")
        width = len(f"{cell.light_cubes} light")
    elif cell.dark_cubes:
        cubes = paint(f"{cell.dark_cubes} dark", "magenta")
        width = len(f"{cell.dark_cubes} dark")
    else:
        width = 0
    return [top, " " + cubes + " " * (11 - width)]


def board(view, header) -> str:
    width = 12
    lines = ["       " + "".join(f"{g:^{width + 1}}" for g in view.col_glyphs)]
    lines.append("       " + "".join(f"{c:^{width + 1}}" for c in "abcd"))
    for r in range(4):
        cells = [_cell(view.cells[r * 4 + c]) for c in range(4)]
        label = f"{view.row_glyphs[r]:>5} {r + 1}"
        lines.append(label + "|" + "|".join(c[0] for c in cells) + "|")
        lines.append(" " * 7 + "|" + "|".join(c[1] for c in cells) + "|")
    lines.append("")
    for seat, player in enumerate(view.players):
        mark = "→ " if seat == view.current and header.status == 1 else "  "
        lines.append(
            f"{mark}{SEATS[seat]:5} Splendor {player.splendor:3}  cards {len(player.acquired)}"
            f"  supply {player.supply:2}  overchanneling {player.overchanneling}"
            f"  hand: {' '.join(player.hand)}"
        )
    if view.step == GAME_OVER or header.status == FINISHED:
        # No step is played any more, whatever the rules' state would go on with (a game
        # ended by the service, a resignation say, keeps the step it was in).
        lines.append(f"turn {view.turn}: the game is over; deck {view.deck_count}")
    else:
        step = STEPS.get(view.step, "?")
        extra = f" (glyph {view.glyph})" if view.glyph else ""
        lines.append(
            f"turn {view.turn}: {SEATS[view.current]} to {step}{extra}; deck {view.deck_count}"
        )
    if view.HasField("end_triggered_by"):
        lines.append(f"the end is triggered by {SEATS[view.end_triggered_by]}: last turn")
    chosen = header.options.fields.get("overchanneling")
    reading = chosen.string_value if chosen is not None else "splendor"
    lines.append(OVERCHANNELING.get(reading, f"Overchanneling: {reading}"))
    return "\n".join(lines)


def move(message) -> str:
    kind = message.WhichOneof("kind")
    if kind == "play_glyph":
        return f"glyph {message.play_glyph.glyph}"
    if kind == "move_druid":
        return f"druid {message.move_druid.origin}-{message.move_druid.target}"
    if kind == "choose_path":
        return "path " + "-".join(message.choose_path.cells)
    if kind == "fill_gap":
        return f"fill {message.fill_gap.cell}"
    return "?"
