"""Moves: one small frozen value per decision, with a short text form.

``Move(kind, a, b)`` sorts by kind, then its fields, so moves of different kinds sort
together. Each kind becomes one case of the protobuf ``oneof`` later, with ``a`` and
``b`` as its typed fields (a seat's space, a die id, a spot...). ``str(move)`` is the
text form and :func:`parse_move` its exact inverse::

    >>> str(Move(TAKE, 2))
    'take 2'
    >>> parse_move("go 12 foot") == Move(GO, 12, FOOT)
    True
"""

from __future__ import annotations

from dataclasses import dataclass

from services.kit.engine import MalformedMove

from .content import (
    ADVENTURER,
    ADVENTURER_BY_KEY,
    BOATS,
    COLOUR,
    COLOURS,
    COMPANIONS,
    DICE,
    SPELLS,
    SYMBOL,
    SYMBOLS,
    TRACK_SPACES,
)

# The kinds, in their sort order (roughly the order of a day).
ADVENTURER_CHOICE = 0  # "adventurer eoles"        Game Setup: each player chooses an adventurer
TAKE = 1  # "take 2"                               Morning: recruit the companion on space 2
BLACK = 2  # "black 3" / "black stay"              Kaar's immunity: move the black die
DIE = 3  # "die red"                               a multicoloured Sketal's large die
BURY = 4  # "bury 4"                               2-player games: send a companion to the cemetery
REROLL = 5  # "reroll token|track|lumipili 18"     Late Morning: use one reroll
FIX = 6  # "fix"                                   use 3 rerolls to set a die to a face
PAY = 7  # "pay token|track|lumipili 18"           one of the 3 rerolls of a fix
PICK = 8  # "pick 12"                              a die to reroll (or to set)
ROLL = 9  # "roll"                                 reroll the one picked die
FACE = 10  # "face water"                          the face a fixed die shows
READY = 11  # "ready"                              no more rerolls: the result is fixed
RESOLVE = 12  # "resolve adventurer|18|spell 3"    Noon: resolve one card or spell
RAISE = 13  # "raise 12" / "raise none"            Cromaug: a companion from the cemetery
LOSE = 14  # "lose 18"                             skull space: a companion to the cemetery
CANCEL = 15  # "cancel 3" / "cancel hidden"        skull space: cancel a spell
GO = 16  # "go 12 die|foot" / "go 12"              Province: move the company one space
CAMP = 17  # "camp"                                Province: stop in this village
SAIL = 18  # "sail 0 1"                            Archipelago: move a boat
END = 19  # "end"                                  Afternoon: the journey is over for today

# Reroll sources (``a`` of REROLL and PAY).
TOKEN, TRACK, LUMIPILI = 0, 1, 2
SOURCE_NAMES = ("token", "track", "lumipili")
# How a company pays to enter a space (``b`` of GO).
FREE, USE_DIE, FOOT = 0, 1, 2
PAY_NAMES = ("", "die", "foot")
# Card references (``a`` of RESOLVE): 0 the adventurer, 1-46 companions, 100+id a spell.
ADVENTURER_REF = 0
SPELL_REF = 100
STAY = -1  # "black stay"
NONE = 0  # "raise none"
HIDDEN = 0  # "cancel hidden": the face-down spell

KIND_NAMES = (
    "adventurer",
    "take",
    "black",
    "die",
    "bury",
    "reroll",
    "fix",
    "pay",
    "pick",
    "roll",
    "face",
    "ready",
    "resolve",
    "raise",
    "lose",
    "cancel",
    "go",
    "camp",
    "sail",
    "end",
)
KIND = {name: i for i, name in enumerate(KIND_NAMES)}
_BARE = (FIX, ROLL, READY, CAMP, END)


@dataclass(frozen=True, order=True, slots=True)
class Move:
    """One decision: ``kind`` and up to two small integer fields."""

    kind: int
    a: int = 0
    b: int = 0

    def __str__(self) -> str:
        kind, a, b = self.kind, self.a, self.b
        name = KIND_NAMES[kind]
        if kind in _BARE:
            return name
        if kind == ADVENTURER_CHOICE:
            return f"{name} {ADVENTURER[a].key}"
        if kind == BLACK:
            return f"{name} {'stay' if a == STAY else a}"
        if kind == DIE:
            return f"{name} {COLOURS[a]}"
        if kind in (REROLL, PAY):
            return f"{name} {SOURCE_NAMES[a]}" + (f" {b}" if a == LUMIPILI else "")
        if kind == FACE:
            return f"{name} {SYMBOLS[a]}"
        if kind == RESOLVE:
            if a == ADVENTURER_REF:
                return f"{name} adventurer"
            if a > SPELL_REF:
                return f"{name} spell {a - SPELL_REF}"
            return f"{name} {a}"
        if kind == RAISE:
            return f"{name} {'none' if a == NONE else a}"
        if kind == CANCEL:
            return f"{name} {'hidden' if a == HIDDEN else a}"
        if kind == GO:
            return f"{name} {a}" + (f" {PAY_NAMES[b]}" if b else "")
        if kind == SAIL:
            return f"{name} {a} {b}"
        return f"{name} {a}"


def _int(word: str, low: int, high: int, text: str) -> int:
    if not word.isdigit():
        raise MalformedMove(f"not a number in move {text!r}")
    value = int(word)
    if not low <= value <= high:
        raise MalformedMove(f"{value} out of range in move {text!r}")
    return value


def _parse(text: str) -> Move:
    words = text.split(" ")
    if not words or words[0] not in KIND:
        raise MalformedMove(f"unknown move {text!r}")
    kind = KIND[words[0]]
    args = words[1:]
    expected = 0 if kind in _BARE else 2 if kind in (SAIL,) else None
    if expected is not None and len(args) != expected:
        raise MalformedMove(f"wrong number of fields in move {text!r}")
    if kind in _BARE:
        return Move(kind)
    if not args:
        raise MalformedMove(f"missing field in move {text!r}")
    first = args[0]
    if kind == ADVENTURER_CHOICE:
        if first not in ADVENTURER_BY_KEY:
            raise MalformedMove(f"unknown adventurer in {text!r}")
        return Move(kind, ADVENTURER_BY_KEY[first].id)
    if kind in (TAKE, BURY):
        return Move(kind, _int(first, 0, TRACK_SPACES - 1, text))
    if kind == BLACK:
        return Move(kind, STAY if first == "stay" else _int(first, 0, TRACK_SPACES - 1, text))
    if kind == DIE:
        if first not in COLOUR:
            raise MalformedMove(f"unknown colour in {text!r}")
        return Move(kind, COLOUR[first])
    if kind in (REROLL, PAY):
        if first not in SOURCE_NAMES:
            raise MalformedMove(f"unknown reroll source in {text!r}")
        source = SOURCE_NAMES.index(first)
        if source == LUMIPILI:
            if len(args) != 2:
                raise MalformedMove(f"a lumipili reroll names its card: {text!r}")
            return Move(kind, source, _int(args[1], 1, max(COMPANIONS), text))
        return Move(kind, source)
    if kind == PICK:
        return Move(kind, _int(first, 0, len(DICE) - 1, text))
    if kind == FACE:
        if first not in SYMBOL:
            raise MalformedMove(f"unknown symbol in {text!r}")
        return Move(kind, SYMBOL[first])
    if kind == RESOLVE:
        if first == "adventurer":
            return Move(kind, ADVENTURER_REF)
        if first == "spell":
            if len(args) != 2:
                raise MalformedMove(f"a spell is named by its number: {text!r}")
            return Move(kind, SPELL_REF + _int(args[1], 1, max(SPELLS), text))
        return Move(kind, _int(first, 1, max(COMPANIONS), text))
    if kind == RAISE:
        return Move(kind, NONE if first == "none" else _int(first, 1, max(COMPANIONS), text))
    if kind == LOSE:
        return Move(kind, _int(first, 1, max(COMPANIONS), text))
    if kind == CANCEL:
        return Move(kind, HIDDEN if first == "hidden" else _int(first, 1, max(SPELLS), text))
    if kind == GO:
        spot = _int(first, 0, 999, text)
        if len(args) == 1:
            return Move(kind, spot, FREE)
        if args[1] not in PAY_NAMES[1:]:
            raise MalformedMove(f"unknown payment in {text!r}")
        return Move(kind, spot, PAY_NAMES.index(args[1]))
    if kind == SAIL:
        return Move(kind, _int(first, 0, 999, text), _int(args[1], 0, 999, text))
    raise MalformedMove(f"unknown move {text!r}")  # pragma: no cover


def parse_move(text: str) -> Move:
    """The move whose text form is ``text``; raises MalformedMove otherwise.

    Strict: ``str(parse_move(t)) == t`` for every accepted ``t``.
    """
    if not isinstance(text, str):
        raise MalformedMove("a move's text form is a string")
    move = _parse(text)
    if str(move) != text:
        raise MalformedMove(f"not in the canonical text form: {text!r}")
    return move


_VALID_KINDS = range(len(KIND_NAMES))


def check_well_formed(move: object) -> Move:
    """Raise MalformedMove unless ``move`` is a Move whose text form parses back to it."""
    if not isinstance(move, Move):
        raise MalformedMove("not a Glow move")
    if move.kind not in _VALID_KINDS or not isinstance(move.a, int) or not isinstance(move.b, int):
        raise MalformedMove("unknown kind of move")
    try:
        text = str(move)
    except (KeyError, IndexError) as exc:
        raise MalformedMove("a field of the move is out of range") from exc
    if parse_move(text) != move:
        raise MalformedMove("a field of the move is out of range")
    return move


__all__ = ["BOATS", "Move", "check_well_formed", "parse_move"]
