"""Glow as text: the meeting track with its companions, small dice and footprints; each
player's dice, company (adventurer and companions), score and tokens; and the journey
board with the companies and encampments, or the boats. Fits a 100-column terminal."""

from __future__ import annotations

import re

from tabletop.glow.v1 import glow_pb2 as pb

from client.render import colour as _colours
from client.render.colour import paint

WIDTH = 98
_ANSI = re.compile(r"\033\[[0-9;]*m")

STEPS = {
    pb.STEP_ADVENTURERS: "Game Setup: choosing adventurers",
    pb.STEP_MORNING: "Morning: recruit a companion",
    pb.STEP_LATE_MORNING: "Late Morning: roll and reroll (all at once)",
    pb.STEP_NOON: "Noon: resolve the cards (all at once)",
    pb.STEP_AFTERNOON: "Afternoon: the journeys (all at once)",
    pb.STEP_OVER: "the game is over",
}
STAGES = {
    pb.STAGE_IDLE: "",
    pb.STAGE_CHOOSE_ADVENTURER: "choose an adventurer",
    pb.STAGE_RECRUIT: "recruit a companion",
    pb.STAGE_MOVE_BLACK_DIE: "move the black die?",
    pb.STAGE_SKETAL_DIE: "the Sketal's die colour",
    pb.STAGE_CEMETERY_PICK: "send a companion to the cemetery",
    pb.STAGE_REROLLS: "reroll, fix or ready",
    pb.STAGE_REROLL_PICK: "pick dice to reroll",
    pb.STAGE_FIX_PAY: "pay the fix",
    pb.STAGE_FIX_PICK: "pick the die to set",
    pb.STAGE_FIX_FACE: "choose the face",
    pb.STAGE_RESOLVING: "resolve the triggered cards",
    pb.STAGE_RESURRECT: "take one back from the cemetery",
    pb.STAGE_JOURNEY: "journey",
    pb.STAGE_SKULL: "skull: lose a companion or cancel a spell",
}
# How a die face is written, and the colour its text is painted in.
FACES = {
    pb.SYMBOL_AIR: "air",
    pb.SYMBOL_WATER: "water",
    pb.SYMBOL_ROCK: "rock",
    pb.SYMBOL_FIRE: "fire",
    pb.SYMBOL_NATURE: "nature",
    pb.SYMBOL_FOOTPRINT: "foot",
    pb.SYMBOL_BURST: "+3",
    pb.SYMBOL_CURSE: "-2",
}
SOURCES = {
    pb.REROLL_SOURCE_TOKEN: "token",
    pb.REROLL_SOURCE_SCORE_TRACK: "track",
    pb.REROLL_SOURCE_LUMIPILI: "lumipili",
}
PAYMENTS = {pb.PAYMENT_FREE: "", pb.PAYMENT_DIE: " die", pb.PAYMENT_FOOTPRINT: " foot"}


def _name(enum, value: int, prefix: str) -> str:
    return enum.Name(value)[len(prefix) :].lower() if value in enum.values() else "?"


def _colour(value: int) -> str:
    return _name(pb.Colour, value, "COLOUR_")


def _width(text: str) -> int:
    return len(_ANSI.sub("", text))


def _wrap(first: str, parts: list[str], indent: int = 6) -> list[str]:
    """``first`` then the parts joined by two spaces, wrapped at WIDTH with an indent."""
    lines = [first]
    for part in parts:
        if _width(lines[-1]) + 2 + _width(part) > WIDTH and _width(lines[-1]) > indent:
            lines.append(" " * indent + part)
        else:
            sep = "" if not lines[-1].strip() or lines[-1].endswith(" ") else "  "
            lines[-1] += sep + part
    return lines


# Without colour a die names its colour by a letter (upper case: a large die).
LETTERS = {"green": "g", "blue": "b", "azure": "a", "red": "r", "orange": "o", "purple": "p",
           "yellow": "y", "black": "k"}  # fmt: skip


def _die(die, mark: str = "", dim: bool = False) -> str:
    colour = _colour(die.colour)
    face = FACES.get(die.face, "?")
    if not _colours.enabled():
        letter = LETTERS.get(colour, "?")
        face = f"{letter.upper() if die.large else letter}:{face}"
    text = f"[{face}{mark}]"
    if dim:
        return paint(text, "dim")
    styles = [colour] if colour in LETTERS else []
    if die.large:
        styles.append("bold")
    return paint(text, *styles)


def _condition(condition) -> str:
    words = []
    for word in condition.text.split():
        if word.startswith("!"):
            words.append(f"no {word[1:]}")
        elif word.isdigit() and words and words[-1] == "same":
            words[-1] = f"{word} alike"
        else:
            words.append(word)
    return "+".join(words) if words else "-"


def _effect(effect) -> str:
    parts = []
    for value, name in (
        (effect.bursts, "✦"),
        (effect.footprints, " foot"),
        (effect.fireflies, " firefly"),
        (effect.rerolls, " reroll"),
    ):
        if value:
            parts.append(f"{value:+d}{name}")
    flags = ((effect.skull, "skull"), (effect.spell, "spells"), (effect.resurrect, "raise"))
    parts += [name for flag, name in flags if flag]
    return " ".join(parts) or "nothing"


def _card(card) -> str:
    """A companion in one short phrase: name#id condition→effect, and its powers."""
    text = f"{paint(card.name, 'bold')}#{card.id}"
    if card.condition.text or _effect(card.effect) != "nothing":
        text += f" {_condition(card.condition)}→{_effect(card.effect)}"
    powers = []
    if card.bursts:
        powers.append(f"{card.bursts:+d}✦")
    if card.fireflies:
        powers.append(f"{card.fireflies} firefly")
    if card.rerolls:
        powers.append(f"{card.rerolls} reroll/round")
    if card.sketal:
        colour = _colour(card.sketal_colour) if card.sketal_colour else "any"
        powers.append(f"{colour} die")
    if card.black_die:
        powers.append("black die")
    if powers:
        text += " (" + ", ".join(powers) + ")"
    return text


def _spell(spell) -> str:
    return f"spell {spell.id} {_condition(spell.condition)}→{_effect(spell.effect)}"


def _seat_name(header, seat: int) -> str:
    if seat < len(header.seats):
        return header.seats[seat].name
    return f"Player {seat + 1}"


def _meeting_track(view) -> list[str]:
    lines = [paint("Meeting track", "bold")]
    for space in view.meeting_track:
        head = f"  {space.space} {FACES.get(space.element, '?'):6} "
        companion = _card(space.companion) if space.HasField("companion") else paint("—", "dim")
        extras = [_die(d) for d in space.dice]
        if space.footprints:
            extras.append(paint(f"+{space.footprints} foot", "cyan"))
        lines += _wrap(head + companion, extras, indent=11)
    return lines


def _supplies(view) -> list[str]:
    parts = [
        f"deck {view.deck_count}",
        f"box {view.box_count}",
        f"spell pile {view.spell_pile_count}",
        f"spells boxed {view.spells_boxed_count}",
        f"reroll tokens in the pool {view.reroll_pool}",
    ]
    lines = _wrap("  ", [" · ".join(parts)], indent=2)
    pool = [_die(d) for d in view.pool]
    lines += _wrap("  reserve pool:", pool or [paint("empty", "dim")], indent=4)
    cemetery = [f"{c.name}#{c.id}" for c in view.cemetery]
    lines += _wrap("  cemetery:", cemetery or [paint("empty", "dim")], indent=4)
    return lines


def _player(view, header, player) -> list[str]:
    seat = player.seat
    colour = _colour(player.adventurer.colour) if player.HasField("adventurer") else "white"
    acting = header.status == 1 and seat in header.to_act
    mark = paint("→ ", "bold") if acting else "  "
    name = _seat_name(header, seat)
    if header.HasField("viewer") and header.viewer == seat:
        name += " (you)"
    if view.HasField("first_player") and view.first_player == seat:
        name += " ☀first"
    title = mark + paint(name, colour, "bold")
    if player.HasField("adventurer"):
        a = player.adventurer
        title += f"  {paint(a.name, colour)}"
        if a.condition.text or _effect(a.effect) != "nothing":
            title += f" {_condition(a.condition)}→{_effect(a.effect)}"
        if a.bursts:
            title += f" ({a.bursts:+d}✦)"
    stats = [
        f"score {paint(str(player.score), 'bold')}",
        f"reroll tokens {player.reroll_tokens}"
        + (f" (+{player.reroll_tokens_due} due)" if player.reroll_tokens_due else ""),
        f"foot {player.footprints}",
        f"fireflies {player.fireflies}",
    ]
    state = (
        STAGES.get(player.stage, "") if (player.stage != pb.STAGE_IDLE or not player.done) else ""
    )
    if state and player.paid:
        state += f" ({player.paid}/3 paid)"
    if state:
        stats.append(paint(f"[{state}]", "yellow"))
    lines = _wrap(title, stats)
    # Dice: rolled ones with their face; cancelled (curse) ✗, used on the journey dimmed.
    dice = []
    for die in player.dice:
        mark_ = "✗" if die.id in player.cancelled else "*" if die.id in player.picked else ""
        dice.append(_die(die, mark_, dim=die.id in player.used))
    lines += _wrap("    dice:", dice or [paint("none", "dim")])
    resolved = set(player.resolved_companions)
    company = []
    for card in player.companions:
        text = _card(card)
        if view.step == pb.STEP_NOON and card.id in resolved:
            text += paint("✓", "green")
        company.append(text)
    lines += _wrap("    company:", company or [paint("no companion yet", "dim")])
    spells = [_spell(s) for s in player.spells]
    spells += [paint(_spell(s) + " (face down)", "dim") for s in player.own_face_down_spells]
    hidden = player.face_down_spell_count - len(player.own_face_down_spells)
    if hidden > 0:
        spells.append(paint(f"{hidden} face-down spell{'s' if hidden > 1 else ''}", "magenta"))
    if spells:
        lines += _wrap("    spells:", spells)
    return lines


def _spot(spot) -> str:
    if spot.HasField("village"):
        cost = f" {_effect(spot.on_enter)}" if _effect(spot.on_enter) != "nothing" else ""
        return paint(f"village({spot.village}✦{cost})", "yellow")
    if spot.need:
        return FACES.get(spot.need, "?")
    if spot.avoid:
        return f"no {FACES.get(spot.avoid, '?')}"
    return "free"


def _province(view, header) -> list[str]:
    board = view.province
    spots = {s.id: s for s in board.spots}
    links: dict[int, list[tuple[int, pb.Link]]] = {s: [] for s in spots}
    for link in board.links:
        links[link.a].append((link.b, link))
        links[link.b].append((link.a, link))
    lines = [
        paint("The Province of Shadows", "bold")
        + paint("  (spot: what entering needs; ⌂N: encampment of player N)", "dim")
    ]
    camps: dict[int, list[str]] = {}
    for player in view.players:
        colour = _colour(player.adventurer.colour) if player.HasField("adventurer") else "white"
        who = paint(_seat_name(header, player.seat), colour, "bold")
        camps.setdefault(player.encampment, []).append(
            paint(f" ⌂{player.seat + 1}", colour, "bold")
        )
        here = spots.get(player.company)
        head = f"  {who} company at {player.company}"
        if here is not None:
            head += f" {_spot(here)}"
        steps = []
        for other, link in sorted(links.get(player.company, []), key=lambda x: x[0]):
            text = f"{other}:{_spot(spots[other])}"
            if link.HasField("on_way"):
                text += f" (on the way {_effect(link.on_way)})"
            if other in player.visited:
                text = paint(text, "dim")
            steps.append(text)
        camp = spots.get(player.encampment)
        if camp is not None and camp.HasField("village"):
            head += f"  encampment {player.encampment}"
        lines += _wrap(head + "  next →", steps, indent=8)
    villages = []
    for spot in board.spots:
        if spot.HasField("village"):
            villages.append(f"{spot.id}:{spot.village}✦" + "".join(camps.get(spot.id, [])))
    lines += _wrap("  villages:", villages)
    return lines


def _archipelago(view, header) -> list[str]:
    board = view.archipelago
    lines = [
        paint("The Archipelago of Darkness", "bold")
        + paint("  (link: different elements needed [+foot cost])", "dim")
    ]
    boats: dict[int, list[str]] = {}
    for player in view.players:
        colour = _colour(player.adventurer.colour) if player.HasField("adventurer") else "white"
        for island in sorted(set(player.boats)):
            count = list(player.boats).count(island)
            text = f"P{player.seat + 1}" + (f"×{count}" if count > 1 else "")
            boats.setdefault(island, []).append(paint(text, colour, "bold"))
    links: dict[int, list[str]] = {i.id: [] for i in board.islands}
    for p in board.passages:
        need = f"{p.need_min}" if p.need_min == p.need_max else f"{p.need_min}-{p.need_max}"
        cost = f"+{p.footprints}foot" if p.footprints else ""
        links[p.a].append(f"{p.b}({need}{cost})")
        links[p.b].append(f"{p.a}({need}{cost})")
    for island in board.islands:
        value = f"{island.value}✦" if island.value else "  "
        arrival = _effect(island.on_arrival)
        arrival = "" if arrival == "nothing" else arrival
        head = f"  {island.id:2} {value:3} {arrival:10} → {' '.join(links[island.id]):24}"
        lines += _wrap(head, boats.get(island.id, []), indent=8)
        lines[-1] = lines[-1].rstrip()
    lines.append(paint("  boats: P<player>×<how many>", "dim"))
    return lines


def board(view, header) -> str:
    title = "The Archipelago of Darkness"
    if view.board != pb.BOARD_ARCHIPELAGO:
        title = "The Province of Shadows"
    day = f"day {view.day}/8" if view.day else "setup"
    lines = [
        paint(f"Glow · {title} · {day} · {STEPS.get(view.step, '?')}", "bold"),
    ]
    lines += _meeting_track(view)
    lines += _supplies(view)
    lines.append("")
    for player in view.players:
        lines += _player(view, header, player)
    lines.append("")
    if view.HasField("province"):
        lines += _province(view, header)
    elif view.HasField("archipelago"):
        lines += _archipelago(view, header)
    legend = "[face] in the die's colour, bold: large"
    if not _colours.enabled():
        legend = "[colour letter:face], capital: large (k black, a azure)"
    lines.append(paint(f"dice {legend}; ✗ cursed, * picked, dim: used", "dim"))
    if header.status == 1 and header.to_act:
        names = ", ".join(_seat_name(header, s) for s in header.to_act)
        lines.append(f"to act: {names}")
    return "\n".join(lines)


def move(message) -> str:
    """The move's text form, as the engine writes it (TurnRecord.move_text)."""
    kind = message.WhichOneof("kind")
    if kind == "adventurer":
        return f"adventurer {message.adventurer.adventurer}"
    if kind == "take":
        return f"take {message.take.space}"
    if kind == "black":
        if message.black.WhichOneof("target") == "stay":
            return "black stay"
        return f"black {message.black.space}"
    if kind == "die":
        return f"die {_colour(message.die.colour)}"
    if kind == "bury":
        return f"bury {message.bury.space}"
    if kind in ("reroll", "pay"):
        m = getattr(message, kind)
        text = f"{kind} {SOURCES.get(m.source, '?')}"
        return text + (f" {m.companion}" if m.source == pb.REROLL_SOURCE_LUMIPILI else "")
    if kind == "pick":
        return f"pick {message.pick.die}"
    if kind == "face":
        return f"face {_name(pb.Symbol, message.face.symbol, 'SYMBOL_')}"
    if kind == "resolve":
        card = message.resolve.WhichOneof("card")
        if card == "adventurer":
            return "resolve adventurer"
        if card == "spell":
            return f"resolve spell {message.resolve.spell}"
        return f"resolve {message.resolve.companion}"
    if kind == "raise_companion":
        m = message.raise_companion
        return "raise none" if m.WhichOneof("choice") == "nobody" else f"raise {m.companion}"
    if kind == "lose":
        return f"lose {message.lose.companion}"
    if kind == "cancel":
        m = message.cancel
        return "cancel hidden" if m.WhichOneof("spell") == "face_down" else f"cancel {m.revealed}"
    if kind == "go":
        return f"go {message.go.spot}{PAYMENTS.get(message.go.payment, ' ?')}"
    if kind == "sail":
        return f"sail {message.sail.from_island} {message.sail.to_island}"
    if kind in ("fix", "roll", "ready", "camp", "end"):
        return kind
    return "?"
