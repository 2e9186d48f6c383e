"""The base of every game's typed moves: one frozen dataclass per kind of move.

A game's move kinds subclass :class:`TypedMove` as ``@dataclass(frozen=True)`` (so each
is a small, hashable value whose fields are named), print their text form with
``__str__`` (the stored games' format: it never changes) and sort by ``sort_key``, the
same key across kinds, so ``legal_moves`` of any game is one sorted list::

    @dataclass(frozen=True)
    class PlayGlyph(TypedMove):
        glyph: int

        def sort_key(self) -> tuple[Any, ...]:
            return (1, self.glyph)

        def problem(self) -> str | None:
            return None if 0 <= self.glyph < 8 else "glyph must be 0-7"

        def __str__(self) -> str:
            return f"glyph {GLYPHS[self.glyph]}"

``problem`` says why a move built in code is not well formed (a value out of range, of
the wrong type) before any rule reads it; the kernel refuses such a move as MALFORMED.
"""

from __future__ import annotations

from typing import Any


class TypedMove:
    """A move of one kind; moves of every kind of one game compare by ``sort_key``."""

    __slots__ = ()

    def sort_key(self) -> tuple[Any, ...]:
        # Every kind defines its key; the base is never listed (a bug, not a player's move).
        raise NotImplementedError(f"{type(self).__name__} has no sort_key")

    def problem(self) -> str | None:
        """Why this move is not well formed, or None."""
        return None

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, TypedMove):
            return NotImplemented
        return self.sort_key() < other.sort_key()

    def __le__(self, other: object) -> bool:
        if not isinstance(other, TypedMove):
            return NotImplemented
        return self.sort_key() <= other.sort_key()

    def __gt__(self, other: object) -> bool:
        if not isinstance(other, TypedMove):
            return NotImplemented
        return self.sort_key() > other.sort_key()

    def __ge__(self, other: object) -> bool:
        if not isinstance(other, TypedMove):
            return NotImplemented
        return self.sort_key() >= other.sort_key()
