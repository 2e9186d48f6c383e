"""The Radiant Shapes module's Shape cards: their setup, and "Acquiring New Shape Cards"
in step 2 instead of unlocking (``draw``, then ``keep``). Completing them is
completing_shapes.py."""

from __future__ import annotations

from services.kit.engine import Event
from services.kit.kernel import Decision
from services.shrine.engine import rulebook
from services.shrine.engine.content import CONTENT
from services.shrine.engine.moves import Draw, Keep
from services.shrine.engine.rules.board import say, tell
from services.shrine.engine.state import State


def setup(state: State) -> None:
    """Rulebook: "Separate the Shape cards into 4 decks by their backs. Shuffle each deck ... Each
    player draws 1 Shape card from each deck ... Return the deck of Shape cards with
    2-field patterns to the box." """
    state.decks = []
    for size in CONTENT.decks:
        deck = sorted(card.id for card in CONTENT.shapes.values() if card.deck == size)
        state.rng.shuffle(deck)
        state.decks.append(deck)
    for player in state.players:
        for deck in state.decks:
            player.hand.append(deck.pop())
        player.hand.sort()


def play_decks() -> tuple[int, ...]:
    return tuple(size for size in CONTENT.decks if size != CONTENT.setup_deck)


def draw_moves(state: State, seat: int) -> list[Draw]:
    if not state.options.radiant_shapes:
        return []
    return [Draw(size) for size in play_decks() if state.deck(size)]


def explain_draw(state: State, seat: int, move: Draw) -> tuple[str, str]:
    if not state.options.radiant_shapes:
        return rulebook.UNLOCK, "this game is played without the Radiant Shapes module"
    if move.deck == CONTENT.setup_deck:
        return rulebook.ACQUIRING_SHAPES, "that deck is only used during setup"
    return rulebook.ACQUIRING_SHAPES, f"the {move.deck}-field deck is empty"


def take(state: State, seat: int, size: int, why: str) -> list[Event]:
    card = state.deck(size).pop()
    hand = state.players[seat].hand
    hand.append(card)
    hand.sort()
    return [
        tell(seat, "shape_drawn", f"You drew Shape card {card} ({why})", card=card, deck=size),
        say(
            state,
            "shape_drawn",
            f"drew 1 Shape card from the {size}-field deck ({why})",
            seat,
            deck=size,
        ),
    ]


def do_draw(state: State, seat: int, move: Draw) -> list[Event]:
    """Rulebook: "Draw two Shape cards from a deck of your choice. Keep one and discard the other to
    the bottom of its respective deck." With one card left, it is simply kept."""
    deck = state.deck(move.deck)
    if len(deck) == 1:
        return take(state, seat, move.deck, "instead of unlocking")
    state.drawn = [deck.pop(), deck.pop()]
    first, second = state.drawn
    return [
        tell(
            seat,
            "shapes_drawn",
            f"You drew Shape cards {first} and {second}: keep one",
            cards=[first, second],
        ),
        say(
            state,
            "shapes_drawn",
            f"drew 2 Shape cards from the {move.deck}-field deck instead of unlocking",
            seat,
            deck=move.deck,
        ),
    ]


def keep_moves(state: State, seat: int) -> list[Keep]:
    return [Keep(i) for i in range(len(state.drawn))]


def do_keep(state: State, seat: int, move: Keep) -> list[Event]:
    kept = state.drawn[move.index]
    other = state.drawn[1 - move.index]
    state.drawn = []
    hand = state.players[seat].hand
    hand.append(kept)
    hand.sort()
    size = CONTENT.shapes[other].deck
    state.deck(size).insert(0, other)
    return [
        tell(
            seat,
            "shape_kept",
            f"You kept Shape card {kept}; {other} went under its deck",
            card=kept,
        ),
        say(
            state,
            "shape_kept",
            f"kept 1 Shape card and put the other under the {size}-field deck",
            seat,
        ),
    ]


DRAW = Decision(rulebook.ACQUIRING_SHAPES, draw_moves, do_draw, explain=explain_draw)
# Both positions are listed whenever two cards are drawn: nothing to explain.
KEEP = Decision(rulebook.ACQUIRING_SHAPES, keep_moves, do_keep)
