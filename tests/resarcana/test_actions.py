"""2. Actions: place an Artifact, claim a Monument or Place of Power, discard for essences,
use a power, pass; the turn order; 3. Victory and the next round."""

from __future__ import annotations

import random

import services.resarcana.engine as E
from services.kit.engine import GameOver, IllegalMove, NotYourDecision
from services.kit.testing import assert_refused_unchanged, choose
from services.resarcana.engine.state import ACTIONS, COLLECT, OVER
from tests.resarcana.helpers import (
    ANNE,
    BOB,
    action_state,
    cid,
    event_texts,
    m,
    play,
    texts,
)


def refused(state: E.State, seat: int, text: str) -> IllegalMove:
    error = assert_refused_unchanged(E, state, seat, m(text), IllegalMove)
    assert isinstance(error, IllegalMove)
    return error


# ---------------------------------------------------------------- place an Artifact


def test_place_an_artifact_pays_its_cost_and_enters_straightened() -> None:
    state = action_state(hands=(["crucible", "white-swan"], []), pools=((1, 0, 0, 0, 1), (0,) * 5))
    assert "place crucible" in texts(E.legal_moves(state, ANNE))
    assert "place white-swan" not in texts(E.legal_moves(state, ANNE))
    assert refused(state, ANNE, "place white-swan").rule == "Cost"
    assert refused(state, ANNE, "place gnosis").rule == "Place an Artifact"
    play(state, ANNE, "place crucible")
    assert state.seats[ANNE].pool == [0, 0, 0, 0, 0]
    assert cid("crucible") in state.seats[ANNE].tableau and not state.turned[cid("crucible")]
    assert E.to_act(state) == (BOB,)


def test_any_essence_placement_cost_is_paid_one_essence_at_a_time() -> None:
    # Solomon's Key costs 1 Gold + 1 essence of your choice.
    state = action_state(hands=(["solomons-key"], []), pools=((1, 0, 2, 0, 2), (0,) * 5))
    play(state, ANNE, "place solomons-key")
    assert texts(E.legal_moves(state, ANNE)) == ["pay elan", "pay calm", "pay gold"]
    assert refused(state, ANNE, "pay death").rule == "Cost"
    assert refused(state, ANNE, "pass").rule == "Cost"  # the entire cost first
    play(state, ANNE, "pay calm")
    assert state.seats[ANNE].pool == [1, 0, 1, 0, 1]


def test_a_discount_is_spent_by_choice_and_never_below_zero() -> None:
    # The Artisan's Robe: Artifacts cost 1 less. Crucible: 1 Gold + 1 Elan.
    state = action_state(
        hands=(["crucible", "gnosis"], []),
        items=("artisans-robe", "research"),
        pools=((1, 0, 1, 0, 1), (0,) * 5),
    )
    play(state, ANNE, "place crucible")
    assert texts(E.legal_moves(state, ANNE)) == ["waive elan", "waive gold"]
    error = refused(state, ANNE, "pay elan")
    assert error.rule == "Discount"
    play(state, ANNE, "waive gold")
    assert state.seats[ANNE].pool == [0, 0, 1, 0, 1]  # paid only the Elan
    # Gnosis costs 2 Calm; with 1 Calm and the Robe it is affordable, the Calm is forced.
    play(state, BOB, "pass", "item alchemy")
    play(state, ANNE, "place gnosis")
    assert state.seats[ANNE].pool == [0, 0, 0, 0, 1]


def test_discounts_combine_and_stop_at_zero() -> None:
    """The Robe's discount combines with the Crucible's 2nd power (2 + 1 off): a 2-essence
    Artifact costs nothing and the discount left over is lost."""
    state = action_state(
        hands=(["gnosis"], []),
        items=("artisans-robe", "research"),
        tableaus=(["crucible"], []),
        pools=((0,) * 5, (0,) * 5),
    )
    assert "place gnosis" not in texts(E.legal_moves(state, ANNE))
    play(state, ANNE, "power crucible 2")
    assert texts(E.legal_moves(state, ANNE)) == ["done", "place gnosis"]
    play(state, ANNE, "place gnosis")
    assert cid("gnosis") in state.seats[ANNE].tableau
    assert state.seats[ANNE].pool == [0, 0, 0, 0, 0]


# ---------------------------------------------------------------- claim


def test_claim_a_face_up_monument_and_refill_the_display() -> None:
    state = action_state(
        pools=((0, 0, 0, 0, 4), (0,) * 5),
        monuments=(["dark-temple", "mystic-monastery"], ["sleeping-dragon", "well-of-memory"]),
    )
    moves = texts(E.legal_moves(state, ANNE))
    assert {"claim dark-temple", "claim mystic-monastery", "claim deck"} <= set(moves)
    events = play(state, ANNE, "claim mystic-monastery")
    assert state.monument_display == [cid("dark-temple"), cid("well-of-memory")]
    assert "Well of Memory is revealed from the Monument deck" in event_texts(events)
    assert cid("mystic-monastery") in state.seats[ANNE].tableau
    assert E.view(state, None).seats[ANNE].vp == 2 + 1  # Monastery and the token


def test_claim_the_face_down_top_of_the_monument_deck() -> None:
    state = action_state(
        pools=((0, 0, 0, 0, 4), (0,) * 5),
        monuments=(["dark-temple", "mystic-monastery"], ["well-of-memory", "sleeping-dragon"]),
    )
    events = play(state, ANNE, "claim deck")
    assert cid("sleeping-dragon") in state.seats[ANNE].tableau
    assert state.monument_display == [cid("dark-temple"), cid("mystic-monastery")]
    assert any("Sleeping Dragon" in t for t in event_texts(events, None))


def test_claim_needs_the_cost_and_what_is_claimed_is_gone() -> None:
    state = action_state(
        pools=((2, 6, 3, 2, 3), (2, 6, 3, 2, 3)),
        places=["circle-of-the-druids", "dwarven-forge"],
        monuments=(["dark-temple", "mystic-monastery"], []),
    )
    assert refused(state, ANNE, "claim mystic-monastery").rule == "Cost"  # 3 Gold < 4
    assert refused(state, ANNE, "claim deck").rule == "Claim a Monument or a Place of Power"
    play(state, ANNE, "claim circle-of-the-druids")
    assert state.seats[ANNE].pool == [2, 0, 0, 2, 3]
    error = refused(state, BOB, "claim circle-of-the-druids")
    assert error.rule == "Claim a Monument or a Place of Power"
    assert "claim dwarven-forge" in texts(E.legal_moves(state, BOB))


# ---------------------------------------------------------------- discard


def test_discard_for_one_gold() -> None:
    state = action_state(hands=(["gnosis", "cultist"], []))
    play(state, ANNE, "discard gnosis")
    assert texts(E.legal_moves(state, ANNE)) == [
        "gain elan",
        "gain life",
        "gain calm",
        "gain death",
        "gain gold",
    ]
    play(state, ANNE, "gain gold")
    assert state.seats[ANNE].pool == [0, 0, 0, 0, 1]
    # Tucked face up: the rival (and a spectator) may inspect the discard pile.
    assert E.view(state, BOB).seats[ANNE].discard == ("gnosis",)
    assert E.view(state, None).seats[ANNE].discard == ("gnosis",)
    assert E.to_act(state) == (BOB,)


def test_discard_for_two_other_essences_same_or_different() -> None:
    state = action_state(hands=(["gnosis", "cultist"], []))
    play(state, ANNE, "discard cultist", "gain life")
    assert "gain gold" not in texts(E.legal_moves(state, ANNE))
    assert refused(state, ANNE, "gain gold").rule == "Discard an Artifact"
    play(state, ANNE, "gain life")
    assert state.seats[ANNE].pool == [0, 2, 0, 0, 0]
    assert refused(state, BOB, "discard gnosis").rule == "Discard an Artifact"  # not Bob's


# ---------------------------------------------------------------- powers and turn order


def test_powers_on_turned_or_foreign_components_are_refused() -> None:
    state = action_state(tableaus=(["gnosis"], ["cultist"]), pools=((0, 0, 2, 0, 0), (0,) * 5))
    assert refused(state, ANNE, "power cultist 1").rule == "Use a power"
    play(state, ANNE, "power gnosis 1")
    play(state, BOB, "pass", "item alchemy")
    assert state.turned[cid("gnosis")]
    assert "power gnosis 1" not in texts(E.legal_moves(state, ANNE))
    assert refused(state, ANNE, "power gnosis 1").rule == "Powers"
    assert refused(state, ANNE, "power smith 1").rule == "Use a power"  # Bob's Mage
    assert refused(state, ANNE, "power enchantress 1").rule == "Cost"  # no Elan


def test_out_of_turn_and_after_the_end() -> None:
    state = action_state()
    assert_refused_unchanged(E, state, BOB, m("pass"), NotYourDecision)
    assert_refused_unchanged(E, state, 5, m("pass"), NotYourDecision)
    play(state, ANNE, "pass", "item alchemy")
    state.target_vp = 1
    play(state, BOB, "pass", "item research")
    assert state.phase == OVER
    assert_refused_unchanged(E, state, ANNE, m("pass"), GameOver)
    assert E.legal_moves(state, ANNE) == [] and E.to_act(state) == ()


# ---------------------------------------------------------------- pass


def test_pass_first_takes_the_token_swaps_the_item_and_draws() -> None:
    state = action_state(decks=(["cultist", "gnosis"], []), active=BOB)
    state.first_player = BOB
    state.active = ANNE
    events = play(state, ANNE, "pass")
    assert state.first_player == ANNE and state.token_passed
    # Swap for a different Magic Item from the middle: not the one she holds.
    assert texts(E.legal_moves(state, ANNE)) == [
        "item life-death",
        "item artisans-robe",
        "item alchemy",
    ]
    error = refused(state, ANNE, "item calm-elan")
    assert error.rule == "Passing"
    assert refused(state, ANNE, "item research").rule == "Passing"
    events += play(state, ANNE, "item alchemy")
    assert state.seats[ANNE].item == cid("alchemy") and cid("research") in state.items
    assert state.seats[ANNE].hand == [cid("gnosis")]
    assert "Player 1 draws Gnosis (passing)" in event_texts(events, ANNE)
    assert "Player 1 draws 1 card (passing)" in event_texts(events, BOB)
    assert "Gnosis" not in " ".join(event_texts(events, BOB))
    # Once passed, no more actions: Bob acts alone until he passes.
    assert E.to_act(state) == (BOB,)
    play(state, BOB, "pass", "item research")
    assert state.first_player == ANNE  # the second to pass does not take it
    assert state.round == 2


def test_passing_reshuffles_the_discard_pile_when_the_draw_pile_is_empty() -> None:
    state = action_state(hands=(["gnosis", "cultist"], []))
    play(state, ANNE, "discard gnosis", "gain gold")
    play(state, BOB, "pass", "item alchemy")
    play(state, ANNE, "discard cultist", "gain gold")
    events = play(state, ANNE, "pass", "item life-death")
    assert "Player 1 shuffles the discard pile into a new draw pile" in event_texts(events)
    assert len(state.seats[ANNE].hand) == 1 and len(state.seats[ANNE].deck) == 1
    assert state.seats[ANNE].discard == []


def test_passing_with_nothing_to_draw_draws_nothing() -> None:
    state = action_state()
    events = play(state, ANNE, "pass", "item alchemy")
    assert "Player 1 has no card to draw (passing)" in event_texts(events)
    assert state.seats[ANNE].hand == []


def test_the_rival_continues_alone_after_a_pass() -> None:
    state = action_state(hands=([], ["gnosis", "cultist"]))
    play(state, ANNE, "pass", "item alchemy")
    play(state, BOB, "discard gnosis", "gain gold")
    assert E.to_act(state) == (BOB,)
    play(state, BOB, "discard cultist", "gain gold")
    assert E.to_act(state) == (BOB,)
    play(state, BOB, "pass", "item research")
    assert state.round == 2


# ---------------------------------------------------------------- victory


def test_victory_at_the_target_most_points_wins() -> None:
    state = action_state(tableaus=(["mystic-monastery", "sleeping-dragon"], ["dark-temple"]))
    state.target_vp = 6
    play(state, ANNE, "pass", "item alchemy")  # 2 + 3 + the token = 6
    events = play(state, BOB, "pass", "item research")
    result = E.outcome(state)
    assert result is not None and result.winners == (ANNE,) and result.scores == (6, 1)
    assert result.reason == "MOST_VICTORY_POINTS"
    assert [e.data["vp"] for e in events if e.kind == "victory_check"] == [[6, 1]]


def test_no_winner_yet_straightens_everything_and_begins_a_new_round() -> None:
    state = action_state(tableaus=(["gnosis"], []), pools=((0, 0, 1, 0, 0), (0,) * 5))
    play(state, ANNE, "power gnosis 1")
    play(state, BOB, "pass", "item alchemy")
    play(state, ANNE, "pass", "item life-death")
    assert state.round == 2 and state.phase in (COLLECT, ACTIONS)
    assert not any(state.turned) and not state.token_passed
    assert not state.seats[ANNE].passed and not state.seats[BOB].passed
    assert E.to_act(state) in ((ANNE,), (BOB,), (ANNE, BOB))


def test_both_over_the_target_the_most_points_win() -> None:
    state = action_state(
        tableaus=(["sleeping-dragon"], ["mystic-monastery", "dark-temple"]),
        pools=((3, 0, 0, 0, 0), (0, 0, 0, 0, 2)),
    )
    state.target_vp = 3
    play(state, ANNE, "pass", "item alchemy")  # 3 + the token = 4
    play(state, BOB, "power dark-temple 1")  # turned components still count their VP
    play(state, BOB, "pass", "item research")  # 2 + 1 = 3, also over the target
    result = E.outcome(state)
    assert result is not None and result.scores == (4, 3) and result.winners == (ANNE,)
    assert result.reason == "MOST_VICTORY_POINTS"


def test_tie_break_and_shared_win() -> None:
    # 3 VP each (Sleeping Dragon vs Monastery + token); essences decide, Gold counts 2.
    state = action_state(
        tableaus=(["sleeping-dragon"], ["mystic-monastery"]),
        pools=((3, 0, 0, 0, 0), (0, 0, 0, 0, 2)),
        active=BOB,
    )
    state.target_vp = 3
    play(state, BOB, "pass", "item alchemy")  # Bob takes the token: 2 + 1
    play(state, ANNE, "pass", "item life-death")
    result = E.outcome(state)
    assert result is not None and result.scores == (3, 3)
    assert result.winners == (BOB,) and result.reason == "TIE_MORE_ESSENCES"  # 4 beats 3

    state = action_state(
        tableaus=(["sleeping-dragon"], ["mystic-monastery"]),
        pools=((2, 0, 0, 0, 0), (0, 0, 0, 0, 1)),
        active=BOB,
    )
    state.target_vp = 3
    play(state, BOB, "pass", "item alchemy")
    play(state, ANNE, "pass", "item life-death")
    result = E.outcome(state)
    assert result is not None and result.winners == (ANNE, BOB)
    assert result.reason == "SHARED_WIN"


def test_round_limit_ends_the_game_with_the_usual_order() -> None:
    state = action_state(tableaus=(["dark-temple"], []))
    state.options = E.Options(setup="first_game", round_limit=1)
    play(state, ANNE, "pass", "item alchemy")
    play(state, BOB, "pass", "item research")
    result = E.outcome(state)
    assert result is not None and result.reason == "ROUND_LIMIT_MOST_VICTORY_POINTS"
    assert result.winners == (ANNE,) and result.scores == (2, 0)


def test_if_neither_has_the_victory_points_a_new_round_begins_past_round_20_until_one_has() -> None:
    # "If at least one of you has 10 or more victory points, the game ends ... If neither
    # of you has ..., begin a new round": nothing else ends a default game (no round limit).
    state = action_state(tableaus=(["dark-temple"], []))
    assert state.options.round_limit == 0
    state.round = 20
    play(state, ANNE, "pass", "item alchemy")
    play(state, BOB, "pass", "item research")
    assert E.outcome(state) is None
    assert state.round == 21 and state.phase in (COLLECT, ACTIONS)
    # Played on at random (seeded), it ends at a victory check where a player has the
    # target: the first game's 7 VP.
    rng = random.Random(20)
    for _ in range(20_000):
        if E.outcome(state) is not None:
            break
        seat, move = choose(E, state, rng)
        E.apply(state, seat, move)
    result = E.outcome(state)
    assert result is not None and state.round > 21
    assert not result.reason.startswith("ROUND_LIMIT") and max(result.scores) >= 7
    assert result.details[0].startswith(f"end of round {state.round}: ")
    # Control: the house rule (round_limit 20) ends the same position at round 20's check.
    limited = action_state(tableaus=(["dark-temple"], []))
    limited.options = E.Options(setup="first_game", first_player=ANNE, round_limit=20)
    limited.round = 20
    play(limited, ANNE, "pass", "item alchemy")
    play(limited, BOB, "pass", "item research")
    ended = E.outcome(limited)
    assert ended is not None and ended.reason == "ROUND_LIMIT_MOST_VICTORY_POINTS"
    assert limited.round == 20 and ended.scores == (2, 0)
