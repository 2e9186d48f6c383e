"""Shared test helpers: names, hand-built scenarios, invariants and the leak check."""

from __future__ import annotations

import re
from typing import Any

import services.resarcana.engine as E
from services.kit.engine import Event
from services.resarcana.engine.content import CONTENT
from services.resarcana.engine.cost import Enter, Pay
from services.resarcana.engine.state import ACTIONS, COLLECT, OVER

ANNE, BOB = 0, 1
SLUGS = frozenset(c.slug for c in CONTENT.components)


def cid(slug: str) -> int:
    return CONTENT.by_slug[slug]


def ids(*slugs: str) -> list[int]:
    return [cid(s) for s in slugs]


def m(text: str) -> E.Move:
    return E.parse_move(text)


def texts(moves: list[E.Move]) -> list[str]:
    return [str(x) for x in moves]


def play(state: E.State, seat: int, *moves: str) -> list[Event]:
    """Apply moves by text, each checked to be listed first; returns all events."""
    events: list[Event] = []
    for text in moves:
        move = m(text)
        listed = E.legal_moves(state, seat)
        assert move in listed, f"{text!r} is not legal for seat {seat}; legal: {texts(listed)}"
        events += E.apply(state, seat, move)
        check_invariants(state)
    return events


def event_texts(events: list[Event], seat: int | None = None) -> list[str]:
    return [e.text for e in events if e.visible_to(seat)]


def put_pool(state: E.State, seat: int, elan=0, life=0, calm=0, death=0, gold=0) -> None:
    """Set a pool, keeping the supply ledger balanced (as if taken from the supply)."""
    pool = state.seats[seat].pool
    new = [elan, life, calm, death, gold]
    for e in range(5):
        state.out[e] += new[e] - pool[e]
        pool[e] = new[e]


def put_on(state: E.State, slug: str, elan=0, life=0, calm=0, death=0, gold=0) -> None:
    held = state.on[cid(slug)]
    new = [elan, life, calm, death, gold]
    for e in range(5):
        state.out[e] += new[e] - held[e]
        held[e] = new[e]


def first_game(seed: int = 1, first_player: int = 1, **options: Any) -> E.State:
    return E.new_game(seed, 2, E.Options(setup="first_game", first_player=first_player, **options))


def arrange(
    state: E.State,
    *,
    hands: tuple[list[str], list[str]] | None = None,
    decks: tuple[list[str], list[str]] | None = None,
    mages: tuple[str, str] | None = None,
    tableaus: tuple[list[str], list[str]] | None = None,
    monuments: tuple[list[str], list[str]] | None = None,
    places: list[str] | None = None,
) -> E.State:
    """Move cards to where a scenario needs them, keeping every card in exactly one place.

    ``monuments`` is (display, deck with its top last). Cards not named anywhere go to
    the box, so conservation still holds.
    """
    named: set[int] = set()
    if hands is not None:
        for seat, cards in enumerate(hands):
            state.seats[seat].hand = ids(*cards)
            named.update(state.seats[seat].hand)
    if decks is not None:
        for seat, cards in enumerate(decks):
            state.seats[seat].deck = ids(*cards)
            named.update(state.seats[seat].deck)
    if tableaus is not None:
        for seat, cards in enumerate(tableaus):
            state.seats[seat].tableau = ids(*cards)
            named.update(state.seats[seat].tableau)
    if mages is not None:
        for seat, mage in enumerate(mages):
            state.seats[seat].mage = cid(mage)
            named.add(cid(mage))
    if monuments is not None:
        state.monument_display = ids(*monuments[0])
        state.monument_deck = ids(*monuments[1])
        named.update(state.monument_display, state.monument_deck)
    if places is not None:
        state.places = ids(*places)
        named.update(state.places)
    explicit = set(named)

    def keep(cards: list[int]) -> list[int]:
        """A zone the scenario did not rewrite loses what the scenario put elsewhere."""
        kept = [c for c in cards if c not in explicit]
        named.update(kept)
        return kept

    for seat in state.seats:
        if hands is None:
            seat.hand = keep(seat.hand)
        if decks is None:
            seat.deck = keep(seat.deck)
        if tableaus is None:
            seat.tableau = keep(seat.tableau)
        if mages is None and seat.mage >= 0:
            named.add(seat.mage)
        seat.discard = keep(seat.discard)
    if monuments is None:
        state.monument_display = keep(state.monument_display)
        state.monument_deck = keep(state.monument_deck)
    if places is None:
        state.places = keep(state.places)
    named.update(c for c in state.items)
    named.update(s.item for s in state.seats if s.item >= 0)
    state.box = [c.id for c in CONTENT.components if c.id not in named]
    check_invariants(state)
    return state


def example_setup() -> E.State:
    """The rulebook's example round: Anne (seat 0) and Bob (seat 1, First Player)."""
    state = first_game(seed=5, first_player=BOB)
    return arrange(
        state,
        mages=("enchantress", "smith"),
        hands=(
            ["white-swan", "gnosis", "solomons-key"],
            ["crucible", "cursed-peacock-idol", "squared-circle"],
        ),
        decks=(
            ["revivify", "cultist", "golden-key", "fairy-dragon", "magnum-opus"],
            ["black-cat", "silver-key", "fortune-teller", "crown-of-command", "brass-bust"],
        ),
        tableaus=([], []),
        monuments=(
            ["dark-temple", "mystic-monastery"],
            [
                "sleeping-dragon",
                "circle-of-stones",
                "mystic-spring",
                "grove-of-the-druids",
                "well-of-memory",
            ],
        ),
        places=["circle-of-the-druids", "dwarven-forge"],
    )


def action_state(
    *,
    mages: tuple[str, str] = ("enchantress", "smith"),
    hands: tuple[list[str], list[str]] = ([], []),
    tableaus: tuple[list[str], list[str]] = ([], []),
    items: tuple[str, str] = ("research", "calm-elan"),
    pools: tuple[tuple[int, ...], tuple[int, ...]] = ((0,) * 5, (0,) * 5),
    decks: tuple[list[str], list[str]] | None = None,
    active: int = ANNE,
    monuments: tuple[list[str], list[str]] | None = None,
    places: list[str] | None = None,
) -> E.State:
    """A hand-built position in the action phase of round 1, ``active`` to act."""
    state = first_game(seed=3, first_player=active)
    for seat, item in enumerate(items):
        state.items.remove(cid(item))
        state.seats[seat].item = cid(item)
    arrange(
        state,
        mages=mages,
        hands=hands,
        tableaus=tableaus,
        decks=decks if decks is not None else ([], []),
        monuments=monuments,
        places=places,
    )
    for seat, pool in enumerate(pools):
        put_pool(state, seat, *pool)
    state.phase = ACTIONS
    state.round = 1
    state.active = active
    state.first_player = active
    check_invariants(state)
    return state


# ---------------------------------------------------------------- invariants


def _locations(state: E.State) -> dict[int, list[str]]:
    where: dict[int, list[str]] = {c.id: [] for c in CONTENT.components}

    def mark(cards: list[int], place: str) -> None:
        for card in cards:
            where[card].append(place)

    for s, seat in enumerate(state.seats):
        for attr in (
            "hand",
            "deck",
            "discard",
            "tableau",
            "draft_stack",
            "draft_offer",
            "draft_kept",
            "draft_given",
        ):
            mark(getattr(seat, attr), f"{attr}{s}")
        if seat.mage >= 0:
            mark([seat.mage], f"mage{s}")
        if seat.mage < 0:
            mark(seat.mage_options, f"mage_options{s}")
        if seat.item >= 0:
            mark([seat.item], f"item{s}")
    mark(state.monument_deck, "monument_deck")
    mark(state.monument_display, "monument_display")
    mark(state.looking, "looking")
    mark(state.places, "places")
    mark(state.items, "items")
    mark(state.box, "box")
    return where


def check_invariants(state: E.State) -> None:
    # Essences: never negative, conserved between the supply, pools and components.
    total = [0] * 5
    for s, seat in enumerate(state.seats):
        assert len(seat.pool) == 5 and min(seat.pool) >= 0, f"negative pool {s}: {seat.pool}"
        for e in range(5):
            total[e] += seat.pool[e]
    for c, held in enumerate(state.on):
        assert min(held) >= 0, f"negative essences on {CONTENT[c].slug}"
        if any(held):
            assert CONTENT[c].kind != "item", "essences on a Magic Item"
        for e in range(5):
            total[e] += held[e]
    assert total == state.out, f"essences not conserved: {total} != {state.out}"
    # Every component in exactly one place.
    for card, places in _locations(state).items():
        assert len(places) == 1, f"{CONTENT[card].slug} is in {places or 'no place'}"
    # The phase and the outcome agree; someone decides while the game goes on.
    assert (state.result is None) == (state.phase != OVER)
    if state.result is None:
        assert E.to_act(state), "nobody to act"
    if state.phase == ACTIONS:
        me = state.seats[state.active]
        assert not me.passed or state.tasks, "a passed player is to act"
        if not state.tasks:
            for move in E.legal_moves(state, state.active):
                if isinstance(move, E.UsePower):
                    assert not state.turned[move.component], "a turned component offers a power"
                    assert move.component in me.components(), "a power on someone else's component"
    if state.phase == COLLECT:
        assert not state.tasks
    # Placed and claimed components are in play once; a Place of Power is claimed once.
    in_play = [c for seat in state.seats for c in seat.tableau]
    assert len(in_play) == len(set(in_play))
    assert state.round >= 0 and state.first_player in (0, 1)


# ---------------------------------------------------------------- hidden information

_TOKEN = re.compile(r"[a-z0-9][a-z0-9-]*")


def known_slugs(state: E.State, seat: int | None, own_deck: bool = False) -> set[str]:
    """Every component ``seat`` may see named now (None: a spectator).

    ``own_deck``: also the cards of its own draw pile, whose make-up (not order) a player
    knows after the draft. Views show only the pile's size, so they are checked without.
    """
    ids_known: set[int] = set()
    for me in state.seats:
        ids_known.update(me.tableau, me.discard)
        if me.mage >= 0:
            ids_known.add(me.mage)
        if me.item >= 0:
            ids_known.add(me.item)
    ids_known.update(state.monument_display, state.places, state.items)
    # A card being placed was announced when its placement began.
    for task in state.tasks:
        if isinstance(task, Enter):
            ids_known.add(task.card)
        elif isinstance(task, Pay) and task.source >= 0:
            ids_known.add(task.source)
    if seat is not None:
        me = state.seats[seat]
        ids_known.update(
            me.hand, me.draft_offer, me.draft_kept, me.draft_given, me.gave, me.mage_options
        )
        if me.mage_choice >= 0:
            ids_known.add(me.mage_choice)
        if own_deck:
            ids_known.update(me.deck)
        if seat in E.to_act(state):
            ids_known.update(state.looking)
    return {CONTENT[c].slug for c in ids_known}


_NAMES = {c.name: c.slug for c in CONTENT.components}


def proto_text(message: Any) -> str:
    """A message in protobuf's text format, for the leak checks to search.

    ``str()`` of a message is the C runtime's (upb) printer: the lines
    ``text_format.MessageToString`` writes (a map's entries in another order, a whole
    number in a Struct without ".0"), about
    fifteen times faster than the pure-Python printer, which the leak tests' thousands of
    views and turns spent most of their time in. test_codec.py checks they agree."""
    return str(message)


def named_in(text: str) -> set[str]:
    """The components a text names, by slug or by name."""
    found = {tok for tok in _TOKEN.findall(text) if tok in SLUGS}
    found.update(slug for name, slug in _NAMES.items() if name in text)
    return found


def leak_check(state: E.State, seen: E.View, seat: int | None) -> None:
    text = repr(seen)
    assert "Rng" not in text and "rng" not in text, "the generator shows in a view"
    leaked = named_in(text) - known_slugs(state, seat)
    assert not leaked, f"view for {seat} shows {sorted(leaked)}"
    assert seen.seat == seat
    for other in seen.seats:
        assert isinstance(other.hand, int) and isinstance(other.deck, int)


def start_round(state: E.State) -> list[Event]:
    """Begin the next round on a hand-built position (collect, then actions)."""
    from services.resarcana.engine import setup, turn
    from services.resarcana.engine.table import Log

    log = Log()
    state.phase = COLLECT
    state.tasks.clear()
    state.in_action = False
    setup.begin_round(state, log)
    turn.settle(state, log)
    check_invariants(state)
    return list(log)
