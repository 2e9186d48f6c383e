""" "Refreshing the Offering" (a Treasure Power before placing): ``refresh`` draws until
a Lens of another colour comes; ``search`` pays the additional Treasure for the third
colour, ``accept`` keeps the new Lens."""

from __future__ import annotations

from services.kit.engine import Event
from services.kit.kernel import Decision
from services.shrine.engine import colours, rulebook
from services.shrine.engine.content import PLAYER, REFRESHING
from services.shrine.engine.moves import Accept, Refresh, Search
from services.shrine.engine.rules.board import draw_lens, pay_power, say
from services.shrine.engine.state import State


def _price(level: int) -> int:
    return PLAYER.powers[REFRESHING].prices[level]


def refresh_moves(state: State, seat: int) -> list[Refresh]:
    player = state.players[seat]
    if (
        state.offering < 0
        or player.blocked(REFRESHING)
        or player.treasure < _price(0)
        or sum(state.pouch) == state.pouch[state.offering]
    ):
        return []
    return [Refresh()]


def explain_refresh(state: State, seat: int, move: Refresh) -> tuple[str, str]:
    player = state.players[seat]
    if player.blocked(REFRESHING):
        return rulebook.TREASURE_POWERS, "Refreshing the Offering is blocked"
    if player.treasure < _price(0):
        return rulebook.TREASURE_POWERS, "Refreshing the Offering costs 1 Treasure"
    return rulebook.REFRESHING, "the pouch holds no Lens of another colour"


def _third(state: State) -> int:
    return next(c for c in colours.BASIC if c not in (state.refreshed_from, state.offering))


def do_refresh(state: State, seat: int, move: Refresh) -> list[Event]:
    """Draw until a Lens of another colour comes; the old Lens and the draws of its colour
    are set aside until the power is resolved."""
    pay_power(state, seat, REFRESHING, _price(0))
    old = state.offering
    state.refreshed_from = old
    state.set_aside[old] += 1
    drawn = []
    while True:
        lens = draw_lens(state)
        drawn.append(colours.NAMES[lens])
        if lens != old:
            break
        state.set_aside[lens] += 1
    state.offering = lens
    text = (
        f"refreshed the Offering (paid 1): drew {', '.join(drawn)}; the Offering now holds "
        f"a {colours.NAMES[lens]} Lens"
    )
    events = [say(state, "refresh", text, seat, drawn=drawn, offering=colours.NAMES[lens])]
    if not search_moves(state, seat):
        events += finish_refresh(state)
    return events


def search_moves(state: State, seat: int) -> list[Search]:
    player = state.players[seat]
    if player.treasure >= _price(1) and state.pouch[_third(state)] > 0:
        return [Search()]
    return []


def explain_search(state: State, seat: int, move: Search) -> tuple[str, str]:
    if state.players[seat].treasure < _price(1):
        return rulebook.TREASURE_POWERS, "the additional search costs 1 Treasure"
    return rulebook.REFRESHING, f"the pouch holds no {colours.NAMES[_third(state)]} Lens"


def do_search(state: State, seat: int, move: Search) -> list[Event]:
    """Rulebook: "Look specifically for the desired color": the one colour not yet revealed."""
    pay_power(state, seat, REFRESHING, _price(1), activation=False)
    wanted = _third(state)
    state.set_aside[state.offering] += 1
    state.pouch[wanted] -= 1
    state.offering = wanted
    events = [
        say(
            state,
            "search",
            f"paid 1 more and took a {colours.NAMES[wanted]} Lens into the Offering",
            seat,
            offering=colours.NAMES[wanted],
        )
    ]
    return events + finish_refresh(state)


def finish_refresh(state: State) -> list[Event]:
    """Rulebook: "Finally, return all set aside, unused Arcane Lenses to the draw pouch." """
    returned = sum(state.set_aside)
    for colour in colours.BASIC:
        state.pouch[colour] += state.set_aside[colour]
        state.set_aside[colour] = 0
    state.refreshed_from = -1
    return [say(state, "refresh_done", f"{returned} set-aside Lens(es) went back to the pouch")]


def accept_moves(state: State, seat: int) -> list[Accept]:
    return [Accept()]


def do_accept(state: State, seat: int, move: Accept) -> list[Event]:
    return finish_refresh(state)


REFRESH = Decision(rulebook.REFRESHING, refresh_moves, do_refresh, explain=explain_refresh)
SEARCH = Decision(rulebook.REFRESHING, search_moves, do_search, explain=explain_search)
# Keeping the new Lens is always open while the search is: nothing to explain.
ACCEPT = Decision(rulebook.REFRESHING, accept_moves, do_accept)
