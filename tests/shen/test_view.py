"""Views: what each seat and a spectator may see; replay in another process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from services.kit.testing import random_game
from services.shen import engine
from services.shen.engine import Step

from .helpers import clear_field, do, loc, put_avatar, put_counters, started, texts


def test_a_seat_sees_its_own_hand_and_only_counts_of_the_rest():
    state = started()
    mine = engine.view(state, 0)
    assert mine.hand == tuple(engine.CARDS[c].id for c in state.players[0].hand)
    assert mine.players[1].hand_count == 6 and mine.players[1].deck_count == 34
    spectator = engine.view(state, None)
    assert spectator.hand is None
    other = engine.view(state, 1)
    assert other.hand != mine.hand or state.players[0].hand == state.players[1].hand
    for seen in (mine, other, spectator):
        text = repr(seen)
        for p in state.players:
            # No deck order: the deck's cards in order never appear.
            assert repr(tuple(engine.CARDS[c].id for c in p.deck)) not in text


def test_the_view_shows_the_field_and_whose_decision_it_is():
    state = started()
    clear_field(state)
    put_counters(state, 0, "D3")
    put_avatar(state, 0, "ember_warrior", "d3", items=["ember_flame_blade"])
    state.claims[loc("a1")] = 1
    seen = engine.view(state, None)
    assert ("E3", 0) in seen.stones and ("D3", 0) in seen.counters
    assert ("a1", 1) in seen.anchor_points and ("h8", -1) in seen.anchor_points
    (avatar,) = seen.avatars
    assert (avatar.at, avatar.melee, avatar.items) == ("d3", 3, ("ember_flame_blade",))
    assert seen.to_act == engine.to_act(state) and seen.step == "recovery and set-up phase"
    state.tasks.append(("lose", 1, 2))
    seen = engine.view(state, 0)
    assert seen.pending == "choose a card to lose" and seen.pending_count == 2


def test_an_ability_after_a_move_exhausts_the_avatar():
    state = started()
    clear_field(state)
    for p in state.players:
        p.hand = []
    state.active, state.step = 0, Step.COMMAND
    state.players[0].realm = "tide"
    put_counters(state, 0, "D3")
    oracle = put_avatar(state, 0, "tide_oracle", "d3")  # Foresight: draw 1, cost 2
    do(state, "step d3 d2")  # movement 1: spent, so the after-move choice comes at once
    assert texts(state) == ["ability 0", "pass"]
    do(state, "ability 0")
    assert not oracle.ready and len(state.players[0].hand) == 1
    assert texts(state) == ["end"]


def test_a_spirit_avatar_retreats_onto_a_vertex_next_to_its_realm_stone():
    from .helpers import Dice

    state = started()
    clear_field(state)
    for p in state.players:
        p.hand = []
    state.active, state.step = 0, Step.COMMAND
    state.rng = Dice([3, 3, 2, 2, 2, 2, 2])  # 10 against 6: a win, not a double
    put_counters(state, 0, "G5", "F5")
    put_counters(state, 1, "H5", "D7", "F7", "E6", "E8")  # around its Realm Stone E7
    put_avatar(state, 0, "ember_spirit_of_cinders", "G5")
    put_avatar(state, 1, "tide_spirit_of_mist", "H5")  # I5 behind it holds no counter
    do(state, "step G5 H5", "lose cards")
    while state.tasks and state.tasks[-1][0] == "lose":
        do(state, texts(state)[0])
    assert texts(state) == ["retreat E6", "retreat D7", "retreat F7", "retreat E8"]
    do(state, "retreat F7")
    assert state.avatars[state.at[loc("F7")]].owner == 1
    assert state.avatars[state.at[loc("H5")]].owner == 0 and state.counters[loc("H5")] == 0


def test_a_game_replays_identically_in_another_process():
    played = random_game(engine, 21, 3, engine.Options(round_limit=40))
    here = [str(m) for _, m in played.moves]
    script = (
        "import json, sys; sys.path.insert(0, '.');"
        "from services.kit.testing import random_game;"
        "from services.shen import engine;"
        "p = random_game(engine, 21, 3, engine.Options(round_limit=40));"
        "print(json.dumps([str(m) for _, m in p.moves]))"
    )
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run(
        [sys.executable, "-c", script],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout) == here


def test_a_deep_copy_shares_nothing_mutable():
    import copy

    state = started()
    put_counters(state, 0, "C5")
    put_avatar(state, 0, "ember_warrior", "d5", items=["ember_flame_blade"])
    state.tasks.append(("lose", 1, 1))
    twin = copy.deepcopy(state)
    assert twin == state
    twin.players[0].hand.append(0)
    twin.players[0].deck.pop()
    twin.players[1].discard.append(1)
    twin.players[1].removed.append(1)
    twin.players[1].remains.append(1)
    twin.counters[loc("C6")] = 1
    twin.stones.clear()
    twin.claims[loc("a1")] = 0
    next(iter(twin.avatars.values())).items.append(2)
    next(iter(twin.avatars.values())).loc = 0
    twin.at.clear()
    twin.acted.append(5)
    twin.tasks.pop()
    twin.rng.random()
    assert twin != state
    fresh = started()
    put_counters(fresh, 0, "C5")
    put_avatar(fresh, 0, "ember_warrior", "d5", items=["ember_flame_blade"])
    fresh.tasks.append(("lose", 1, 1))
    assert fresh == state  # the original did not move
