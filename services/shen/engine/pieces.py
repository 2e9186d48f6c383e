"""Cards and Avatars moving between places: deck, hand, discard pile, the field, removed.

Every card is always in exactly one place: a player's deck, hand, discard pile, removed
pile or Remains in Play row, on the field as an Avatar or under one as an Item, or being
played (``State.playing``).
"""

from __future__ import annotations

from bisect import insort

from services.kit.engine import Event

from . import board as geometry
from .content import CARDS, Ability
from .state import Avatar, State

TEXT_NAMES = ("melee", "defense", "ranged", "move")


def seat_name(state: State, seat: int) -> str:
    return f"Clan {seat + 1}"


# --- traits -----------------------------------------------------------------------------


def trait(state: State, avatar: Avatar, which: str) -> int:
    """An Avatar's trait with its equipped Items and its owner's Remains in Play."""
    value = getattr(CARDS[avatar.card], which)
    for item in avatar.items:
        value += CARDS[item].bonus_of(which)
    remains = state.players[avatar.owner].remains
    if remains:
        for card in remains:
            value += CARDS[card].aura_of(which)
    return value


def shen_bonus(state: State, seat: int) -> int:
    """Extra Shén for playing cards, from Remains in Play ("a way to add additional Shén")."""
    return sum(CARDS[card].aura_of("shen") for card in state.players[seat].remains)


def abilities(avatar: Avatar) -> list[Ability]:
    """The Avatar's own abilities, then those its Items give it, in that order."""
    found = list(CARDS[avatar.card].abilities)
    for item in avatar.items:
        found.extend(CARDS[item].abilities)
    return found


def is_spirit(avatar: Avatar) -> bool:
    return avatar.loc >= geometry.VERTEX


def count(state: State, seat: int, loc: int) -> int:
    """The seat's Shén counters around a space (up to four) or on and next to a vertex (up
    to five). "A vertex with a Realm Stone counts as having a Shén counter"."""
    counters, stones = state.counters, state.stones
    return sum(
        1 for v in state.board.around(loc) if counters.get(v) == seat or stones.get(v) == seat
    )


def _own(state: State, seat: int) -> list[int]:
    own = [v for v, owner in state.counters.items() if owner == seat]
    stone = state.players[seat].stone
    if stone >= 0:
        own.append(stone)
    return own


def space_counts(state: State, seat: int) -> dict[int, int]:
    """``count`` for every space where it is not 0, in one pass over the seat's counters."""
    out: dict[int, int] = {}
    touching = state.board.touching
    for v in _own(state, seat):
        for s in touching[v]:
            out[s] = out.get(s, 0) + 1
    return out


def vertex_counts(state: State, seat: int) -> dict[int, int]:
    """``count`` for every vertex where it is not 0."""
    out: dict[int, int] = {}
    links = state.board.links
    for v in _own(state, seat):
        out[v] = out.get(v, 0) + 1
        for w in links[v]:
            out[w] = out.get(w, 0) + 1
    return out


# --- cards ------------------------------------------------------------------------------


def draw(state: State, seat: int, events: list[Event]) -> int:
    """Draw one card; an empty deck is first rebuilt from the shuffled discard pile."""
    player = state.players[seat]
    if not player.deck and player.discard:
        player.deck = player.discard
        player.discard = []
        state.rng.shuffle(player.deck)
        events.append(
            Event(
                "reshuffled",
                f"{seat_name(state, seat)} shuffles the discard pile into a new deck",
                seat,
                {"cards": len(player.deck)},
            )
        )
    if not player.deck:
        return -1
    card = player.deck.pop()
    insort(player.hand, card)
    events.append(
        Event(
            "drew",
            f"{seat_name(state, seat)} drew {CARDS[card].name}",
            seat,
            {"card": CARDS[card].id},
            to=frozenset({seat}),
        )
    )
    events.append(Event("drew_count", f"{seat_name(state, seat)} drew a card", seat, {"count": 1}))
    return card


def lose(state: State, seat: int, pile: str, card: int, events: list[Event]) -> None:
    """Remove one card from the game: from hand or discard pile (that card) or the deck's
    top. Lost cards are set aside face up (see README, readings)."""
    player = state.players[seat]
    if pile == "hand":
        player.hand.remove(card)
    elif pile == "deck":
        card = player.deck.pop()
    else:
        # The most recently discarded copy: the discard pile is face up, copies are alike.
        index = len(player.discard) - 1 - player.discard[::-1].index(card)
        del player.discard[index]
    player.removed.append(card)
    events.append(
        Event(
            "lost_card",
            f"{seat_name(state, seat)} loses {CARDS[card].name} from their {pile}",
            seat,
            {"card": CARDS[card].id, "pile": pile},
        )
    )


# --- Avatars ----------------------------------------------------------------------------


def manifest(state: State, seat: int, card: int, loc: int) -> Avatar:
    avatar = Avatar(state.next_uid, card, seat, loc)
    state.next_uid += 1
    state.avatars[avatar.uid] = avatar
    state.at[loc] = avatar.uid
    return avatar


def move_to(state: State, avatar: Avatar, loc: int) -> None:
    del state.at[avatar.loc]
    avatar.loc = loc
    state.at[loc] = avatar.uid


def take_off(state: State, avatar: Avatar) -> None:
    del state.at[avatar.loc]
    del state.avatars[avatar.uid]


def remove_from_game(state: State, avatar: Avatar, events: list[Event], why: str) -> None:
    """The Avatar is removed from the game, its equipped Items with it."""
    take_off(state, avatar)
    player = state.players[avatar.owner]
    player.removed.append(avatar.card)
    player.removed.extend(avatar.items)
    events.append(
        Event(
            "avatar_removed",
            f"{CARDS[avatar.card].name} of {seat_name(state, avatar.owner)} at "
            f"{geometry.name(avatar.loc)} is removed from the game ({why})",
            avatar.owner,
            {"card": CARDS[avatar.card].id, "at": geometry.name(avatar.loc), "why": why},
        )
    )


def return_to_hand(state: State, avatar: Avatar, events: list[Event]) -> None:
    """ "If a Shén counter under an Avatar Walking the Spirit path is removed or converted,
    that Avatar is immediately removed from the board and its card returns to that
    player's hand"."""
    take_off(state, avatar)
    player = state.players[avatar.owner]
    insort(player.hand, avatar.card)
    player.discard.extend(avatar.items)
    events.append(
        Event(
            "avatar_returned",
            f"{CARDS[avatar.card].name} of {seat_name(state, avatar.owner)} loses its Shén "
            f"counter at {geometry.name(avatar.loc)} and returns to its owner's hand",
            avatar.owner,
            {"card": CARDS[avatar.card].id, "at": geometry.name(avatar.loc)},
        )
    )
