"""Moves: one frozen dataclass per kind of decision, with a short text form.

The kinds are the protobuf ``oneof`` cases of glow.proto, under the same names. Every
kind has a number (``KIND``, roughly the order of a day); moves sort by that number,
then by their fields, so moves of different kinds sort together (``sort_key``).
``str(move)`` is the text form, the format of stored games, and :func:`parse_move` its
exact inverse::

    >>> str(Take(2))
    'take 2'
    >>> parse_move("go 12 foot") == Go(12, FOOT)
    True
    >>> sorted([EndJourney(), Go(12, FOOT), Go(3)])
    [Go(spot=3, payment=0), Go(spot=12, payment=2), EndJourney()]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar, dataclass_transform

from services.kit.engine import MalformedMove
from services.kit.moves import TypedMove

from .content import (
    ADVENTURER,
    ADVENTURER_BY_KEY,
    COLOUR,
    COLOURS,
    COMPANIONS,
    DICE,
    SPELLS,
    SYMBOL,
    SYMBOLS,
    TRACK_SPACES,
)

# Reroll sources (UseReroll.source, PayReroll.source).
TOKEN, TRACK, LUMIPILI = 0, 1, 2
SOURCE_NAMES = ("token", "track", "lumipili")
# How a company pays to enter a space (Go.payment).
FREE, USE_DIE, FOOT = 0, 1, 2
PAY_NAMES = ("", "die", "foot")
# Card references (Resolve.card): 0 the adventurer, 1-46 companions, 100+id a spell.
ADVENTURER_REF = 0
SPELL_REF = 100
STAY = -1  # "black stay"
NONE = 0  # "raise none"
HIDDEN = 0  # "cancel hidden": the face-down spell

LAST_COMPANION = max(COMPANIONS)
LAST_SPELL = max(SPELLS)
LAST_SPOT = 999  # a spot or island number the text form accepts (the board decides the rest)


def _int(value: object) -> bool:
    """An int field's value: a plain int, never a bool (True would print as "True")."""
    return type(value) is int


def _in(value: object, low: int, high: int) -> bool:
    return type(value) is int and low <= value <= high


M = TypeVar("M", bound="GlowMove")


@dataclass_transform(frozen_default=True)
def _move(kind: int, word: str) -> Callable[[type[M]], type[M]]:
    """A move kind: a frozen, slotted dataclass numbered ``kind`` whose text starts ``word``."""

    def make(cls: type[M]) -> type[M]:
        cls.KIND = kind
        cls.WORD = word
        made = dataclass(frozen=True, slots=True)(cls)
        # Hashed by the sort key, kind first, so moves of two kinds with equal fields
        # differ (dataclass would hash the fields alone).
        setattr(made, "__hash__", _hash)  # noqa: B010 - a method dataclass would replace
        return made

    return make


def _hash(move: GlowMove) -> int:
    return hash(move.sort_key())


class GlowMove(TypedMove):
    """A Glow move; ``KIND`` orders the kinds, ``WORD`` is the first word of the text."""

    __slots__ = ()
    KIND: ClassVar[int]
    WORD: ClassVar[str]

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND,)

    def __str__(self) -> str:
        return self.WORD


@_move(0, "adventurer")
class ChooseAdventurer(GlowMove):
    """Game Setup: each player in turn chooses an adventurer ("adventurer eoles")."""

    adventurer: int  # an Adventurer id

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.adventurer)

    def problem(self) -> str | None:
        if _int(self.adventurer) and self.adventurer in ADVENTURER:
            return None
        return "adventurer must be an adventurer's id"

    def __str__(self) -> str:
        return f"adventurer {ADVENTURER[self.adventurer].key}"


@_move(1, "take")
class Take(GlowMove):
    """Morning – Recruit a Companion: the companion in front of a space ("take 2")."""

    space: int

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.space)

    def problem(self) -> str | None:
        return None if _in(self.space, 0, TRACK_SPACES - 1) else _SPACE

    def __str__(self) -> str:
        return f"take {self.space}"


@_move(2, "black")
class MoveBlackDie(GlowMove):
    """Kaar's immunity: move the black die to another space, or keep it ("black stay")."""

    space: int  # STAY: keep it

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.space)

    def problem(self) -> str | None:
        if self.space == STAY and _int(self.space):
            return None
        return None if _in(self.space, 0, TRACK_SPACES - 1) else _SPACE

    def __str__(self) -> str:
        return f"black {'stay' if self.space == STAY else self.space}"


@_move(3, "die")
class ChooseSketalDie(GlowMove):
    """The Sketals: the colour of a multicoloured Sketal's large die ("die red")."""

    colour: int

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.colour)

    def problem(self) -> str | None:
        return None if _in(self.colour, 0, len(COLOURS) - 1) else "colour out of range"

    def __str__(self) -> str:
        return f"die {COLOURS[self.colour]}"


@_move(4, "bury")
class Bury(GlowMove):
    """2-player games: send a companion left on the track to the cemetery ("bury 4")."""

    space: int

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.space)

    def problem(self) -> str | None:
        return None if _in(self.space, 0, TRACK_SPACES - 1) else _SPACE

    def __str__(self) -> str:
        return f"bury {self.space}"


class _Source(GlowMove):
    """A reroll's source: a token, the score track, or a Lumipili (``card``)."""

    __slots__ = ()
    source: int
    card: int

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.source, self.card)

    def problem(self) -> str | None:
        if not _in(self.source, TOKEN, LUMIPILI):
            return "unknown reroll source"
        if self.source == LUMIPILI:
            return None if _in(self.card, 1, LAST_COMPANION) else "a Lumipili is a companion"
        return None if self.card == 0 and _int(self.card) else "only a Lumipili names a card"

    def __str__(self) -> str:
        text = f"{self.WORD} {SOURCE_NAMES[self.source]}"
        return f"{text} {self.card}" if self.source == LUMIPILI else text


@_move(5, "reroll")
class UseReroll(_Source):
    """Late Morning: use one reroll ("reroll token", "reroll lumipili 18")."""

    source: int
    card: int = 0


@_move(6, "fix")
class Fix(GlowMove):
    """Late Morning: use three rerolls to set a die to a face ("fix")."""


@_move(7, "pay")
class PayReroll(_Source):
    """One of the three rerolls of a Fix ("pay track")."""

    source: int
    card: int = 0


@_move(8, "pick")
class PickDie(GlowMove):
    """A die to reroll, or the die to set ("pick 12")."""

    die: int

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.die)

    def problem(self) -> str | None:
        return None if _in(self.die, 0, len(DICE) - 1) else "die out of range"

    def __str__(self) -> str:
        return f"pick {self.die}"


@_move(9, "roll")
class Roll(GlowMove):
    """Reroll the one die picked ("roll")."""


@_move(10, "face")
class ChooseFace(GlowMove):
    """The face a fixed die shows ("face water")."""

    symbol: int

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.symbol)

    def problem(self) -> str | None:
        return None if _in(self.symbol, 0, len(SYMBOLS) - 1) else "symbol out of range"

    def __str__(self) -> str:
        return f"face {SYMBOLS[self.symbol]}"


@_move(11, "ready")
class Ready(GlowMove):
    """No more rerolls: the result is fixed ("ready")."""


@_move(12, "resolve")
class Resolve(GlowMove):
    """Noon – Resolve the Cards: one card ("resolve adventurer", "resolve 18",
    "resolve spell 3"); ``card`` is a card reference (ADVENTURER_REF, a companion id,
    or SPELL_REF + a spell id)."""

    card: int

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.card)

    def problem(self) -> str | None:
        card = self.card
        if _in(card, 0, LAST_COMPANION) or _in(card, SPELL_REF + 1, SPELL_REF + LAST_SPELL):
            return None
        return "card must be the adventurer, a companion or a spell"

    def __str__(self) -> str:
        card = self.card
        if card == ADVENTURER_REF:
            return "resolve adventurer"
        if card > SPELL_REF:
            return f"resolve spell {card - SPELL_REF}"
        return f"resolve {card}"


@_move(13, "raise")
class Raise(GlowMove):
    """Cromaug: a companion back from the cemetery, or no one ("raise 12", "raise none")."""

    companion: int  # NONE: no one

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.companion)

    def problem(self) -> str | None:
        return None if _in(self.companion, NONE, LAST_COMPANION) else _COMPANION

    def __str__(self) -> str:
        return f"raise {'none' if self.companion == NONE else self.companion}"


@_move(14, "lose")
class Lose(GlowMove):
    """A skull space: a companion to the cemetery, without its effect ("lose 18")."""

    companion: int

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.companion)

    def problem(self) -> str | None:
        return None if _in(self.companion, 1, LAST_COMPANION) else _COMPANION

    def __str__(self) -> str:
        return f"lose {self.companion}"


@_move(15, "cancel")
class CancelSpell(GlowMove):
    """A skull space: cancel a spell ("cancel 3", "cancel hidden")."""

    spell: int  # HIDDEN: the face-down one

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.spell)

    def problem(self) -> str | None:
        return None if _in(self.spell, HIDDEN, LAST_SPELL) else "spell out of range"

    def __str__(self) -> str:
        return f"cancel {'hidden' if self.spell == HIDDEN else self.spell}"


@_move(16, "go")
class Go(GlowMove):
    """The Province of Shadows: the company moves one space ("go 12 die", "go 12 foot",
    "go 12")."""

    spot: int
    payment: int = FREE

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.spot, self.payment)

    def problem(self) -> str | None:
        if not _in(self.spot, 0, LAST_SPOT):
            return "spot out of range"
        return None if _in(self.payment, FREE, FOOT) else "unknown payment"

    def __str__(self) -> str:
        if self.payment == FREE:
            return f"go {self.spot}"
        return f"go {self.spot} {PAY_NAMES[self.payment]}"


@_move(17, "camp")
class Camp(GlowMove):
    """The Province of Shadows: stop in the village just entered ("camp")."""


@_move(18, "sail")
class Sail(GlowMove):
    """The Archipelago of Darkness: a boat sails one link ("sail 0 1")."""

    from_island: int
    to_island: int

    def sort_key(self) -> tuple[Any, ...]:
        return (self.KIND, self.from_island, self.to_island)

    def problem(self) -> str | None:
        if _in(self.from_island, 0, LAST_SPOT) and _in(self.to_island, 0, LAST_SPOT):
            return None
        return "island out of range"

    def __str__(self) -> str:
        return f"sail {self.from_island} {self.to_island}"


@_move(19, "end")
class EndJourney(GlowMove):
    """Afternoon: the journey is over for today ("end")."""


_SPACE = f"space must be 0-{TRACK_SPACES - 1}"
_COMPANION = f"companion must be 1-{LAST_COMPANION}"

MOVE_TYPES: tuple[type[GlowMove], ...] = (
    ChooseAdventurer,
    Take,
    MoveBlackDie,
    ChooseSketalDie,
    Bury,
    UseReroll,
    Fix,
    PayReroll,
    PickDie,
    Roll,
    ChooseFace,
    Ready,
    Resolve,
    Raise,
    Lose,
    CancelSpell,
    Go,
    Camp,
    Sail,
    EndJourney,
)
KIND = {t.WORD: t for t in MOVE_TYPES}
_BARE = {t.WORD: t() for t in (Fix, Roll, Ready, Camp, EndJourney)}


def _number(word: str, low: int, high: int, text: str) -> int:
    if not word.isdigit():
        raise MalformedMove(f"not a number in move {text!r}")
    value = int(word)
    if not low <= value <= high:
        raise MalformedMove(f"{value} out of range in move {text!r}")
    return value


def _source(kind: type[UseReroll] | type[PayReroll], args: list[str], text: str) -> GlowMove:
    if args[0] not in SOURCE_NAMES:
        raise MalformedMove(f"unknown reroll source in {text!r}")
    source = SOURCE_NAMES.index(args[0])
    if source == LUMIPILI:
        if len(args) != 2:
            raise MalformedMove(f"a lumipili reroll names its card: {text!r}")
        return kind(source, _number(args[1], 1, LAST_COMPANION, text))
    return kind(source)


def _parse(text: str) -> GlowMove:
    words = text.split(" ")
    word, args = words[0], words[1:]
    if word not in KIND:
        raise MalformedMove(f"unknown move {text!r}")
    if word in _BARE:
        if args:
            raise MalformedMove(f"wrong number of fields in move {text!r}")
        return _BARE[word]
    if word == "sail" and len(args) != 2:
        raise MalformedMove(f"wrong number of fields in move {text!r}")
    if not args:
        raise MalformedMove(f"missing field in move {text!r}")
    first = args[0]
    if word == "adventurer":
        if first not in ADVENTURER_BY_KEY:
            raise MalformedMove(f"unknown adventurer in {text!r}")
        return ChooseAdventurer(ADVENTURER_BY_KEY[first].id)
    if word == "take":
        return Take(_number(first, 0, TRACK_SPACES - 1, text))
    if word == "bury":
        return Bury(_number(first, 0, TRACK_SPACES - 1, text))
    if word == "black":
        return MoveBlackDie(STAY if first == "stay" else _number(first, 0, TRACK_SPACES - 1, text))
    if word == "die":
        if first not in COLOUR:
            raise MalformedMove(f"unknown colour in {text!r}")
        return ChooseSketalDie(COLOUR[first])
    if word == "reroll":
        return _source(UseReroll, args, text)
    if word == "pay":
        return _source(PayReroll, args, text)
    if word == "pick":
        return PickDie(_number(first, 0, len(DICE) - 1, text))
    if word == "face":
        if first not in SYMBOL:
            raise MalformedMove(f"unknown symbol in {text!r}")
        return ChooseFace(SYMBOL[first])
    if word == "resolve":
        if first == "adventurer":
            return Resolve(ADVENTURER_REF)
        if first == "spell":
            if len(args) != 2:
                raise MalformedMove(f"a spell is named by its number: {text!r}")
            return Resolve(SPELL_REF + _number(args[1], 1, LAST_SPELL, text))
        return Resolve(_number(first, 1, LAST_COMPANION, text))
    if word == "raise":
        return Raise(NONE if first == "none" else _number(first, 1, LAST_COMPANION, text))
    if word == "lose":
        return Lose(_number(first, 1, LAST_COMPANION, text))
    if word == "cancel":
        return CancelSpell(HIDDEN if first == "hidden" else _number(first, 1, LAST_SPELL, text))
    if word == "go":
        spot = _number(first, 0, LAST_SPOT, text)
        if len(args) == 1:
            return Go(spot, FREE)
        if args[1] not in PAY_NAMES[1:]:
            raise MalformedMove(f"unknown payment in {text!r}")
        return Go(spot, PAY_NAMES.index(args[1]))
    # sail, with its two fields checked above
    return Sail(_number(first, 0, LAST_SPOT, text), _number(args[1], 0, LAST_SPOT, text))


def parse_move(text: str) -> GlowMove:
    """The move whose text form is ``text``; raises MalformedMove otherwise.

    Strict: ``str(parse_move(t)) == t`` for every accepted ``t``.
    """
    if not isinstance(text, str):
        raise MalformedMove("a move's text form is a string")
    move = _parse(text)
    if str(move) != text:
        raise MalformedMove(f"not in the canonical text form: {text!r}")
    return move


__all__ = [
    "MOVE_TYPES",
    "Bury",
    "Camp",
    "CancelSpell",
    "ChooseAdventurer",
    "ChooseFace",
    "ChooseSketalDie",
    "EndJourney",
    "Fix",
    "GlowMove",
    "Go",
    "Lose",
    "MoveBlackDie",
    "PayReroll",
    "PickDie",
    "Raise",
    "Ready",
    "Resolve",
    "Roll",
    "Sail",
    "Take",
    "UseReroll",
    "parse_move",
]
