"""The invariants every Shrine state keeps, and the check that a view shows a seat nothing
it may not see. Used after every move of the random games and in the scenario tests."""

from __future__ import annotations

from services.shrine.engine import colours
from services.shrine.engine.content import BOARD, CONTENT, FIELDS, PLAYER
from services.shrine.engine.state import Phase, State


def check_state(state: State) -> None:
    # 30 Arcane Lenses: pouch, Offering, set aside while refreshing, board
    for colour in colours.BASIC:
        count = state.pouch[colour] + state.set_aside[colour] + (state.offering == colour)
        count += sum(stack.count(colour) for stack in state.lenses)
        assert count == BOARD.pouch[colour], f"{colours.NAMES[colour]} Lenses: {count}"
        assert state.pouch[colour] >= 0 and state.set_aside[colour] >= 0
    assert all(len(stack) <= 2 for stack in state.lenses), "more than two Lenses on a field"
    # Treasure: players, their powers, the Treasury
    held = sum(p.treasure + sum(p.powers) for p in state.players)
    assert held + state.treasury == BOARD.coins, "Treasure is not conserved"
    for seat, player in enumerate(state.players):
        assert player.treasure >= 0, f"seat {seat} holds negative Treasure"
        for power, spec in zip(player.powers, PLAYER.powers, strict=True):
            assert 0 <= power <= spec.spaces, f"{spec.key} holds {power} Treasure"
        assert 0 <= player.debts <= len(PLAYER.debt_costs)
        assert 0 <= player.passes <= len(PLAYER.pass_costs)
        assert 0 <= player.serpents_removed <= len(PLAYER.serpent_costs)
        assert player.blocks_used == state.blocked_by.count(seat) <= PLAYER.block_tokens
        placed = [c for c in player.proof if c >= 0]
        for colour in range(len(colours.NAMES)):
            assert placed.count(colour) <= PLAYER.proof_tokens_per_colour
        if not state.options.radiant_shapes:
            assert not placed and not player.hand and not player.completed
    for field in range(FIELDS):
        if state.blocked_by[field] >= 0:
            assert state.lenses[field], "a Block token on a field without a Lens"
            assert not (state.block_target[field] and state.block_no_claim[field])
        else:
            assert not state.block_target[field] and not state.block_no_claim[field]
    # dials and the game progress track
    assert len(set(state.track)) == len(state.track) <= len(BOARD.track)
    assert all(0 <= f <= 2 for f in state.facing)
    standing = [d for d in range(len(BOARD.dials)) if d not in state.track]
    if state.result is None:
        assert any(state.active[d] for d in standing) or state.phase is not Phase.ACTION
        assert state.phase is not Phase.OVER
    else:
        assert state.phase is Phase.OVER
        assert len(state.track) == len(BOARD.track) or state.loser >= 0
    # the Offering holds a Lens whenever a placement is still to come
    if state.phase in (Phase.ACTION, Phase.SEARCH):
        assert state.offering >= 0
    if state.phase is not Phase.SEARCH:
        assert sum(state.set_aside) == 0
    # Shape cards: every card in exactly one place
    if state.options.radiant_shapes:
        cards = [c for deck in state.decks for c in deck] + list(state.drawn)
        for player in state.players:
            cards += player.hand + player.completed
        assert sorted(cards) == sorted(CONTENT.shapes), "Shape cards are not conserved"
        assert len(state.drawn) in (0, 2) and (state.phase is Phase.KEEP) == bool(state.drawn)


def check_view(state: State, seen, seat: int | None) -> None:
    """The view shows ``seat`` its own secrets and no one else's."""
    codes = CONTENT.codes
    text = repr(seen)
    for other in (0, 1):
        player = state.players[other]
        shown = seen.players[other]
        if other == seat:
            assert shown.code_card is not None and shown.code_card.id == codes[player.code].id
            assert shown.hand == tuple(sorted(player.hand))
        else:
            assert shown.code_card is None, "an opponent's Code card is visible"
            assert shown.hand is None, "an opponent's Shape cards are visible"
            assert codes[player.code].id not in text, "an opponent's Code card id leaks"
        assert shown.shapes_in_hand == len(player.hand)
    in_play = {codes[p.code].id for p in state.players}
    for index in CONTENT.code_sets[state.code_set]:
        if codes[index].id not in in_play:
            assert codes[index].id not in text, "a Code card returned to the box leaks"
    if seen.drawn_cards is not None:
        assert seat == state.current and state.drawn
    assert "Rng" not in text and "rng" not in text and "seed" not in text
    assert seen.bottom_seat == (0 if seat is None else seat), "the board is not drawn from seat"
