"""Every decision of Shén as a small value with a text form.

A :class:`Move` is ``(kind, a, b)``: a named tuple, so moves hash, compare and sort as
plain tuples (in C: legal-move lists are built and sorted fast), and moves of different
kinds sort by kind. Each kind uses ``a`` and ``b`` as follows (locations are the codes of
:mod:`board`, cards the index of the card in the pool); unused fields are -1:

    text                       kind          a               b
    stone C4                   STONE         vertex          -
    draw                       DRAW          -               -
    shen C4                    SHEN          vertex          -
    play ember_scout           PLAY          card            -
    target c4 / target C4      TARGET        location        -
    foe 2                      FOE           seat            -
    claim a1                   CLAIM         space           -
    siege a1 B2                SIEGE         avatar's loc.   Realm Stone vertex
    step c4 d5                 STEP          from            to
    hold c4                    HOLD          avatar's loc.   -
    stop                       STOP          -               -
    ability 0                  ABILITY       ability index   -
    ranged f6                  RANGED        target space    -
    remove avatar              REMOVE_AVATAR -               -
    lose cards                 LOSE_CARDS    -               -
    retreat c4                 RETREAT       location        -
    lose hand ember_scout      LOSE_HAND     card            -
    lose deck                  LOSE_DECK     -               -
    lose discard ember_scout   LOSE_DISCARD  card            -
    pass                       PASS          -               -
    end                        END           -               -

Each kind maps to one case of the protobuf ``oneof`` with these fields.
"""

from __future__ import annotations

from enum import IntEnum
from typing import NamedTuple

from services.kit.engine import MalformedMove

from . import board
from .content import CARDS, POOL


class Kind(IntEnum):
    STONE = 0
    DRAW = 1
    SHEN = 2
    PLAY = 3
    TARGET = 4
    FOE = 5
    CLAIM = 6
    SIEGE = 7
    STEP = 8
    HOLD = 9
    STOP = 10
    ABILITY = 11
    RANGED = 12
    REMOVE_AVATAR = 13
    LOSE_CARDS = 14
    RETREAT = 15
    LOSE_HAND = 16
    LOSE_DECK = 17
    LOSE_DISCARD = 18
    PASS = 19
    END = 20


# kind -> (words of its text, what a and b hold: "v" vertex, "s" space, "l" location,
# "c" card, "n" number; "" unused)
_FORMS: dict[Kind, tuple[str, str, str]] = {
    Kind.STONE: ("stone", "v", ""),
    Kind.DRAW: ("draw", "", ""),
    Kind.SHEN: ("shen", "v", ""),
    Kind.PLAY: ("play", "c", ""),
    Kind.TARGET: ("target", "l", ""),
    Kind.FOE: ("foe", "n", ""),
    Kind.CLAIM: ("claim", "s", ""),
    Kind.SIEGE: ("siege", "l", "v"),
    Kind.STEP: ("step", "l", "l"),
    Kind.HOLD: ("hold", "l", ""),
    Kind.STOP: ("stop", "", ""),
    Kind.ABILITY: ("ability", "n", ""),
    Kind.RANGED: ("ranged", "s", ""),
    Kind.REMOVE_AVATAR: ("remove avatar", "", ""),
    Kind.LOSE_CARDS: ("lose cards", "", ""),
    Kind.RETREAT: ("retreat", "l", ""),
    Kind.LOSE_HAND: ("lose hand", "c", ""),
    Kind.LOSE_DECK: ("lose deck", "", ""),
    Kind.LOSE_DISCARD: ("lose discard", "c", ""),
    Kind.PASS: ("pass", "", ""),
    Kind.END: ("end", "", ""),
}
_BY_WORDS = {words: kind for kind, (words, _, _) in _FORMS.items()}


def _field_text(what: str, value: int) -> str:
    if what == "c":
        return CARDS[value].id
    if what == "n":
        return str(value)
    return board.name(value)


class Move(NamedTuple):
    """One decision: ``Move(Kind.STEP, from, to)``; ``str()`` gives "step c4 d5"."""

    kind: Kind
    a: int = -1
    b: int = -1

    def __str__(self) -> str:
        words, first, second = _FORMS[self.kind]
        parts = [words]
        if first:
            parts.append(_field_text(first, self.a))
        if second:
            parts.append(_field_text(second, self.b))
        return " ".join(parts)

    def __repr__(self) -> str:
        return f"Move({str(self)!r})"


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

    >>> parse_move("step c4 d5") == Move(Kind.STEP, 51, 67)
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
    _, first, second = _FORMS[kind]
    wanted = [w for w in (first, second) if w]
    if len(rest) != len(wanted):
        raise MalformedMove(f"{_FORMS[kind][0]!r} takes {len(wanted)} field(s): {text!r}")
    values = [_parse_field(what, part) for what, part in zip(wanted, rest, strict=True)]
    return Move(kind, *values)
