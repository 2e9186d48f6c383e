"""Views: what each seat and a spectator may see, and nothing more."""

from __future__ import annotations

import pickle

import services.resarcana.engine as E
from tests.resarcana.helpers import ANNE, BOB, example_setup, leak_check, play


def test_views_show_hands_to_their_owner_only() -> None:
    state = example_setup()
    anne, bob, spectator = (E.view(state, s) for s in (ANNE, BOB, None))
    assert anne.hand == ("white-swan", "gnosis", "solomons-key") or set(anne.hand) == {
        "white-swan",
        "gnosis",
        "solomons-key",
    }
    assert bob.hand and "white-swan" not in repr(bob)
    assert spectator.hand == () and "white-swan" not in repr(spectator)
    for seen in (anne, bob, spectator):
        assert [s.hand for s in seen.seats] == [3, 3]
        assert [s.deck for s in seen.seats] == [5, 5]
        assert seen.monument_deck == 5
        for name in ("magnum-opus", "brass-bust", "well-of-memory"):  # face down
            assert name not in repr(seen)
    for seat, seen in ((ANNE, anne), (BOB, bob), (None, spectator)):
        leak_check(state, seen, seat)


def test_view_says_whose_decision_and_what_step() -> None:
    state = example_setup()
    play(state, ANNE, "item research")
    play(state, BOB, "item calm-elan")
    seen = E.view(state, ANNE)
    assert seen.phase == "collect" and seen.to_act == (BOB,)
    assert seen.step == "collect: choose a side (calm-elan)"
    play(state, BOB, "gain elan", "place crucible")
    play(state, ANNE, "power research 1")
    seen = E.view(state, BOB)
    assert seen.phase == "actions" and seen.to_act == (ANNE,)
    assert seen.step == "pay the cost for research: 1 any left"
    assert seen.seats[ANNE].components[1].turned  # Research, turned
    assert seen.seats[BOB].components[-1].name == "crucible"


def test_views_are_deterministic_values() -> None:
    state = example_setup()
    a = E.view(state, ANNE)
    b = E.view(state, ANNE)
    assert a == b and repr(a) == repr(b) and hash(a) == hash(b)
    assert pickle.loads(pickle.dumps(a)) == a
    assert "Rng" not in repr(a) and "set(" not in repr(a)


def test_secret_moves_are_not_shown_to_others() -> None:
    """The service shows other seats a move only if ``public_move`` says so: draft keeps,
    Mage choices and face-down returns stay secret; their events say only that they
    happened, and a spectator gets that public event too."""
    for text in ("keep gnosis", "mage smith", "return dark-temple"):
        assert not E.public_move(E.parse_move(text))
    for text in ("place crucible", "discard gnosis", "pay calm", "pass", "retrieve gnosis"):
        assert E.public_move(E.parse_move(text))
    state = E.new_game(8, 2, E.Options())
    kept = state.seats[ANNE].draft_offer[0]
    events = E.apply(state, ANNE, E.Keep(kept))
    private = [e for e in events if e.to == frozenset({ANNE})]
    public = [e for e in events if e.to is None]
    assert private and public
    assert all(e.visible_to(None) and e.visible_to(BOB) for e in public)
    assert all(not e.visible_to(BOB) and not e.visible_to(None) for e in private)
    assert "keeps a card and sets one aside" in public[0].text
