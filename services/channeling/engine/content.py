"""The components, read once from content/components.json."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

_FILE = Path(__file__).resolve().parent.parent / "content" / "components.json"


@dataclass(frozen=True, order=True)
class MagicCircleCard:
    """Vigor: cubes needed to acquire it. Splendor: its points, and the cubes returned."""

    id: int
    vigor: int
    splendor: int


def _load() -> tuple[tuple[MagicCircleCard, ...], tuple[str, ...], int]:
    data = json.loads(_FILE.read_text(encoding="utf-8"))
    cards = tuple(
        MagicCircleCard(c["id"], c["vigor"], c["splendor"]) for c in data["magic_circle_cards"]
    )
    glyphs = tuple(data["glyphs"])
    if len(glyphs) != 8 or len(set(glyphs)) != 8:
        raise ValueError("The Channeling needs eight different glyph symbols")
    if len(cards) < 16 or len({c.id for c in cards}) != len(cards):
        raise ValueError("The Channeling needs at least 16 Magic Circle cards with distinct ids")
    return cards, glyphs, int(data["cubes_per_colour"])


CARDS, GLYPHS, CUBES_PER_COLOUR = _load()
CARD_BY_ID = {card.id: card for card in CARDS}
GLYPH_INDEX = {name: i for i, name in enumerate(GLYPHS)}
