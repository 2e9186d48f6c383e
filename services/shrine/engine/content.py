"""The components of Shrine, read once at import from ``services/shrine/content/*.toml``.

The rules read these values and nothing else: the publisher's real Code cards, Shape
cards or printed board values can replace the files without code changes. Loading checks
every file and raises ``ValueError`` naming the problem, so bad content fails at import
and never mid-game.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from services.shrine.engine import colours

CONTENT_DIR = Path(__file__).resolve().parent.parent / "content"

# The six Treasure Powers the rules know, in player-board order (the content names them).
POWER_KEYS: tuple[str, ...] = (
    "rotation",
    "refreshing",
    "inactive",
    "blocking",
    "overwriting",
    "relocating",
)
ROTATION, REFRESHING, INACTIVE, BLOCKING, OVERWRITING, RELOCATING = range(6)


@dataclass(frozen=True)
class Dial:
    corner: str
    fields: tuple[int, int, int]  # the three fields in the order the arrow sweeps them
    facing: int  # index into ``fields`` at setup


@dataclass(frozen=True)
class Board:
    field_names: tuple[str, ...]
    coords: tuple[tuple[int, int], ...]  # (row, column) per field; row 0 is the Sun side
    central: tuple[bool, ...]
    neighbours: tuple[tuple[int, ...], ...]  # orthogonally adjacent fields
    dials: tuple[Dial, ...]
    dial_of: tuple[int, ...]  # per field: the one dial whose arrow can reach it
    sweep_index: tuple[int, ...]  # per field: its place in that dial's sweep
    track: tuple[int, ...]  # Treasure printed on each progress-track space
    printed_targets: tuple[bool, ...]
    pouch: tuple[int, ...]  # Lenses of each basic colour
    coins: int  # Treasure in the box
    offering_spots: int

    @property
    def lenses(self) -> int:
        return sum(self.pouch)


@dataclass(frozen=True)
class Power:
    key: str
    name: str
    prices: tuple[int, ...]
    spaces: int


@dataclass(frozen=True)
class PlayerBoard:
    starting_treasure: int
    block_tokens: int
    debt_gain: int
    debt_costs: tuple[int, ...]
    pass_costs: tuple[int, ...]
    serpent_costs: tuple[int, ...]
    proof_tokens_per_colour: int
    false_claim_penalty: int
    largest_area_bonus: int
    target_bonus: int
    field_value_single: int
    field_value_double: int
    field_value_complex: int
    powers: tuple[Power, ...]

    @property
    def covered(self) -> int:
        """Treasure covering one board at setup (8A: every Treasure space)."""
        return sum(power.spaces for power in self.powers)


@dataclass(frozen=True)
class CodeCard:
    id: str
    set: int  # the colour on the card's back
    colours: tuple[int, ...]  # per field
    targets: tuple[bool, ...]  # per field


@dataclass(frozen=True)
class ShapeCard:
    id: int
    deck: int  # the pattern size, which is also its deck
    pattern: tuple[str, ...]
    treasure: int  # reward a: Treasure only
    unlock_treasure: int  # reward b: Treasure and Unlock
    bonus: tuple[int, ...]  # decks the bonus may draw from; () for none
    images: tuple[int, ...]  # field masks the pattern covers, rotated and/or mirrored


@dataclass(frozen=True)
class Content:
    board: Board
    player: PlayerBoard
    codes: tuple[CodeCard, ...]
    code_sets: tuple[tuple[int, ...], ...]  # per set colour: indices into ``codes``
    shapes: dict[int, ShapeCard]
    decks: tuple[int, ...]  # deck sizes in play order, smallest first
    setup_deck: int  # "only used during setup" (the 2-field deck)


def _read(name: str) -> dict[str, Any]:
    with open(CONTENT_DIR / name, "rb") as handle:
        return tomllib.load(handle)


def _field_coords(name: str) -> tuple[int, int]:
    if len(name) != 2 or name[0] not in "abcd" or name[1] not in "1234":
        raise ValueError(f"bad field name {name!r}")
    return int(name[1]) - 1, "abcd".index(name[0])


def _board(data: dict[str, Any]) -> Board:
    names = tuple(data["fields"])
    index = {name: i for i, name in enumerate(names)}
    if len(index) != len(names):
        raise ValueError("board.toml: duplicate field names")
    coords = tuple(_field_coords(name) for name in names)
    at = {coord: i for i, coord in enumerate(coords)}
    neighbours = tuple(
        tuple(
            sorted(
                at[(r + dr, c + dc)]
                for dr, dc in ((1, 0), (-1, 0), (0, 1), (0, -1))
                if (r + dr, c + dc) in at
            )
        )
        for r, c in coords
    )
    dials = []
    dial_of = [-1] * len(names)
    sweep = [-1] * len(names)
    for d, spec in enumerate(data["dial"]):
        fields = tuple(index[f] for f in spec["fields"])
        if len(fields) != 3:
            raise ValueError(f"board.toml: dial {spec['corner']} needs three fields")
        for place, f in enumerate(fields):
            if dial_of[f] != -1:
                raise ValueError(f"board.toml: field {names[f]} is reached by two dials")
            dial_of[f], sweep[f] = d, place
        dials.append(Dial(spec["corner"], fields, spec["fields"].index(spec["facing"])))
    if -1 in dial_of:
        raise ValueError("board.toml: every field needs a dial")
    central = tuple(name in data["central"] for name in names)
    for dial in dials:
        if not central[dial.fields[1]] or central[dial.fields[0]] or central[dial.fields[2]]:
            raise ValueError(f"board.toml: dial {dial.corner} must sweep outer, central, outer")
    return Board(
        field_names=names,
        coords=coords,
        central=central,
        neighbours=neighbours,
        dials=tuple(dials),
        dial_of=tuple(dial_of),
        sweep_index=tuple(sweep),
        track=tuple(data["progress_track"]["treasure"]),
        printed_targets=tuple(name in data["printed_targets"] for name in names),
        pouch=tuple(data["pouch"][colours.NAMES[c]] for c in colours.BASIC),
        coins=data["treasury"]["coins"],
        offering_spots=data["treasury"]["offering_spots"],
    )


def _player(data: dict[str, Any]) -> PlayerBoard:
    powers = tuple(
        Power(p["key"], p["name"], tuple(p["prices"]), p["spaces"]) for p in data["power"]
    )
    if tuple(p.key for p in powers) != POWER_KEYS:
        raise ValueError(f"player_board.toml: powers must be {POWER_KEYS}")
    for power in powers:
        if power.spaces < max(power.prices) or power.spaces < sum(power.prices[:1]):
            raise ValueError(f"player_board.toml: {power.key} has too few Treasure spaces")
    if sum(powers[REFRESHING].prices) > powers[REFRESHING].spaces:
        raise ValueError("player_board.toml: refreshing needs a space per Treasure")
    fields = {k: v for k, v in data.items() if k != "power"}
    for key in ("debt_costs", "pass_costs", "serpent_costs"):
        fields[key] = tuple(fields[key])
    return PlayerBoard(powers=powers, **fields)


def _codes(
    data: dict[str, Any], board: Board
) -> tuple[tuple[CodeCard, ...], tuple[tuple[int, ...], ...]]:
    names = board.field_names
    cards = []
    for spec in data["card"]:
        if set(spec["fields"]) != set(names):
            raise ValueError(f"code_cards.toml: {spec['id']} must colour every field")
        cards.append(
            CodeCard(
                id=spec["id"],
                set=colours.BY_NAME[spec["set"]],
                colours=tuple(colours.BY_NAME[spec["fields"][n]] for n in names),
                targets=tuple(n in spec["targets"] for n in names),
            )
        )
    if len({card.id for card in cards}) != len(cards):
        raise ValueError("code_cards.toml: duplicate card ids")
    sets = tuple(
        tuple(i for i, card in enumerate(cards) if card.set == colour)
        for colour in range(len(colours.NAMES))
    )
    for colour, members in enumerate(sets):
        if len(members) < 2:
            raise ValueError(f"code_cards.toml: set {colours.NAMES[colour]} needs two cards")
    return tuple(cards), sets


_TRANSFORMS = (
    lambda r, c: (r, c),
    lambda r, c: (c, -r),
    lambda r, c: (-r, -c),
    lambda r, c: (-c, r),
    lambda r, c: (r, -c),
    lambda r, c: (-c, -r),
    lambda r, c: (-r, c),
    lambda r, c: (c, r),
)


def pattern_cells(pattern: tuple[str, ...]) -> tuple[tuple[int, int], ...]:
    return tuple(
        (r, c) for r, row in enumerate(pattern) for c, mark in enumerate(row) if mark == "X"
    )


def pattern_images(cells: tuple[tuple[int, int], ...], board: Board) -> tuple[int, ...]:
    """Every set of board fields the pattern covers, rotated and/or mirrored, as masks."""
    at = {coord: i for i, coord in enumerate(board.coords)}
    masks = set()
    for transform in _TRANSFORMS:
        moved = [transform(r, c) for r, c in cells]
        top = min(r for r, _ in moved)
        left = min(c for _, c in moved)
        moved = [(r - top, c - left) for r, c in moved]
        for dr in range(4):
            for dc in range(4):
                spots = [(r + dr, c + dc) for r, c in moved]
                if all(spot in at for spot in spots):
                    masks.add(sum(1 << at[spot] for spot in spots))
    return tuple(sorted(masks))


def _shapes(data: dict[str, Any], board: Board) -> dict[int, ShapeCard]:
    shapes: dict[int, ShapeCard] = {}
    for spec in data["shape"]:
        pattern = tuple(spec["pattern"])
        cells = pattern_cells(pattern)
        if len(cells) != spec["deck"]:
            raise ValueError(
                f"shapes.toml: shape {spec['id']} is not a {spec['deck']}-field pattern"
            )
        if spec["treasure"] <= spec["unlock_treasure"]:
            raise ValueError(f"shapes.toml: shape {spec['id']}: Treasure only must grant more")
        bonus = spec["bonus"]
        decks = () if bonus == "none" else (-1,) if bonus == "any" else (int(bonus),)
        images = pattern_images(cells, board)
        if not images:
            raise ValueError(f"shapes.toml: shape {spec['id']} does not fit the board")
        if spec["id"] in shapes:
            raise ValueError(f"shapes.toml: duplicate shape id {spec['id']}")
        shapes[spec["id"]] = ShapeCard(
            spec["id"],
            spec["deck"],
            pattern,
            spec["treasure"],
            spec["unlock_treasure"],
            decks,
            images,
        )
    return shapes


def load() -> Content:
    board = _board(_read("board.toml"))
    player = _player(_read("player_board.toml"))
    codes, code_sets = _codes(_read("code_cards.toml"), board)
    shapes = _shapes(_read("shapes.toml"), board)
    decks = tuple(sorted({shape.deck for shape in shapes.values()}))
    setup_deck = decks[0]
    play_decks = decks[1:]
    resolved = {}
    for shape in shapes.values():
        bonus = play_decks if shape.bonus == (-1,) else shape.bonus
        if any(deck not in play_decks for deck in bonus):
            raise ValueError(f"shapes.toml: shape {shape.id} draws from a deck not in play")
        resolved[shape.id] = ShapeCard(
            shape.id,
            shape.deck,
            shape.pattern,
            shape.treasure,
            shape.unlock_treasure,
            bonus,
            shape.images,
        )
    return Content(board, player, codes, code_sets, resolved, decks, setup_deck)


CONTENT = load()
BOARD = CONTENT.board
PLAYER = CONTENT.player
FIELDS = len(BOARD.field_names)
ALL_FIELDS = (1 << FIELDS) - 1
FIELD_INDEX = {name: i for i, name in enumerate(BOARD.field_names)}
POWER_INDEX = {key: i for i, key in enumerate(POWER_KEYS)}
