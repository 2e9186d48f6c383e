"""What one seat (or a spectator, ``None``) may see of a game.

Public: everything in play, pools, the discard piles (the rival may inspect them), the
Monument display, Magic Items, the First Player token, counts of hands, draw piles and
the Monument deck, and the public part of the step being decided (payments are public).
Private to a seat: its hand, its draft (offer, kept cards, the cards it gave), its two
Mages and secret choice before the reveal, and Monuments it is looking at. Never: the
seed or generator, any pile's order, the rival's hand, draft or secret choice.
"""

from __future__ import annotations

from dataclasses import dataclass

from services.kit.engine import Outcome
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.scoring import victory_points
from services.resarcana.engine.state import PHASES, State
from services.resarcana.engine.turn import step, to_act


def _slug(cid: int) -> str:
    return CONTENT[cid].slug


def _slugs(cids: list[int]) -> tuple[str, ...]:
    return tuple(_slug(c) for c in cids)


@dataclass(frozen=True)
class ComponentView:
    """A component in front of a player: its name, whether turned, the essences on it."""

    name: str
    turned: bool
    essences: tuple[int, ...]


@dataclass(frozen=True)
class SeatView:
    seat: int
    mage: str  # "" until revealed
    item: str
    passed: bool
    pool: tuple[int, ...]  # Elan, Life, Calm, Death, Gold
    vp: int
    hand: int
    deck: int
    discard: tuple[str, ...]  # face up, in the order tucked
    components: tuple[ComponentView, ...]  # Mage, Magic Item, then the rest in play
    draft_kept: int  # during the draft
    mage_chosen: bool


@dataclass(frozen=True)
class View:
    seat: int | None
    phase: str
    round: int
    to_act: tuple[int, ...]
    step: str  # what the acting seat decides now (one per seat to act, same order)
    victory_points: int  # needed to win
    first_player: int
    token_passed: bool
    places: tuple[str, ...]  # unclaimed Places of Power
    monuments: tuple[str, ...]  # face-up display
    monument_deck: int
    items: tuple[str, ...]  # Magic Items in the middle
    seats: tuple[SeatView, ...]
    hand: tuple[str, ...]  # this seat's own; () for a spectator
    draft_offer: tuple[str, ...]
    draft_kept: tuple[str, ...]
    draft_given: tuple[str, ...]
    mage_options: tuple[str, ...]
    mage_choice: str
    looking: tuple[str, ...]
    outcome: Outcome | None


def _step_text(state: State, seat: int) -> str:
    return step(state, seat).describe()


def view(state: State, seat: int | None) -> View:
    """What ``seat`` may see now (``None``: a spectator)."""
    acting = to_act(state)
    seats = []
    for s, me in enumerate(state.seats):
        comps = tuple(
            ComponentView(_slug(c), state.turned[c], tuple(state.on[c])) for c in me.components()
        )
        seats.append(
            SeatView(
                seat=s,
                mage=_slug(me.mage) if me.mage >= 0 else "",
                item=_slug(me.item) if me.item >= 0 else "",
                passed=me.passed,
                pool=tuple(me.pool),
                vp=victory_points(state, s),
                hand=len(me.hand),
                deck=len(me.deck),
                discard=_slugs(me.discard),
                components=comps,
                draft_kept=len(me.draft_kept),
                mage_chosen=me.mage_choice >= 0 or me.mage >= 0,
            )
        )
    own = state.seats[seat] if seat is not None else None
    looking = _slugs(state.looking) if seat is not None and seat in acting and state.looking else ()
    return View(
        seat=seat,
        phase=PHASES[state.phase],
        round=state.round,
        to_act=acting,
        step=" | ".join(_step_text(state, s) for s in acting),
        victory_points=state.target_vp,
        first_player=state.first_player,
        token_passed=state.token_passed,
        places=_slugs(state.places),
        monuments=_slugs(state.monument_display),
        monument_deck=len(state.monument_deck),
        items=_slugs(sorted(state.items)),
        seats=tuple(seats),
        hand=_slugs(sorted(own.hand)) if own else (),
        draft_offer=_slugs(sorted(own.draft_offer)) if own else (),
        draft_kept=_slugs(own.draft_kept) if own else (),
        draft_given=_slugs(own.draft_given or own.gave) if own else (),
        mage_options=_slugs(own.mage_options) if own else (),
        mage_choice=_slug(own.mage_choice) if own and own.mage_choice >= 0 and own.mage < 0 else "",
        looking=looking,
        outcome=state.result,
    )
