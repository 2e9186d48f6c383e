"""The rulebook's Example Round, move for move (Anne is seat 0, Bob seat 1 and First
Player), and its continuation as the rulebook sketches it, to Anne's 7 VP in round 3."""

from __future__ import annotations

import services.resarcana.engine as E
from services.resarcana.engine.state import ACTIONS, COLLECT, OVER
from tests.resarcana.helpers import (
    ANNE,
    BOB,
    cid,
    event_texts,
    example_setup,
    play,
    texts,
)

POOL = ("elan", "life", "calm", "death", "gold")


def pool(state: E.State, seat: int) -> dict[str, int]:
    return {k: v for k, v in zip(POOL, state.seats[seat].pool, strict=True) if v}


def on(state: E.State, slug: str) -> dict[str, int]:
    return {k: v for k, v in zip(POOL, state.on[cid(slug)], strict=True) if v}


def vp(state: E.State, seat: int) -> int:
    return E.view(state, None).seats[seat].vp


def play_round_one(state: E.State) -> list:
    events = []
    # Since Bob is the First Player, Anne chooses her Magic Item first.
    assert E.to_act(state) == (ANNE,)
    events += play(state, ANNE, "item research")
    assert E.to_act(state) == (BOB,)
    events += play(state, BOB, "item calm-elan")
    # Collect: Anne takes 1 Calm (Enchantress), with no choice to make; Bob chooses Elan.
    assert state.phase == COLLECT and E.to_act(state) == (BOB,)
    assert texts(E.legal_moves(state, BOB)) == ["gain elan", "gain calm"]
    assert pool(state, ANNE) == {"elan": 1, "life": 1, "calm": 2, "death": 1, "gold": 1}
    events += play(state, BOB, "gain elan")
    assert state.phase == ACTIONS and E.to_act(state) == (BOB,)
    assert pool(state, BOB) == {"elan": 2, "life": 1, "calm": 1, "death": 1, "gold": 1}

    # 1. Bob places the Crucible, paying 1 Gold and 1 Elan.
    events += play(state, BOB, "place crucible")
    assert pool(state, BOB) == {"elan": 1, "life": 1, "calm": 1, "death": 1}
    # 1. Anne turns Research, pays 1 Death, and draws the Magnum Opus.
    events += play(state, ANNE, "power research 1", "pay death")
    assert state.turned[cid("research")]
    assert cid("magnum-opus") in state.seats[ANNE].hand
    # 2. Bob turns the Crucible, paying Elan, Calm, Death and Life for 3 Gold.
    events += play(state, BOB, "power crucible 1")
    assert pool(state, BOB) == {"gold": 3}
    # 2. Anne places the White Swan, paying 2 Calm and 1 Life.
    events += play(state, ANNE, "place white-swan")
    assert pool(state, ANNE) == {"elan": 1, "gold": 1}
    # 3. Bob discards a card and takes 2 Elan for it.
    events += play(state, BOB, "discard cursed-peacock-idol", "gain elan", "gain elan")
    # 3. Anne discards a card and takes 2 Calm for it.
    events += play(state, ANNE, "discard gnosis", "gain calm", "gain calm")
    # 4. Bob turns the Smith, pays 1 Elan, and takes 1 Gold.
    events += play(state, BOB, "power smith 1")
    assert pool(state, BOB) == {"elan": 1, "gold": 4}
    # 4. Anne discards a card and takes 1 Calm and 1 Life.
    events += play(state, ANNE, "discard solomons-key", "gain calm", "gain life")
    # 5. Bob pays 4 Gold for the Mystic Monastery; Well of Memory is revealed.
    events += play(state, BOB, "claim mystic-monastery")
    assert [cid("dark-temple"), cid("well-of-memory")] == state.monument_display
    assert "Well of Memory is revealed from the Monument deck" in event_texts(events)
    # 5. Anne discards her last card and takes 1 Calm and 1 Life.
    events += play(state, ANNE, "discard magnum-opus", "gain calm", "gain life")
    assert state.seats[ANNE].hand == []
    # 6. Bob turns the Monastery and straightens the Smith.
    assert state.turned[cid("smith")]
    events += play(state, BOB, "power mystic-monastery 1")
    assert not state.turned[cid("smith")] and state.turned[cid("mystic-monastery")]
    # 6. Anne pays Calm + Life to place 1 Calm and 2 Life on the White Swan.
    events += play(state, ANNE, "power white-swan 1", "pay life")
    assert on(state, "white-swan") == {"life": 2, "calm": 1}
    # 7. Bob discards his last card and takes 1 Gold.
    events += play(state, BOB, "discard squared-circle", "gain gold")
    # 7. Anne pays Calm + Life again.
    events += play(state, ANNE, "power white-swan 1", "pay life")
    # 8. Bob turns the Smith for its second power: pays 1 Gold, places 4 Elan on it.
    events += play(state, BOB, "power smith 2", "gain elan", "gain elan", "gain elan", "gain elan")
    assert on(state, "smith") == {"elan": 4}
    # 8. Anne pays Calm + Gold for another 1 Calm and 2 Life on the White Swan.
    events += play(state, ANNE, "power white-swan 1", "pay gold")
    assert on(state, "white-swan") == {"life": 6, "calm": 3}
    # 9. Bob has 1 Elan, no cards, and all his components turned: he must pass.
    assert pool(state, BOB) == {"elan": 1}
    assert texts(E.legal_moves(state, BOB)) == ["pass"]
    events += play(state, BOB, "pass", "item life-death")
    assert state.first_player == BOB and state.token_passed
    assert state.seats[BOB].hand == [cid("brass-bust")]
    # 9. Anne turns the Enchantress, paying 1 Elan, to place 2 Death on it.
    events += play(state, ANNE, "power enchantress 1")
    assert on(state, "enchantress") == {"death": 2}
    assert pool(state, ANNE) == {"calm": 1}
    # With her 10th action she passes, taking the Calm/Elan Bob just returned.
    assert texts(E.legal_moves(state, ANNE)) == ["pass"]  # 1 Calm buys nothing
    events += play(state, ANNE, "pass")
    assert "item calm-elan" in texts(E.legal_moves(state, ANNE))
    events += play(state, ANNE, "item calm-elan")
    assert state.seats[ANNE].hand == [cid("fairy-dragon")]
    return events


def test_round_one_plays_as_the_rulebook_says() -> None:
    state = example_setup()
    events = play_round_one(state)
    # Victory: Bob 2 VP from the Monastery and 1 for the token, Anne 0; nobody has 7.
    checks = [e for e in events if e.kind == "victory_check"]
    assert [c.data["vp"] for c in checks] == [[0, 3]]
    assert vp(state, BOB) == 3 and vp(state, ANNE) == 0
    assert E.outcome(state) is None
    # Everything is straightened, and round 2 begins with its collect phase.
    assert state.round == 2 and state.phase == COLLECT
    assert not any(state.turned)
    assert not state.token_passed and not any(s.passed for s in state.seats)
    assert state.first_player == BOB


def test_first_action_phase_order_alternates_from_the_first_player() -> None:
    state = example_setup()
    play(state, ANNE, "item research")
    play(state, BOB, "item calm-elan", "gain elan")
    assert E.to_act(state) == (BOB,)
    play(state, BOB, "place crucible")
    assert E.to_act(state) == (ANNE,)


def test_the_example_continues_to_annes_win_in_round_three() -> None:
    """ "In the next round, Anne pays with the 9 essences on the White Swan for the Circle
    of the Druids. Both powers ... for a total of 2 VP. She can pass first to take the
    First Player token back. In Round 3, Anne plays the Fairy Dragon ... and uses the
    power of the Circle of the Druids for 3 more VP. She is at 7 VP, if she passes first.\""""
    state = example_setup()
    play_round_one(state)
    # Round 2 collect: Anne takes the Swan's 9 essences and the Enchantress's 2 Death
    # (taking from the last component ends her collecting: nothing is left to decide).
    assert set(E.to_act(state)) == {ANNE, BOB}
    play(state, ANNE, "gain calm", "take white-swan", "take enchantress")
    play(state, BOB, "gain life", "take smith")
    assert pool(state, ANNE) == {"life": 6, "calm": 6, "death": 2}
    assert state.phase == ACTIONS and E.to_act(state) == (BOB,)
    play(state, BOB, "power smith 1")
    play(state, ANNE, "claim circle-of-the-druids")
    assert pool(state, ANNE) == {"calm": 3, "death": 2}
    play(state, BOB, "power mystic-monastery 1")
    play(state, ANNE, "power circle-of-the-druids 2")  # turns the White Swan, its only Creature
    assert state.turned[cid("white-swan")]
    play(state, BOB, "power smith 1")
    play(state, ANNE, "power circle-of-the-druids 1")
    assert on(state, "circle-of-the-druids") == {"life": 2}
    assert vp(state, ANNE) == 2
    play(state, BOB, "discard brass-bust", "gain gold")
    play(state, ANNE, "pass", "item alchemy")
    assert state.first_player == ANNE
    events = play(state, BOB, "pass", "item research")
    assert [e.data["vp"] for e in events if e.kind == "victory_check"] == [[3, 2]]

    # Round 3: Anne keeps the Life on the Circle (taking it would lose its VP).
    assert texts(E.legal_moves(state, ANNE)) == ["take circle-of-the-druids", "done"]
    play(state, ANNE, "done")
    assert state.round == 3 and E.to_act(state) == (ANNE,)  # Anne acts first now
    play(state, ANNE, "power alchemy 1", "pay death", "gain elan", "gain life")
    play(state, BOB, "power smith 1")
    play(state, ANNE, "place fairy-dragon")
    play(state, BOB, "claim dark-temple")
    play(state, ANNE, "power circle-of-the-druids 2", "turn white-swan")
    play(state, BOB, "power mystic-monastery 1")
    play(state, ANNE, "power circle-of-the-druids 2")  # the Fairy Dragon is a Creature too
    play(state, BOB, "power smith 1")
    play(state, ANNE, "power circle-of-the-druids 1")
    assert on(state, "circle-of-the-druids") == {"life": 5}
    play(state, BOB, "discard crown-of-command", "gain gold")
    play(state, ANNE, "pass", "item calm-elan")
    assert vp(state, ANNE) == 7
    play(state, BOB, "pass", "item life-death")
    result = E.outcome(state)
    assert state.phase == OVER and result is not None
    assert result.scores == (7, 3) and result.winners == (ANNE,)
    assert result.reason == "MOST_VICTORY_POINTS"
