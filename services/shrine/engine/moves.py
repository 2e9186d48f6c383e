"""Moves: every decision of a Shrine turn as a small, hashable, ordered value.

One frozen dataclass per kind of decision (README.md, "Decisions in a turn"), named as
the protobuf ``oneof`` case it maps onto; :class:`Move` is their common base. ``str(move)``
is its text form and :func:`parse_move` its exact inverse::

    >>> str(parse_move("relocate b1 red c3"))
    'relocate b1 red c3'
    >>> parse_move("place c2") < parse_move("block b1")
    True

Moves of every kind sort in the order the decisions come in a turn (``ORDER``), then by
their fields. Text forms are the format of stored games: a form, once written, keeps its
meaning.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from services.kit.engine import MalformedMove
from services.kit.moves import TypedMove
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

_FIELDS = range(FIELDS)
_POWERS = range(len(POWER_KEYS))
_COLOURS = range(len(colours.NAMES))


class Move(TypedMove):
    """A decision of a Shrine turn: the base of every kind below.

    ``WORD`` is the kind's first word in the text form, ``ORDER`` its place in the turn
    (and in the sort order of moves of different kinds).
    """

    __slots__ = ()
    WORD: ClassVar[str]
    ORDER: ClassVar[int]

    @classmethod
    def read(cls, words: list[str]) -> Move:
        """The move of this kind written with ``words`` after its first word (ValueError if
        none): the kinds with no fields."""
        _expect(words, 0)
        return cls()

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER,)

    def __str__(self) -> str:
        return self.WORD


# -- checks of a move's values (MalformedMove's messages) ------------------------------


def _whole(value: object) -> bool:
    return type(value) is int or (isinstance(value, int) and not isinstance(value, bool))


def _not_whole(*named: tuple[str, object]) -> str | None:
    for name, value in named:
        if not _whole(value):
            return f"{name} must be a whole number"
    return None


def _not_flag(*named: tuple[str, object]) -> str | None:
    for name, value in named:
        if not isinstance(value, bool):
            return f"{name} must be true or false"
    return None


def _fname(field: int) -> str:
    return BOARD.field_names[field]


# -- step 2: Unlock a Treasure Power; Acquiring New Shape Cards -----------------------------


@dataclass(frozen=True, slots=True)
class Unlock(Move):
    """``unlock <power>``: step 2, unlock one blocked Treasure Power."""

    WORD: ClassVar[str] = "unlock"
    ORDER: ClassVar[int] = 0
    power: int

    @classmethod
    def read(cls, words: list[str]) -> Move:
        _expect(words, 1)
        return cls(_power(words[0]))

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.power)

    def problem(self) -> str | None:
        return _not_whole(("power", self.power)) or (
            None if self.power in _POWERS else "no such Treasure Power"
        )

    def __str__(self) -> str:
        return f"unlock {POWER_KEYS[self.power]}"


@dataclass(frozen=True, slots=True)
class Draw(Move):
    """``draw <deck>``: step 2 with Radiant Shapes, two Shape cards instead of unlocking."""

    WORD: ClassVar[str] = "draw"
    ORDER: ClassVar[int] = 1
    deck: int  # the deck's pattern size

    @classmethod
    def read(cls, words: list[str]) -> Move:
        _expect(words, 1)
        return cls(_number(words[0]))

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.deck)

    def problem(self) -> str | None:
        return _not_whole(("deck", self.deck)) or (
            None if self.deck in CONTENT.decks else "no such Shape deck"
        )

    def __str__(self) -> str:
        return f"draw {self.deck}"


@dataclass(frozen=True, slots=True)
class Keep(Move):
    """``keep 0|1``: keep the first or second of the two Shape cards drawn (a position, so
    the public move log names no card)."""

    WORD: ClassVar[str] = "keep"
    ORDER: ClassVar[int] = 2
    index: int

    @classmethod
    def read(cls, words: list[str]) -> Move:
        _expect(words, 1)
        return cls(_number(words[0]))

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.index)

    def problem(self) -> str | None:
        return _not_whole(("index", self.index)) or (
            None if self.index in (0, 1) else "keep 0 or keep 1"
        )

    def __str__(self) -> str:
        return f"keep {self.index}"


# -- step 3: Place an Arcane Lens or Pass, and what may come around it ----------------------


@dataclass(frozen=True, slots=True)
class Pass(Move):
    """``pass``: step 3B."""

    WORD: ClassVar[str] = "pass"
    ORDER: ClassVar[int] = 3


@dataclass(frozen=True, slots=True)
class Debt(Move):
    """``debt``: take a Debt token ("Running Out of Treasure")."""

    WORD: ClassVar[str] = "debt"
    ORDER: ClassVar[int] = 4


@dataclass(frozen=True, slots=True)
class Serpent(Move):
    """``serpent <power>``: remove a Feathered Serpent to unlock that power."""

    WORD: ClassVar[str] = "serpent"
    ORDER: ClassVar[int] = 5
    power: int

    @classmethod
    def read(cls, words: list[str]) -> Move:
        _expect(words, 1)
        return cls(_power(words[0]))

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.power)

    def problem(self) -> str | None:
        return _not_whole(("power", self.power)) or (
            None if self.power in _POWERS else "no such Treasure Power"
        )

    def __str__(self) -> str:
        return f"serpent {POWER_KEYS[self.power]}"


@dataclass(frozen=True, slots=True)
class Refresh(Move):
    """``refresh``: Refreshing the Offering, the first Treasure."""

    WORD: ClassVar[str] = "refresh"
    ORDER: ClassVar[int] = 6


@dataclass(frozen=True, slots=True)
class Search(Move):
    """``search``: Refreshing the Offering, the additional Treasure for the third colour."""

    WORD: ClassVar[str] = "search"
    ORDER: ClassVar[int] = 7


@dataclass(frozen=True, slots=True)
class Accept(Move):
    """``accept``: Refreshing the Offering, keep the new Lens."""

    WORD: ClassVar[str] = "accept"
    ORDER: ClassVar[int] = 8


@dataclass(frozen=True, slots=True)
class Place(Move):
    """``place <field>``: place the Offering's Lens (with the free rotation and any power
    the placement needs, paid with it)."""

    WORD: ClassVar[str] = "place"
    ORDER: ClassVar[int] = 9
    field: int

    @classmethod
    def read(cls, words: list[str]) -> Move:
        _expect(words, 1)
        return cls(_field(words[0]))

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.field)

    def problem(self) -> str | None:
        return _not_whole(("field", self.field)) or (
            None if self.field in _FIELDS else "no such field"
        )

    def __str__(self) -> str:
        return f"place {_fname(self.field)}"


@dataclass(frozen=True, slots=True)
class Overwrite(Move):
    """``overwrite <field> <colour>``: Overwriting, remove that Lens, then place there."""

    WORD: ClassVar[str] = "overwrite"
    ORDER: ClassVar[int] = 10
    field: int
    colour: int  # the Lens removed

    @classmethod
    def read(cls, words: list[str]) -> Move:
        _expect(words, 2)
        return cls(_field(words[0]), _colour(words[1], basic=True))

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.field, self.colour)

    def problem(self) -> str | None:
        problem = _not_whole(("field", self.field), ("colour", self.colour))
        if problem is not None:
            return problem
        if self.field not in _FIELDS:
            return "no such field"
        return None if self.colour in colours.BASIC else "Lenses are red, yellow or blue"

    def __str__(self) -> str:
        return f"overwrite {_fname(self.field)} {colours.NAMES[self.colour]}"


@dataclass(frozen=True, slots=True)
class Relocate(Move):
    """``relocate <origin> <colour> <destination>``: Relocating, instead of placing."""

    WORD: ClassVar[str] = "relocate"
    ORDER: ClassVar[int] = 11
    origin: int
    colour: int  # the Lens moved
    destination: int

    @classmethod
    def read(cls, words: list[str]) -> Move:
        _expect(words, 3)
        return cls(_field(words[0]), _colour(words[1], basic=True), _field(words[2]))

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.origin, self.colour, self.destination)

    def problem(self) -> str | None:
        problem = _not_whole(
            ("origin", self.origin), ("colour", self.colour), ("destination", self.destination)
        )
        if problem is not None:
            return problem
        if self.origin not in _FIELDS or self.destination not in _FIELDS:
            return "no such field"
        return None if self.colour in colours.BASIC else "Lenses are red, yellow or blue"

    def __str__(self) -> str:
        return (
            f"relocate {_fname(self.origin)} {colours.NAMES[self.colour]} "
            f"{_fname(self.destination)}"
        )


@dataclass(frozen=True, slots=True)
class Block(Move):
    """``block <field>`` (claiming a match), ``block <field> target`` (a match on a target)
    or ``block <field> noclaim`` (claiming nothing): Treasure Acquisition and Field
    Blocking."""

    WORD: ClassVar[str] = "block"
    ORDER: ClassVar[int] = 12
    field: int
    target: bool = False
    no_claim: bool = False

    @classmethod
    def read(cls, words: list[str]) -> Move:
        if len(words) == 2 and words[1] == "target":
            return cls(_field(words[0]), target=True)
        if len(words) == 2 and words[1] == "noclaim":
            return cls(_field(words[0]), no_claim=True)
        _expect(words, 1)
        return cls(_field(words[0]))

    def sort_key(self) -> tuple[Any, ...]:
        # Per field: a match, nothing claimed, a match on a target.
        return (self.ORDER, self.field, self.target, self.no_claim)

    def problem(self) -> str | None:
        problem = _not_whole(("field", self.field)) or _not_flag(
            ("target", self.target), ("no_claim", self.no_claim)
        )
        if problem is not None:
            return problem
        if self.field not in _FIELDS:
            return "no such field"
        if self.target and self.no_claim:
            return "a Block that claims nothing claims no target"
        return None

    def __str__(self) -> str:
        claim = " target" if self.target else " noclaim" if self.no_claim else ""
        return f"block {_fname(self.field)}{claim}"


@dataclass(frozen=True, slots=True)
class Done(Move):
    """``done``: end step 3 after placing."""

    WORD: ClassVar[str] = "done"
    ORDER: ClassVar[int] = 13


# -- the end of the turn: Completing a Shape Card (Radiant Shapes) --------------------------


@dataclass(frozen=True, slots=True)
class CompleteShape(Move):
    """``shape <card>``: complete this Shape card."""

    WORD: ClassVar[str] = "shape"
    ORDER: ClassVar[int] = 14
    card: int

    @classmethod
    def read(cls, words: list[str]) -> Move:
        _expect(words, 1)
        return cls(_number(words[0]))

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.card)

    def problem(self) -> str | None:
        return _not_whole(("card", self.card)) or (
            None if self.card in CONTENT.shapes else "no such Shape card"
        )

    def __str__(self) -> str:
        return f"shape {self.card}"


@dataclass(frozen=True, slots=True)
class ShapeFields(Move):
    """``at <fields> [ignore <field>]``: the fields the shape covers (a bit per field),
    a Feathered Serpent ignoring one of them (-1: none)."""

    WORD: ClassVar[str] = "at"
    ORDER: ClassVar[int] = 15
    mask: int
    ignored: int = -1

    @classmethod
    def read(cls, words: list[str]) -> Move:
        ignored = -1
        if len(words) >= 2 and words[-2] == "ignore":
            ignored = _field(words[-1])
            words = words[:-2]
        fields = [_field(word) for word in words]
        if not fields or len(set(fields)) != len(fields):
            raise ValueError("fields")
        return cls(sum(1 << f for f in fields), ignored)

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.ignored, self.mask)

    def problem(self) -> str | None:
        problem = _not_whole(("ignored", self.ignored), ("mask", self.mask))
        if problem is not None:
            return problem
        if not 0 < self.mask <= ALL_FIELDS:
            return "no such fields"
        ignored = self.ignored
        if ignored != -1 and (ignored not in _FIELDS or not self.mask >> ignored & 1):
            return "the ignored field must be one of the shape's fields"
        return None

    def __str__(self) -> str:
        names = " ".join(_fname(f) for f in _FIELDS if self.mask >> f & 1)
        ignore = f" ignore {_fname(self.ignored)}" if self.ignored >= 0 else ""
        return f"at {names}{ignore}"


@dataclass(frozen=True, slots=True)
class Claim(Move):
    """``claim <colour>``: the Code colour claimed for the field a Serpent ignores."""

    WORD: ClassVar[str] = "claim"
    ORDER: ClassVar[int] = 16
    colour: int

    @classmethod
    def read(cls, words: list[str]) -> Move:
        _expect(words, 1)
        return cls(_colour(words[0], basic=False))

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.colour)

    def problem(self) -> str | None:
        return _not_whole(("colour", self.colour)) or (
            None if self.colour in _COLOURS else "no such colour"
        )

    def __str__(self) -> str:
        return f"claim {colours.NAMES[self.colour]}"


@dataclass(frozen=True, slots=True)
class Reward(Move):
    """``reward treasure`` (Treasure only, ``unlock`` -1) or ``reward unlock <power>``
    (Treasure and Unlock)."""

    WORD: ClassVar[str] = "reward"
    ORDER: ClassVar[int] = 17
    unlock: int = -1

    @classmethod
    def read(cls, words: list[str]) -> Move:
        if words == ["treasure"]:
            return cls()
        _expect(words, 2)
        if words[0] != "unlock":
            raise ValueError("reward")
        return cls(_power(words[1]))

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.unlock)

    def problem(self) -> str | None:
        return _not_whole(("unlock", self.unlock)) or (
            None if -1 <= self.unlock < len(POWER_KEYS) else "no such Treasure Power"
        )

    def __str__(self) -> str:
        if self.unlock < 0:
            return "reward treasure"
        return f"reward unlock {POWER_KEYS[self.unlock]}"


@dataclass(frozen=True, slots=True)
class Bonus(Move):
    """``bonus <deck>``: the bonus draw from that deck."""

    WORD: ClassVar[str] = "bonus"
    ORDER: ClassVar[int] = 18
    deck: int

    @classmethod
    def read(cls, words: list[str]) -> Move:
        _expect(words, 1)
        return cls(_number(words[0]))

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.deck)

    def problem(self) -> str | None:
        return _not_whole(("deck", self.deck)) or (
            None if self.deck in CONTENT.decks else "no such Shape deck"
        )

    def __str__(self) -> str:
        return f"bonus {self.deck}"


@dataclass(frozen=True, slots=True)
class Skip(Move):
    """``skip``: decline an optional step (a shape, the bonus, drawing with nothing to
    unlock)."""

    WORD: ClassVar[str] = "skip"
    ORDER: ClassVar[int] = 19


MOVE_TYPES: tuple[type[Move], ...] = (
    Unlock,
    Draw,
    Keep,
    Pass,
    Debt,
    Serpent,
    Refresh,
    Search,
    Accept,
    Place,
    Overwrite,
    Relocate,
    Block,
    Done,
    CompleteShape,
    ShapeFields,
    Claim,
    Reward,
    Bonus,
    Skip,
)
"""Every kind, in the order of the turn (each one's ``ORDER``)."""

_BY_WORD: dict[str, Callable[[list[str]], Move]] = {kind.WORD: kind.read for kind in MOVE_TYPES}


# -- reading the text form ---------------------------------------------------------------


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


def _expect(words: list[str], count: int) -> None:
    if len(words) != count:
        raise ValueError("wrong number of words")


def parse_move(text: str) -> Move:
    """The move written as ``text`` (the inverse of ``str(move)``); MalformedMove if none."""
    if not isinstance(text, str):
        raise MalformedMove("a move is written as text")
    tokens = text.strip().lower().split()
    if not tokens or tokens[0] not in _BY_WORD:
        raise MalformedMove(f"unknown move {text!r}")
    try:
        move = _BY_WORD[tokens[0]](tokens[1:])
    except (IndexError, ValueError) as exc:
        raise MalformedMove(f"cannot read {text!r}") from exc
    problem = move.problem()
    if problem is not None:
        raise MalformedMove(problem)
    return move
