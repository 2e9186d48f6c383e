"""Setup: Places of Power, Monuments, essences, the first player, the Artifacts (the draft
or the first-game deal), the Mages, and the Magic Items chosen in reverse order."""

from __future__ import annotations

from dataclasses import dataclass

from services.kit.engine import BadOptions, Rng
from services.resarcana.engine import collect, rulebook
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.moves import ChooseMage, Keep, Move, TakeItem
from services.resarcana.engine.state import (
    DRAFT,
    ITEM,
    MAGE,
    PLACE_SIDES,
    SETUPS,
    Options,
    State,
)
from services.resarcana.engine.table import SEAT_NAMES, Log, draw, gain_bag, name, names
from services.resarcana.engine.task import Task, by_kind


def _check(players: int, options: Options) -> None:
    if not isinstance(options, Options):
        raise BadOptions("options must be Res Arcana Duo Options")
    if players != 2:
        raise BadOptions("Res Arcana Duo is for exactly 2 players")
    if options.setup not in SETUPS:
        raise BadOptions(f"setup must be one of {', '.join(SETUPS)}")
    if options.places not in PLACE_SIDES:
        raise BadOptions(f"places must be one of {', '.join(PLACE_SIDES)}")
    if not isinstance(options.victory_points, int) or options.victory_points < 0:
        raise BadOptions("victory_points must be 0 (the rulebook's) or more")
    if options.first_player not in (-1, 0, 1):
        raise BadOptions("first_player must be -1 (by the seed), 0 or 1")
    if not isinstance(options.round_limit, int) or options.round_limit < 0:
        raise BadOptions("round_limit must be 0 (none) or more")
    if not isinstance(options.collect_in_turn_order, bool):
        raise BadOptions("collect_in_turn_order must be true or false")
    if options.setup == "first_game":
        start_mages = [c for c in CONTENT.mages if CONTENT[c].start]
        start_cards = [c for c in CONTENT.artifacts if CONTENT[c].start]
        rest = len(CONTENT.artifacts) - len(start_cards)
        if (
            len(start_mages) != 2
            or len(start_cards) != 2 * CONTENT.starting_hand
            or rest < 2 * CONTENT.first_game_draw_pile
        ):
            raise BadOptions("the content has no complete first-game set")
    elif (
        len(CONTENT.mages) < 2 * CONTENT.mages_dealt
        or len(CONTENT.artifacts) < 2 * CONTENT.artifacts_dealt
    ):
        raise BadOptions("the content has too few Mages or Artifacts for the draft")


def new_game(seed: int, players: int, options: Options | None = None) -> State:
    """Set up a game; all chance comes from ``seed``."""
    options = options if options is not None else Options()
    _check(players, options)
    first_game = options.setup == "first_game"
    target = options.victory_points or (
        CONTENT.first_game_vp if first_game else CONTENT.full_game_vp
    )
    state = State(options=options, rng=Rng(seed), target_vp=target)
    rng = state.rng

    # Places of Power: the amber sides, or a random side of each tile.
    amber = options.places == "amber" or (options.places == "auto" and first_game)
    tiles = sorted({CONTENT[c].tile for c in CONTENT.places})
    for tile in tiles:
        sides = [c for c in CONTENT.places if CONTENT[c].tile == tile]
        if amber:
            up = next(c for c in sides if CONTENT[c].amber)
        else:
            up = sides[rng.randrange(len(sides))]
        state.places.append(up)
        state.box.extend(c for c in sides if c != up)

    # Monuments: a shuffled face-down pile, 2 revealed.
    state.monument_deck = list(CONTENT.monuments)
    rng.shuffle(state.monument_deck)
    for _ in range(2):
        state.monument_display.append(state.monument_deck.pop())

    for seat in (0, 1):
        gain_bag(state, seat, CONTENT.start_pool)
    state.first_player = options.first_player if options.first_player >= 0 else rng.randrange(2)
    state.items = list(CONTENT.items)

    if first_game:
        start_mages = [c for c in CONTENT.mages if CONTENT[c].start]
        rng.shuffle(start_mages)
        start_cards = [c for c in CONTENT.artifacts if CONTENT[c].start]
        rng.shuffle(start_cards)
        others = [c for c in CONTENT.artifacts if not CONTENT[c].start]
        rng.shuffle(others)
        hand, pile = CONTENT.starting_hand, CONTENT.first_game_draw_pile
        for seat, me in enumerate(state.seats):
            me.mage = start_mages[seat]
            me.hand = start_cards[seat * hand : (seat + 1) * hand]
            me.deck = others[seat * pile : (seat + 1) * pile]
        state.box.extend(c for c in CONTENT.mages if not CONTENT[c].start)
        state.box.extend(others[2 * pile :])
        state.phase = ITEM
        state.chooser = 1 - state.first_player
    else:
        mages = list(CONTENT.mages)
        rng.shuffle(mages)
        cards = list(CONTENT.artifacts)
        rng.shuffle(cards)
        m, a = CONTENT.mages_dealt, CONTENT.artifacts_dealt
        for seat, me in enumerate(state.seats):
            me.mage_options = sorted(mages[seat * m : (seat + 1) * m])
            me.draft_stack = cards[seat * a : (seat + 1) * a]
            me.draft_offer = [me.draft_stack.pop(), me.draft_stack.pop()]
        state.box.extend(mages[2 * m :])
        state.box.extend(cards[2 * a :])
        state.phase = DRAFT
    return state


# ---------------------------------------------------------------- the draft


@dataclass(frozen=True, slots=True)
class Draft(Task):
    """The draft: keep one of the two Artifacts drawn, set the other face down for the
    rival; four times, each player at their own pace."""

    TEXT = "keep a drafted Artifact"
    RULE = rulebook.SETUP

    def keeps(self, state: State, seat: int) -> list[Move]:
        return [Keep(c) for c in sorted(set(state.seats[seat].draft_offer))]

    LISTS = by_kind({Keep: keeps})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, Keep)
        me = state.seats[seat]
        kept = move.card
        given = me.draft_offer[1] if me.draft_offer[0] == kept else me.draft_offer[0]
        me.draft_offer = []
        me.draft_kept.append(kept)
        me.draft_given.append(given)
        log.tell(
            "draft",
            seat,
            f"{SEAT_NAMES[seat]} keeps {name(kept)} and sets {name(given)} aside for the rival",
            f"{SEAT_NAMES[seat]} keeps a card and sets one aside for the rival",
            {"kept": CONTENT[kept].slug, "given": CONTENT[given].slug},
            round=len(me.draft_kept),
        )
        if len(me.draft_kept) < CONTENT.draft_rounds:
            me.draft_offer = [me.draft_stack.pop(), me.draft_stack.pop()]
        if all(not s.draft_offer for s in state.seats):
            _finish_draft(state, log)

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        return rulebook.SETUP, "keep one of the two Artifacts you drew"


def _finish_draft(state: State, log: Log) -> None:
    """Both are done: each shuffles the kept and received cards into a draw pile and
    draws the starting hand."""
    for seat, me in enumerate(state.seats):
        received = state.seats[1 - seat].draft_given
        me.deck = me.draft_kept + received
        log.tell(
            "draft_done",
            seat,
            f"{SEAT_NAMES[seat]} receives {names(received)} and shuffles them with the kept cards",
            f"{SEAT_NAMES[seat]} receives 4 cards and shuffles them with the kept cards",
            {"received": [CONTENT[c].slug for c in received]},
        )
    for me in state.seats:
        me.gave = list(me.draft_given)
        me.draft_given = []
        me.draft_kept = []
        me.draft_stack = []
        state.rng.shuffle(me.deck)
    for seat in (0, 1):
        draw(state, seat, CONTENT.starting_hand, log, "starting hand")
    state.phase = MAGE


@dataclass(frozen=True, slots=True)
class MageChoice(Task):
    """Each player chooses one of their two Mages in secret; both are revealed together."""

    TEXT = "choose a Mage"
    RULE = rulebook.SETUP

    def mages(self, state: State, seat: int) -> list[Move]:
        return [ChooseMage(c) for c in sorted(state.seats[seat].mage_options)]

    LISTS = by_kind({ChooseMage: mages})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, ChooseMage)
        me = state.seats[seat]
        me.mage_choice = move.mage
        log.tell(
            "mage_choice",
            seat,
            f"{SEAT_NAMES[seat]} chooses {name(move.mage)} as Mage",
            f"{SEAT_NAMES[seat]} chooses a Mage",
            {"mage": CONTENT[move.mage].slug},
        )
        if all(s.mage_choice >= 0 for s in state.seats):
            for s, other in enumerate(state.seats):
                other.mage = other.mage_choice
                state.box.extend(c for c in other.mage_options if c != other.mage)
                other.mage_options = []
                log.say(
                    "mage",
                    f"{SEAT_NAMES[s]} reveals the Mage {name(other.mage)}",
                    s,
                    mage=CONTENT[other.mage].slug,
                )
            state.phase = ITEM
            state.chooser = 1 - state.first_player

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        return rulebook.SETUP, "choose one of your two Mages"


@dataclass(frozen=True, slots=True)
class ItemChoice(Task):
    """Magic Items are chosen in reverse order: the second player first."""

    TEXT = "choose a Magic Item"
    RULE = rulebook.SETUP

    def items(self, state: State, seat: int) -> list[Move]:
        return [TakeItem(c) for c in sorted(state.items)]

    LISTS = by_kind({TakeItem: items})

    def play(self, state: State, seat: int, move: Move, log: Log) -> None:
        assert isinstance(move, TakeItem)
        state.items.remove(move.item)
        state.seats[seat].item = move.item
        log.say(
            "item",
            f"{SEAT_NAMES[seat]} takes the Magic Item {name(move.item)}",
            seat,
            item=CONTENT[move.item].slug,
        )
        if seat != state.first_player:
            state.chooser = state.first_player
        else:
            begin_round(state, log)

    def refusal(self, state: State, seat: int, move: Move) -> tuple[str, str]:
        return rulebook.SETUP, "take a Magic Item from the middle"


def begin_round(state: State, log: Log) -> None:
    state.round += 1
    log.say(
        "round",
        f"Round {state.round} begins; {SEAT_NAMES[state.first_player]} has the First Player token",
        None,
        round=state.round,
        first_player=state.first_player,
    )
    collect.begin(state, log)
