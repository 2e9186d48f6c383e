"""Moves: every decision of a Shrine turn as a small, hashable, ordered value.

Each kind is one decision of the rulebook's turn (see README.md, "Decisions in a turn"),
and will be one case of the protobuf ``oneof``. ``str(move)`` is its text form and
:func:`parse_move` its exact inverse::

    >>> str(parse_move("relocate b1 red c3"))
    'relocate b1 red c3'

Text forms are the format of stored games: a form, once written, keeps its meaning.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from enum import IntEnum

from services.kit.engine import MalformedMove
from services.shrine.engine import colours
from services.shrine.engine.content import (
    ALL_FIELDS,
    BOARD,
    CONTENT,
    FIELD_INDEX,
    FIELDS,
    POWER_INDEX,
    POWER_KEYS,
)


class Kind(IntEnum):
    """The kinds of decision, in the order they come in a turn (also the sort order)."""

    UNLOCK = 0  # step 2: unlock a blocked Treasure Power
    DRAW = 1  # step 2 (Radiant Shapes): draw two Shape cards instead
    KEEP = 2  # keep one of the two drawn Shape cards
    PASS = 3  # step 3B
    DEBT = 4  # take a Debt token: 2 Treasures now
    SERPENT = 5  # remove a Feathered Serpent to unlock a power
    REFRESH = 6  # Refreshing the Offering, first Treasure
    SEARCH = 7  # Refreshing the Offering, the additional Treasure
    ACCEPT = 8  # keep the refreshed Offering
    PLACE = 9  # place the Offering's Lens (with free rotation and any power it needs)
    OVERWRITE = 10  # Overwriting: remove a Lens of that colour, then place
    RELOCATE = 11  # Relocating: move a Lens instead of placing
    BLOCK = 12  # Treasure Acquisition and Field Blocking (a claim, or none)
    DONE = 13  # end step 3 after placing
    SHAPE = 14  # Radiant Shapes: complete this Shape card
    AT = 15  # ... on these fields (optionally ignoring one with a Serpent)
    CLAIM = 16  # ... the Code colour claimed for the ignored field
    REWARD = 17  # ... Treasure only, or Treasure and Unlock
    BONUS = 18  # ... the bonus draw
    SKIP = 19  # decline an optional step


WORDS = {kind: kind.name.lower() for kind in Kind}
KINDS = {word: kind for kind, word in WORDS.items()}


@dataclass(frozen=True, order=True, slots=True)
class Move:
    """One decision. Fields a kind does not use keep their defaults.

    ``field``/``to`` are field numbers (0-11, named a-d/1-4 in text), ``colour`` a colour
    number, ``power`` a Treasure Power (-1 in REWARD: Treasure only), ``number`` a deck
    size, a Shape card id or the index of a drawn card, ``mask`` a set of fields,
    ``target`` whether a Block claims a target field, and ``no_claim`` whether a Block
    claims nothing at all (no Treasure now, nothing checked at the end).
    """

    kind: Kind
    field: int = -1
    colour: int = -1
    to: int = -1
    power: int = -1
    number: int = -1
    mask: int = 0
    target: bool = False
    no_claim: bool = False

    def __str__(self) -> str:
        return _text(self)

    def problem(self) -> str | None:
        """Why the move is not well formed, or None."""
        if not (
            type(self.kind) is Kind
            and type(self.field) is type(self.colour) is type(self.to) is int
            and type(self.power) is type(self.number) is type(self.mask) is int
            and type(self.target) is type(self.no_claim) is bool
        ):
            return _problem(self)
        return _known_problem(self)  # well typed, so equal moves are the same move


def _fname(field: int) -> str:
    return BOARD.field_names[field]


def _mask_names(mask: int) -> list[str]:
    return [_fname(f) for f in range(FIELDS) if mask >> f & 1]


def _text(move: Move) -> str:
    kind = move.kind
    word = WORDS[kind]
    if kind in (Kind.UNLOCK, Kind.SERPENT):
        return f"{word} {POWER_KEYS[move.power]}"
    if kind in (Kind.DRAW, Kind.KEEP, Kind.SHAPE, Kind.BONUS):
        return f"{word} {move.number}"
    if kind is Kind.PLACE:
        return f"{word} {_fname(move.field)}"
    if kind is Kind.OVERWRITE:
        return f"{word} {_fname(move.field)} {colours.NAMES[move.colour]}"
    if kind is Kind.RELOCATE:
        return f"{word} {_fname(move.field)} {colours.NAMES[move.colour]} {_fname(move.to)}"
    if kind is Kind.BLOCK:
        claim = " target" if move.target else " noclaim" if move.no_claim else ""
        return f"{word} {_fname(move.field)}{claim}"
    if kind is Kind.AT:
        ignore = f" ignore {_fname(move.field)}" if move.field >= 0 else ""
        return f"{word} {' '.join(_mask_names(move.mask))}{ignore}"
    if kind is Kind.CLAIM:
        return f"{word} {colours.NAMES[move.colour]}"
    if kind is Kind.REWARD:
        return "reward treasure" if move.power < 0 else f"reward unlock {POWER_KEYS[move.power]}"
    return word


# Which fields each kind uses; the others must keep their defaults.
_USES: dict[Kind, tuple[str, ...]] = {
    Kind.UNLOCK: ("power",),
    Kind.DRAW: ("number",),
    Kind.KEEP: ("number",),
    Kind.SERPENT: ("power",),
    Kind.PLACE: ("field",),
    Kind.OVERWRITE: ("field", "colour"),
    Kind.RELOCATE: ("field", "colour", "to"),
    Kind.BLOCK: ("field", "target", "no_claim"),
    Kind.SHAPE: ("number",),
    Kind.AT: ("field", "mask"),
    Kind.CLAIM: ("colour",),
    Kind.REWARD: ("power",),
    Kind.BONUS: ("number",),
}
_DEFAULTS = {
    "field": -1,
    "colour": -1,
    "to": -1,
    "power": -1,
    "number": -1,
    "mask": 0,
    "target": False,
    "no_claim": False,
}


@functools.lru_cache(maxsize=8192)
def _known_problem(move: Move) -> str | None:
    return _problem(move)


def _problem(move: Move) -> str | None:
    if not isinstance(move.kind, Kind):
        return "unknown kind of move"
    uses = _USES.get(move.kind, ())
    for name, default in _DEFAULTS.items():
        value = getattr(move, name)
        if name in ("target", "no_claim"):
            if not isinstance(value, bool):
                return f"{name} must be true or false"
        elif not isinstance(value, int) or isinstance(value, bool):
            return f"{name} must be a whole number"
        if name not in uses and value != default:
            return f"{WORDS[move.kind]} takes no {name}"
    kind = move.kind
    in_fields = range(FIELDS)
    if "field" in uses and kind is not Kind.AT and move.field not in in_fields:
        return "no such field"
    if "to" in uses and move.to not in in_fields:
        return "no such field"
    if move.target and move.no_claim:
        return "a Block that claims nothing claims no target"
    if kind in (Kind.OVERWRITE, Kind.RELOCATE) and move.colour not in colours.BASIC:
        return "Lenses are red, yellow or blue"
    if kind is Kind.CLAIM and move.colour not in range(len(colours.NAMES)):
        return "no such colour"
    if kind in (Kind.UNLOCK, Kind.SERPENT) and move.power not in range(len(POWER_KEYS)):
        return "no such Treasure Power"
    if kind is Kind.REWARD and move.power not in range(-1, len(POWER_KEYS)):
        return "no such Treasure Power"
    if kind in (Kind.DRAW, Kind.BONUS) and move.number not in CONTENT.decks:
        return "no such Shape deck"
    if kind is Kind.KEEP and move.number not in (0, 1):
        return "keep 0 or keep 1"
    if kind is Kind.SHAPE and move.number not in CONTENT.shapes:
        return "no such Shape card"
    if kind is Kind.AT:
        if not 0 < move.mask <= ALL_FIELDS:
            return "no such fields"
        if move.field != -1 and (move.field not in in_fields or not move.mask >> move.field & 1):
            return "the ignored field must be one of the shape's fields"
    return None


def _field(token: str) -> int:
    if token not in FIELD_INDEX:
        raise MalformedMove(f"no field {token!r}")
    return FIELD_INDEX[token]


def _colour(token: str, basic: bool) -> int:
    colour = colours.BY_NAME.get(token)
    if colour is None or (basic and colour not in colours.BASIC):
        raise MalformedMove(f"no {'Lens ' if basic else ''}colour {token!r}")
    return colour


def _power(token: str) -> int:
    if token not in POWER_INDEX:
        raise MalformedMove(f"no Treasure Power {token!r}")
    return POWER_INDEX[token]


def _number(token: str) -> int:
    if not token.isdigit() or len(token) > 6:
        raise MalformedMove(f"not a number: {token!r}")
    return int(token)


def parse_move(text: str) -> Move:
    """The move written as ``text`` (the inverse of ``str(move)``); MalformedMove if none."""
    if not isinstance(text, str):
        raise MalformedMove("a move is written as text")
    tokens = text.strip().lower().split()
    if not tokens or tokens[0] not in KINDS:
        raise MalformedMove(f"unknown move {text!r}")
    kind, args = KINDS[tokens[0]], tokens[1:]
    try:
        move = _parse_args(kind, args)
    except (IndexError, ValueError) as exc:
        raise MalformedMove(f"cannot read {text!r}") from exc
    problem = move.problem()
    if problem is not None:
        raise MalformedMove(problem)
    return move


def _expect(args: list[str], count: int) -> None:
    if len(args) != count:
        raise ValueError("wrong number of words")


def _parse_args(kind: Kind, args: list[str]) -> Move:
    if kind in (Kind.UNLOCK, Kind.SERPENT):
        _expect(args, 1)
        return Move(kind, power=_power(args[0]))
    if kind in (Kind.DRAW, Kind.KEEP, Kind.SHAPE, Kind.BONUS):
        _expect(args, 1)
        return Move(kind, number=_number(args[0]))
    if kind is Kind.PLACE:
        _expect(args, 1)
        return Move(kind, field=_field(args[0]))
    if kind is Kind.OVERWRITE:
        _expect(args, 2)
        return Move(kind, field=_field(args[0]), colour=_colour(args[1], True))
    if kind is Kind.RELOCATE:
        _expect(args, 3)
        return Move(kind, field=_field(args[0]), colour=_colour(args[1], True), to=_field(args[2]))
    if kind is Kind.BLOCK:
        if len(args) == 2 and args[1] == "target":
            return Move(kind, field=_field(args[0]), target=True)
        if len(args) == 2 and args[1] == "noclaim":
            return Move(kind, field=_field(args[0]), no_claim=True)
        _expect(args, 1)
        return Move(kind, field=_field(args[0]))
    if kind is Kind.AT:
        ignore = -1
        if len(args) >= 2 and args[-2] == "ignore":
            ignore = _field(args[-1])
            args = args[:-2]
        fields = [_field(token) for token in args]
        if not fields or len(set(fields)) != len(fields):
            raise ValueError("fields")
        return Move(kind, field=ignore, mask=sum(1 << f for f in fields))
    if kind is Kind.CLAIM:
        _expect(args, 1)
        return Move(kind, colour=_colour(args[0], False))
    if kind is Kind.REWARD:
        if args == ["treasure"]:
            return Move(kind)
        _expect(args, 2)
        if args[0] != "unlock":
            raise ValueError("reward")
        return Move(kind, power=_power(args[1]))
    _expect(args, 0)
    return Move(kind)
