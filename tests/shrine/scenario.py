"""Hand-built positions for the rulebook's examples and the rules' edge cases
(boardgame.io's scenario habit): start from a seeded game, then set the board, the
Offering, the dials and the players' boards exactly as the example shows.

Every helper keeps the 30 Lenses and the Treasure conserved, so the invariants of the
random-play tests hold in these positions too.
"""

from __future__ import annotations

from services.kit.engine import Event
from services.shrine import engine
from services.shrine.engine import colours
from services.shrine.engine.content import BOARD, CONTENT, FIELD_INDEX, POWER_INDEX
from services.shrine.engine.state import Phase, State

SUN, MOON = 0, 1


def F(name: str) -> int:
    return FIELD_INDEX[name]


def C(name: str) -> int:
    return colours.BY_NAME[name]


def P(key: str) -> int:
    return POWER_INDEX[key]


def D(corner: str) -> int:
    return next(i for i, dial in enumerate(BOARD.dials) if dial.corner == corner)


def game(seed: int = 1, shapes: bool = False) -> State:
    return engine.new_game(seed, 2, engine.Options(radiant_shapes=shapes))


def clear_board(state: State) -> None:
    """Every Lens back into the pouch (the Offering's too)."""
    for stack in state.lenses:
        for colour in stack:
            state.pouch[colour] += 1
        stack.clear()
    if state.offering >= 0:
        state.pouch[state.offering] += 1
        state.offering = -1


def put(state: State, field: str, *lenses: str) -> None:
    """Stack Lenses (bottom first) on a field, taking them from the pouch."""
    for name in lenses:
        colour = C(name)
        assert state.pouch[colour] > 0, f"no {name} Lens left in the pouch"
        state.pouch[colour] -= 1
        state.lenses[F(field)].append(colour)


def offer(state: State, name: str) -> None:
    """The Offering holds a Lens of this colour."""
    if state.offering >= 0:
        state.pouch[state.offering] += 1
    state.pouch[C(name)] -= 1
    state.offering = C(name)


def set_treasure(state: State, seat: int, amount: int) -> None:
    delta = amount - state.players[seat].treasure
    state.players[seat].treasure = amount
    state.treasury -= delta


def unlock_powers(state: State, seat: int, *keys: str) -> None:
    """Unlock these powers (all six when none are named), as step 2 would."""
    player = state.players[seat]
    for power in [P(k) for k in keys] or range(len(player.powers)):
        state.treasury += player.powers[power]
        player.powers[power] = 0


def dials(state: State, **sides: str) -> None:
    """Set dials by corner: ``dials(state, d1="active", d4="inactive")``."""
    for corner, side in sides.items():
        state.active[D(corner)] = side == "active"


def face(state: State, corner: str, field: str) -> None:
    dial = D(corner)
    state.facing[dial] = BOARD.dials[dial].fields.index(F(field))


def step_three(
    state: State, seat: int, offering: str = "yellow", treasure: int | None = None
) -> State:
    """``seat`` is to act in step 3, before placing, with this Lens in the Offering."""
    state.current = seat
    state.phase = Phase.ACTION
    state.powers_used = 0
    state.placed = False
    state.dial_used = -1
    offer(state, offering)
    if treasure is not None:
        set_treasure(state, seat, treasure)
    return state


def code(state: State, seat: int):
    return CONTENT.codes[state.players[seat].code]


def code_colour(state: State, seat: int, field: str) -> str:
    return colours.NAMES[code(state, seat).colours[F(field)]]


def lenses_for(colour: str) -> tuple[str, ...]:
    """Lenses that show ``colour`` on a field (a complex colour takes two)."""
    return {
        "orange": ("yellow", "red"),
        "green": ("blue", "yellow"),
        "purple": ("red", "blue"),
    }.get(colour, (colour,))


def match(state: State, seat: int, field: str) -> None:
    """Make ``field`` show the colour ``seat``'s Code card has there."""
    put(state, field, *lenses_for(code_colour(state, seat, field)))


def mismatch(state: State, seat: int, field: str) -> str:
    """Make ``field`` show a basic colour ``seat``'s Code card does not have there."""
    wanted = code_colour(state, seat, field)
    other = next(name for name in ("red", "yellow", "blue") if name != wanted)
    put(state, field, other)
    return other


def play(state: State, seat: int, text: str) -> list[Event]:
    return engine.apply(state, seat, engine.parse_move(text))


def moves(state: State, seat: int, word: str | None = None) -> list[str]:
    listed = [str(m) for m in engine.legal_moves(state, seat)]
    return [m for m in listed if word is None or m.split()[0] == word]


def give_shapes(state: State, seat: int, *cards: int) -> None:
    """``seat``'s hand becomes exactly these Shape cards (the old hand goes back under its
    decks; the new cards come from wherever they were)."""
    player = state.players[seat]
    for card in player.hand:
        state.deck(CONTENT.shapes[card].deck).insert(0, card)
    player.hand = []
    for card in cards:
        for holder in [*state.decks, *(p.hand for p in state.players)]:
            if card in holder:
                holder.remove(card)
        player.hand.append(card)
    player.hand.sort()


def end_of_turn(state: State, seat: int) -> State:
    """``seat`` has finished steps 1-5 and may complete a Shape card."""
    state.current = seat
    state.phase = Phase.SHAPE
    return state


def prove(state: State, seat: int, **tokens: str) -> None:
    """Proof tokens already on ``seat``'s Proof tile: ``prove(state, SUN, b2="purple")``."""
    for field, colour in tokens.items():
        state.players[seat].proof[F(field)] = C(colour)
