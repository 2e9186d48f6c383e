"""The playing field: a square grid of spaces and the vertices of its lines (the Spirit Path).

Locations are small integers that do not depend on the field size, so a move's text and
its numbers mean the same on every field:

    space  (x, y) -> y * 16 + x          named "a1", "b1", ... (column letter, row number)
    vertex (x, y) -> 256 + y * 16 + x    named "A1", "B1", ... (upper case)

Space a1 has the corners A1, B1, A2 and B2. A field of size n has n x n spaces and
(n + 1) x (n + 1) vertices; n is at most 15 so that every vertex fits the scheme.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

VERTEX = 256
MIN_SIZE = 4
MAX_SIZE = 15
DIRECTIONS = ((-1, -1), (0, -1), (1, -1), (-1, 0), (1, 0), (-1, 1), (0, 1), (1, 1))
ORTHOGONAL = ((0, -1), (-1, 0), (1, 0), (0, 1))


def space(x: int, y: int) -> int:
    return y * 16 + x


def vertex(x: int, y: int) -> int:
    return VERTEX + y * 16 + x


def is_vertex(loc: int) -> bool:
    return loc >= VERTEX


def xy(loc: int) -> tuple[int, int]:
    loc &= 255
    return loc & 15, loc >> 4


def _name(loc: int) -> str:
    x, y = xy(loc)
    return f"{chr((65 if loc >= VERTEX else 97) + x)}{y + 1}"


_NAMES = tuple(_name(loc) for loc in range(2 * VERTEX))


def name(loc: int) -> str:
    return _NAMES[loc]


def parse(text: str) -> int | None:
    """A location from its name ("c4" a space, "C4" a vertex), or None."""
    if len(text) < 2 or not text[1:].isdigit() or not text[0].isascii():
        return None
    letter, y = text[0], int(text[1:]) - 1
    if text[1] == "0" or not 0 <= y <= MAX_SIZE:
        return None
    if "a" <= letter <= "p":
        x = ord(letter) - 97
        return space(x, y) if x < MAX_SIZE and y < MAX_SIZE else None
    if "A" <= letter <= "P":
        return vertex(ord(letter) - 65, y)
    return None


@dataclass(frozen=True)
class Board:
    """The geometry of one field size, computed once and shared by every game."""

    size: int
    spaces: tuple[int, ...]
    vertices: tuple[int, ...]
    on_board: frozenset[int]
    corners: tuple[tuple[int, ...], ...]  # space -> its 4 vertices
    touching: tuple[tuple[int, ...], ...]  # vertex -> the 1 to 4 spaces it is a corner of
    links: tuple[tuple[int, ...], ...]  # vertex -> the 2 to 4 vertices next to it
    steps: tuple[tuple[tuple[int, int], ...], ...]  # space -> (neighbour, vertex passed or -1)

    def around(self, loc: int) -> tuple[int, ...]:
        """The vertices whose Shén counts for ``loc``: a space's corners, or a vertex and
        the vertices next to it (the rulebook's "up to four" and "up to five")."""
        if loc >= VERTEX:
            return (loc, *self.links[loc])
        return self.corners[loc]

    def distance(self, a: int, b: int) -> int:
        """Spaces between two locations, diagonal steps counting one (vertices count as
        the nearest space corner)."""
        (ax, ay), (bx, by) = xy(a), xy(b)
        ax, ay = 2 * ax + (a < VERTEX), 2 * ay + (a < VERTEX)
        bx, by = 2 * bx + (b < VERTEX), 2 * by + (b < VERTEX)
        return (max(abs(ax - bx), abs(ay - by)) + 1) // 2


@cache
def board(size: int) -> Board:
    n = size
    spaces = tuple(space(x, y) for y in range(n) for x in range(n))
    vertices = tuple(vertex(x, y) for y in range(n + 1) for x in range(n + 1))
    corners: list[tuple[int, ...]] = [()] * 512
    touching: list[tuple[int, ...]] = [()] * 512
    links: list[tuple[int, ...]] = [()] * 512
    steps: list[tuple[tuple[int, int], ...]] = [()] * 512
    for y in range(n):
        for x in range(n):
            corners[space(x, y)] = tuple(
                sorted((vertex(x, y), vertex(x + 1, y), vertex(x, y + 1), vertex(x + 1, y + 1)))
            )
            out = []
            for dx, dy in DIRECTIONS:
                tx, ty = x + dx, y + dy
                if 0 <= tx < n and 0 <= ty < n:
                    # A diagonal step passes the vertex the two spaces share.
                    passed = vertex(x + (dx > 0), y + (dy > 0)) if dx and dy else -1
                    out.append((space(tx, ty), passed))
            steps[space(x, y)] = tuple(sorted(out))
    for y in range(n + 1):
        for x in range(n + 1):
            v = vertex(x, y)
            touching[v] = tuple(
                sorted(
                    space(sx, sy)
                    for sx, sy in ((x - 1, y - 1), (x, y - 1), (x - 1, y), (x, y))
                    if 0 <= sx < n and 0 <= sy < n
                )
            )
            links[v] = tuple(
                sorted(
                    vertex(x + dx, y + dy)
                    for dx, dy in ORTHOGONAL
                    if 0 <= x + dx <= n and 0 <= y + dy <= n
                )
            )
    return Board(
        n,
        spaces,
        vertices,
        frozenset(spaces + vertices),
        tuple(corners),
        tuple(touching),
        tuple(links),
        tuple(steps),
    )
