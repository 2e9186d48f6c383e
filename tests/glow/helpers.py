"""Scenario builders: hand-built positions (boardgame.io habit) and the random-play checks."""

from __future__ import annotations

import copy

from services.glow import engine
from services.glow.engine import content, dice, turn
from services.glow.engine.content import COMPANIONS, DICE, SYMBOL, SYMBOLS
from services.glow.engine.moves import parse_move
from services.glow.engine.rules import journey, noon, rerolls
from services.glow.engine.state import AFTERNOON, NOON, State


def started(
    seed: int = 1,
    players: int = 2,
    board: str = "province",
    adventurers: tuple[str, ...] = (),
    options: engine.Options | None = None,
) -> State:
    """A game after the adventurer choices (default: the first free ones in seat order).

    ``options`` replaces ``board`` when given.
    """
    options = engine.Options(board=board) if options is None else options
    state = engine.new_game(seed, players, options)
    for seat in range(players):
        if seat < len(adventurers):
            play(state, seat, f"adventurer {adventurers[seat]}")
        else:
            play(state, seat, str(engine.legal_moves(state, seat)[0]))
    return state


def play(state: State, seat: int, text: str) -> list:
    return engine.apply(state, seat, parse_move(text))


def legal(state: State, seat: int) -> list[str]:
    return [str(m) for m in engine.legal_moves(state, seat)]


def where_companion(state: State, companion: int) -> list:
    """(container, owner) pairs holding a companion."""
    places = []
    for name in ("deck", "box", "cemetery", "track"):
        if companion in getattr(state, name):
            places.append(name)
    for seat, player in enumerate(state.players):
        if companion in player.companions:
            places.append(f"player{seat}")
    return places


def give(state: State, seat: int, companion: int) -> None:
    """Put a companion in front of a seat, taken from wherever it is (and its Sketal die)."""
    for name in ("deck", "box", "cemetery"):
        container = getattr(state, name)
        if companion in container:
            container.remove(companion)
    if companion in state.track:
        state.track[state.track.index(companion)] = 0
    for player in state.players:
        if companion in player.companions:
            player.companions.remove(companion)
    state.players[seat].companions.append(companion)
    colour = COMPANIONS[companion].die
    if colour >= 0:
        die = min(d for d in state.pool if DICE[d].large and DICE[d].colour == colour)
        state.pool.remove(die)
        state.players[seat].sketal_dice.append((companion, die))


def own_die(state: State, seat: int, colour: str, large: bool = False) -> int:
    """Move a die of that colour to a seat's small dice (from the track, pool or box)."""
    wanted = content.COLOUR[colour]
    for space_dice in [*state.track_dice, state.pool, state.dice_box]:
        for die in space_dice:
            if DICE[die].colour == wanted and DICE[die].large == large:
                space_dice.remove(die)
                state.players[seat].small_dice.append(die)
                state.players[seat].small_dice.sort()
                return die
    raise AssertionError(f"no free {colour} die")


def set_faces(state: State, assignment: dict[int, str]) -> None:
    for die, name in assignment.items():
        state.faces[die] = DICE[die].faces.index(SYMBOL[name])


def shows(state: State, die: int) -> str:
    return SYMBOLS[dice.symbol(state, die)]


def at_late_morning(state: State, faces: dict[int, dict[int, str]]) -> None:
    """Roll everyone, then set the given seats' dice (seat -> {die: symbol}) and ask again."""
    rerolls.start_late_morning(state)
    for assignment in faces.values():
        set_faces(state, assignment)
    for player in state.players:
        rerolls._idle(player)
    state.acting = turn.acting(state)


def at_noon(state: State, faces: dict[int, dict[int, str]]) -> list:
    """Roll everyone, set the given faces, and start Noon (the dice are fixed)."""
    rerolls.start_late_morning(state)
    for assignment in faces.values():
        set_faces(state, assignment)
    for player in state.players:
        player.done = True
        player.stage = 0
    events = noon.start_noon(state)
    events += turn.advance(state)
    return events


def at_afternoon(state: State, faces: dict[int, dict[int, str]]) -> None:
    """As at Noon, with nothing left to resolve: the journeys begin."""
    rerolls.start_late_morning(state)
    for assignment in faces.values():
        set_faces(state, assignment)
    for player in state.players:
        player.done = True
        player.stage = 0
        player.resolved = [0, *player.companions, *(100 + s for s in player.spells)]
    state.step = 3
    journey.start_afternoon(state)
    state.acting = turn.acting(state)


def reset_dice(state: State, seat: int, keep: list[int]) -> None:
    """Give a seat exactly ``keep`` as its dice (others go back to the dice box)."""
    player = state.players[seat]
    for die in player.adventurer_dice + player.small_dice:
        if die not in keep:
            state.dice_box.append(die)
    player.adventurer_dice = [d for d in player.adventurer_dice if d in keep]
    player.small_dice = [d for d in player.small_dice if d in keep]
    for die in keep:
        if die in player.all_dice():
            continue
        for container in [*state.track_dice, state.pool, state.dice_box]:
            if die in container:
                container.remove(die)
        player.small_dice.append(die)
    player.small_dice.sort()
    state.dice_box.sort()


# ---- invariants and leak check for random play ----------------------------------------


def invariants(state: State) -> None:
    """Every die, companion and spell token in exactly one place; nothing negative."""
    places: list[int] = []
    places += state.pool + state.dice_box
    for space in state.track_dice:
        places += space
    for player in state.players:
        places += player.adventurer_dice + [d for _, d in player.sketal_dice] + player.small_dice
    assert sorted(places) == list(range(len(DICE))), f"dice out of place: {sorted(places)}"
    cards = state.deck + state.box + state.cemetery + [c for c in state.track if c]
    for player in state.players:
        cards += player.companions
    assert sorted(cards) == sorted(COMPANIONS), "companions out of place"
    spells = state.spell_pile + state.spell_box
    for player in state.players:
        spells += player.spells + player.hidden_spells
    assert sorted(spells) == sorted(content.SPELLS), "spell tokens out of place"
    rerolls_held = sum(p.rerolls for p in state.players)
    assert state.reroll_pool + rerolls_held == content.REROLL_TOKENS, "reroll tokens"
    assert state.reroll_pool >= 0
    for player in state.players:
        assert player.score >= 0
        assert player.rerolls >= 0 and player.footprints >= 0 and player.fireflies >= 0
        if state.step not in (NOON, AFTERNOON):
            assert player.rerolls_due == 0, "reroll tokens due are handed out when steps end"
        assert len(player.boats) == content.BOATS
        off_start = [b for b in player.boats if b != content.ARCHIPELAGO.start]
        assert len(set(off_start)) == len(off_start), "two boats on one island"
        for companion, die in player.sketal_dice:
            assert companion in player.companions, "a Sketal's die without its Sketal"
            assert DICE[die].large
        assert set(player.rolled) <= set(player.all_dice()), "rolled a die not owned"
    assert all(f in range(6) for f in state.faces)
    assert 0 <= state.day <= content.DAYS
    for seat_dice in state.track_dice:
        assert len(set(seat_dice)) == len(seat_dice)


def _twin(state: State, seat: int | None) -> State:
    """The same table with every hidden fact changed: the deck order, the companions in
    the box, the spell pile, the other seats' face-down spells, the Rng and reroll keys."""
    twin = copy.deepcopy(state)
    hidden = twin.deck + twin.box
    hidden.reverse()
    twin.deck = hidden[: len(twin.deck)]
    twin.box = sorted(hidden[len(twin.deck) :])
    pool = list(twin.spell_pile)
    for i, player in enumerate(twin.players):
        if i != seat:
            pool += player.hidden_spells
    pool.reverse()
    for i, player in enumerate(twin.players):
        if i != seat:
            n = len(player.hidden_spells)
            player.hidden_spells, pool = pool[:n], pool[n:]
    twin.spell_pile = pool
    twin.rng.seed(12345)
    for player in twin.players:
        player.stream ^= 0x5555
    return twin


def leak_check(state: State, seen, seat: int | None) -> None:
    """A view must not change when only what the seat may not know changes."""
    assert engine.view(_twin(state, seat), seat) == seen, "the view shows hidden facts"
    text = repr(seen)
    assert "Rng" not in text and "stream" not in text
    assert "deck=" in text and "set(" not in text and "{" not in text
