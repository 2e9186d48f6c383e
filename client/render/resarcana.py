"""Res Arcana Duo as text: the Places of Power and Monuments to claim, the Magic Items in
the middle, each player's tableau (Mage, Magic Item, Artifacts, Monuments and Places of
Power, turned or straight, with the essences on them), pool, VP, hand and draw pile
counts and discard pile; then the caller's own hand, draft and Mage choice. Fits a
100-column terminal."""

from __future__ import annotations

import re

from tabletop.resarcana.v1 import resarcana_pb2 as pb

from client.render.colour import paint

WIDTH = 98
_ANSI = re.compile(r"\033\[[0-9;]*m")

SEATS = ("Player 1", "Player 2")
ESSENCES = ("elan", "life", "calm", "death", "gold")
# The essences' colours on the table: red Elan, green Life, blue Calm, black Death, Gold.
COLOURS = {"elan": "red", "life": "green", "calm": "blue", "death": "black", "gold": "yellow"}
PHASES = {
    pb.PHASE_DRAFT: "setup: the draft",
    pb.PHASE_MAGE: "setup: choosing Mages",
    pb.PHASE_MAGIC_ITEM: "setup: choosing Magic Items",
    pb.PHASE_COLLECT: "1. Collect",
    pb.PHASE_ACTIONS: "2. Actions",
    pb.PHASE_OVER: "the game is over",
}
KINDS = {
    pb.CARD_KIND_ARTIFACT: "Artifact",
    pb.CARD_KIND_MAGE: "Mage",
    pb.CARD_KIND_MAGIC_ITEM: "Magic Item",
    pb.CARD_KIND_MONUMENT: "Monument",
    pb.CARD_KIND_PLACE_OF_POWER: "Place of Power",
}
TYPES = {pb.CARD_TYPE_CREATURE: "Creature", pb.CARD_TYPE_DRAGON: "Dragon",
         pb.CARD_TYPE_DEMON: "Demon"}  # fmt: skip
PILES = {pb.PILE_ARTIFACTS: "artifacts", pb.PILE_MONUMENTS: "monuments"}


def _width(text: str) -> int:
    return len(_ANSI.sub("", text))


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - _width(text))


def _wrap(first: str, parts: list[str], indent: int, sep: str = "  ") -> list[str]:
    """``first`` then the parts joined by ``sep``, wrapped at WIDTH under ``indent``."""
    lines = [first]
    for part in parts:
        if _width(lines[-1]) + len(sep) + _width(part) > WIDTH and _width(lines[-1]) > indent:
            lines.append(" " * indent + part)
        else:
            lines[-1] += ("" if lines[-1].endswith(" ") else sep) + part
    return lines


def _names(first: str, cards, indent: int) -> list[str]:
    """``first`` then the cards' names, comma separated, wrapped."""
    names = [card.name for card in cards]
    return _wrap(first, [n + "," for n in names[:-1]] + names[-1:], indent, " ")


def _counts(essences) -> list[tuple[str, int]]:
    return [(name, getattr(essences, name)) for name in ESSENCES if getattr(essences, name)]


def _bag(essences, empty: str = "") -> str:
    """``2 elan 1 gold`` in the essences' colours."""
    parts = [paint(f"{n} {name}", COLOURS[name]) for name, n in _counts(essences)]
    return " ".join(parts) if parts else empty


def _pool(essences) -> str:
    """Every essence, zero included, so pools line up."""
    return " ".join(
        paint(f"{name} {getattr(essences, name):2}", COLOURS[name]) for name in ESSENCES
    )


def _cost(card) -> str:
    if not card.HasField("cost"):
        return ""
    cost = card.cost
    parts = [paint(f"{n} {name}", COLOURS[name]) for name, n in _counts(cost.essences)]
    if cost.any:
        banned = "".join(f" !{ESSENCES[e - 1]}" for e in cost.any_excludes if 1 <= e <= 5)
        parts.append(f"{cost.any} any{banned}")
    return " + ".join(parts) if parts else "free"


def _points(card) -> str:
    text = f"{card.victory_points} VP" if card.victory_points else ""
    if card.victory_points_per_essence:
        text += (" + " if text else "") + f"{card.victory_points_per_essence} per essence on it"
    return text


def _abilities(card) -> list[str]:
    """The card's abilities, each a short part: collect, discount, powers (numbered)."""
    parts = []
    if card.collect:
        parts.append(f"collect {card.collect}")
    if card.discount:
        parts.append(f"discount {card.discount}")
    for i, power in enumerate(card.powers, 1):
        parts.append(paint(f"{i})", "bold") + f" {power}")
    return parts


def _types(card) -> str:
    return "/".join(TYPES[t] for t in card.types if t in TYPES)


def _title(card) -> str:
    types = _types(card)
    return paint(card.name, "bold") + (paint(f" [{types}]", "dim") if types else "")


def _card_lines(card, lead: str = "  ", facts: bool = True) -> list[str]:
    """One card with what it costs, its points and its abilities, wrapped."""
    head = lead + _title(card)
    extra = []
    if facts:
        cost = _cost(card)
        if cost:
            extra.append(f"cost {cost}")
        points = _points(card)
        if points:
            extra.append(points)
    if extra:
        head += paint(" (", "dim") + ", ".join(extra) + paint(")", "dim")
    return _wrap(head, _abilities(card), len(lead) + 4)


def _component_lines(component) -> list[str]:
    card = component.card
    state = paint("turned", "grey") + "  " if component.turned else paint("straight", "green")
    kind = _types(card) or KINDS.get(card.kind, "?")  # a Creature or Dragon is an Artifact
    on = _bag(component.essences)
    head = f"    {state} {_pad(paint(card.name, 'bold'), 22)} {_pad(paint(kind, 'dim'), 16)}"
    points = _points(card)
    parts = []
    if on:
        parts.append("on it: " + on)
    if points:
        parts.append(points)
    parts += _abilities(card)
    return _wrap(head, parts, 14)


def _player_lines(view, player, header) -> list[str]:
    seat = player.seat
    name = SEATS[seat] if seat < len(SEATS) else f"seat {seat}"
    to_act = seat in view.to_act and view.phase != pb.PHASE_OVER
    mark = paint("→ ", "bold") if to_act else "  "
    you = " (you)" if view.HasField("viewer") and view.viewer == seat else ""
    first = ""
    if view.first_player == seat:
        first = paint(
            "  First Player token" + (" (passed)" if view.first_player_token_passed else ""),
            "yellow",
        )
    passed = paint("  passed", "grey") if player.passed else ""
    lines = [
        mark
        + paint(f"{name}{you}", "bold")
        + f"  {paint(f'{player.victory_points} VP', 'bold')}"
        + first
        + passed,
        f"    pool {_pool(player.pool)}   hand {player.hand_count}  draw pile {player.deck_count}",
    ]
    if view.phase == pb.PHASE_DRAFT:
        lines.append(f"    draft: {player.draft_kept_count} kept so far")
    if view.phase == pb.PHASE_MAGE:
        lines.append(f"    Mage: {'chosen' if player.mage_chosen else 'choosing'} (secret)")
    for component in player.components:
        lines += _component_lines(component)
    if player.discard:
        lines += _names("    discard pile:", player.discard, 8)
    return lines


def board(view, header) -> str:
    lines = [
        paint("Res Arcana Duo", "bold")
        + f"  round {view.round}  {PHASES.get(view.phase, '?')}"
        + f"  {view.victory_points_to_win} VP to win"
    ]
    if view.places_of_power:
        lines.append(paint("Places of Power", "bold", "purple"))
        for card in view.places_of_power:
            lines += _card_lines(card)
    lines.append(
        paint("Monuments", "bold", "purple")
        + f"  ({view.monument_deck_count} face down in the deck)"
    )
    for card in view.monuments:
        lines += _card_lines(card)
    if view.magic_items:
        lines.append(paint("Magic Items in the middle", "bold", "purple"))
        for card in view.magic_items:
            lines += _card_lines(card, facts=False)
    for player in view.players:
        lines.append("")
        lines += _player_lines(view, player, header)
    own = _own_lines(view)
    if own:
        lines.append("")
        lines += own
    if view.step and view.phase != pb.PHASE_OVER:
        # One part per seat to act, in to_act order.
        lines.append("")
        for seat, step in zip(view.to_act, view.step.split(" | "), strict=False):
            who = SEATS[seat] if 0 <= seat < len(SEATS) else f"seat {seat}"
            lines.append(paint(f"{who} to", "bold") + f" {step}")
    return "\n".join(line.rstrip() for line in lines)


def _own_lines(view) -> list[str]:
    """What only the caller sees: its hand, draft, Mage choice and looked-at Monuments."""
    if not view.HasField("viewer"):
        return []
    lines = []
    drafting = view.phase == pb.PHASE_DRAFT
    sections = (
        ("Your hand", view.hand),
        ("Your draft: keep one of", view.draft_offer),
        ("Kept so far", view.draft_kept),
        ("Set aside for the rival", view.draft_given if drafting else ()),
        ("Your Mages to choose from", view.mage_options),
        ("Monuments you are looking at (return them on the deck)", view.looking),
    )
    for title, cards in sections:
        if not cards:
            continue
        lines.append(paint(title, "bold", "cyan"))
        for card in cards:
            lines += _card_lines(card)
    if view.draft_given and not drafting:
        lines += _names(paint("You gave the rival in the draft:", "cyan"), view.draft_given, 4)
    if view.HasField("mage_choice"):
        lines.append(
            paint("Your Mage choice", "bold", "cyan") + f": {view.mage_choice.name} (secret)"
        )
    if not view.hand and view.phase in (pb.PHASE_COLLECT, pb.PHASE_ACTIONS):
        lines.append(paint("Your hand", "bold", "cyan") + ": empty")
    return lines


# The field naming the card, for the moves that name one.
NAMED_BY = {
    "keep": "artifact", "mage": "mage", "item": "magic_item", "take": "component",
    "place": "artifact", "discard": "artifact", "turn": "component",
    "straighten": "component", "target": "component", "retrieve": "artifact",
    "return_card": "card",
}  # fmt: skip


def move(message) -> str:
    """The move's text form, as the engine writes it (TurnRecord.move_text)."""
    kind = message.WhichOneof("kind")
    if kind is None:
        return "?"
    body = getattr(message, kind)
    if kind == "done":
        return "done"
    if kind == "pass_action":
        return "pass"
    if kind in NAMED_BY:
        word = "return" if kind == "return_card" else kind
        return f"{word} {getattr(body, NAMED_BY[kind])}"
    if kind in ("gain", "pay"):
        return f"{kind} {_essence(body.essence)}"
    if kind == "waive":
        return "waive " + ("any" if body.WhichOneof("part") == "any" else _essence(body.essence))
    if kind == "option":
        return f"option {body.option}"
    if kind == "power":
        return f"power {body.component} {body.power}"
    if kind == "pile":
        return f"pile {PILES.get(body.pile, '?')}"
    target = body.WhichOneof("target")  # claim, monument
    if target is None:
        return f"{kind} ?"
    return f"{kind} " + ("deck" if target == "deck" else getattr(body, target))


def _essence(value: int) -> str:
    return ESSENCES[value - 1] if 1 <= value <= 5 else "?"
