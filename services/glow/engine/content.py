"""The components, read once from ``services/glow/content/*.json``.

Nothing here knows a rule: it turns the data files into small frozen records the rules
read. Replacing a content file with the publisher's real list needs no code change, as
long as it keeps the same fields.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONTENT_DIR = Path(__file__).resolve().parent.parent / "content"


def _load(name: str) -> dict[str, Any]:
    with open(CONTENT_DIR / name, encoding="utf-8") as handle:
        return json.load(handle)


_DICE = _load("dice.json")

SYMBOLS: tuple[str, ...] = tuple(_DICE["symbols"])
"""Every die face symbol, by index: the five elements first, then the special faces."""
SYMBOL = {name: i for i, name in enumerate(SYMBOLS)}
AIR, WATER, ROCK, FIRE, NATURE = (SYMBOL[s] for s in ("air", "water", "rock", "fire", "nature"))
FOOTPRINT, BURST, CURSE = SYMBOL["footprint"], SYMBOL["burst"], SYMBOL["curse"]
ELEMENTS: tuple[int, ...] = (AIR, WATER, ROCK, FIRE, NATURE)

COLOURS: tuple[str, ...] = tuple(_DICE["faces"])
COLOUR = {name: i for i, name in enumerate(COLOURS)}
FACES: tuple[tuple[int, ...], ...] = tuple(
    tuple(SYMBOL[s] for s in faces) for faces in _DICE["faces"].values()
)
"""The six faces of a die of each colour, by colour index."""
BLACK = COLOUR["black"]

MEETING_TRACK: tuple[int, ...] = tuple(SYMBOL[s] for s in _DICE["meeting_track"])
"""The element of each meeting-track space, left to right (a die goes to its result's space)."""
SPACE_OF_ELEMENT = {element: space for space, element in enumerate(MEETING_TRACK)}


@dataclass(frozen=True)
class Die:
    id: int
    colour: int
    large: bool
    home: str  # "adventurer", "pool" or "track": where it starts

    @property
    def faces(self) -> tuple[int, ...]:
        return FACES[self.colour]


DICE: tuple[Die, ...] = tuple(
    Die(d["id"], COLOUR[d["colour"]], d["size"] == "large", d["home"]) for d in _DICE["dice"]
)
BLACK_DIE = next(d.id for d in DICE if d.colour == BLACK)


@dataclass(frozen=True)
class Condition:
    """The combination of symbols a card needs (left of the gray arrow).

    ``need`` lists (symbol, count) pairs, one die each; ``same`` is a group of that many
    identical symbols (any symbol, special faces included); ``avoid`` the crossed symbols.
    """

    need: tuple[tuple[int, int], ...] = ()
    same: int = 0
    avoid: tuple[int, ...] = ()
    text: str = ""

    @property
    def empty(self) -> bool:
        return not (self.need or self.same or self.avoid)

    def times(self, counts: list[int]) -> int:
        """How many times the condition is met, each die used once per card.

        A condition with a crossed symbol is met at most once (The Crossed Symbols).
        """
        if self.empty:
            return 0
        for symbol in self.avoid:
            if counts[symbol]:
                return 0
        best = 1 << 30
        for symbol, n in self.need:
            best = min(best, counts[symbol] // n)
        if self.same:
            best = min(best, sum(c // self.same for c in counts))
        if self.avoid:
            best = min(best, 1)
        return best


def parse_condition(text: str) -> Condition:
    need: dict[int, int] = {}
    avoid: list[int] = []
    same = 0
    words = text.split()
    i = 0
    while i < len(words):
        word = words[i]
        if word == "same":
            same = int(words[i + 1])
            i += 2
            continue
        if word.startswith("!"):
            avoid.append(SYMBOL[word[1:]])
        else:
            need[SYMBOL[word]] = need.get(SYMBOL[word], 0) + 1
        i += 1
    return Condition(tuple(sorted(need.items())), same, tuple(sorted(avoid)), text)


@dataclass(frozen=True)
class Effect:
    """What a triggered card does (right of the gray arrow)."""

    bursts: int = 0
    footprints: int = 0
    fireflies: int = 0
    rerolls: int = 0
    skull: bool = False
    spell: bool = False
    resurrect: bool = False

    def text(self) -> str:
        parts = []
        for name in ("bursts", "footprints", "fireflies", "rerolls"):
            value = getattr(self, name)
            if value:
                parts.append(f"{value:+d} {name}")
        parts += [name for name in ("skull", "spell", "resurrect") if getattr(self, name)]
        return ", ".join(parts) or "nothing"


def _effect(data: dict[str, Any]) -> Effect:
    return Effect(**data)


ANY_COLOUR = -2
NO_DIE = -1


@dataclass(frozen=True)
class Card:
    """An adventurer (ids 101+) or a companion (ids 1-46): powers, condition and effect."""

    id: int
    name: str
    bursts: int  # at the end of the game; negative is a loss
    fireflies: int  # power: fireflies at the end
    rerolls: int  # power: rerolls each round (the Lumipilis)
    die: int  # power: a colour index, ANY_COLOUR or NO_DIE (the Sketals)
    black_die: bool  # Kaar
    condition: Condition
    effect: Effect
    pack: str = ""

    @property
    def once(self) -> bool:
        """Skulls and crossed symbols trigger at most once (The Conditions)."""
        return self.effect.skull or self.effect.resurrect or bool(self.condition.avoid)


@dataclass(frozen=True)
class Adventurer:
    id: int
    key: str  # the move text: "adventurer taetyss"
    name: str
    colour: int
    dice: int
    card: Card


_COMPANIONS = _load("companions.json")["companions"]
COMPANIONS: dict[int, Card] = {
    c["id"]: Card(
        id=c["id"],
        name=c["name"],
        bursts=c["bursts"],
        fireflies=c["fireflies"],
        rerolls=c["rerolls"],
        die=(NO_DIE if "die" not in c else ANY_COLOUR if c["die"] == "any" else COLOUR[c["die"]]),
        black_die=bool(c.get("black_die")),
        condition=parse_condition(c["condition"]),
        effect=_effect(c["effect"]),
        pack=c["pack"],
    )
    for c in _COMPANIONS
}
COMPANION_IDS: tuple[int, ...] = tuple(sorted(COMPANIONS))
PACKS: tuple[str, ...] = tuple(sorted({c.pack for c in COMPANIONS.values()}))

ADVENTURER_CARD_BASE = 100
ADVENTURERS: tuple[Adventurer, ...] = tuple(
    Adventurer(
        id=a["id"],
        key=a["key"],
        name=a["name"],
        colour=COLOUR[a["colour"]],
        dice=a["dice"],
        card=Card(
            id=ADVENTURER_CARD_BASE + a["id"],
            name=a["name"],
            bursts=a["bursts"],
            fireflies=0,
            rerolls=0,
            die=NO_DIE,
            black_die=False,
            condition=parse_condition(a["condition"]),
            effect=_effect(a["effect"]),
        ),
    )
    for a in _load("adventurers.json")["adventurers"]
)
ADVENTURER = {a.id: a for a in ADVENTURERS}
ADVENTURER_BY_KEY = {a.key: a for a in ADVENTURERS}


@dataclass(frozen=True)
class Spell:
    id: int
    condition: Condition
    effect: Effect


SPELLS: dict[int, Spell] = {
    s["id"]: Spell(s["id"], parse_condition(s["condition"]), _effect(s["effect"]))
    for s in _load("spells.json")["spells"]
}

_GAME = _load("game.json")
START_SCORE: int = _GAME["start_score"]
SCORE_TRACK_LENGTH: int = _GAME["score_track_length"]
REROLL_SPACES: tuple[int, ...] = tuple(sorted(_GAME["reroll_spaces"]))
REROLL_TOKENS: int = _GAME["reroll_tokens"]
REMOVED_PER_PACK: int = _GAME["removed_per_pack"]
TRACK_SPACES: int = _GAME["meeting_track_spaces"]
REROLLS_RIGHT_OF_FIRST: int = _GAME["rerolls_right_of_first"]
REROLLS_TO_SET_A_FACE: int = _GAME["rerolls_to_set_a_face"]
FIREFLY_BONUS: int = _GAME["firefly_bonus"]
BOATS: int = _GAME["boats"]
YELLOW_BURST: int = _GAME["yellow_burst"]
PURPLE_FOOTPRINTS: int = _GAME["purple_footprints"]
BLACK_LOSS: int = _GAME["black_loss"]
DAYS: int = (len(COMPANIONS) - REMOVED_PER_PACK * len(PACKS)) // TRACK_SPACES
"""Eight days: the deck holds 40 companions, five a day."""


@dataclass(frozen=True)
class Spot:
    """A space of the Province of Shadows."""

    id: int
    need: int  # an element a die must show, or -1
    avoid: int  # an element no counted die may show, or -1
    village: int  # bursts at the end for an encampment here, or -1 (not a village)
    on_enter: Effect


@dataclass(frozen=True)
class Province:
    title: str
    start: int
    spots: tuple[Spot, ...]
    links: tuple[tuple[int, ...], ...]  # per spot, the spots it links to (sorted)
    on_way: dict[tuple[int, int], Effect]  # (a, b) with a < b -> the space on that link


@dataclass(frozen=True)
class Island:
    id: int
    value: int
    on_arrival: Effect


@dataclass(frozen=True)
class Passage:
    """A link between two islands: the different elements it needs, and its footprint cost."""

    need_min: int
    need_max: int
    footprints: int


@dataclass(frozen=True)
class Archipelago:
    title: str
    start: int
    islands: tuple[Island, ...]
    links: tuple[tuple[int, ...], ...]
    passages: dict[tuple[int, int], Passage]  # (a, b) with a < b


def _province() -> Province:
    data = _load("province.json")
    spots = tuple(
        Spot(
            s["id"],
            SYMBOL[s["need"]] if "need" in s else -1,
            SYMBOL[s["avoid"]] if "avoid" in s else -1,
            s.get("village", -1),
            _effect(s.get("on_enter", {})),
        )
        for s in data["spots"]
    )
    adjacent: list[set[int]] = [set() for _ in spots]
    on_way = {}
    for link in data["links"]:
        a, b = link["a"], link["b"]
        adjacent[a].add(b)
        adjacent[b].add(a)
        on_way[(min(a, b), max(a, b))] = _effect(link.get("on_way", {}))
    return Province(
        data["title"], data["start"], spots, tuple(tuple(sorted(s)) for s in adjacent), on_way
    )


def _archipelago() -> Archipelago:
    data = _load("archipelago.json")
    islands = tuple(
        Island(i["id"], i["value"], _effect(i.get("on_arrival", {}))) for i in data["islands"]
    )
    adjacent: list[set[int]] = [set() for _ in islands]
    passages = {}
    for link in data["links"]:
        a, b = link["a"], link["b"]
        adjacent[a].add(b)
        adjacent[b].add(a)
        low, high = link["need"]
        passages[(min(a, b), max(a, b))] = Passage(low, high, link.get("footprints", 0))
    return Archipelago(
        data["title"],
        data["start"],
        islands,
        tuple(tuple(sorted(s)) for s in adjacent),
        passages,
    )


PROVINCE = _province()
ARCHIPELAGO = _archipelago()
BOARDS = ("province", "archipelago")
