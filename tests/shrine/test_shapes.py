"""The Radiant Shapes module: Shape cards, Proof tokens, rewards and the end check."""

from __future__ import annotations

from services.kit.engine import IllegalMove
from services.kit.testing import assert_refused_unchanged
from services.shrine import engine
from services.shrine.engine import rulebook
from services.shrine.engine.content import BOARD, CONTENT, pattern_cells
from services.shrine.engine.scoring import false_proof_tokens, tallies
from services.shrine.engine.state import Phase, State
from tests.shrine.invariants import check_state, check_view
from tests.shrine.scenario import (
    MOON,
    SUN,
    C,
    F,
    P,
    clear_board,
    code_colour,
    end_of_turn,
    face,
    game,
    give_shapes,
    match,
    moves,
    play,
    prove,
    put,
    step_three,
    unlock_powers,
)


def refused(state: State, seat: int, text: str) -> IllegalMove:
    error = assert_refused_unchanged(engine, state, seat, engine.parse_move(text), IllegalMove)
    assert isinstance(error, IllegalMove)
    return error


def shapes_game(seed: int = 1) -> State:
    state = game(seed, shapes=True)
    clear_board(state)
    return state


def mask_of(*fields: str) -> int:
    return sum(1 << F(f) for f in fields)


def rotations_only(cells) -> set[frozenset]:
    """The pattern's field sets on the board by rotation and translation, no mirroring."""
    coords = {c: i for i, c in enumerate(BOARD.coords)}
    out = set()
    turned = list(cells)
    for _ in range(4):
        turned = [(c, -r) for r, c in turned]
        top, left = min(r for r, _ in turned), min(c for _, c in turned)
        base = [(r - top, c - left) for r, c in turned]
        for dr in range(4):
            for dc in range(4):
                spots = [(r + dr, c + dc) for r, c in base]
                if all(s in coords for s in spots):
                    out.add(frozenset(coords[s] for s in spots))
    return out


def test_rulebook_rotation_and_mirroring_example() -> None:
    """Rulebook: "By rotating the pattern 90 degrees and mirroring it, you can complete it": the
    card's pattern XX./..X turned and mirrored covers a2, a3, b4."""
    card = CONTENT.shapes[19]
    assert card.pattern == ("XX.", "..X")
    target = frozenset(F(f) for f in ("a2", "a3", "b4"))
    assert target not in rotations_only(pattern_cells(card.pattern))  # needs the mirror
    state = shapes_game(2)
    for field in ("a2", "a3", "b4"):
        match(state, SUN, field)
    give_shapes(state, SUN, 19)
    end_of_turn(state, SUN)
    assert moves(state, SUN) == ["shape 19", "skip"]
    play(state, SUN, "shape 19")
    assert "at a2 a3 b4" in moves(state, SUN)
    play(state, SUN, "at a2 a3 b4")
    # (2) Proof tokens in the colours of the Code card on those fields
    proof = state.players[SUN].proof
    for field in ("a2", "a3", "b4"):
        assert proof[F(field)] == C(code_colour(state, SUN, field))
    assert state.phase is Phase.REWARD and state.players[SUN].completed == [19]
    # (3) Treasure only: the card's 3 Treasures
    before = state.players[SUN].treasure
    play(state, SUN, "reward treasure")
    assert state.players[SUN].treasure == before + card.treasure
    assert state.current == MOON  # exactly one Shape card a turn, then the next turn
    assert false_proof_tokens(state, SUN) == []
    check_state(state)


def reuse_example() -> State:
    """The rulebook's "Reusing Matches" example with a two-field Shape card: the purple
    and the blue field are both on the Proof tile; of the two yellow fields one is, and
    of the two blue fields one is."""
    state = shapes_game(3)
    put(state, "b2", "red", "blue")  # purple, proved
    put(state, "c2", "blue")  # blue, proved
    put(state, "c3", "blue")  # blue, new
    put(state, "a3", "yellow")  # yellow, proved
    put(state, "a2", "yellow")  # yellow, new
    prove(state, SUN, b2="purple", c2="blue", a3="yellow")
    give_shapes(state, SUN, 1)
    end_of_turn(state, SUN)
    play(state, SUN, "shape 1")
    return state


def test_rulebook_reusing_matches_example() -> None:
    state = reuse_example()
    listed = moves(state, SUN)
    # (1) purple and blue, both already marked: not allowed
    assert "at b2 c2" not in listed
    assert refused(state, SUN, "at b2 c2").rule == rulebook.REUSING_MATCHES
    # (2) the two yellow fields, one marked: legal
    assert "at a2 a3" in listed
    # (3) the two blue fields, one marked: legal
    assert "at c2 c3" in listed
    play(state, SUN, "at c2 c3")
    assert state.players[SUN].proof[F("c3")] == C("blue")


def test_matches_count_by_the_board_now_not_the_proof_tile() -> None:
    """A proved field whose colour has since changed cannot count as a match."""
    state = reuse_example()
    state.lenses[F("c2")].append(C("yellow"))  # the opponent made it green
    state.pouch[C("yellow")] -= 1
    assert "at c2 c3" not in moves(state, SUN)
    assert refused(state, SUN, "at c2 c3").rule == rulebook.REUSING_MATCHES
    assert "at c2 c3 ignore c2" in moves(state, SUN)  # a Serpent can still cover it


def test_rulebook_serpent_example() -> None:
    """A Serpent ignores one field of the shape, which still gets a Proof token in the
    colour the player claims for their Code card."""
    state = shapes_game(4)
    card = CONTENT.shapes[13]
    assert card.pattern == ("X.", "XX")
    match(state, SUN, "b2")
    match(state, SUN, "b3")
    put(state, "c3", "red" if code_colour(state, SUN, "c3") != "red" else "blue")
    give_shapes(state, SUN, 13)
    end_of_turn(state, SUN)
    play(state, SUN, "shape 13")
    # The engine cannot know c3 does not match (that would read the Code card): the plain
    # claim is offered too, and would cost 6 Treasures at the end.
    assert "at b2 b3 c3" in moves(state, SUN)
    assert "at b2 b3 c3 ignore c3" in moves(state, SUN)
    play(state, SUN, "at b2 b3 c3 ignore c3")
    assert state.phase is Phase.SHAPE_CLAIM
    claimed = code_colour(state, SUN, "c3")
    assert f"claim {claimed}" in moves(state, SUN)
    shown = engine.view(state, None).fields[F("c3")].shows
    assert f"claim {shown}" not in moves(state, SUN)  # that would be a plain match
    play(state, SUN, f"claim {claimed}")
    proof = state.players[SUN].proof
    assert [proof[F(f)] >= 0 for f in ("b2", "b3", "c3")] == [True] * 3
    assert proof[F("c3")] == C(claimed)
    assert state.players[SUN].serpents_removed == 1
    assert false_proof_tokens(state, SUN) == []


def test_no_serpent_no_ignoring() -> None:
    state = shapes_game(4)
    match(state, SUN, "b2")
    match(state, SUN, "b3")
    give_shapes(state, SUN, 13)
    state.players[SUN].serpents_removed = 2
    end_of_turn(state, SUN)
    assert moves(state, SUN) == ["skip"]  # nothing completes card 13 now
    assert refused(state, SUN, "shape 13").rule == rulebook.COMPLETING_SHAPE


def test_two_proof_tokens_of_each_colour() -> None:
    state = shapes_game(5)
    put(state, "b2", "red")
    put(state, "c2", "red")
    prove(state, SUN, a2="red", d2="red")  # both red tokens are on the tile already
    give_shapes(state, SUN, 1)
    end_of_turn(state, SUN)
    assert "shape 1" not in moves(state, SUN)


def test_completing_a_shape_is_a_claim_checked_at_the_end() -> None:
    """The engine takes the claim; a Proof token that does not match the Code card costs
    6 Treasures at the end, one penalty per token."""
    state = shapes_game(6)
    for field in ("b2", "c2"):
        wrong = next(c for c in ("red", "yellow", "blue") if c != code_colour(state, SUN, field))
        put(state, field, wrong)
    give_shapes(state, SUN, 1)
    end_of_turn(state, SUN)
    play(state, SUN, "shape 1")
    play(state, SUN, "at b2 c2")
    assert false_proof_tokens(state, SUN) == [F("b2"), F("c2")]
    assert tallies(state)[SUN].false_claims == 2


def test_treasure_and_unlock_reward() -> None:
    state = shapes_game(7)
    for field in ("a2", "c3"):
        match(state, SUN, field)
    give_shapes(state, SUN, 9)  # knight's-move pair: 2 Treasures, or 1 and an unlock
    card = CONTENT.shapes[9]
    end_of_turn(state, SUN)
    play(state, SUN, "shape 9")
    play(state, SUN, "at a2 c3")
    assert moves(state, SUN)[0] == "reward treasure"
    treasure = state.players[SUN].treasure
    treasury = state.treasury
    play(state, SUN, "reward unlock overwriting")
    assert state.players[SUN].treasure == treasure + card.unlock_treasure
    assert not state.players[SUN].blocked(P("overwriting"))
    assert state.treasury == treasury - card.unlock_treasure + 2


def test_the_unlock_reward_needs_a_blocked_power() -> None:
    state = shapes_game(7)
    for field in ("a2", "c3"):
        match(state, SUN, field)
    give_shapes(state, SUN, 9)
    unlock_powers(state, SUN, "overwriting")
    end_of_turn(state, SUN)
    play(state, SUN, "shape 9")
    play(state, SUN, "at a2 c3")
    assert "reward unlock overwriting" not in moves(state, SUN)
    assert refused(state, SUN, "reward unlock overwriting").rule == rulebook.GAINING_REWARDS


def test_bonus_draw_from_the_indicated_deck() -> None:
    state = shapes_game(8)
    card = CONTENT.shapes[12]  # I-tromino, bonus: the 4-field deck
    assert card.bonus == (4,)
    for field in ("a2", "b2", "c2"):
        match(state, SUN, field)
    give_shapes(state, SUN, 12)
    end_of_turn(state, SUN)
    play(state, SUN, "shape 12")
    play(state, SUN, "at a2 b2 c2")
    play(state, SUN, "reward treasure")
    assert moves(state, SUN) == ["bonus 4", "skip"]
    assert refused(state, SUN, "bonus 5").rule == rulebook.BONUS_REWARD
    top = state.deck(4)[-1]
    events = play(state, SUN, "bonus 4")
    assert top in state.players[SUN].hand
    private = [e for e in events if e.kind == "shape_drawn" and e.to is not None]
    public = [e for e in events if e.kind == "shape_drawn" and e.to is None]
    assert private[0].to == frozenset({SUN}) and str(top) in private[0].text
    assert str(top) not in public[0].text
    assert state.current == MOON
    check_state(state)


def test_bonus_draw_from_a_deck_of_your_choice_may_be_skipped() -> None:
    state = shapes_game(8)
    assert CONTENT.shapes[18].bonus == (3, 4, 5)
    for field in ("b2", "c3", "d2"):
        match(state, SUN, field)
    give_shapes(state, SUN, 18)  # X.X / .X.
    end_of_turn(state, SUN)
    play(state, SUN, "shape 18")
    play(state, SUN, "at b2 d2 c3")
    play(state, SUN, "reward treasure")
    assert moves(state, SUN) == ["bonus 3", "bonus 4", "bonus 5", "skip"]
    hand = list(state.players[SUN].hand)
    play(state, SUN, "skip")
    assert state.players[SUN].hand == hand and state.current == MOON


def test_draw_two_shape_cards_instead_of_unlocking() -> None:
    state = game(9, shapes=True)
    seat = state.current
    powers = list(state.players[seat].powers)
    assert moves(state, seat, "draw") == ["draw 3", "draw 4", "draw 5"]
    deck = state.deck(3)
    first, second = deck[-1], deck[-2]
    events = play(state, seat, "draw 3")
    assert state.phase is Phase.KEEP and state.drawn == [first, second]
    assert all(e.to == frozenset({seat}) for e in events if str(first) in e.text)
    seen = engine.view(state, seat)
    assert seen.drawn_cards == (first, second)
    assert engine.view(state, 1 - seat).drawn_cards is None
    check_view(state, engine.view(state, 1 - seat), 1 - seat)
    assert moves(state, seat) == ["keep 0", "keep 1"]
    play(state, seat, "keep 1")
    assert second in state.players[seat].hand and first not in state.players[seat].hand
    assert state.deck(3)[0] == first  # the other card under its deck
    assert state.players[seat].powers == powers  # nothing was unlocked
    assert state.phase is Phase.ACTION
    check_state(state)


def test_a_deck_with_one_card_gives_it() -> None:
    state = game(9, shapes=True)
    seat = state.current
    deck = state.deck(5)
    while len(deck) > 1:
        state.deck(3).insert(0, deck.pop())
    last = deck[0]
    play(state, seat, "draw 5")
    assert last in state.players[seat].hand and state.phase is Phase.ACTION
    check_state(state)


def test_a_shape_may_be_completed_after_a_pass() -> None:
    """Reading: completing a Shape card is no Treasure Power, so a passed turn ends with the
    chance to complete one like any other."""
    state = shapes_game(10)
    match(state, SUN, "b2")
    match(state, SUN, "c2")
    give_shapes(state, SUN, 1)
    step_three(state, SUN)
    play(state, SUN, "pass")
    assert state.phase is Phase.SHAPE and state.current == SUN


def test_shapes_are_completed_only_at_the_end_of_the_turn() -> None:
    state = shapes_game(10)
    match(state, SUN, "b2")
    match(state, SUN, "c2")
    give_shapes(state, SUN, 1)
    step_three(state, SUN)
    assert refused(state, SUN, "shape 1").rule == rulebook.PLAYER_TURN
    end_of_turn(state, SUN)
    play(state, SUN, "skip")
    assert state.current == MOON and state.players[SUN].hand == [1]


def test_a_shape_not_in_hand_cannot_be_completed() -> None:
    state = shapes_game(10)
    match(state, SUN, "b2")
    match(state, SUN, "c2")
    give_shapes(state, SUN, 1)
    end_of_turn(state, SUN)
    assert refused(state, SUN, "shape 2").rule == rulebook.COMPLETING_SHAPE


def test_blocked_fields_may_form_a_shape() -> None:
    """Reading: a Block token stops play on a field, not reading its colour: like the
    largest contiguous area, a Shape may include blocked matches."""
    state = shapes_game(11)
    match(state, SUN, "b2")
    match(state, SUN, "c2")
    state.blocked_by[F("b2")] = MOON
    state.players[MOON].blocks_used = 1
    give_shapes(state, SUN, 1)
    end_of_turn(state, SUN)
    play(state, SUN, "shape 1")
    assert "at b2 c2" in moves(state, SUN)


def test_no_shape_once_the_game_has_ended() -> None:
    """The game ends immediately with the third dial: no Shape card is completed after."""
    state = shapes_game(12)
    state.track = [1, 2]
    put(state, "b1", "red", "red")
    put(state, "b2", "blue", "blue")
    match(state, SUN, "c3")
    match(state, SUN, "d3")
    put(state, "a2", "yellow")
    give_shapes(state, SUN, 1)
    state.active = [True, False, False, True]
    face(state, "a1", "b2")
    step_three(state, SUN, offering="red", treasure=0)
    play(state, SUN, "place a2")
    play(state, SUN, "done")
    assert engine.outcome(state) is not None and state.phase is Phase.OVER
    assert state.players[SUN].hand == [1]
