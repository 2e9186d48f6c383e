"""What one seat (or a spectator) may see: everything on the table, nothing hidden.

Hidden: the deck's order and the companions returned to the box (counts only), the
spell pile (a count), another player's face-down spell (a count), the Rng and the
seats' reroll keys. A seat sees its own face-down spell (it took the token).
"""

from __future__ import annotations

from dataclasses import dataclass

from services.kit.engine import Outcome

from .content import ADVENTURER, COLOURS, DICE, MEETING_TRACK, SYMBOLS
from .dice import symbol
from .state import STAGE_NAMES, STEP_NAMES, State


@dataclass(frozen=True)
class DieView:
    id: int
    colour: str
    large: bool
    symbol: str  # the face it shows now


@dataclass(frozen=True)
class SpaceView:
    """One space of the meeting track."""

    element: str
    companion: int  # 0 when no companion is in front of it
    dice: tuple[DieView, ...]
    footprints: int


@dataclass(frozen=True)
class PlayerView:
    seat: int
    adventurer: str  # "" before the choice
    colour: str
    companions: tuple[int, ...]  # in recruiting order; the spells ride on the last one
    sketal_dice: tuple[tuple[int, int], ...]  # (companion, die)
    dice: tuple[DieView, ...]  # every die the player has
    rolled: tuple[int, ...]  # the dice rolled this round
    cancelled: tuple[int, ...]  # taken out of the result by the black die's curse
    used: tuple[int, ...]  # used on the journey today
    score: int
    rerolls: int
    rerolls_due: int  # earned this Noon or Afternoon, handed out when the step ends
    footprints: int
    fireflies: int
    spells: tuple[int, ...]  # revealed spell tokens
    face_down_spells: int
    own_face_down_spells: tuple[int, ...]  # only in that seat's own view
    company: int
    encampment: int
    boats: tuple[int, ...]
    stage: str  # the decision it is asked now ("idle" when none)
    done: bool
    lumipilis_used: tuple[int, ...]
    picked: tuple[int, ...]
    paid: int
    resolved: tuple[int, ...]
    visited: tuple[int, ...]


@dataclass(frozen=True)
class View:
    seat: int | None
    board: str
    step: str
    day: int
    first: int
    to_act: tuple[int, ...]
    meeting_track: tuple[SpaceView, ...]
    deck: int  # companions left in the deck
    box: int  # companions returned to the box at setup
    cemetery: tuple[int, ...]
    pool: tuple[DieView, ...]
    dice_box: tuple[int, ...]
    spell_pile: int
    spells_boxed: int
    reroll_pool: int
    players: tuple[PlayerView, ...]
    outcome: Outcome | None


def _die(state: State, die: int) -> DieView:
    d = DICE[die]
    return DieView(die, COLOURS[d.colour], d.large, SYMBOLS[symbol(state, die)])


def view(state: State, seat: int | None) -> View:
    """The table as ``seat`` sees it (None: a spectator)."""
    players = []
    for i, p in enumerate(state.players):
        adventurer = ADVENTURER.get(p.adventurer)
        players.append(
            PlayerView(
                seat=i,
                adventurer=adventurer.name if adventurer else "",
                colour=COLOURS[adventurer.colour] if adventurer else "",
                companions=tuple(p.companions),
                sketal_dice=tuple(p.sketal_dice),
                dice=tuple(_die(state, d) for d in p.all_dice()),
                rolled=tuple(p.rolled),
                cancelled=tuple(p.cancelled),
                used=tuple(p.used),
                score=p.score,
                rerolls=p.rerolls,
                rerolls_due=p.rerolls_due,
                footprints=p.footprints,
                fireflies=p.fireflies,
                spells=tuple(p.spells),
                face_down_spells=len(p.hidden_spells),
                own_face_down_spells=tuple(p.hidden_spells) if seat == i else (),
                company=p.company,
                encampment=p.encampment,
                boats=tuple(p.boats),
                stage=STAGE_NAMES[p.stage],
                done=p.done,
                lumipilis_used=tuple(p.lumipilis_used),
                picked=tuple(p.picked),
                paid=p.paid,
                resolved=tuple(p.resolved),
                visited=tuple(p.visited),
            )
        )
    return View(
        seat=seat,
        board=state.options.board,
        step=STEP_NAMES[state.step],
        day=state.day,
        first=state.first,
        to_act=state.acting,
        meeting_track=tuple(
            SpaceView(
                SYMBOLS[MEETING_TRACK[s]],
                state.track[s],
                tuple(_die(state, d) for d in state.track_dice[s]),
                state.track_footprints[s],
            )
            for s in range(len(state.track))
        ),
        deck=len(state.deck),
        box=len(state.box),
        cemetery=tuple(sorted(state.cemetery)),
        pool=tuple(_die(state, d) for d in state.pool),
        dice_box=tuple(state.dice_box),
        spell_pile=len(state.spell_pile),
        spells_boxed=len(state.spell_box),
        reroll_pool=state.reroll_pool,
        players=tuple(players),
        outcome=state.result,
    )
