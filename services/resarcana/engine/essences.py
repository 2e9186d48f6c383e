"""Essences and the arithmetic of paying for things.

A bag of essences is a tuple of five counts in the rulebook's order: Elan, Life, Calm,
Death, Gold. "Any essence" parts carry a count and a mask of forbidden types (the red
symbols: "no Gold", ...).
"""

from __future__ import annotations

ESSENCES = ("elan", "life", "calm", "death", "gold")
TITLES = ("Elan", "Life", "Calm", "Death", "Gold")
ELAN, LIFE, CALM, DEATH, GOLD = range(5)
ANY = 5  # the "any essence" symbol, where a move names one (``waive any``)
INDEX = {name: i for i, name in enumerate(ESSENCES)}
NONE = (0, 0, 0, 0, 0)

Bag = tuple[int, int, int, int, int]


def bag_text(bag: Bag | list[int], any_n: int = 0, excl: int = 0) -> str:
    """``1 Gold + 2 any (no Gold)``: how a bag is written for people."""
    parts = [f"{n} {TITLES[e]}" for e, n in enumerate(bag) if n]
    if any_n:
        banned = [TITLES[e] for e in range(5) if excl >> e & 1]
        parts.append(f"{any_n} any" + (f" (no {'/'.join(banned)})" if banned else ""))
    return " + ".join(parts) if parts else "nothing"


def can_pay(pool: list[int], fixed: Bag | list[int], any_n: int, excl: int, discount: int) -> bool:
    """Whether ``pool`` can pay ``fixed`` plus ``any_n`` essences (none of the ``excl``
    types), after a discount of ``discount`` essences of the payer's choice.

    The discount first covers what the pool lacks of the fixed part; what is left of it
    reduces the "any" part, which is never worse than reducing a fixed part the pool
    could pay (that only frees an essence that could pay the "any" part).
    """
    short = 0
    spare = 0
    for e in range(5):
        have = pool[e]
        need = fixed[e]
        if need > have:
            short += need - have
        elif not excl >> e & 1:
            spare += have - need
    if short > discount:
        return False
    return spare >= any_n - (discount - short)


def essence_value(pool: list[int]) -> int:
    """The tie-break count: essences in a pool, Gold counting as 2."""
    return sum(pool) + pool[GOLD]
