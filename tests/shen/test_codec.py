"""Shén's codec (engine <-> protobuf), what reaches each seat over gRPC, and the
command-line renderer.

Seeded random games for 2, 3, 4 and 6 players, two teams of two, three teams of two and
a small field: every legal move round-trips through its proto (and the renderer writes it
as the engine does), every view converts, and a view's bytes do not change when what
that seat may not know changes (other hands, every deck's contents and order, the
generator). Malformed protos are refused with MalformedMove. No Shén move is secret: the
card a move names is public once it is made, so the engine has no ``public_move``.

Over a real in-process service, for two players, two teams of two and six players (and
three teams through the gateway): every seat's and the spectator's views, WatchGame
streams and GetHistory carry exactly what the engine shows that seat, nothing hidden
from it (another hand, a card drawn by another seat, the seed).
"""

from __future__ import annotations

import asyncio
import random

import grpc
import pytest
from google.protobuf import text_format
from tabletop.shen.v1 import shen_pb2 as pb

from client.api import FINISHED, GameClient
from client.render import colour
from client.render import shen as render
from services import registry
from services.kit.engine import BadOptions, MalformedMove
from services.kit.testing import random_game, random_game_count
from services.shen import codec, engine
from services.shen.engine import CARDS
from services.shen.engine import moves as m
from services.shen.engine.moves import MOVE_TYPES
from tests.codec_checks import (
    assert_every_kind_round_trips,
    assert_round_trips,
    header_for,
    wire_bytes,
)
from tests.leaks import assert_seed_free, watchers_at_the_start
from tests.shen.helpers import hidden_changed, proto_text
from tests.support import gateway_in_process, service_in_process

# name: (players, options, games in a quick run)
CONFIGS = {
    "2p": (2, engine.Options(round_limit=40), 4),
    "3p": (3, engine.Options(round_limit=40), 2),
    "4p": (4, engine.Options(round_limit=40), 1),
    "6p": (6, engine.Options(round_limit=12), 1),
    "2x2 teams": (4, engine.Options(teams=2, round_limit=40), 2),
    "6p three teams, six anchors": (
        6,
        engine.Options(teams=3, anchor_points=("a1", "h1", "a8", "h8", "d4", "e5"), round_limit=12),
        1,
    ),
    "2p small field, one anchor, 60 cards": (
        2,
        engine.Options(size=5, anchor_points=("c3",), deck_size=60, round_limit=40),
        3,
    ),
    "2p 15x15": (2, engine.Options(size=15, round_limit=15), 1),
}

# One move of every kind, in the engine's text forms (services/shen/README.md).
EVERY_KIND = [
    "stone C4",
    "draw",
    "shen P16",
    "play ember_scout",
    "target c4",
    "target C4",
    "foe 5",
    "claim a1",
    "siege a1 B2",
    "siege B2 C2",
    "step c4 d5",
    "step C4 C5",
    "hold o15",
    "hold C4",
    "stop",
    "ability 0",
    "ranged f6",
    "remove avatar",
    "lose cards",
    "retreat c4",
    "retreat E6",
    "lose hand tide_guard",
    "lose deck",
    "lose discard gale_gust",
    "pass",
    "end",
]


def _twin_bytes(state: engine.State, seat: int | None) -> bytes:
    """The seat's proto view once everything hidden from it has changed."""
    with hidden_changed(state, seat):
        return wire_bytes(codec.view_to_proto(engine.view(state, seat)))


def _check_view(state: engine.State, message: pb.View, seat: int | None) -> None:
    """What the proto view shows: the seat's own hand, counts for the rest."""
    assert message.HasField("viewer") == (seat is not None)
    expected_hand = [] if seat is None else [CARDS[c].id for c in state.players[seat].hand]
    assert list(message.hand) == expected_hand
    assert len(message.players) == len(state.players)
    for shown, player in zip(message.players, state.players, strict=True):
        assert shown.hand_count == len(player.hand) and shown.deck_count == len(player.deck)
        assert list(shown.discard) == [CARDS[c].id for c in player.discard]
        assert shown.team == player.team
    named = {c.id for c in message.cards}
    text = proto_text(message)
    for card in CARDS:
        if card.id in named:
            continue
        assert f'"{card.id}"' not in text, f"{card.id} is named but not described"


def test_no_view_field_can_carry_the_seed_a_deck_or_another_hand() -> None:
    """The View's schema has counts where things are hidden: no field for a seed, a
    generator, a deck's cards or another player's hand."""
    names: set[str] = set()
    pending = [pb.View.DESCRIPTOR]
    seen = set()
    while pending:
        descriptor = pending.pop()
        if descriptor.full_name in seen:
            continue
        seen.add(descriptor.full_name)
        for field in descriptor.fields:
            names.add(field.name)
            if field.message_type is not None:
                pending.append(field.message_type)
    assert not {n for n in names if "seed" in n or "rng" in n or "random" in n}
    assert {n for n in names if "deck" in n} == {"deck_count"}
    assert {n for n in names if "hand" in n} == {"hand", "hand_count"}
    assert pb.Player.DESCRIPTOR.fields_by_name["hand_count"].type == 5  # int32


# --- moves --------------------------------------------------------------------------------


def test_every_kind_has_a_case_and_round_trips() -> None:
    cases = assert_every_kind_round_trips(
        engine.parse_move, MOVE_TYPES, codec, pb.Move, render.move, EVERY_KIND
    )
    assert len(cases) == len(MOVE_TYPES)  # one message per decision kind


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_random_games_round_trip_every_move_and_convert_every_view(name: str) -> None:
    players, options, games = CONFIGS[name]
    kinds: set[type] = set()
    # Every legal move of every decision round-trips: about 2 s a 4-player game, so the
    # soak's count is capped (the rules' soak is test_random_play's, uncapped).
    for seed in range(random_game_count(games, most=100)):
        state = engine.new_game(seed, players, options)
        rng = random.Random(seed)
        step = 0
        while engine.outcome(state) is None:
            (seat,) = engine.to_act(state)
            moves = engine.legal_moves(state, seat)
            for move in moves:
                assert_round_trips(codec, pb.Move, render.move, move)
                kinds.add(type(move))
            if step % 9 == 0:
                for viewer in [*range(players), None]:
                    message = codec.view_to_proto(engine.view(state, viewer))
                    assert pb.View.FromString(message.SerializeToString()) == message
                    _check_view(state, message, viewer)
                    assert _twin_bytes(state, viewer) == wire_bytes(message), (
                        "the proto view depends on something hidden from the seat"
                    )
            engine.apply(state, seat, rng.choice(moves))
            step += 1
        final = codec.view_to_proto(engine.view(state, None))
        assert final.step == pb.STEP_OVER and final.end_reason == state.end_reason
        assert list(final.winners) == list(engine.outcome(state).winners)
        assert final.pending == pb.PENDING_NONE and not final.to_act
    assert len(kinds) >= 15, sorted(k.__name__ for k in kinds)  # random play reaches most


def test_the_view_check_reads_the_text_format_writes() -> None:
    """proto_text, which _check_view searches for card ids, has the lines text_format
    writes: every seat's and the spectator's view, every 40th decision of a four-player
    game of two teams."""
    players, options, _ = CONFIGS["2x2 teams"]
    state = engine.new_game(5, players, options)
    rng = random.Random(5)
    compared = 0
    while engine.outcome(state) is None:
        if compared % 40 == 0:
            for viewer in [*range(players), None]:
                message = codec.view_to_proto(engine.view(state, viewer))
                text = text_format.MessageToString(message)
                assert sorted(proto_text(message).splitlines()) == sorted(text.splitlines())
        compared += 1
        (seat,) = engine.to_act(state)
        engine.apply(state, seat, rng.choice(engine.legal_moves(state, seat)))
    assert compared > 100


def test_random_play_reaches_every_kind_of_decision() -> None:
    """Random play reaches every kind of decision, and ``public_move`` is true for every
    move it makes (why: test_every_card_a_move_names_is_public_once_made)."""
    kinds: set[type] = set()
    for seed in range(4):
        for players, options in (
            (2, engine.Options(round_limit=40)),
            (4, engine.Options(teams=2, round_limit=40)),
        ):
            played = random_game(engine, seed, players, options)
            kinds.update(type(move) for _, move in played.moves)
            assert all(engine.public_move(move) for _, move in played.moves)
    assert kinds == set(MOVE_TYPES), sorted(k.__name__ for k in set(MOVE_TYPES) - kinds)


def test_the_view_describes_every_card_it_names_and_the_field() -> None:
    state = engine.new_game(3, 2, engine.Options())
    while engine.outcome(state) is None and not state.avatars:
        (seat,) = engine.to_act(state)
        moves = engine.legal_moves(state, seat)
        plays = [move for move in moves if isinstance(move, m.PlayCard)]
        engine.apply(state, seat, plays[0] if plays else moves[-1])
    message = codec.view_to_proto(engine.view(state, 0))
    cards = {c.id: c for c in message.cards}
    assert set(message.hand) <= set(cards)
    assert message.size == 8 and [a.space for a in message.anchor_points] == [
        "a1",
        "h1",
        "a8",
        "h8",
    ]
    assert len(message.realm_stones) == 2 and message.shen_counters
    (avatar,) = message.avatars
    card = cards[avatar.card]
    assert card.type == pb.CARD_TYPE_AVATAR and card.name
    assert card.realm == avatar.card.split("_")[0]
    assert avatar.traits.melee == card.traits.melee + sum(
        cards[i].bonus.melee for i in avatar.items
    )
    assert avatar.spirit == card.spirit == avatar.location[0].isupper()
    assert not avatar.ready  # "Manifested Avatars enter play Exhausted"
    fireball = codec._DESCRIBED["ember_fireball"]
    assert fireball.type == pb.CARD_TYPE_INSTANT and fireball.timing == pb.TIMING_MAIN
    assert fireball.effect.kind != pb.EFFECT_KIND_UNSPECIFIED
    forge = codec._DESCRIBED["ember_forge_of_war"]
    assert forge.type == pb.CARD_TYPE_REMAINS_IN_PLAY and forge.HasField("aura")
    blade = codec._DESCRIBED["ember_flame_blade"]
    assert blade.type == pb.CARD_TYPE_ITEM and blade.bonus.melee == 1
    warlord = codec._DESCRIBED["ember_warlord"]
    assert [(a.name, a.cost, a.timing) for a in warlord.abilities] == [
        ("War Cry", 3, pb.TIMING_ACTION)
    ]
    assert warlord.abilities[0].effect == pb.Effect(kind=pb.EFFECT_KIND_DRAIN, amount=1)
    assert codec._DESCRIBED["grove_spirit_seed"].spirit


def test_pre_game_and_pending_decisions_convert() -> None:
    state = engine.new_game(7, 3, engine.Options(round_limit=40))
    message = codec.view_to_proto(engine.view(state, None))
    assert message.step == pb.STEP_PLACE_REALM_STONE and message.pending == pb.PENDING_NONE
    assert message.turn == 0 and message.first_player_rolls
    assert all(len(r.totals) == 3 for r in message.first_player_rolls)
    assert not message.HasField("combat") and not message.HasField("last_roll")
    seen_pending = set()
    seen_combat = set()
    rng = random.Random(7)
    while engine.outcome(state) is None:
        message = codec.view_to_proto(engine.view(state, None))
        seen_pending.add(message.pending)
        if message.HasField("combat"):
            seen_combat.add(message.combat.kind)
            assert message.combat.origin and message.combat.target
        (seat,) = engine.to_act(state)
        engine.apply(state, seat, rng.choice(engine.legal_moves(state, seat)))
    assert pb.PENDING_LOSE_CARDS in seen_pending and pb.PENDING_COMBAT_SUPPORT in seen_pending
    assert pb.COMBAT_KIND_UNSPECIFIED not in seen_combat and seen_combat


def test_options() -> None:
    assert codec.options_from_proto(pb.Options()) == engine.Options()
    chosen = pb.Options(
        size=10,
        anchor_points=["a1", "j10", "e5"],
        deck_size=50,
        realms=["gale", "grove", "tide", "ember"],
        decks=["", "", "", ""],
        teams=2,
        round_limit=0,
    )
    assert codec.options_from_proto(chosen) == engine.Options(
        size=10,
        anchor_points=("a1", "j10", "e5"),
        deck_size=50,
        realms=("gale", "grove", "tide", "ember"),
        decks=("", "", "", ""),
        teams=2,
        round_limit=0,
    )
    assert codec.options_from_proto(pb.Options(round_limit=7)).round_limit == 7
    # The round limit is a house rule, opt-in: unset means none, as in the engine.
    assert codec.options_from_proto(pb.Options()).round_limit == 0 == engine.Options().round_limit
    assert codec.options_from_proto(pb.Options(round_limit=40)).round_limit == 40
    engine.new_game(1, 4, codec.options_from_proto(chosen))  # the engine accepts them
    for bad in (
        pb.Options(size=-1),
        pb.Options(deck_size=-40),
        pb.Options(teams=-2),
        pb.Options(round_limit=-1),
        pb.Options(anchor_points=["a1"] * 7),
        pb.Options(realms=["x" * 100]),
        pb.Options(decks=["ember_scout*4, " * 1000]),
    ):
        with pytest.raises(BadOptions):
            codec.options_from_proto(bad)
    # Values the codec passes on and the engine refuses when it deals.
    for bad in (
        pb.Options(size=16),
        pb.Options(deck_size=39),
        pb.Options(realms=["void", "ember"]),
        pb.Options(teams=3),
        pb.Options(anchor_points=["i9"]),
    ):
        with pytest.raises(BadOptions):
            engine.new_game(1, 2, codec.options_from_proto(bad))


MALFORMED = {
    "no decision": pb.Move(),
    "stone on a space": pb.Move(stone=pb.PlaceRealmStone(vertex="c4")),
    "stone nowhere": pb.Move(stone=pb.PlaceRealmStone()),
    "stone off every field": pb.Move(stone=pb.PlaceRealmStone(vertex="Q1")),
    "stone row 17": pb.Move(stone=pb.PlaceRealmStone(vertex="A17")),
    "stone row 0": pb.Move(stone=pb.PlaceRealmStone(vertex="A0")),
    "stone with a leading zero": pb.Move(stone=pb.PlaceRealmStone(vertex="A01")),
    "shen on a space": pb.Move(shen=pb.PlaceShenCounter(vertex="d4")),
    "shen with a space around": pb.Move(shen=pb.PlaceShenCounter(vertex=" D4")),
    "play an unknown card": pb.Move(play=pb.PlayCard(card="dragon")),
    "play nothing": pb.Move(play=pb.PlayCard()),
    "play a long name": pb.Move(play=pb.PlayCard(card="x" * 100_000)),
    "target nowhere": pb.Move(target=pb.ChooseTarget()),
    "target space p1": pb.Move(target=pb.ChooseTarget(location="p1")),
    "target space o16": pb.Move(target=pb.ChooseTarget(location="o16")),
    "target a long text": pb.Move(target=pb.ChooseTarget(location="c4" * 50_000)),
    "foe -1": pb.Move(foe=pb.ChooseFoe(seat=-1)),
    "foe 6": pb.Move(foe=pb.ChooseFoe(seat=6)),
    "claim a vertex": pb.Move(claim=pb.ClaimAnchorPoint(space="A1")),
    "siege a space": pb.Move(siege=pb.AttackRealmStone(avatar="a1", stone="b2")),
    "siege from nowhere": pb.Move(siege=pb.AttackRealmStone(stone="B2")),
    "step space to vertex": pb.Move(step=pb.MoveStep(origin="c4", destination="D5")),
    "step vertex to space": pb.Move(step=pb.MoveStep(origin="C4", destination="c5")),
    "step without a destination": pb.Move(step=pb.MoveStep(origin="c4")),
    "hold nothing": pb.Move(hold=pb.Hold()),
    "ability -1": pb.Move(ability=pb.UseAbility(index=-1)),
    "ability 99": pb.Move(ability=pb.UseAbility(index=99)),
    "ranged at a vertex": pb.Move(ranged=pb.RangedAttack(target="F6")),
    "retreat nowhere": pb.Move(retreat=pb.Retreat(location="z9")),
    "lose an unknown card from hand": pb.Move(lose_hand=pb.LoseFromHand(card="tide guard")),
    "lose an unknown card from the discard pile": pb.Move(lose_discard=pb.LoseFromDiscard(card="")),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_moves_are_refused(name: str) -> None:
    with pytest.raises(MalformedMove) as refused:
        codec.move_from_proto(MALFORMED[name])
    assert len(refused.value.message) < 200  # never echoes a long input back


def test_edge_values_that_are_well_formed() -> None:
    cases = {
        "stone P16": pb.Move(stone=pb.PlaceRealmStone(vertex="P16")),
        "target o15": pb.Move(target=pb.ChooseTarget(location="o15")),
        "foe 0": pb.Move(foe=pb.ChooseFoe(seat=0)),
        "foe 5": pb.Move(foe=pb.ChooseFoe(seat=5)),
        "ability 0": pb.Move(ability=pb.UseAbility()),
        f"ability {codec.MAX_ABILITIES - 1}": pb.Move(
            ability=pb.UseAbility(index=codec.MAX_ABILITIES - 1)
        ),
        "siege I9 H9": pb.Move(siege=pb.AttackRealmStone(avatar="I9", stone="H9")),
    }
    for text, message in cases.items():
        move = codec.move_from_proto(message)
        assert str(move) == text
        assert codec.move_to_proto(move) == message
        assert render.move(message) == text


def test_a_move_off_this_field_is_refused_by_the_engine_not_the_codec() -> None:
    """The codec knows every field size up to 15x15; the game's own size is the engine's."""
    state = engine.new_game(1, 2, engine.Options())
    move = codec.move_from_proto(pb.Move(stone=pb.PlaceRealmStone(vertex="P16")))
    with pytest.raises(MalformedMove, match="not on this 8x8 field"):
        engine.apply(state, engine.to_act(state)[0], move)


# --- no secret moves ------------------------------------------------------------------------


def _public_names(state: engine.State, events: list) -> set[str]:
    seen = codec.view_to_proto(engine.view(state, None))
    names = {c.id for c in seen.cards}
    for event in events:
        if event.to is None:
            names.update(str(v) for v in event.data.values())
    return names


@pytest.mark.parametrize(("players", "teams"), [(2, 0), (4, 2), (6, 0)])
def test_every_card_a_move_names_is_public_once_made(players: int, teams: int) -> None:
    """Why every Shén move is public (``public_move`` is true for each one made): played
    and lost cards are revealed face up, so a move's text never tells the other seats
    more than the game then shows them."""
    checked = 0
    for seed in range(3):
        state = engine.new_game(seed, players, engine.Options(teams=teams, round_limit=15))
        rng = random.Random(seed)
        while engine.outcome(state) is None:
            (seat,) = engine.to_act(state)
            move = rng.choice(engine.legal_moves(state, seat))
            events = engine.apply(state, seat, move)
            assert engine.public_move(move), str(move)
            if isinstance(move, m.PlayCard | m.LoseFromHand | m.LoseFromDiscard):
                assert CARDS[move.card].id in _public_names(state, events), str(move)
                checked += 1
    assert checked > 20


# --- over a real service: nothing hidden reaches a seat -------------------------------------

SEED = 7_349_108_252_113  # long enough that its digits cannot appear by chance

SERVICE_GAMES = {
    "2p": (2, engine.Options(round_limit=12), pb.Options(round_limit=12)),
    "2x2 teams": (4, engine.Options(teams=2, round_limit=8), pb.Options(teams=2, round_limit=8)),
    "6p": (6, engine.Options(round_limit=5), pb.Options(round_limit=5)),
}


@pytest.mark.parametrize("name", sorted(SERVICE_GAMES))
async def test_views_streams_and_history_carry_nothing_hidden_from_each_seat(name: str) -> None:
    players, options, message_options = SERVICE_GAMES[name]
    assert codec.options_from_proto(message_options) == options
    played = random_game(engine, SEED, players, options)
    moves = played.moves
    viewers = [*range(players), None]
    # The views and events as the engine has them, version by version.
    state = engine.new_game(SEED, players, options)
    expected = [{s: wire_bytes(codec.view_to_proto(engine.view(state, s))) for s in viewers}]
    hands = [[tuple(p.hand) for p in state.players]]
    events: list[list] = [[]]
    listed = [[codec.move_to_proto(m) for m in engine.legal_moves(state, engine.to_act(state)[0])]]
    for seat, move in moves:
        events.append(engine.apply(state, seat, move))
        expected.append(
            {s: wire_bytes(codec.view_to_proto(engine.view(state, s))) for s in viewers}
        )
        if len(expected) % 10 == 0:  # what the service will send shows nothing hidden
            assert all(_twin_bytes(state, s) == expected[-1][s] for s in viewers)
        hands.append([tuple(p.hand) for p in state.players])
        acting = engine.to_act(state)
        listed.append(
            [codec.move_to_proto(m) for m in engine.legal_moves(state, acting[0])] if acting else []
        )

    async with service_in_process("shen") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("shen", channel)
            game = await client.create(players, seed=SEED, options=message_options)
            assert_seed_free(SEED, game.response)
            assert [t.name for t in game.response.seat_tokens] == [
                f"Clan {i + 1}" for i in range(players)
            ]
            assert [p.team for p in game.response.view.players] == [p.team for p in state.players]
            watchers = await watchers_at_the_start(
                client, game.game_id, [None if s is None else game.tokens[s] for s in viewers]
            )
            for version, (seat, move) in enumerate(moves, start=1):
                if version % 5 == 1:
                    offered = await client.moves(game.game_id, game.tokens[seat])
                    assert list(offered.moves) == listed[version - 1]
                    for other in range(players):
                        if other != seat:
                            nothing = await client.moves(game.game_id, game.tokens[other])
                            assert not nothing.moves
                reply = await client.submit(
                    game.game_id, game.tokens[seat], codec.move_to_proto(move), version - 1
                )
                assert reply.game.version == version
                assert_seed_free(SEED, reply)
                assert wire_bytes(reply.view) == expected[version][seat]
            streams = await asyncio.wait_for(asyncio.gather(*watchers), 120)

            drawn_told = 0
            for viewer, stream in zip(viewers, streams, strict=True):
                token = None if viewer is None else game.tokens[viewer]
                got = await client.get(game.game_id, token)
                assert_seed_free(SEED, got)
                assert got.game.status == FINISHED
                assert wire_bytes(got.view) == expected[-1][viewer]
                assert stream[0].view.ByteSize() and not stream[0].HasField("turn")
                turns = [u.turn for u in stream if u.HasField("turn")]
                history = await client.history(game.game_id, token)
                assert [t.version for t in turns] == [t.version for t in history]
                assert len(history) == len(moves)
                for update in stream:
                    assert_seed_free(SEED, update)
                    if update.HasField("view"):
                        version = update.game.version
                        assert wire_bytes(update.view) == expected[version][viewer]
                        for other in range(players):
                            if other != viewer:
                                assert update.view.players[other].hand_count == len(
                                    hands[version][other]
                                )
                        mine = hands[version][viewer] if viewer is not None else ()
                        assert list(update.view.hand) == [CARDS[c].id for c in mine]
                for source in (turns, history):
                    for turn in source:
                        assert_seed_free(SEED, turn)
                        seat, move = moves[turn.version - 1]
                        assert turn.move_text == str(move)  # no Shén move is secret
                        visible = [e for e in events[turn.version] if e.visible_to(viewer)]
                        assert [(e.kind, e.text) for e in turn.events] == [
                            (e.kind, e.text) for e in visible
                        ]
                        for event in turn.events:
                            if event.kind == "drew":  # the card drawn, told to its drawer
                                assert event.seat == viewer, "a drawn card told to another"
                                drawn_told += 1
            assert drawn_told, "nobody drew a card"
            assert running.manager.live_count == 1


async def test_three_teams_of_two_play_to_the_end_through_the_gateway() -> None:
    name = "shen"
    async with service_in_process(name) as running:
        async with gateway_in_process({name: [running.address]}) as (port, _):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(name, channel)
                options = pb.Options(teams=3, round_limit=4, size=10)
                game = await client.create(6, seed=SEED, options=options)
                assert len(game.tokens) == 6
                view = game.response.view
                assert view.size == 10 and [p.team for p in view.players] == [0, 1, 2] * 2
                result = await client.play_random(game, random.Random(6))
                final = result.final
                assert final.game.status == FINISHED and final.view.step == pb.STEP_OVER
                winners = set(final.game.outcome.winners)
                assert winners == set(final.view.winners)
                # A team wins (or shares a win) together: seat i plays for team i % 3.
                assert winners == {s for s in range(6) if s % 3 in {w % 3 for w in winners}}
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await client.create(5, options=options)  # 5 players in 3 teams
                assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await client.create(7)
                assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert registry.by_name(name).port == 50056


# --- the renderer --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("players", "options"),
    [
        (2, engine.Options(round_limit=40)),
        (4, engine.Options(teams=2, round_limit=40)),
        (6, engine.Options(round_limit=6)),
        (2, engine.Options(size=5, anchor_points=("c3",), round_limit=40)),
        (6, engine.Options(size=15, teams=3, round_limit=4)),
        (2, engine.Options(size=11, round_limit=10)),
    ],
)
def test_the_renderer_draws_the_field_and_the_table(players, options, monkeypatch) -> None:
    state = engine.new_game(5, players, options)
    rng = random.Random(5)
    for enabled in (False, True):
        monkeypatch.setattr(colour, "ENABLED", enabled)
        text = render.board(
            codec.view_to_proto(engine.view(state, 0)), header_for(engine, "shen", state, 0)
        )
        assert "Clan 1" in text
    monkeypatch.setattr(colour, "ENABLED", False)
    steps = set()
    seen = {"[": False, "(": False, "avatar": False, "hand": False}
    while True:
        for viewer in (0, None):
            view = codec.view_to_proto(engine.view(state, viewer))
            text = render.board(view, header_for(engine, "shen", state, viewer))
            lines = text.splitlines()
            assert max(len(line) for line in lines) <= 100, "wider than 100 columns"
            labels = [label for x in range(27) for label in (chr(65 + x), chr(97 + x))]
            assert lines[0].split() == labels[: 2 * options.size + 1]
            assert all(f"Clan {i + 1}" in text for i in range(players))
            for anchor in view.anchor_points:
                held = anchor.HasField("holder")
                assert (f"#{anchor.holder + 1}" if held else "#-") in text
            for stone in view.realm_stones:
                assert f"[{stone.seat + 1}]" in text and f"stone {stone.vertex}" in text
                seen["["] = True
            for counter in view.shen_counters:
                assert f"({counter.seat + 1})" in text
                seen["("] = True
            for avatar in view.avatars:
                assert f"  {avatar.location:<4}Clan {avatar.owner + 1}" in text
                if avatar.spirit:
                    assert f"{{{avatar.owner + 1}}}" in text
                seen["avatar"] = True
            if viewer is None:
                assert "Your hand" not in text
            else:
                assert f"Your hand ({len(view.hand)})" in text
                seen["hand"] = seen["hand"] or bool(view.hand)
            steps.add(view.step)
        if engine.outcome(state) is not None:
            assert "game over" in text
            break
        (seat,) = engine.to_act(state)
        engine.apply(state, seat, rng.choice(engine.legal_moves(state, seat)))
    assert all(seen.values()), seen
    assert {pb.STEP_PLACE_REALM_STONE, pb.STEP_CLAIM_MOVE_AND_ATTACK, pb.STEP_OVER} <= steps


def test_the_renderer_draws_a_hand_made_position() -> None:
    from tests.shen.helpers import clear_field, put_avatar, put_counters, set_hand, started

    state = started()
    clear_field(state)
    put_counters(state, 0, "D3", "E4")
    put_counters(state, 1, "F6")
    put_avatar(state, 0, "ember_warrior", "d3", ready=False, items=["ember_flame_blade"])
    put_avatar(state, 1, "tide_spirit_of_mist", "F6")
    put_avatar(state, 1, "tide_guard", "a1")
    state.claims[engine.parse_move("claim a1").space] = 1
    set_hand(state, 0, "ember_scout", "ember_scout", "ember_fireball")
    text = render.board(
        codec.view_to_proto(engine.view(state, 0)), header_for(engine, "shen", state, 0)
    )
    lines = text.splitlines()
    row3 = next(i for i, line in enumerate(lines) if line.startswith("  3 ") and "|" in line)
    assert "1Warri z" in lines[row3]  # Exhausted
    assert "+1" in lines[row3 + 1]
    row1 = next(i for i, line in enumerate(lines) if line.startswith("  1 ") and "|" in line)
    assert "2Guard" in lines[row1] and "#2" in lines[row1 + 1]
    assert "{2}" in text and "(1)" in text and "[1]" in text and "[2]" in text
    assert "Ember Scout (1) x2" in text and "Fireball (2)" in text
    assert "anchor points a1" in text
    assert "melee 3 defence 1" in text and "items: Flame Blade" in text
