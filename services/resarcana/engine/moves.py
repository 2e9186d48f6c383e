"""Moves: one small frozen value per kind of decision, with a short text form.

Each kind is a dataclass (services/kit/moves.py's ``TypedMove``) named after what the
player does, its fields named after what it names: a component or card id, an essence
(0-4: Elan, Life, Calm, Death, Gold; 5 = the "any" part of a cost), an option, pile or
power number. ``str(move)`` is the text form (the format of stored games: it never
changes) and ``parse_move`` its exact inverse::

    >>> str(PayEssence(2))
    'pay calm'
    >>> parse_move("power smith 2") == UsePower(CONTENT.by_slug["smith"], 2)
    True

Moves of all kinds sort together: by kind (in the order of ``ORDER`` below), then by
their fields, as the engine's legal moves are listed.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

from services.kit.engine import MalformedMove
from services.kit.moves import TypedMove
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.essences import ANY, ESSENCES, INDEX

DECK = -1  # the face-down top card of the Monument deck
PILES = ("artifacts", "monuments")  # Pile.pile: 0 your draw pile, 1 the Monument deck

ALL_KINDS = ("artifact", "mage", "item", "monument", "place")
HOLDERS = ("artifact", "mage", "monument", "place")  # what essences may be put on or taken off


def _is_int(value: object) -> bool:
    return isinstance(value, int)


def _names(cid: object, kinds: tuple[str, ...], deck: bool = False) -> bool:
    """Whether ``cid`` is the id of a component of one of ``kinds`` (or the deck)."""
    if not isinstance(cid, int):
        return False
    if cid == DECK:
        return deck
    return 0 <= cid < len(CONTENT.components) and CONTENT[cid].kind in kinds


def _slug(cid: int) -> str:
    return "deck" if cid == DECK else CONTENT[cid].slug


class Move(TypedMove):
    """A Res Arcana Duo move of any kind. ``ORDER`` places its kind among the others."""

    __slots__ = ()
    ORDER: ClassVar[int]
    WORD: ClassVar[str]

    def problem(self) -> str | None:
        return self._malformed()  # the base itself is no kind of move; each kind says

    def _malformed(self) -> str:
        return f"not a well-formed Res Arcana Duo move: {self!r}"


class ComponentMove(Move):
    """A move that names one component of ``KINDS`` (or the deck, where ``DECK_OK``)."""

    __slots__ = ()
    KINDS: ClassVar[tuple[str, ...]]
    DECK_OK: ClassVar[bool] = False

    def named(self) -> int:
        """The component this move names: each subclass says which of its fields."""
        raise NotImplementedError

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.named(), 0)

    def problem(self) -> str | None:
        return None if _names(self.named(), self.KINDS, self.DECK_OK) else self._malformed()

    def __str__(self) -> str:
        return f"{self.WORD} {_slug(self.named())}"


class EssenceMove(Move):
    """A move that names one essence (0-4, or ANY where ``TOP`` allows it)."""

    __slots__ = ()
    TOP: ClassVar[int] = 4
    essence: int

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, self.essence, 0)

    def problem(self) -> str | None:
        e = self.essence
        return None if _is_int(e) and 0 <= e <= self.TOP else self._malformed()

    def __str__(self) -> str:
        e = self.essence
        return f"{self.WORD} {'any' if e == ANY else ESSENCES[e]}"


class BareMove(Move):
    """A move with nothing to name."""

    __slots__ = ()

    def problem(self) -> str | None:
        return None

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, 0, 0)

    def __str__(self) -> str:
        return self.WORD


@dataclass(frozen=True, slots=True)
class Keep(ComponentMove):
    """The draft: keep this Artifact, the other drawn one goes face down to the rival."""

    card: int
    ORDER: ClassVar[int] = 1
    WORD: ClassVar[str] = "keep"
    KINDS: ClassVar[tuple[str, ...]] = ("artifact",)

    def named(self) -> int:
        return self.card


@dataclass(frozen=True, slots=True)
class ChooseMage(ComponentMove):
    """Setup: choose this Mage (secret until both have chosen)."""

    mage: int
    ORDER: ClassVar[int] = 2
    WORD: ClassVar[str] = "mage"
    KINDS: ClassVar[tuple[str, ...]] = ("mage",)

    def named(self) -> int:
        return self.mage


@dataclass(frozen=True, slots=True)
class TakeItem(ComponentMove):
    """Take this Magic Item: at setup, and the swap when passing."""

    item: int
    ORDER: ClassVar[int] = 3
    WORD: ClassVar[str] = "item"
    KINDS: ClassVar[tuple[str, ...]] = ("item",)

    def named(self) -> int:
        return self.item


@dataclass(frozen=True, slots=True)
class Gain(EssenceMove):
    """Take one essence of your choice (a "/" side, an "any" Collect or effect, the
    discard action, essences put on a component, taking from one)."""

    essence: int
    ORDER: ClassVar[int] = 4
    WORD: ClassVar[str] = "gain"


@dataclass(frozen=True, slots=True)
class ChooseOption(Move):
    """Choose one side (1-based) of an effect's "or", or of a "/" Collect whose sides
    are not single essences."""

    number: int
    ORDER: ClassVar[int] = 5
    WORD: ClassVar[str] = "option"

    def sort_key(self) -> tuple[Any, ...]:
        return (5, self.number, 0)

    def problem(self) -> str | None:
        ok = _is_int(self.number) and 1 <= self.number <= 9
        return None if ok else self._malformed()

    def __str__(self) -> str:
        return f"option {self.number}"


@dataclass(frozen=True, slots=True)
class Take(ComponentMove):
    """Collect: take all essences from one of your components."""

    component: int
    ORDER: ClassVar[int] = 6
    WORD: ClassVar[str] = "take"
    KINDS: ClassVar[tuple[str, ...]] = HOLDERS

    def named(self) -> int:
        return self.component


@dataclass(frozen=True, slots=True)
class Done(BareMove):
    """End an optional step: stop taking at Collect, decline the Crucible's placement or
    Solomon's Key's item power."""

    ORDER: ClassVar[int] = 7
    WORD: ClassVar[str] = "done"


@dataclass(frozen=True, slots=True)
class Place(ComponentMove):
    """Place this Artifact from your hand (the action, and the Crucible's 2nd power)."""

    card: int
    ORDER: ClassVar[int] = 8
    WORD: ClassVar[str] = "place"
    KINDS: ClassVar[tuple[str, ...]] = ("artifact",)

    def named(self) -> int:
        return self.card


@dataclass(frozen=True, slots=True)
class Claim(ComponentMove):
    """The action: claim a face-up Monument, the Monument deck's top, or a Place of Power."""

    component: int
    ORDER: ClassVar[int] = 9
    WORD: ClassVar[str] = "claim"
    KINDS: ClassVar[tuple[str, ...]] = ("monument", "place")
    DECK_OK: ClassVar[bool] = True

    def named(self) -> int:
        return self.component


@dataclass(frozen=True, slots=True)
class Discard(ComponentMove):
    """Discard this Artifact from your hand: the action, a cost or an effect."""

    card: int
    ORDER: ClassVar[int] = 10
    WORD: ClassVar[str] = "discard"
    KINDS: ClassVar[tuple[str, ...]] = ("artifact",)

    def named(self) -> int:
        return self.card


@dataclass(frozen=True, slots=True)
class UsePower(Move):
    """Use power ``power`` (1-based) of a component: the action, or the Magic Item power
    Solomon's Key borrows."""

    component: int
    power: int
    ORDER: ClassVar[int] = 11
    WORD: ClassVar[str] = "power"

    def sort_key(self) -> tuple[Any, ...]:
        return (11, self.component, self.power)

    def problem(self) -> str | None:
        if not _names(self.component, ALL_KINDS) or not _is_int(self.power):
            return self._malformed()
        if not 1 <= self.power <= len(CONTENT[self.component].powers):
            return self._malformed()
        return None

    def __str__(self) -> str:
        return f"power {CONTENT[self.component].slug} {self.power}"


@dataclass(frozen=True, slots=True)
class Pass(BareMove):
    """The action: pass."""

    ORDER: ClassVar[int] = 12
    WORD: ClassVar[str] = "pass"


@dataclass(frozen=True, slots=True)
class PayEssence(EssenceMove):
    """Pay one essence of an "any" cost."""

    essence: int
    ORDER: ClassVar[int] = 13
    WORD: ClassVar[str] = "pay"


@dataclass(frozen=True, slots=True)
class Waive(EssenceMove):
    """Spend one point of a discount on this essence of the cost (ANY: the "any" part)."""

    essence: int
    ORDER: ClassVar[int] = 14
    WORD: ClassVar[str] = "waive"
    TOP: ClassVar[int] = ANY


@dataclass(frozen=True, slots=True)
class Turn(ComponentMove):
    """Turn another component of yours to pay a cost ("turn a Creature")."""

    component: int
    ORDER: ClassVar[int] = 15
    WORD: ClassVar[str] = "turn"
    KINDS: ClassVar[tuple[str, ...]] = ALL_KINDS

    def named(self) -> int:
        return self.component


@dataclass(frozen=True, slots=True)
class Straighten(ComponentMove):
    """An effect straightens this component of yours."""

    component: int
    ORDER: ClassVar[int] = 16
    WORD: ClassVar[str] = "straighten"
    KINDS: ClassVar[tuple[str, ...]] = ALL_KINDS

    def named(self) -> int:
        return self.component


@dataclass(frozen=True, slots=True)
class Target(ComponentMove):
    """The component an effect works on: where the Squared Circle puts the paid essence,
    which component the Golden Key takes from."""

    component: int
    ORDER: ClassVar[int] = 17
    WORD: ClassVar[str] = "target"
    KINDS: ClassVar[tuple[str, ...]] = HOLDERS

    def named(self) -> int:
        return self.component


@dataclass(frozen=True, slots=True)
class Retrieve(ComponentMove):
    """Take this card from your discard pile into your hand."""

    card: int
    ORDER: ClassVar[int] = 18
    WORD: ClassVar[str] = "retrieve"
    KINDS: ClassVar[tuple[str, ...]] = ("artifact",)

    def named(self) -> int:
        return self.card


@dataclass(frozen=True, slots=True)
class Return(ComponentMove):
    """The Brass Bust: put this card back on top of the pile (the first returned ends on
    top)."""

    card: int
    ORDER: ClassVar[int] = 19
    WORD: ClassVar[str] = "return"
    KINDS: ClassVar[tuple[str, ...]] = ("artifact", "monument")

    def named(self) -> int:
        return self.card


@dataclass(frozen=True, slots=True)
class Pile(Move):
    """The Brass Bust: draw 3 from your draw pile (0) or the Monument deck (1)."""

    pile: int
    ORDER: ClassVar[int] = 20
    WORD: ClassVar[str] = "pile"

    def sort_key(self) -> tuple[Any, ...]:
        return (20, self.pile, 0)

    def problem(self) -> str | None:
        ok = _is_int(self.pile) and 0 <= self.pile < len(PILES)
        return None if ok else self._malformed()

    def __str__(self) -> str:
        return f"pile {PILES[self.pile]}"


@dataclass(frozen=True, slots=True)
class GainMonument(ComponentMove):
    """The Crown of Command: gain this face-up Monument, or the deck's top."""

    monument: int
    ORDER: ClassVar[int] = 21
    WORD: ClassVar[str] = "monument"
    KINDS: ClassVar[tuple[str, ...]] = ("monument",)
    DECK_OK: ClassVar[bool] = True

    def named(self) -> int:
        return self.monument


MOVE_TYPES: tuple[type[Move], ...] = (
    Keep,
    ChooseMage,
    TakeItem,
    Gain,
    ChooseOption,
    Take,
    Done,
    Place,
    Claim,
    Discard,
    UsePower,
    Pass,
    PayEssence,
    Waive,
    Turn,
    Straighten,
    Target,
    Retrieve,
    Return,
    Pile,
    GainMonument,
)
BY_WORD: dict[str, type[Move]] = {t.WORD: t for t in MOVE_TYPES}
DONE = Done()
PASS = Pass()


def _number(text: str, what: str) -> int:
    if not text.isdigit() or text != str(int(text)):
        raise MalformedMove(f"bad {what} number {text!r}")
    return int(text)


def _component(name: str) -> int:
    return CONTENT.by_slug[name]


def _read_power(args: list[str]) -> Move:
    name, number = args
    return UsePower(_component(name), _number(number, "power"))


def _read_component(make: Callable[[int], Move], deck: bool = False) -> Callable[[list[str]], Move]:
    def read(args: list[str]) -> Move:
        (name,) = args
        return make(DECK if deck and name == "deck" else _component(name))

    return read


# How each kind reads the words after its own (a wrong count of words raises TypeError
# or ValueError, an unknown name KeyError or ValueError: all read as malformed).
_READ: dict[type[Move], Callable[[list[str]], Move]] = {
    Done: lambda args: Done(*args),
    Pass: lambda args: Pass(*args),
    Gain: lambda args: Gain(*(INDEX[a] for a in args)),
    PayEssence: lambda args: PayEssence(*(INDEX[a] for a in args)),
    Waive: lambda args: Waive(*(ANY if a == "any" else INDEX[a] for a in args)),
    ChooseOption: lambda args: ChooseOption(*(_number(a, "option") for a in args)),
    Pile: lambda args: Pile(*(PILES.index(a) for a in args)),
    UsePower: _read_power,
    Keep: _read_component(Keep),
    ChooseMage: _read_component(ChooseMage),
    TakeItem: _read_component(TakeItem),
    Take: _read_component(Take),
    Place: _read_component(Place),
    Claim: _read_component(Claim, deck=True),
    Discard: _read_component(Discard),
    Turn: _read_component(Turn),
    Straighten: _read_component(Straighten),
    Target: _read_component(Target),
    Retrieve: _read_component(Retrieve),
    Return: _read_component(Return),
    GainMonument: _read_component(GainMonument, deck=True),
}


def parse_move(text: str) -> Move:
    """The move written as ``text`` (the inverse of ``str(move)``)."""
    if not isinstance(text, str):
        raise MalformedMove("a move's text form must be a string")
    words = text.split(" ")
    kind = BY_WORD.get(words[0])
    if kind is None:
        raise MalformedMove(f"unknown move {words[0]!r}")
    args = words[1:]
    if kind in (Done, Pass) and args:
        raise MalformedMove(f"{words[0]!r} takes nothing after it")
    try:
        move = _READ[kind](args)
    except (KeyError, ValueError, TypeError) as exc:
        raise MalformedMove(f"cannot read move {text!r}") from exc
    if move.problem() is not None:
        raise MalformedMove(f"cannot read move {text!r}")
    return move
