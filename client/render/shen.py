"""Shén as text: the field's spaces and vertices with Shén counters, Realm Stones, Avatars,
Spirit Avatars and Anchor Points; then each player's counts, the Avatars, the caller's
hand, and whose turn, phase and decision it is. At most 100 columns on every field size.

On the grid, spaces (lower case names) are the cells and vertices (capitals) the corners:

    -+-  an empty vertex         (2)  a Shén counter of Clan 2
    [2]  Clan 2's Realm Stone    {2}  a Spirit Avatar of Clan 2 (on its own counter)
    2Warr  an Avatar of Clan 2 (z: Exhausted), +1: one Item equipped
    #2   an Anchor Point held by Clan 2 (#-: unclaimed)
"""

from __future__ import annotations

from typing import Any

from client.render.colour import paint

WIDTH = 100
LABEL = 4  # the row labels' columns
SEAT_COLOURS = ("red", "azure", "green", "yellow", "magenta", "orange")
STEPS = {
    1: "Pre-Game: placing Realm Stones",
    2: "1) Recovery and Set-Up Phase",
    3: "2) Celestial Influence Phase",
    4: "3) Claim, Move, and Attack Phase",
    5: "3) Claim, Move, and Attack Phase: an Avatar is moving",
    6: "3) Claim, Move, and Attack Phase: after a move",
    7: "game over",
}
PENDING = {
    2: "choose a card to lose",
    3: "give the Avatar up or lose cards",
    4: "choose where the Avatar retreats",
    5: "choose the opponent who loses cards",
    6: "choose a target",
    7: "combat: play a card, use an ability, or pass",
    8: "the winning Avatar may use an ability",
}
COMBATS = {1: "melee", 2: "ranged attack", 3: "attack on a Realm Stone"}


def _seat_colour(seat: int) -> str:
    return SEAT_COLOURS[seat % len(SEAT_COLOURS)]


def _clan(seat: int) -> str:
    return str(seat + 1)


def _seat_name(header, seat: int) -> str:
    if 0 <= seat < len(header.seats):
        return header.seats[seat].name
    return f"Clan {seat + 1}"


def _short(name: str, realm: str, width: int) -> str:
    """An Avatar's name on the grid: its name without the Realm word, cut to ``width``."""
    words = name.split()
    if len(words) > 1 and words[0].lower() == realm:
        words = words[1:]
    return words[0][:width]


class _Line:
    """A line built from parts, measured on the text without colour codes."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.width = 0

    def add(self, text: str, *styles: str) -> _Line:
        self.parts.append(paint(text, *styles) if styles else text)
        self.width += len(text)
        return self

    def __str__(self) -> str:
        return "".join(self.parts)


Parts = list[tuple[str, tuple[str, ...]]]


def _wrapped(first: _Line, items: Parts, indent: int = 4) -> list[str]:
    """``first`` then the items separated by two spaces, wrapped at WIDTH columns."""
    lines = [first]
    for text, styles in items:
        line = lines[-1]
        if line.width + 2 + len(text) > WIDTH and line.width > indent:
            line = _Line().add(" " * indent)
            lines.append(line)
        elif line.width:
            line.add("  ")
        line.add(text, *styles)
    return [str(line) for line in lines]


def _cell_width(size: int) -> int:
    return max(3, min(7, (WIDTH - LABEL - 3 * (size + 1)) // size))


def _grid(view, cards: dict) -> list[str]:
    n = view.size
    w = _cell_width(n)
    counters = {c.vertex: c.seat for c in view.shen_counters}
    stones = {s.vertex: s.seat for s in view.realm_stones}
    anchors = {a.space: (a.holder if a.HasField("holder") else None) for a in view.anchor_points}
    at = {a.location: a for a in view.avatars}

    head = _Line().add(" " * LABEL)
    for x in range(n + 1):
        head.add(f" {chr(65 + x)} ", "bold")
        if x < n:
            head.add(f"{chr(97 + x):^{w}}", "bold")
    lines = [str(head)]
    for y in range(n + 1):
        line = _Line().add(f"{y + 1:>3} ", "bold")
        for x in range(n + 1):
            vertex = f"{chr(65 + x)}{y + 1}"
            avatar = at.get(vertex)
            if avatar is not None:
                line.add(f"{{{_clan(avatar.owner)}}}", _seat_colour(avatar.owner), "bold")
            elif vertex in stones:
                line.add(f"[{_clan(stones[vertex])}]", _seat_colour(stones[vertex]), "bold")
            elif vertex in counters:
                line.add(f"({_clan(counters[vertex])})", _seat_colour(counters[vertex]))
            else:
                line.add("-+-", "grey")
            if x < n:
                line.add("-" * w, "grey")
        lines.append(str(line))
        if y == n:
            break
        top = _Line().add(f"{y + 1:>3}  ", "bold")
        bottom = _Line().add(" " * (LABEL + 1))
        room = w + 2  # a cell's text runs between the vertical lines under two vertices
        for x in range(n):
            space = f"{chr(97 + x)}{y + 1}"
            top.add("|", "grey")
            bottom.add("|", "grey")
            avatar = at.get(space)
            if avatar is not None:
                card = cards.get(avatar.card)
                name = card.name if card is not None else avatar.card
                realm = card.realm if card is not None else ""
                lead = " " if room > 5 else ""
                short = _short(name, realm, room - 2 - 2 * len(lead))
                text = f"{lead}{_clan(avatar.owner)}{short}"
                text = f"{text:<{room - 1}}" + (" " if avatar.ready else "z")
                top.add(text, _seat_colour(avatar.owner), *(("bold",) if avatar.ready else ()))
            else:
                top.add(" " * room)
            # The second line: the Anchor Point, and the Avatar's Items if room is left.
            bottom.add(" ")
            anchor = ""
            if space in anchors:
                holder = anchors[space]
                anchor = "#" + ("-" if holder is None else _clan(holder))
                styles = ("bold",) if holder is None else ("bold", _seat_colour(holder))
                bottom.add(anchor, *styles)
            items = len(avatar.items) if avatar is not None else 0
            extra = ""
            if items and not anchor:
                extra = f"+{items}"
            elif items and len(anchor) + 3 <= room - 1:
                extra = f" +{items}"
            bottom.add(extra + " " * (room - 1 - len(anchor) - len(extra)))
        top.add("|", "grey")
        bottom.add("|", "grey")
        lines.append(str(top))
        lines.append(str(bottom))
    return lines


def _players(view, header, cards: dict) -> list[str]:
    lines = []
    teams = len({p.team for p in view.players}) < len(view.players)
    deciding = set(view.to_act)
    for p in view.players:
        colour = _seat_colour(p.seat)
        mark = "→ " if p.seat == view.active and view.step != 7 else "  "
        if p.seat in deciding and p.seat != view.active:
            mark = "! "
        name = _seat_name(header, p.seat)
        first = _Line().add(mark, "bold").add(f"{name:<7}", colour, "bold")
        parts: Parts = [(f"{p.realm:<5}", (colour,))]
        if teams:
            parts.append((f"team {p.team + 1}", ()))
        parts.append((f"stone {p.realm_stone or '-':<3}", ()))
        parts.append((f"hand {p.hand_count:>2}  deck {p.deck_count:>2}", ()))
        parts.append((f"discard {len(p.discard):>2}  lost {len(p.removed):>2}", ()))
        if p.anchor_points:
            parts.append(("anchor points " + " ".join(p.anchor_points), ("bold",)))
        if p.out:
            parts.append(("OUT", ("red", "bold")))
        if p.remains_in_play:
            names = [cards[c].name if c in cards else c for c in p.remains_in_play]
            parts.append(("remains in play: " + ", ".join(names), ()))
        lines.extend(_wrapped(first, parts, indent=11))
    return lines


def _avatars(view, header, cards: dict) -> list[str]:
    if not view.avatars:
        return []
    lines = [paint("Avatars", "bold")]
    for a in sorted(view.avatars, key=lambda a: (a.owner, a.uid)):
        card = cards.get(a.card)
        name = card.name if card is not None else a.card
        t = a.traits
        first = _Line().add(f"  {a.location:<4}")
        first.add(f"{_seat_name(header, a.owner):<7}", _seat_colour(a.owner))
        parts: Parts = [
            (f"{name:<23}", (_seat_colour(a.owner),)),
            (f"melee {t.melee} defence {t.defense} ranged {t.ranged} move {t.movement}", ()),
            ("ready" if a.ready else "exhausted", () if a.ready else ("grey",)),
        ]
        if a.items:
            names = [cards[i].name if i in cards else i for i in a.items]
            parts.append(("items: " + ", ".join(names), ()))
        lines.extend(_wrapped(first, parts, indent=13))
    return lines


def _hand(view, cards: dict) -> list[str]:
    if not view.HasField("viewer"):
        return []
    counted: dict[str, int] = {}
    for card_id in view.hand:
        counted[card_id] = counted.get(card_id, 0) + 1
    parts: list[tuple[str, tuple[str, ...]]] = []
    for card_id, count in counted.items():
        card = cards.get(card_id)
        text = f"{card.name} ({card.cost})" if card is not None else card_id
        parts.append((text + (f" x{count}" if count > 1 else ""), ()))
    if not parts:
        parts.append(("(empty)", ("grey",)))
    return _wrapped(_Line().add(f"Your hand ({len(view.hand)}):", "bold"), parts, indent=4)


def _status(view, header, cards: dict) -> list[str]:
    lines = []
    if view.step == 7:
        names = ", ".join(_seat_name(header, s) for s in view.winners) or "nobody"
        lines.append(paint(f"game over ({view.end_reason}): won by {names}", "bold"))
        return lines
    active = _seat_name(header, view.active)
    phase = STEPS.get(view.step, "?")
    if view.step == 1 and view.first_player_rolls:
        rolls = view.first_player_rolls[-1].totals
        shown = ", ".join(f"{_seat_name(header, s)} {t}" for s, t in enumerate(rolls) if t)
        lines.append(f"2d6 for the first player: {shown}")
    turn = f"turn {view.turn}: " if view.turn else ""
    lines.append(paint(f"{turn}{active}'s turn, {phase}", "bold"))
    if view.playing:
        card = cards.get(view.playing)
        lines.append(f"  playing {card.name if card is not None else view.playing}")
    if view.moving:
        left = f", {view.steps_left} step(s) left" if view.step == 5 else ""
        lines.append(f"  the Avatar at {view.moving} is moving{left}")
    if view.HasField("combat"):
        c = view.combat
        lines.append(
            f"  combat, {COMBATS.get(c.kind, '?')}: {_seat_name(header, c.attacker)} from"
            f" {c.origin} against {_seat_name(header, c.defender)} at {c.target}"
        )
        line = (
            f"    bonuses +{c.attacker_power}/+{c.defender_power},"
            f" wards {c.attacker_ward}/{c.defender_ward}"
        )
        if c.HasField("dice"):
            line += f"; dice {_dice(c.dice)}"
        lines.append(line)
    elif view.HasField("last_roll"):
        lines.append(f"  last combat's dice: {_dice(view.last_roll)}")
    if view.pending not in (0, 1) and view.to_act:
        who = _seat_name(header, view.to_act[0])
        what = PENDING.get(view.pending, "decide")
        count = f" ({view.pending_count})" if view.pending_count else ""
        lines.append(paint(f"  {who} to decide: {what}{count}", "bold"))
    return lines


def _dice(dice) -> str:
    attack = " ".join(map(str, dice.attacker)) or "-"
    defence = " ".join(map(str, dice.defender)) or "-"
    return f"attack {attack} = {sum(dice.attacker)}, defence {defence} = {sum(dice.defender)}"


def board(view, header) -> str:
    cards = {c.id: c for c in view.cards}
    lines = _grid(view, cards)
    lines.append(
        paint(
            "  n = clan:  (n) Shén counter  [n] Realm Stone  {n} Spirit Avatar  #n Anchor Point"
            " (#- unclaimed)",
            "grey",
        )
    )
    lines.append(paint("             nName Avatar  (z: Exhausted, +n: Items equipped)", "grey"))
    lines.append("")
    lines.extend(_players(view, header, cards))
    avatars = _avatars(view, header, cards)
    if avatars:
        lines.append("")
        lines.extend(avatars)
    hand = _hand(view, cards)
    if hand:
        lines.append("")
        lines.extend(hand)
    lines.append("")
    lines.extend(_status(view, header, cards))
    return "\n".join(lines)


def move(message) -> str:
    """The move's text form, the same as the engine's ``str(move)``."""
    kind = message.WhichOneof("kind")
    m: Any = getattr(message, kind) if kind else None
    if kind == "stone":
        return f"stone {m.vertex}"
    if kind == "draw":
        return "draw"
    if kind == "shen":
        return f"shen {m.vertex}"
    if kind == "play":
        return f"play {m.card}"
    if kind == "target":
        return f"target {m.location}"
    if kind == "foe":
        return f"foe {m.seat}"
    if kind == "claim":
        return f"claim {m.space}"
    if kind == "siege":
        return f"siege {m.avatar} {m.stone}"
    if kind == "step":
        return f"step {m.origin} {m.destination}"
    if kind == "hold":
        return f"hold {m.avatar}"
    if kind == "stop":
        return "stop"
    if kind == "ability":
        return f"ability {m.index}"
    if kind == "ranged":
        return f"ranged {m.target}"
    if kind == "remove_avatar":
        return "remove avatar"
    if kind == "lose_cards":
        return "lose cards"
    if kind == "retreat":
        return f"retreat {m.location}"
    if kind == "lose_hand":
        return f"lose hand {m.card}"
    if kind == "lose_deck":
        return "lose deck"
    if kind == "lose_discard":
        return f"lose discard {m.card}"
    if kind == "pass_decision":
        return "pass"
    if kind == "end_turn":
        return "end"
    return "?"
