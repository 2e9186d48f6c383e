"""Moves: small typed values with a short text form, as python-chess's UCI.

A move is ``Move(kind, a, b)``: a NamedTuple, so it is frozen, hashable and totally
ordered (by kind, then its fields), whatever its kind. Each kind will be one case of the
protobuf ``oneof``. ``a`` is a component id, an essence index, a pile or an option
number; ``b`` is a power number. ``str(move)`` is the text form and ``parse_move`` its
exact inverse::

    >>> str(Move(Kind.PAY, 2))
    'pay calm'
    >>> parse_move("power smith 2") == Move(Kind.POWER, CONTENT.by_slug["smith"], 2)
    True
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from services.kit.engine import MalformedMove
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.essences import ANY, ESSENCES, INDEX

DECK = -1  # the face-down top card of the Monument deck


class Kind(IntEnum):
    KEEP = 1  # draft: keep this card, the other goes to the rival
    MAGE = 2  # choose your Mage
    ITEM = 3  # take a Magic Item (setup, and the swap when passing)
    GAIN = 4  # take one essence of your choice (collect, discard, effects)
    OPTION = 5  # choose one side of a "/" or "|" choice (1-based)
    TAKE = 6  # collect: take all essences from one of your components
    DONE = 7  # end an optional step
    PLACE = 8  # place an Artifact from your hand
    CLAIM = 9  # claim a Monument (or the deck's top) or a Place of Power
    DISCARD = 10  # discard an Artifact from your hand
    POWER = 11  # use power b (1-based) of component a
    PASS = 12
    PAY = 13  # pay one essence of an "any" cost
    WAIVE = 14  # spend one point of discount on this essence (or "any")
    TURN = 15  # turn this component to pay a cost
    STRAIGHTEN = 16
    TARGET = 17  # the component an effect works on
    RETRIEVE = 18  # take this card from your discard pile
    RETURN = 19  # put this card back on its pile (the first returned ends on top)
    PILE = 20  # 0: your draw pile, 1: the Monument deck
    MONUMENT = 21  # gain this Monument (or the deck's top) from an effect


WORDS = {kind: kind.name.lower() for kind in Kind}
KINDS_BY_WORD = {word: kind for kind, word in WORDS.items()}
PILES = ("artifacts", "monuments")

# Which component kinds a move's ``a`` may name.
_COMPONENT_KINDS: dict[Kind, tuple[str, ...]] = {
    Kind.KEEP: ("artifact",),
    Kind.MAGE: ("mage",),
    Kind.ITEM: ("item",),
    Kind.TAKE: ("artifact", "mage", "monument", "place"),
    Kind.PLACE: ("artifact",),
    Kind.CLAIM: ("monument", "place"),
    Kind.DISCARD: ("artifact",),
    Kind.POWER: ("artifact", "mage", "item", "monument", "place"),
    Kind.TURN: ("artifact", "mage", "item", "monument", "place"),
    Kind.STRAIGHTEN: ("artifact", "mage", "item", "monument", "place"),
    Kind.TARGET: ("artifact", "mage", "monument", "place"),
    Kind.RETRIEVE: ("artifact",),
    Kind.RETURN: ("artifact", "monument"),
    Kind.MONUMENT: ("monument",),
}
_WITH_DECK = (Kind.CLAIM, Kind.MONUMENT)


class Move(NamedTuple):
    kind: int
    a: int = 0
    b: int = 0

    def __str__(self) -> str:
        kind = Kind(self.kind)
        word = WORDS[kind]
        if kind in (Kind.DONE, Kind.PASS):
            return word
        if kind in (Kind.GAIN, Kind.PAY):
            return f"{word} {ESSENCES[self.a]}"
        if kind == Kind.WAIVE:
            return f"{word} {'any' if self.a == ANY else ESSENCES[self.a]}"
        if kind == Kind.OPTION:
            return f"{word} {self.a}"
        if kind == Kind.PILE:
            return f"{word} {PILES[self.a]}"
        name = "deck" if self.a == DECK else CONTENT[self.a].slug
        if kind == Kind.POWER:
            return f"{word} {name} {self.b}"
        return f"{word} {name}"

    def __repr__(self) -> str:
        if not well_formed(self):
            return f"Move{tuple(self)!r}"
        return f"Move({str(self)!r})"


def well_formed(move: object) -> bool:
    """Whether ``move`` is a Move whose fields are in range for its kind."""
    if not isinstance(move, Move):
        return False
    kind, a, b = move
    if type(kind) is not int and not isinstance(kind, Kind):
        return False
    try:
        kind = Kind(kind)
    except ValueError:
        return False
    if not isinstance(a, int) or not isinstance(b, int):
        return False
    if kind in (Kind.DONE, Kind.PASS):
        return a == 0 and b == 0
    if kind == Kind.POWER:
        if not 0 <= a < len(CONTENT.components):
            return False
        comp = CONTENT[a]
        return comp.kind in _COMPONENT_KINDS[kind] and 1 <= b <= len(comp.powers)
    if b != 0:
        return False
    if kind in (Kind.GAIN, Kind.PAY):
        return 0 <= a < 5
    if kind == Kind.WAIVE:
        return 0 <= a <= ANY
    if kind == Kind.OPTION:
        return 1 <= a <= 9
    if kind == Kind.PILE:
        return 0 <= a < len(PILES)
    if a == DECK:
        return kind in _WITH_DECK
    return 0 <= a < len(CONTENT.components) and CONTENT[a].kind in _COMPONENT_KINDS[kind]


def parse_move(text: str) -> Move:
    """The move written as ``text`` (the inverse of ``str(move)``)."""
    if not isinstance(text, str):
        raise MalformedMove("a move's text form must be a string")
    words = text.split(" ")
    kind = KINDS_BY_WORD.get(words[0])
    if kind is None:
        raise MalformedMove(f"unknown move {words[0]!r}")
    args = words[1:]
    try:
        if kind in (Kind.DONE, Kind.PASS):
            if args:
                raise MalformedMove(f"{words[0]!r} takes nothing after it")
            move = Move(kind)
        elif kind in (Kind.GAIN, Kind.PAY, Kind.WAIVE):
            (name,) = args
            if kind == Kind.WAIVE and name == "any":
                move = Move(kind, ANY)
            else:
                move = Move(kind, INDEX[name])
        elif kind == Kind.OPTION:
            (number,) = args
            if not number.isdigit() or number != str(int(number)):
                raise MalformedMove(f"bad option number {number!r}")
            move = Move(kind, int(number))
        elif kind == Kind.PILE:
            (name,) = args
            move = Move(kind, PILES.index(name))
        elif kind == Kind.POWER:
            name, number = args
            if not number.isdigit() or number != str(int(number)):
                raise MalformedMove(f"bad power number {number!r}")
            move = Move(kind, CONTENT.by_slug[name], int(number))
        else:
            (name,) = args
            cid = DECK if name == "deck" and kind in _WITH_DECK else CONTENT.by_slug[name]
            move = Move(kind, cid)
    except (KeyError, ValueError) as exc:
        raise MalformedMove(f"cannot read move {text!r}") from exc
    if not well_formed(move):
        raise MalformedMove(f"cannot read move {text!r}")
    return move
