"""The 4x4 grid of Magic Circle cards: cells, their names, lines and Leyline Paths.

Cells are numbered 0-15, row by row from the top left. A cell's text name is its column
letter and row number, as on a chessboard drawn from the top: ``a1`` top left, ``d4``
bottom right.
"""

from __future__ import annotations

from functools import cache

SIZE = 4
CELLS = tuple(range(SIZE * SIZE))
CENTRE = (5, 6, 9, 10)  # b2 c2 / b3 c3


def row(cell: int) -> int:
    return cell // SIZE


def col(cell: int) -> int:
    return cell % SIZE


NAMES = tuple("abcd"[c % SIZE] + str(c // SIZE + 1) for c in CELLS)
ROWS = tuple(tuple(r * SIZE + c for c in range(SIZE)) for r in range(SIZE))
COLS = tuple(tuple(r * SIZE + c for r in range(SIZE)) for c in range(SIZE))


def name(cell: int) -> str:
    return NAMES[cell]


def parse_cell(text: str) -> int | None:
    if len(text) != 2 or text[0] not in "abcd" or text[1] not in "1234":
        return None
    return (int(text[1]) - 1) * SIZE + "abcd".index(text[0])


def row_cells(r: int) -> tuple[int, ...]:
    return ROWS[r]


def col_cells(c: int) -> tuple[int, ...]:
    return COLS[c]


@cache
def leyline_paths(start: int, end: int) -> tuple[tuple[int, ...], ...]:
    """Every shortest orthogonal path from ``start`` to ``end``, both ends included.

    A shortest path only ever steps towards the end, so these are the monotone lattice
    paths: C(dr + dc, dr) of them, at most 20 on a 4x4 grid.
    """
    if start == end:
        return ((start,),)
    dr = row(end) - row(start)
    dc = col(end) - col(start)
    steps = []
    if dr:
        steps.append(SIZE if dr > 0 else -SIZE)
    if dc:
        steps.append(1 if dc > 0 else -1)
    paths = []
    for step in steps:
        nxt = start + step
        for rest in leyline_paths(nxt, end):
            paths.append((start, *rest))
    return tuple(sorted(paths))
