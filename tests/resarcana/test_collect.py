"""1. Collect: every Collect ability, the choices they allow, and taking all essences from a
component or none."""

from __future__ import annotations

import services.resarcana.engine as E
from services.kit.engine import IllegalMove, NotYourDecision
from services.kit.testing import assert_refused_unchanged
from services.resarcana.engine.state import ACTIONS, COLLECT
from tests.resarcana.helpers import (
    ANNE,
    BOB,
    action_state,
    cid,
    event_texts,
    m,
    play,
    put_on,
    start_round,
    texts,
)


def test_fixed_collect_abilities_need_no_decision() -> None:
    # Enchantress: 1 Calm; Cursed Peacock Idol: 1 Death; Golden Key: 1 Gold.
    state = action_state(
        mages=("enchantress", "smith"),
        items=("research", "alchemy"),
        tableaus=(["cursed-peacock-idol", "golden-key"], []),
    )
    events = start_round(state)
    assert state.seats[ANNE].pool == [0, 0, 1, 1, 1]
    assert "Player 1 collects 1 Calm (Enchantress)" in event_texts(events)
    assert state.phase == ACTIONS  # nobody had anything to decide


def test_a_slash_means_choose_one_side() -> None:
    state = action_state(items=("calm-elan", "life-death"), mages=("smith", "beastcaller"))
    start_round(state)
    assert state.phase == COLLECT and E.to_act(state) == (ANNE, BOB)  # simultaneous
    assert texts(E.legal_moves(state, ANNE)) == ["gain elan", "gain calm"]
    assert texts(E.legal_moves(state, BOB)) == ["gain life", "gain death"]
    error = assert_refused_unchanged(E, state, ANNE, m("gain gold"), IllegalMove)
    assert error.rule == "1. Collect"
    play(state, BOB, "gain death")
    assert E.to_act(state) == (ANNE,)
    play(state, ANNE, "gain calm")
    assert state.seats[ANNE].pool == [0, 0, 1, 0, 0]
    assert state.seats[BOB].pool == [0, 1, 0, 1, 0]  # + 1 Life from the Beastcaller
    assert state.phase == ACTIONS


def test_any_essence_collect_one_at_a_time_without_forbidden_ones() -> None:
    # Squared Circle collects 1 essence of your choice, no Gold.
    state = action_state(items=("research", "alchemy"), tableaus=(["squared-circle"], []))
    start_round(state)
    assert texts(E.legal_moves(state, ANNE)) == [
        "gain elan",
        "gain life",
        "gain calm",
        "gain death",
    ]
    play(state, ANNE, "gain death")
    assert state.seats[ANNE].pool[3] == 1


def test_take_all_essences_from_a_component_or_none() -> None:
    state = action_state(
        items=("research", "alchemy"),
        tableaus=(["white-swan", "circle-of-the-druids"], []),
    )
    put_on(state, "white-swan", calm=1, life=2)
    put_on(state, "circle-of-the-druids", life=3)
    put_on(state, "enchantress", death=2)
    start_round(state)
    assert texts(E.legal_moves(state, ANNE)) == [
        "take white-swan",
        "take enchantress",
        "take circle-of-the-druids",
        "done",
    ]
    play(state, ANNE, "take white-swan")
    # All of them or none: the Swan is empty now, and no part-taking move exists.
    assert state.on[cid("white-swan")] == [0, 0, 0, 0, 0]
    assert state.seats[ANNE].pool == [0, 2, 2, 0, 0]  # + 1 Calm from the Enchantress
    assert "take white-swan" not in texts(E.legal_moves(state, ANNE))
    vp_before = E.view(state, None).seats[ANNE].vp
    play(state, ANNE, "take circle-of-the-druids")
    # Taking from a Place of Power loses the victory points the essences gave.
    assert E.view(state, None).seats[ANNE].vp == vp_before - 3
    play(state, ANNE, "done")
    assert state.on[cid("enchantress")] == [0, 0, 0, 2, 0]
    assert state.phase == ACTIONS


def test_collect_in_turn_order_when_asked() -> None:
    state = action_state(
        items=("calm-elan", "life-death"), mages=("smith", "beastcaller"), active=BOB
    )
    state.options = E.Options(setup="first_game", collect_in_turn_order=True)
    start_round(state)
    assert E.to_act(state) == (BOB,)  # the First Player first
    assert_refused_unchanged(E, state, ANNE, m("gain calm"), NotYourDecision)
    play(state, BOB, "gain life")
    assert E.to_act(state) == (ANNE,)
    play(state, ANNE, "gain calm")
    assert state.phase == ACTIONS and E.to_act(state) == (BOB,)


def test_sides_that_are_not_single_essences_are_options(monkeypatch) -> None:
    """The engine handles any Collect the content language can say, such as
    "1 life + 1 calm / 2 any !gold" (no Duo card has one; a replacement list might)."""
    import dataclasses

    from services.resarcana.engine import collect, content

    class Patched:
        def __init__(self, real: content.Content, slug: str, text: str) -> None:
            self.real = real
            self.target = real.by_slug[slug]
            sides = tuple(content.parse_amount(s) for s in text.split(" / "))
            self.replaced = dataclasses.replace(real[self.target], collect=sides)

        def __getitem__(self, cid: int) -> content.Component:
            return self.replaced if cid == self.target else self.real[cid]

    monkeypatch.setattr(
        collect, "CONTENT", Patched(collect.CONTENT, "life-death", "1 life + 1 calm / 2 any !gold")
    )
    state = action_state(items=("life-death", "research"), mages=("smith", "beastcaller"))
    start_round(state)
    assert texts(E.legal_moves(state, ANNE)) == ["option 1", "option 2"]
    play(state, ANNE, "option 2")
    assert texts(E.legal_moves(state, ANNE)) == [
        "gain elan",
        "gain life",
        "gain calm",
        "gain death",
    ]
    play(state, ANNE, "gain death", "gain death")
    assert state.seats[ANNE].pool == [0, 0, 0, 2, 0]
