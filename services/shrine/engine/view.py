"""What a seat may see ("view"); ``None`` is a spectator.

Hidden from everyone but the owner: the Code card, the Shape cards in hand and the two
just drawn. Hidden from all: the seed and generator, the Code cards returned to the box,
the order of the Shape decks. Counts stand in for hidden things. The pouch holds no order
(every draw is made when it happens), and its colour counts follow from what is on the
table, so they are shown.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.kit.engine import Outcome
from services.shrine.engine import colours
from services.shrine.engine.content import BOARD, CONTENT, FIELDS, PLAYER
from services.shrine.engine.rules.acquiring_shapes import play_decks
from services.shrine.engine.rules.completing_shapes import tokens_left
from services.shrine.engine.rules.steps import STEP_TEXT
from services.shrine.engine.state import SEAT_NAMES, SUN, Phase, State


@dataclass(frozen=True)
class FieldView:
    name: str
    lenses: tuple[str, ...]  # bottom to top
    shows: str  # the colour seen, or "none"
    central: bool
    dial: str  # the corner of the dial that reaches it
    blocked_by: str  # a seat name, or ""
    claimed_target: bool  # the Block claim includes "target"
    printed_target: bool
    no_claim: bool  # the Block token claims nothing ("block <field> noclaim")

    def __repr__(self) -> str:
        text = f"{self.name}:{'+'.join(self.lenses) or '-'}"
        if len(self.lenses) == 2:
            text += f"={self.shows}"
        if self.blocked_by:
            claim = "(target)" if self.claimed_target else "(noclaim)" if self.no_claim else ""
            text += f"#{self.blocked_by}{claim}"
        return text + ("!" if self.printed_target else "")


@dataclass(frozen=True)
class DialView:
    corner: str
    fields: tuple[str, str, str]  # in sweep order
    facing: str  # the designated field
    side: str  # "active", "inactive" or "removed"

    def __repr__(self) -> str:
        return f"{self.corner}->{self.facing}:{self.side}"


@dataclass(frozen=True)
class PowerView:
    key: str
    name: str
    prices: tuple[int, ...]
    treasure: int  # Treasure on its spaces
    blocked: bool

    def __repr__(self) -> str:
        return f"{self.key}:{self.treasure}"


@dataclass(frozen=True)
class CodeCardView:
    id: str
    fields: tuple[tuple[str, str], ...]  # (field, colour)
    targets: tuple[str, ...]

    def __repr__(self) -> str:
        shown = " ".join(f"{f}={c}" for f, c in self.fields)
        return f"Code({self.id}: {shown}; targets {' '.join(self.targets)})"


@dataclass(frozen=True)
class PlayerView:
    seat: int
    name: str
    starting_player: bool
    treasure: int
    powers: tuple[PowerView, ...]
    serpents: int
    block_tokens: int
    passes: int
    debts: int
    proof: tuple[tuple[str, str], ...]  # (field, colour) of each Proof token placed
    proof_tokens_left: tuple[tuple[str, int], ...]
    shapes_in_hand: int
    completed: tuple[int, ...]
    hand: tuple[int, ...] | None  # only the owner
    code_card: CodeCardView | None  # only the owner

    def __repr__(self) -> str:
        proof = " ".join(f"{f}={c}" for f, c in self.proof)
        return (
            f"{self.name}({'start, ' if self.starting_player else ''}treasure {self.treasure}, "
            f"powers {' '.join(map(repr, self.powers))}, serpents {self.serpents}, "
            f"blocks {self.block_tokens}, passes {self.passes}, debts {self.debts}, "
            f"proof [{proof}], shapes {self.shapes_in_hand} in hand {self.hand}, "
            f"completed {self.completed}, {self.code_card})"
        )


@dataclass(frozen=True)
class View:
    seat: int | None
    # The seat whose side of the board is nearest this viewer ("Players should orient the
    # board between them so that each player is seated on the side of either the Sun or
    # the Moon glyph"): the viewer's own seat, Sun for a spectator. Field names stay
    # absolute (named from the Sun side); only the drawing turns.
    bottom_seat: int
    seats: tuple[str, ...]
    to_act: tuple[int, ...]
    step: str
    step_text: str
    turn: int
    current: int
    code_set: str
    fields: tuple[FieldView, ...]
    dials: tuple[DialView, ...]
    progress_track: tuple[tuple[int, str], ...]  # (Treasure printed, dial on it or "")
    offering: str
    pouch: int
    pouch_colours: tuple[tuple[str, int], ...]
    set_aside: tuple[tuple[str, int], ...]
    treasury: int
    powers_used_this_turn: int
    placed_this_turn: bool
    radiant_shapes: bool
    shape_decks: tuple[tuple[int, int], ...]  # (pattern size, cards left)
    drawn: int  # Shape cards drawn and waiting for "keep"
    drawn_cards: tuple[int, ...] | None  # only the drawer
    completing: int  # the Shape card being completed, or -1
    completing_fields: tuple[str, ...]
    completing_ignored: str
    players: tuple[PlayerView, ...]
    outcome: Outcome | None


def _player(state: State, seat: int, viewer: int | None) -> PlayerView:
    player = state.players[seat]
    own = viewer == seat
    card = None
    if own:
        code = CONTENT.codes[player.code]
        card = CodeCardView(
            id=code.id,
            fields=tuple(
                (BOARD.field_names[f], colours.NAMES[code.colours[f]]) for f in range(FIELDS)
            ),
            targets=tuple(BOARD.field_names[f] for f in range(FIELDS) if code.targets[f]),
        )
    left = tokens_left(state, seat)
    return PlayerView(
        seat=seat,
        name=SEAT_NAMES[seat],
        starting_player=state.starting == seat,
        treasure=player.treasure,
        powers=tuple(
            PowerView(p.key, p.name, p.prices, player.powers[i], player.powers[i] > 0)
            for i, p in enumerate(PLAYER.powers)
        ),
        serpents=len(PLAYER.serpent_costs) - player.serpents_removed,
        block_tokens=PLAYER.block_tokens - player.blocks_used,
        passes=player.passes,
        debts=player.debts,
        proof=tuple(
            (BOARD.field_names[f], colours.NAMES[c]) for f, c in enumerate(player.proof) if c >= 0
        ),
        proof_tokens_left=tuple((colours.NAMES[c], n) for c, n in enumerate(left)),
        shapes_in_hand=len(player.hand),
        completed=tuple(player.completed),
        hand=tuple(sorted(player.hand)) if own else None,
        code_card=card,
    )


def view(state: State, seat: int | None) -> View:
    """Everything ``seat`` may see now (``None``: a spectator)."""
    if seat is not None and (type(seat) is not int or seat not in (0, 1)):
        raise ValueError("seat must be 0 (Sun), 1 (Moon) or None")
    track = tuple(
        (amount, BOARD.dials[state.track[i]].corner if i < len(state.track) else "")
        for i, amount in enumerate(BOARD.track)
    )
    shapes_on = state.options.radiant_shapes
    drawer = state.current if state.drawn else -1
    return View(
        seat=seat,
        bottom_seat=SUN if seat is None else seat,
        seats=SEAT_NAMES,
        to_act=() if state.result is not None else (state.current,),
        step=state.phase.name,
        step_text=STEP_TEXT[state.phase],
        turn=state.turn,
        current=state.current,
        code_set=colours.NAMES[state.code_set],
        fields=tuple(
            FieldView(
                name=BOARD.field_names[f],
                lenses=tuple(colours.NAMES[c] for c in state.lenses[f]),
                shows=colours.name(colours.seen(state.lenses[f])),
                central=BOARD.central[f],
                dial=BOARD.dials[BOARD.dial_of[f]].corner,
                blocked_by=SEAT_NAMES[state.blocked_by[f]] if state.blocked_by[f] >= 0 else "",
                claimed_target=state.block_target[f],
                printed_target=BOARD.printed_targets[f],
                no_claim=state.block_no_claim[f],
            )
            for f in range(FIELDS)
        ),
        dials=tuple(
            DialView(
                corner=dial.corner,
                # A dial turns three fields.
                fields=tuple(BOARD.field_names[f] for f in dial.fields),  # type: ignore[arg-type]
                facing=BOARD.field_names[dial.fields[state.facing[d]]],
                side="removed" if d in state.track else "active" if state.active[d] else "inactive",
            )
            for d, dial in enumerate(BOARD.dials)
        ),
        progress_track=track,
        offering=colours.name(state.offering if state.offering >= 0 else None),
        pouch=sum(state.pouch),
        pouch_colours=tuple((colours.NAMES[c], state.pouch[c]) for c in colours.BASIC),
        set_aside=tuple((colours.NAMES[c], state.set_aside[c]) for c in colours.BASIC),
        treasury=state.treasury,
        powers_used_this_turn=state.powers_used,
        placed_this_turn=state.placed,
        radiant_shapes=shapes_on,
        shape_decks=tuple((size, len(state.deck(size))) for size in play_decks())
        if shapes_on
        else (),
        drawn=len(state.drawn),
        drawn_cards=tuple(state.drawn) if seat is not None and seat == drawer else None,
        completing=state.shape if state.phase in _COMPLETING else -1,
        completing_fields=tuple(
            BOARD.field_names[f] for f in range(FIELDS) if state.shape_mask >> f & 1
        )
        if state.phase in (Phase.SHAPE_CLAIM, Phase.REWARD, Phase.BONUS)
        else (),
        completing_ignored=BOARD.field_names[state.shape_ignore]
        if state.shape_ignore >= 0 and state.phase in (Phase.SHAPE_CLAIM, Phase.REWARD, Phase.BONUS)
        else "",
        players=(_player(state, 0, seat), _player(state, 1, seat)),
        outcome=state.result,
    )


_COMPLETING = (Phase.SHAPE_AT, Phase.SHAPE_CLAIM, Phase.REWARD, Phase.BONUS)
