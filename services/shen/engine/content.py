"""The card pool, read once at import from services/shen/content/.

Cards are data. Every ability and every non-Avatar card is one *effect* from a small set
the engine interprets (see ``EFFECTS``), so a new card needs a new entry in a TOML file
and no new code. The pool is the union of every Realm file in content/realms/.
"""

from __future__ import annotations

import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CONTENT = Path(__file__).resolve().parent.parent / "content"

CARD_TYPES = ("avatar", "item", "instant", "remains")
TIMINGS = ("main", "action", "combat")

# effect name -> what it needs to be chosen when it resolves.
#   none   - resolves at once                     (draw, recover)
#   foe    - an opponent                          (drain)
#   vertex - a vertex of the Spirit Path          (place_shen, remove_shen, convert_shen)
#   avatar - an opponent's Avatar                 (strike, banish)
#   combat - changes the combat it is played in   (power, ward)
EFFECTS = {
    "draw": "none",  # draw `amount` cards
    "recover": "none",  # take up to `amount` cards from the top of your discard pile
    "drain": "foe",  # that opponent loses `amount` cards
    "place_shen": "vertex",  # place one of your Shén counters (the placement rule holds)
    "remove_shen": "vertex",  # remove an opponent's Shén counter; its owner loses a card
    "convert_shen": "vertex",  # an opponent's Shén counter becomes yours
    "strike": "avatar",  # its owner loses `amount` cards or gives the Avatar up
    "banish": "avatar",  # the Avatar is removed from the game
    "power": "combat",  # +amount to your side's power: one die and one lost card each
    "ward": "combat",  # you lose `amount` fewer cards from this combat
}
AURAS = ("melee", "defense", "ranged", "move", "shen")
TRAITS = ("melee", "defense", "ranged", "move")


@dataclass(frozen=True)
class Effect:
    kind: str
    amount: int = 0
    range: int = 0  # for an ability's "avatar" target: spaces from the user

    @property
    def target(self) -> str:
        return EFFECTS[self.kind]


@dataclass(frozen=True)
class Ability:
    """An Avatar's or Item's ability: ``cost`` Shén around its bearer, used at ``timing``.

    ``action``: after a move (exhausts the Avatar) or by a combat's winner; ``combat``:
    during a combat's card-and-ability step, by the Avatar fighting.
    """

    name: str
    cost: int
    timing: str
    effect: Effect


@dataclass(frozen=True)
class Card:
    index: int  # position in POOL.cards (cards sorted by id): what moves carry
    id: str
    name: str
    realm: str
    type: str
    cost: int
    melee: int = 0
    defense: int = 0
    ranged: int = 0
    move: int = 0
    abilities: tuple[Ability, ...] = ()
    timing: str = ""  # instants: "main" (Celestial Influence Phase) or "combat"
    effect: Effect | None = None  # instants
    bonus: tuple[tuple[str, int], ...] = ()  # items: traits the bearer gains
    aura: tuple[tuple[str, int], ...] = ()  # Remains in Play: for all your Avatars

    @property
    def is_avatar(self) -> bool:
        return self.type == "avatar"

    @property
    def is_spirit(self) -> bool:
        # "Avatars that have Spirit in their name are manifested onto a vertex".
        return self.type == "avatar" and "Spirit" in self.name.split()

    def bonus_of(self, trait: str) -> int:
        for name, value in self.bonus:
            if name == trait:
                return value
        return 0

    def aura_of(self, trait: str) -> int:
        for name, value in self.aura:
            if name == trait:
                return value
        return 0


@dataclass(frozen=True)
class Realm:
    id: str
    name: str
    summary: str
    deck: tuple[int, ...]  # the ready-made deck, card indexes, sorted
    reserve: tuple[int, ...]  # in order: a deck of N > min_deck takes the first N - min


@dataclass(frozen=True)
class Pool:
    cards: tuple[Card, ...]
    by_id: dict[str, int]
    realms: dict[str, Realm]
    realm_order: tuple[str, ...]
    min_deck: int
    max_deck: int
    max_copies: int


class ContentError(ValueError):
    """A content file breaks the pool's own rules (caught at import)."""


def _effect(raw: dict[str, Any], where: str) -> Effect:
    kind = raw.get("effect")
    if kind not in EFFECTS:
        raise ContentError(f"{where}: unknown effect {kind!r}")
    return Effect(kind, int(raw.get("amount", 0)), int(raw.get("range", 0)))


def _card(raw: dict[str, Any], realm: str) -> dict[str, Any]:
    where = raw.get("id", "?")
    kind = raw.get("type")
    if kind not in CARD_TYPES:
        raise ContentError(f"{where}: unknown card type {kind!r}")
    card: dict[str, Any] = {
        "id": raw["id"],
        "name": raw["name"],
        "realm": realm,
        "type": kind,
        "cost": int(raw["cost"]),
    }
    if not 0 <= card["cost"] <= 5:
        raise ContentError(f"{where}: a power cost is 0 to 5")
    traits = raw.get("traits", {})
    if kind == "avatar":
        for trait in TRAITS:
            card[trait] = int(traits.get(trait, 0))
    abilities = []
    for ability in raw.get("abilities", []):
        if ability.get("timing") not in ("action", "combat"):
            raise ContentError(f"{where}: an ability's timing is action or combat")
        effect = _effect(ability, where)
        if (effect.target == "combat") != (ability["timing"] == "combat"):
            raise ContentError(f"{where}: {effect.kind} does not fit timing {ability['timing']}")
        abilities.append(Ability(ability["name"], int(ability["cost"]), ability["timing"], effect))
    if abilities and kind not in ("avatar", "item"):
        raise ContentError(f"{where}: only Avatars and Items have abilities")
    card["abilities"] = tuple(abilities)
    if kind == "instant":
        card["timing"] = raw.get("timing")
        if card["timing"] not in ("main", "combat"):
            raise ContentError(f"{where}: an instant's timing is main or combat")
        card["effect"] = _effect(raw, where)
        if (card["effect"].target == "combat") != (card["timing"] == "combat"):
            raise ContentError(f"{where}: {card['effect'].kind} does not fit {card['timing']}")
    if kind == "item":
        bonus = raw.get("bonus", {})
        if set(bonus) - set(TRAITS):
            raise ContentError(f"{where}: an item's bonus names traits {TRAITS}")
        card["bonus"] = tuple(sorted((k, int(v)) for k, v in bonus.items()))
    if kind == "remains":
        aura = raw.get("aura", {})
        if set(aura) - set(AURAS) or not aura:
            raise ContentError(f"{where}: a Remains in Play card has an aura of {AURAS}")
        card["aura"] = tuple(sorted((k, int(v)) for k, v in aura.items()))
    return card


def load(folder: Path = CONTENT) -> Pool:
    with open(folder / "pool.toml", "rb") as handle:
        rules = tomllib.load(handle)
    raw_cards: list[dict[str, Any]] = []
    raw_realms: dict[str, dict[str, Any]] = {}
    for path in sorted((folder / "realms").glob("*.toml")):
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
        realm = data["realm"]["id"]
        raw_realms[realm] = data
        raw_cards.extend(_card(card, realm) for card in data.get("cards", []))
    raw_cards.sort(key=lambda c: c["id"])
    ids = [c["id"] for c in raw_cards]
    if len(set(ids)) != len(ids):
        raise ContentError("card ids must be unique across the pool")
    cards = tuple(Card(index=i, **c) for i, c in enumerate(raw_cards))
    by_id = {c.id: c.index for c in cards}
    min_deck, max_deck, copies = rules["min_deck"], rules["max_deck"], rules["max_copies"]
    realms: dict[str, Realm] = {}
    for realm_id in rules["realms"]:
        data = raw_realms[realm_id]
        deck: list[int] = []
        for card_id, count in data["deck"]["cards"].items():
            deck.extend([by_id[card_id]] * count)
        reserve = tuple(by_id[card_id] for card_id in data["deck"]["reserve"])
        if len(deck) != min_deck or len(deck) + len(reserve) < max_deck:
            raise ContentError(f"{realm_id}: a ready-made deck is {min_deck} cards + reserve")
        full = Counter(deck) + Counter(reserve)
        if max(full.values()) > copies:
            raise ContentError(f"{realm_id}: more than {copies} copies of a card")
        realms[realm_id] = Realm(
            realm_id, data["realm"]["name"], data["realm"]["summary"], tuple(sorted(deck)), reserve
        )
    return Pool(cards, by_id, realms, tuple(rules["realms"]), min_deck, max_deck, copies)


POOL = load()
CARDS = POOL.cards
