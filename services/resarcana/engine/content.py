"""The components, read once from ``content/components.toml`` and parsed into typed records.

The file is written in a small language of costs and effects (its header describes it).
Everything the engine needs to know about a card comes from here, so the publisher's
real list can replace the project's own design without code changes.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from services.resarcana.engine.essences import ESSENCES, INDEX, NONE, Bag

CONTENT_FILE = Path(__file__).resolve().parent.parent / "content" / "components.toml"

KINDS = ("artifact", "mage", "item", "monument", "place")
KIND_BIT = {name: 1 << i for i, name in enumerate(KINDS)}
TYPES = ("creature", "dragon", "demon")


@dataclass(frozen=True)
class Amount:
    """Fixed essences plus ``any_n`` essences of choice, none of the ``excl`` mask."""

    fixed: Bag = NONE
    any_n: int = 0
    excl: int = 0

    @property
    def empty(self) -> bool:
        return self.any_n == 0 and not any(self.fixed)


@dataclass(frozen=True)
class Cost:
    """A power's cost (or a placement cost, which only has essences)."""

    amount: Amount = Amount()
    turn_self: bool = False
    turn_mage: bool = False
    turn_other: tuple[str, ...] = ()  # one straightened Creature / Dragon each
    discard: int = 0


@dataclass(frozen=True)
class Clause:
    """One step of an effect: ``op`` with its amount, count or kinds."""

    op: str
    amount: Amount = Amount()
    n: int = 0
    kinds: int = 0


@dataclass(frozen=True)
class Power:
    cost: Cost
    effect: tuple[tuple[Clause, ...], ...]  # alternatives; one unless "|" was used
    text: str


@dataclass(frozen=True)
class Component:
    id: int
    slug: str
    name: str
    kind: str
    start: bool = False
    types: tuple[str, ...] = ()
    cost: Amount = Amount()
    vp: int = 0
    vp_per_essence: int = 0
    collect: tuple[Amount, ...] = ()  # alternatives ("/"); empty: no Collect ability
    discount: int = 0
    discount_on: str = ""  # "artifact" or a type such as "creature"
    powers: tuple[Power, ...] = ()
    tile: int = 0
    amber: bool = False
    design: str = "project"

    def is_type(self, kind_or_type: str) -> bool:
        return kind_or_type == self.kind or kind_or_type in self.types


class ContentError(ValueError):
    """The content file does not follow the language."""


_NUM = re.compile(r"^(\d+)\s+(.*)$")


def _count(term: str) -> tuple[int, str]:
    match = _NUM.match(term)
    return (int(match.group(1)), match.group(2).strip()) if match else (1, term.strip())


def parse_amount(text: str) -> Amount:
    fixed = [0, 0, 0, 0, 0]
    any_n = excl = 0
    for raw in text.split("+"):
        n, word = _count(raw.strip())
        if word.startswith("any"):
            any_n += n
            for ban in word.split()[1:]:
                if not ban.startswith("!") or ban[1:] not in INDEX:
                    raise ContentError(f"bad exclusion {ban!r} in {text!r}")
                excl |= 1 << INDEX[ban[1:]]
        elif word in INDEX:
            fixed[INDEX[word]] += n
        else:
            raise ContentError(f"unknown essence {word!r} in {text!r}")
    return Amount(tuple(fixed), any_n, excl)  # type: ignore[arg-type]  # one per essence


def parse_cost(text: str) -> Cost:
    turn_self = turn_mage = False
    others: list[str] = []
    discard = 0
    terms: list[str] = []
    for raw in text.split("+"):
        term = raw.strip()
        words = term.split()
        if words[0] == "turn":
            if len(words) == 1:
                turn_self = True
            elif words[1] == "mage":
                turn_mage = True
            elif words[1] in TYPES:
                others.append(words[1])
            else:
                raise ContentError(f"cannot turn {words[1]!r}")
        elif words[0] == "discard":
            discard += int(words[1]) if len(words) > 1 else 1
        else:
            terms.append(term)
    amount = parse_amount(" + ".join(terms)) if terms else Amount()
    return Cost(amount, turn_self, turn_mage, tuple(others), discard)


def _kinds(text: str) -> int:
    mask = 0
    for word in text.split("/"):
        if word not in KIND_BIT:
            raise ContentError(f"unknown kind {word!r}")
        mask |= KIND_BIT[word]
    return mask


def parse_clause(text: str) -> Clause:
    words = text.split()
    head = words[0]
    rest = " ".join(words[1:])
    if text == "gain monument":
        return Clause("monument")
    if text == "check victory":
        return Clause("check_victory")
    if text == "use item power":
        return Clause("item_power")
    if text == "place paid on own":
        return Clause("place_paid")
    if head == "place" and words[1] == "artifact":
        return Clause("place_artifact", n=-int(words[2]))
    if head == "place" and words[-1] == "here":
        return Clause("place_here", parse_amount(" ".join(words[1:-1])))
    if head == "gain":
        return Clause("gain", parse_amount(rest))
    if head == "rival" and words[1] == "gains":
        amount = parse_amount(" ".join(words[2:]))
        if amount.any_n:
            raise ContentError("a rival gains fixed essences only")
        return Clause("rival_gains", amount)
    if head in ("draw", "retrieve", "discard", "look"):
        return Clause(head, n=int(words[1]))
    if head == "straighten":
        return Clause("straighten", kinds=_kinds(rest))
    if head == "take" and words[2:] == ["from", "component"]:
        return Clause("take_from", n=int(words[1]))
    raise ContentError(f"unknown effect {text!r}")


def parse_power(text: str) -> Power:
    if "->" not in text:
        raise ContentError(f"a power needs 'cost -> effect': {text!r}")
    cost_text, effect_text = (part.strip() for part in text.split("->"))
    alternatives = tuple(
        tuple(parse_clause(c.strip()) for c in alt.split(";")) for alt in effect_text.split("|")
    )
    return Power(parse_cost(cost_text), alternatives, text)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower().replace("'", "")).strip("-")


@dataclass(frozen=True)
class Content:
    components: tuple[Component, ...]
    by_slug: dict[str, int]
    artifacts: tuple[int, ...]
    mages: tuple[int, ...]
    items: tuple[int, ...]
    monuments: tuple[int, ...]
    places: tuple[int, ...]
    monument_cost: Amount
    start_pool: Bag
    first_game_vp: int
    full_game_vp: int
    draft_rounds: int
    mages_dealt: int
    artifacts_dealt: int
    starting_hand: int
    first_game_draw_pile: int

    def __getitem__(self, cid: int) -> Component:
        return self.components[cid]


def load(path: Path = CONTENT_FILE) -> Content:
    with open(path, "rb") as handle:
        data = tomllib.load(handle)
    components: list[Component] = []
    ids: dict[str, list[int]] = {kind: [] for kind in KINDS}
    for kind in KINDS:
        for entry in data.get(kind, []):
            cid = len(components)
            discount, discount_on = 0, ""
            if "discount" in entry:
                n, on = _count(entry["discount"])
                discount, discount_on = n, on
            collect: tuple[Amount, ...] = ()
            if "collect" in entry:
                collect = tuple(parse_amount(alt.strip()) for alt in entry["collect"].split(" / "))
            for t in entry.get("types", []):
                if t not in TYPES:
                    raise ContentError(f"unknown type {t!r}")
            components.append(
                Component(
                    id=cid,
                    slug=entry.get("slug", _slug(entry["name"])),
                    name=entry["name"],
                    kind=kind,
                    start=entry.get("start", False),
                    types=tuple(entry.get("types", [])),
                    cost=parse_amount(entry["cost"]) if "cost" in entry else Amount(),
                    vp=entry.get("vp", 0),
                    vp_per_essence=entry.get("vp_per_essence", 0),
                    collect=collect,
                    discount=discount,
                    discount_on=discount_on,
                    powers=tuple(parse_power(p) for p in entry.get("powers", [])),
                    tile=entry.get("tile", 0),
                    amber=entry.get("amber", False),
                    design=entry.get("design", "project"),
                )
            )
            ids[kind].append(cid)
    by_slug = {c.slug: c.id for c in components}
    if len(by_slug) != len(components):
        raise ContentError("two components share a slug")
    reserved = {"deck", "any", "artifacts", "monuments", *ESSENCES}
    if reserved & set(by_slug):
        raise ContentError("a slug collides with a move word")
    rules = data["rules"]
    monument_cost = parse_amount(rules["monument_cost"])
    if monument_cost.any_n:
        raise ContentError("the Monument cost must be fixed (the deck's top is claimed blind)")
    return Content(
        components=tuple(components),
        by_slug=by_slug,
        artifacts=tuple(ids["artifact"]),
        mages=tuple(ids["mage"]),
        items=tuple(ids["item"]),
        monuments=tuple(ids["monument"]),
        places=tuple(ids["place"]),
        monument_cost=monument_cost,
        start_pool=parse_amount(rules["start_pool"]).fixed,
        first_game_vp=rules["first_game_vp"],
        full_game_vp=rules["full_game_vp"],
        draft_rounds=rules["draft_rounds"],
        mages_dealt=rules["mages_dealt"],
        artifacts_dealt=rules["artifacts_dealt"],
        starting_hand=rules["starting_hand"],
        first_game_draw_pile=rules["first_game_draw_pile"],
    )


CONTENT = load()
