"""Every decision of Shén as a small typed value with a text form.

One frozen dataclass per kind of decision (services/kit/moves.py's ``TypedMove``), named
after the protobuf ``Move`` case it travels as. Locations are the codes of :mod:`board`
(independent of the field size), cards the index of the card in the pool, seats and
ability indexes plain numbers:

    text                       move
    stone C4                   PlaceRealmStone(vertex)
    draw                       Draw()
    shen C4                    PlaceShenCounter(vertex)
    play ember_scout           PlayCard(card)
    target c4 / target C4      ChooseTarget(location)
    foe 2                      ChooseFoe(seat)
    claim a1                   ClaimAnchorPoint(space)
    siege a1 B2                AttackRealmStone(avatar, stone)
    step c4 d5                 MoveStep(origin, destination)
    hold c4                    Hold(avatar)
    stop                       StopMoving()
    ability 0                  UseAbility(index)
    ranged f6                  RangedAttack(target)
    remove avatar              RemoveAvatar()
    lose cards                 LoseCards()
    retreat c4                 Retreat(location)
    lose hand ember_scout      LoseFromHand(card)
    lose deck                  LoseFromDeck()
    lose discard ember_scout   LoseFromDiscard(card)
    pass                       Pass()
    end                        EndTurn()

The text forms are the format of stored games: they never change. Moves sort by kind in
the order above, then by their fields (the order legal moves are listed in).

A move knows whether its values are well formed (``problem``: integers, a card of the
pool, a number in range). Whether a location lies on the field, and is a vertex or a
space as the kind wants, depends on the game's field size: :func:`off_field` says that
against a game's board (the rules ask it before they refuse a move).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar, cast

from services.kit.engine import MalformedMove
from services.kit.moves import TypedMove

from . import board
from .content import CARDS, POOL

# What a field holds: "v" a vertex, "s" a space, "l" either (a location), "c" a card,
# "n" a small number.
_LOCATION = "vsl"
MAX_NUMBER = 64


def _field_text(what: str, value: int) -> str:
    if what == "c":
        return CARDS[value].id
    if what == "n":
        return str(value)
    return board.name(value)


def _value_problem(what: str, value: object) -> str | None:
    if type(value) is not int:
        return "move fields are integers"
    if what == "c" and not 0 <= value < len(CARDS):
        return f"no card {value} in the pool"
    if what == "n" and not 0 <= value < MAX_NUMBER:
        return f"number {value} out of range"
    return None


class ShenMove(TypedMove):
    """The text and checks every kind shares; each kind declares its words and fields."""

    __slots__ = ()
    WORDS: ClassVar[str]
    NAME: ClassVar[str]  # how messages name the kind
    FIELDS: ClassVar[str]  # what each field holds, in order (see _LOCATION)
    ORDER: ClassVar[int]  # the kind's place in the sort order

    def values(self) -> tuple[int, ...]:
        return ()

    def sort_key(self) -> tuple[Any, ...]:
        return (self.ORDER, *self.values())

    def problem(self) -> str | None:
        for what, value in zip(self.FIELDS, self.values(), strict=True):
            found = _value_problem(what, value)
            if found is not None:
                return found
        return None

    def __str__(self) -> str:
        parts = [self.WORDS]
        parts.extend(
            _field_text(what, value) for what, value in zip(self.FIELDS, self.values(), strict=True)
        )
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self)!r})"


@dataclass(frozen=True, slots=True, repr=False)
class PlaceRealmStone(ShenMove):
    vertex: int
    WORDS, NAME, FIELDS, ORDER = "stone", "stone", "v", 0

    def values(self) -> tuple[int, ...]:
        return (self.vertex,)


@dataclass(frozen=True, slots=True, repr=False)
class Draw(ShenMove):
    WORDS, NAME, FIELDS, ORDER = "draw", "draw", "", 1


@dataclass(frozen=True, slots=True, repr=False)
class PlaceShenCounter(ShenMove):
    vertex: int
    WORDS, NAME, FIELDS, ORDER = "shen", "shen", "v", 2

    def values(self) -> tuple[int, ...]:
        return (self.vertex,)


@dataclass(frozen=True, slots=True, repr=False)
class PlayCard(ShenMove):
    card: int
    WORDS, NAME, FIELDS, ORDER = "play", "play", "c", 3

    def values(self) -> tuple[int, ...]:
        return (self.card,)


@dataclass(frozen=True, slots=True, repr=False)
class ChooseTarget(ShenMove):
    location: int
    WORDS, NAME, FIELDS, ORDER = "target", "target", "l", 4

    def values(self) -> tuple[int, ...]:
        return (self.location,)


@dataclass(frozen=True, slots=True, repr=False)
class ChooseFoe(ShenMove):
    seat: int
    WORDS, NAME, FIELDS, ORDER = "foe", "foe", "n", 5

    def values(self) -> tuple[int, ...]:
        return (self.seat,)


@dataclass(frozen=True, slots=True, repr=False)
class ClaimAnchorPoint(ShenMove):
    space: int
    WORDS, NAME, FIELDS, ORDER = "claim", "claim", "s", 6

    def values(self) -> tuple[int, ...]:
        return (self.space,)


@dataclass(frozen=True, slots=True, repr=False)
class AttackRealmStone(ShenMove):
    avatar: int
    stone: int
    WORDS, NAME, FIELDS, ORDER = "siege", "siege", "lv", 7

    def values(self) -> tuple[int, ...]:
        return (self.avatar, self.stone)


@dataclass(frozen=True, slots=True, repr=False)
class MoveStep(ShenMove):
    origin: int
    destination: int
    WORDS, NAME, FIELDS, ORDER = "step", "step", "ll", 8

    def values(self) -> tuple[int, ...]:
        return (self.origin, self.destination)


@dataclass(frozen=True, slots=True, repr=False)
class Hold(ShenMove):
    avatar: int
    WORDS, NAME, FIELDS, ORDER = "hold", "hold", "l", 9

    def values(self) -> tuple[int, ...]:
        return (self.avatar,)


@dataclass(frozen=True, slots=True, repr=False)
class StopMoving(ShenMove):
    WORDS, NAME, FIELDS, ORDER = "stop", "stop", "", 10


@dataclass(frozen=True, slots=True, repr=False)
class UseAbility(ShenMove):
    index: int
    WORDS, NAME, FIELDS, ORDER = "ability", "ability", "n", 11

    def values(self) -> tuple[int, ...]:
        return (self.index,)


@dataclass(frozen=True, slots=True, repr=False)
class RangedAttack(ShenMove):
    target: int
    WORDS, NAME, FIELDS, ORDER = "ranged", "ranged", "s", 12

    def values(self) -> tuple[int, ...]:
        return (self.target,)


@dataclass(frozen=True, slots=True, repr=False)
class RemoveAvatar(ShenMove):
    WORDS, NAME, FIELDS, ORDER = "remove avatar", "remove_avatar", "", 13


@dataclass(frozen=True, slots=True, repr=False)
class LoseCards(ShenMove):
    WORDS, NAME, FIELDS, ORDER = "lose cards", "lose_cards", "", 14


@dataclass(frozen=True, slots=True, repr=False)
class Retreat(ShenMove):
    location: int
    WORDS, NAME, FIELDS, ORDER = "retreat", "retreat", "l", 15

    def values(self) -> tuple[int, ...]:
        return (self.location,)


@dataclass(frozen=True, slots=True, repr=False)
class LoseFromHand(ShenMove):
    card: int
    WORDS, NAME, FIELDS, ORDER = "lose hand", "lose_hand", "c", 16

    def values(self) -> tuple[int, ...]:
        return (self.card,)


@dataclass(frozen=True, slots=True, repr=False)
class LoseFromDeck(ShenMove):
    WORDS, NAME, FIELDS, ORDER = "lose deck", "lose_deck", "", 17


@dataclass(frozen=True, slots=True, repr=False)
class LoseFromDiscard(ShenMove):
    card: int
    WORDS, NAME, FIELDS, ORDER = "lose discard", "lose_discard", "c", 18

    def values(self) -> tuple[int, ...]:
        return (self.card,)


@dataclass(frozen=True, slots=True, repr=False)
class Pass(ShenMove):
    WORDS, NAME, FIELDS, ORDER = "pass", "pass", "", 19


@dataclass(frozen=True, slots=True, repr=False)
class EndTurn(ShenMove):
    WORDS, NAME, FIELDS, ORDER = "end", "end", "", 20


Move = (
    PlaceRealmStone
    | Draw
    | PlaceShenCounter
    | PlayCard
    | ChooseTarget
    | ChooseFoe
    | ClaimAnchorPoint
    | AttackRealmStone
    | MoveStep
    | Hold
    | StopMoving
    | UseAbility
    | RangedAttack
    | RemoveAvatar
    | LoseCards
    | Retreat
    | LoseFromHand
    | LoseFromDeck
    | LoseFromDiscard
    | Pass
    | EndTurn
)

#: Every kind of move, in sort order.
MOVE_TYPES: tuple[type[ShenMove], ...] = (
    PlaceRealmStone,
    Draw,
    PlaceShenCounter,
    PlayCard,
    ChooseTarget,
    ChooseFoe,
    ClaimAnchorPoint,
    AttackRealmStone,
    MoveStep,
    Hold,
    StopMoving,
    UseAbility,
    RangedAttack,
    RemoveAvatar,
    LoseCards,
    Retreat,
    LoseFromHand,
    LoseFromDeck,
    LoseFromDiscard,
    Pass,
    EndTurn,
)
assert [kind.ORDER for kind in MOVE_TYPES] == list(range(len(MOVE_TYPES)))
_BY_WORDS = {kind.WORDS: kind for kind in MOVE_TYPES}

# The moves without fields: one value each.
DRAW, STOP, REMOVE_AVATAR, LOSE_CARDS, LOSE_DECK, PASS, END = (
    Draw(),
    StopMoving(),
    RemoveAvatar(),
    LoseCards(),
    LoseFromDeck(),
    Pass(),
    EndTurn(),
)


def off_field(move: ShenMove, field: board.Board) -> str | None:
    """Why a location of ``move`` is not one its kind may name on this field, or None."""
    for what, value in zip(move.FIELDS, move.values(), strict=True):
        if what not in _LOCATION:
            continue
        if value not in field.on_board:
            return f"location {value} is not on this {field.size}x{field.size} field"
        is_vertex = value >= board.VERTEX
        if (what == "v" and not is_vertex) or (what == "s" and is_vertex):
            return f"{move.NAME} takes a {'vertex' if what == 'v' else 'space'}"
    return None


def _parse_field(what: str, text: str) -> int:
    if what == "c":
        if text not in POOL.by_id:
            raise MalformedMove(f"unknown card {text!r}")
        return POOL.by_id[text]
    if what == "n":
        if not text.isdigit() or len(text) > 3 or (text != "0" and text[0] == "0"):
            raise MalformedMove(f"not a small number: {text!r}")
        return int(text)
    loc = board.parse(text)
    if loc is None or str(board.name(loc)) != text:
        raise MalformedMove(f"not a location (a space like c4, a vertex like C4): {text!r}")
    if what == "v" and not board.is_vertex(loc):
        raise MalformedMove(f"{text} is a space; a vertex is written in capitals (C4)")
    if what == "s" and board.is_vertex(loc):
        raise MalformedMove(f"{text} is a vertex; a space is written in lower case (c4)")
    return loc


def parse_move(text: str) -> Move:
    """The inverse of ``str(move)``.

    >>> parse_move("step c4 d5") == MoveStep(50, 67)
    True
    """
    if not isinstance(text, str):
        raise MalformedMove("a move's text form is a string")
    words = text.split(" ")
    for size in (2, 1):
        kind = _BY_WORDS.get(" ".join(words[:size]))
        if kind is not None:
            break
    else:
        raise MalformedMove(f"unknown move {text!r}")
    rest = words[size:]
    wanted = kind.FIELDS
    if len(rest) != len(wanted):
        raise MalformedMove(f"{kind.WORDS!r} takes {len(wanted)} field(s): {text!r}")
    values = [_parse_field(what, part) for what, part in zip(wanted, rest, strict=True)]
    return cast(Move, kind(*values))
