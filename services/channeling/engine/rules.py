"""The seven steps of a turn, as the rulebook orders them.

Only steps 1-3 and the replacement order in step 6 are decisions; placing cubes (4),
removing them (5), acquiring (6) and the endgame check (7) follow from those.
"""

from __future__ import annotations

import sys
from functools import cache, lru_cache

from services.kit.engine import Event, IllegalMove, MalformedMove, Outcome, check_seat

from . import board
from .content import CARD_BY_ID, GLYPHS
from .moves import ChoosePath, FillGap, Move, MoveDruid, PlayGlyph
from .state import BEYOND_VIGOR, DRUID, FILL, GLYPH, PATH, SEAT_NAMES, State

CARDS_TO_END = 7  # 7 - Check for Endgame: "at least seven Magic Circle Cards"
CUBES_MOVED, CUBES_STATIONARY, CUBES_ALONG = 3, 2, 1  # 4 - Place Energy Cubes


# --- what may be decided now ----------------------------------------------------------


def to_act(state: State) -> tuple[int, ...]:
    return () if state.result is not None else (state.current,)


def glyph_line(state: State, glyph: int) -> tuple[int, ...]:
    """The row or column of cards the green glyph ``glyph`` labels."""
    return _lines(state.row_glyphs, state.col_glyphs)[glyph]


@lru_cache(maxsize=4096)
def _lines(rows: tuple[int, ...], cols: tuple[int, ...]) -> dict[int, tuple[int, ...]]:
    lines = {g: board.row_cells(r) for r, g in enumerate(rows)}
    lines.update({g: board.col_cells(c) for c, g in enumerate(cols)})
    return lines


def free_cards(state: State, line: tuple[int, ...]) -> list[int]:
    """Cards of a line a Druid may move to: a Magic Circle card with no Druid on it."""
    occupied = state.druids[0] + state.druids[1]
    return [c for c in line if state.grid[c] is not None and c not in occupied]


def playable_glyphs(state: State) -> list[int]:
    """Glyphs in hand whose line leaves a Druid move, in hand order (sorted).

    Reading taken: when no glyph in hand leaves one (all four Druids stand in each of
    their lines), any glyph may be played and the turn passes without a Druid move.
    """
    hand = state.hands[state.current]
    playable = [g for g in hand if free_cards(state, glyph_line(state, g))]
    return playable or list(hand)


@cache
def _path_moves(start: int, end: int) -> list[ChoosePath]:
    return [ChoosePath(p) for p in board.leyline_paths(start, end)]


def legal_moves(state: State, seat: int) -> list[Move]:
    """Every move ``seat`` may make now, built in sorted order."""
    if state.result is not None or seat != state.current:
        return []
    step = state.step
    if step == GLYPH:
        return [PlayGlyph(g) for g in playable_glyphs(state)]
    if step == DRUID:
        assert state.glyph is not None
        targets = free_cards(state, glyph_line(state, state.glyph))
        return [MoveDruid(o, t) for o in sorted(state.druids[seat]) for t in targets]
    if step == PATH:
        assert state.moved is not None and state.stationary is not None
        return list(_path_moves(state.moved, state.stationary))
    if step == FILL:
        return [FillGap(c) for c in sorted(state.gaps)]
    return []


# --- applying a decision --------------------------------------------------------------


def apply(state: State, seat: int, move: Move) -> list[Event]:
    """Validate ``move`` for ``seat``, then carry it and every step it sets off."""
    check_seat(sys.modules[__name__], state, seat)
    if not isinstance(move, PlayGlyph | MoveDruid | ChoosePath | FillGap):
        raise MalformedMove("not a Channeling move")
    move.check_arguments()
    _validate(state, seat, move)
    events: list[Event] = []
    if isinstance(move, PlayGlyph):
        _play_glyph(state, seat, move.glyph, events)
    elif isinstance(move, MoveDruid):
        _move_druid(state, seat, move, events)
    elif isinstance(move, ChoosePath):
        _channel(state, seat, move.cells, events)
    else:
        _fill(state, move.cell, events)
        _refill_or_ask(state, seat, events)
    return events


def _validate(state: State, seat: int, move: Move) -> None:
    """The rule the move must satisfy at this step, checked without listing every move."""
    step = state.step
    expected = {GLYPH: PlayGlyph, DRUID: MoveDruid, PATH: ChoosePath, FILL: FillGap}[step]
    if not isinstance(move, expected):
        raise IllegalMove(
            f"this step is {step.replace('_', ' ')}, not {type(move).__name__}",
            rule=_RULES[step],
        )
    if step == GLYPH:
        ok = move.glyph in playable_glyphs(state)
    elif step == DRUID:
        line = glyph_line(state, state.glyph)
        ok = move.origin in state.druids[seat] and move.target in free_cards(state, line)
    elif step == PATH:
        ok = move.cells in board.leyline_paths(state.moved, state.stationary)
    else:
        ok = move.cell in state.gaps
    if not ok:
        raise IllegalMove(_why_not(state, seat, move), rule=_RULES[step])


_RULES = {
    GLYPH: "1 - Play a Glyph Card",
    DRUID: "2 - Move a Druid Token",
    PATH: "3 - Choose a Leyline Path",
    FILL: "6 - Acquire Magic Circle Cards for Splendor",
}


def _why_not(state: State, seat: int, move: Move) -> str:
    if isinstance(move, PlayGlyph):
        if move.glyph not in state.hands[seat]:
            return f"glyph {GLYPHS[move.glyph]} is not in hand"
        return f"glyph {GLYPHS[move.glyph]} labels a line with no free card for a Druid"
    if isinstance(move, MoveDruid):
        if move.origin not in state.druids[seat]:
            return f"no {SEAT_NAMES[seat]} Druid Token on {board.name(move.origin)}"
        line = ", ".join(board.name(c) for c in glyph_line(state, state.glyph or 0))
        return (
            f"{board.name(move.target)} is not a card without a Druid in the line of the "
            f"glyph played ({line})"
        )
    if isinstance(move, ChoosePath):
        return "not a shortest Leyline Path from the moved Druid to the stationary Druid"
    return f"{board.name(move.cell)} is not a gap left by an acquired card"


def _play_glyph(state: State, seat: int, glyph: int, events: list[Event]) -> None:
    """1 - Play a Glyph Card; the eighth brings the whole set back to hand."""
    state.hands[seat].remove(glyph)
    state.played[seat].append(glyph)
    text = f"{SEAT_NAMES[seat]} plays glyph {GLYPHS[glyph]}"
    events.append(Event("glyph_played", text, seat, {"glyph": GLYPHS[glyph]}))
    if not state.hands[seat]:
        state.hands[seat] = sorted(state.played[seat])
        state.played[seat] = []
        events.append(Event("glyphs_returned", f"{SEAT_NAMES[seat]} takes the glyphs back", seat))
    state.glyph = glyph
    if free_cards(state, glyph_line(state, glyph)):
        state.step = DRUID
    else:
        text = f"no free card in the {GLYPHS[glyph]} line: no Druid moves this turn"
        events.append(Event("no_druid_move", text, seat))
        _end_turn(state, seat, events)


def _move_druid(state: State, seat: int, move: MoveDruid, events: list[Event]) -> None:
    """2 - Move a Druid Token, then 3 - Choose a Leyline Path (at once if only one)."""
    druids = state.druids[seat]
    other = druids[1] if druids[0] == move.origin else druids[0]
    druids[druids.index(move.origin)] = move.target
    state.moved, state.stationary = move.target, other
    text = f"{SEAT_NAMES[seat]} moves a Druid {board.name(move.origin)}-{board.name(move.target)}"
    data = {"from": board.name(move.origin), "to": board.name(move.target)}
    events.append(Event("druid_moved", text, seat, data))
    paths = board.leyline_paths(move.target, other)
    if len(paths) == 1:
        _channel(state, seat, paths[0], events)
    else:
        state.step = PATH


def _channel(state: State, seat: int, path: tuple[int, ...], events: list[Event]) -> None:
    """Steps 4, 5 and 6 along the chosen Leyline Path."""
    placed = _place_cubes(state, seat, path)
    names = "-".join(board.name(c) for c in path)
    data = {"path": [board.name(c) for c in path], "placed": placed}
    total = sum(placed.values())
    events.append(
        Event("cubes_placed", f"{SEAT_NAMES[seat]} channels {total} along {names}", seat, data)
    )
    _remove_cubes(state, path, events)
    _acquire(state, seat, events)
    _refill_or_ask(state, seat, events)


def _place_cubes(state: State, seat: int, path: tuple[int, ...]) -> dict[str, int]:
    """4 - 3 cubes on the moved Druid's card, 2 on the stationary one's, 1 on each other.

    Reading taken: a gap (no card) receives nothing; a supply that runs out places what
    it has, in the rulebook's order (moved card, stationary card, then from the moved end).
    """
    wanted = [(path[0], CUBES_MOVED), (path[-1], CUBES_STATIONARY)]
    wanted += [(cell, CUBES_ALONG) for cell in path[1:-1]]
    placed: dict[str, int] = {}
    for cell, count in wanted:
        if state.grid[cell] is None:
            continue
        count = min(count, state.supply[seat])
        state.supply[seat] -= count
        state.cubes[cell][seat] += count
        placed[board.name(cell)] = count
    return placed


def _remove_cubes(state: State, path: tuple[int, ...], events: list[Event]) -> None:
    """5 - Pairs of one Light and one Dark cube leave each card, back to their supplies."""
    for cell in path:
        light, dark = state.cubes[cell]
        pairs = min(light, dark)
        if pairs:
            state.cubes[cell] = [light - pairs, dark - pairs]
            state.supply[0] += pairs
            state.supply[1] += pairs
            text = f"{pairs} pair(s) of cubes cancel on {board.name(cell)}"
            events.append(
                Event("cubes_removed", text, None, {"cell": board.name(cell), "pairs": pairs})
            )


def _acquire(state: State, seat: int, events: list[Event]) -> None:
    """6 - Cards holding at least their Vigor in this seat's cubes are acquired.

    By default Splendor-many cubes go back to the supply and the rest are kept as
    Overchanneling Cubes (step 6's wording); the ``overchanneling="vigor"`` option keeps
    only the cubes beyond the Vigor (the glossary's). See the engine README, reading 4.
    """
    by_vigor = state.options.overchanneling == BEYOND_VIGOR
    for cell in board.CELLS:
        card_id = state.grid[cell]
        if card_id is None:
            continue
        card = CARD_BY_ID[card_id]
        mine = state.cubes[cell][seat]
        if mine < card.vigor:
            continue
        returned = min(mine, card.vigor if by_vigor else card.splendor)
        state.supply[seat] += returned
        state.overchanneling[seat] += mine - returned
        state.cubes[cell][seat] = 0
        state.grid[cell] = None
        state.acquired[seat].append(card_id)
        state.gaps.append(cell)
        data = {
            "cell": board.name(cell),
            "card": card_id,
            "vigor": card.vigor,
            "splendor": card.splendor,
            "returned": returned,
            "overchanneling": mine - returned,
        }
        text = (
            f"{SEAT_NAMES[seat]} acquires the card on {board.name(cell)} "
            f"(Vigor {card.vigor}, Splendor {card.splendor}) with {mine} cubes"
        )
        events.append(Event("card_acquired", text, seat, data))


def _refill_or_ask(state: State, seat: int, events: list[Event]) -> None:
    """Replace acquired cards from the deck in the order the acquirer chooses.

    Only a real choice is asked: one gap left (or one card left in the deck with one
    gap) is filled at once. Reading taken: when the deck runs out, the remaining gaps
    stay empty for the rest of the game.
    """
    while state.gaps and state.deck:
        if len(state.gaps) > 1:
            state.step = FILL
            return
        _fill(state, state.gaps[0], events)
    state.gaps = []
    _end_turn(state, seat, events)


def _fill(state: State, cell: int, events: list[Event]) -> None:
    card_id = state.deck.pop()
    state.grid[cell] = card_id
    state.gaps.remove(cell)
    card = CARD_BY_ID[card_id]
    text = f"a new card (Vigor {card.vigor}, Splendor {card.splendor}) fills {board.name(cell)}"
    data = {
        "cell": board.name(cell),
        "card": card_id,
        "vigor": card.vigor,
        "splendor": card.splendor,
    }
    events.append(Event("card_replaced", text, None, data))


def _end_turn(state: State, seat: int, events: list[Event]) -> None:
    """7 - Check for Endgame, then play passes to the other player."""
    if state.end_triggered_by is None:
        if len(state.acquired[seat]) >= CARDS_TO_END:
            state.end_triggered_by = seat
            count, other = len(state.acquired[seat]), SEAT_NAMES[1 - seat]
            text = f"{SEAT_NAMES[seat]} has {count} cards: one more turn for {other}"
            events.append(Event("end_triggered", text, seat))
    elif seat != state.end_triggered_by:
        state.result = final_outcome(state)
        events.append(
            Event(
                "game_over",
                f"game over: {state.result.reason}",
                None,
                {"winners": list(state.result.winners)},
            )
        )
    state.step = GLYPH
    state.glyph = state.moved = state.stationary = None
    if state.result is None:
        state.current = 1 - seat
        state.turn += 1


# --- the end --------------------------------------------------------------------------


def splendor(state: State, seat: int) -> int:
    """Splendor from acquired cards, less one per Overchanneling Cube."""
    return sum(CARD_BY_ID[c].splendor for c in state.acquired[seat]) - state.overchanneling[seat]


def final_outcome(state: State) -> Outcome:
    """Most Splendor wins; ties go to the fewest cards, then to whoever went second."""
    scores = (splendor(state, 0), splendor(state, 1))
    cards = (len(state.acquired[0]), len(state.acquired[1]))
    details = tuple(
        f"{SEAT_NAMES[s]}: {scores[s]} Splendor ({cards[s]} cards, "
        f"{state.overchanneling[s]} Overchanneling)"
        for s in (0, 1)
    )
    if scores[0] != scores[1]:
        return Outcome(scores, (scores.index(max(scores)),), "MOST_SPLENDOR", details)
    if cards[0] != cards[1]:
        return Outcome(scores, (cards.index(min(cards)),), "TIE_FEWEST_CARDS", details)
    return Outcome(scores, (1,), "TIE_WENT_SECOND", details)


def outcome(state: State) -> Outcome | None:
    return state.result
