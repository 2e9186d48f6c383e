"""Res Arcana Duo's codec (engine <-> protobuf), what the protos show each seat, and the
command-line renderer.

Every legal move of seeded random games round-trips through its proto; every view
converts; malformed protos are refused with MalformedMove. The leak tests read the proto
views of every seat and of a spectator, and a real in-process service's WatchGame
streams, GetHistory and GetGame as each seat, and check them against the engine's leak
rules (``tests/resarcana/helpers.py``): no hand but the caller's, no rival draft or
secret Mage choice, no draw pile's or Monument deck's contents, no Monument looked at by
someone else, no seed; and the secret moves (``keep``, ``mage``, ``return``) reach only
the seat that made them.
"""

from __future__ import annotations

import asyncio
import copy
import random
import re

import grpc
import pytest
from google.protobuf import text_format
from tabletop.common.v1 import game_pb2
from tabletop.resarcana.v1 import resarcana_pb2 as pb

from client.api import FINISHED, GameClient
from client.render import resarcana as render
from services.kit import wire
from services.kit.engine import BadOptions, MalformedMove
from services.kit.games import event_dict
from services.kit.testing import random_game_count
from services.resarcana import codec
from services.resarcana import engine as E
from services.resarcana.engine.content import CONTENT
from tests.codec_checks import assert_every_kind_round_trips, assert_round_trips
from tests.leaks import check_seat_outputs, follow, views_now
from tests.resarcana.helpers import known_slugs, leak_check, named_in, proto_text
from tests.support import service_in_process

CONFIGURATIONS = {
    "first_game": E.Options(setup="first_game"),
    "draft": E.Options(),
    "draft_collect_in_turn_order": E.Options(collect_in_turn_order=True, places="random"),
}
GAMES = random_game_count(6)
SEATS = (0, 1, None)
SECRET = {E.Keep, E.ChooseMage, E.Return}

# One move of every kind, in the engine's text forms (services/resarcana/README.md).
EVERY_KIND = [
    "keep gnosis",
    "mage smith",
    "item research",
    "gain calm",
    "option 2",
    "take white-swan",
    "done",
    "place crucible",
    "claim mystic-monastery",
    "claim deck",
    "claim dwarven-forge",
    "discard gnosis",
    "power smith 2",
    "power research 1",
    "pass",
    "pay gold",
    "waive elan",
    "waive any",
    "turn white-swan",
    "straighten smith",
    "target dwarven-forge",
    "retrieve cultist",
    "return dark-temple",
    "return gnosis",
    "pile artifacts",
    "pile monuments",
    "monument dark-temple",
    "monument deck",
]


def random_states(options: E.Options, games: int = GAMES):
    """Every state of ``games`` seeded random games, with a seat to act and its moves."""
    for seed in range(games):
        state = E.new_game(seed, 2, options)
        chooser = random.Random(seed)
        while True:
            if E.outcome(state) is not None:
                yield state, None, []
                return
            seat = chooser.choice(E.to_act(state))
            moves = E.legal_moves(state, seat)
            yield state, seat, moves
            E.apply(state, seat, chooser.choice(moves))


# --- moves --------------------------------------------------------------------------------


def test_every_kind_has_a_case_and_round_trips():
    assert_every_kind_round_trips(
        E.parse_move, E.MOVE_TYPES, codec, pb.Move, render.move, EVERY_KIND
    )


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_every_legal_move_of_random_games_round_trips(name: str):
    kinds = set()
    for _, _, moves in random_states(CONFIGURATIONS[name]):
        for move in moves:
            assert_round_trips(codec, pb.Move, render.move, move)
            kinds.add(type(move))
    assert len(kinds) >= 14, sorted(k.__name__ for k in kinds)  # random play reaches most


MALFORMED = {
    "no decision": pb.Move(),
    "unknown artifact": pb.Move(keep=pb.Keep(artifact="philosophers-stone")),
    "empty artifact": pb.Move(place=pb.Place()),
    "artifact with a space": pb.Move(discard=pb.Discard(artifact="gnosis ")),
    "keep a Monument": pb.Move(keep=pb.Keep(artifact="dark-temple")),
    "choose an Artifact as Mage": pb.Move(mage=pb.ChooseMage(mage="gnosis")),
    "take a Magic Item's name as an item of the wrong kind": pb.Move(
        item=pb.ChooseItem(magic_item="smith")
    ),
    "place a Monument": pb.Move(place=pb.Place(artifact="dark-temple")),
    "retrieve a Mage": pb.Move(retrieve=pb.Retrieve(artifact="smith")),
    "return a Place of Power": pb.Move(return_card=pb.ReturnCard(card="dwarven-forge")),
    "target a Magic Item": pb.Move(target=pb.Target(component="research")),
    "take from a Magic Item": pb.Move(take=pb.Take(component="research")),
    "gain no essence": pb.Move(gain=pb.Gain()),
    "gain an unknown essence": pb.Move(gain=pb.Gain(essence=6)),
    "pay a negative essence": pb.Move(pay=pb.Pay(essence=-1)),
    "waive nothing": pb.Move(waive=pb.Waive()),
    "waive any false": pb.Move(waive=pb.Waive(any=False)),
    "waive no essence": pb.Move(waive=pb.Waive(essence=pb.ESSENCE_UNSPECIFIED)),
    "option 0": pb.Move(option=pb.ChooseOption(option=0)),
    "option 10": pb.Move(option=pb.ChooseOption(option=10)),
    "option negative": pb.Move(option=pb.ChooseOption(option=-2)),
    "power 0": pb.Move(power=pb.UsePower(component="smith", power=0)),
    "power 3 of a two-power Mage": pb.Move(power=pb.UsePower(component="smith", power=3)),
    "power of a component without powers": pb.Move(
        power=pb.UsePower(component="cursed-peacock-idol", power=1)
    ),
    "power of nothing": pb.Move(power=pb.UsePower(power=1)),
    "no pile": pb.Move(pile=pb.ChoosePile()),
    "unknown pile": pb.Move(pile=pb.ChoosePile(pile=7)),
    "claim nothing": pb.Move(claim=pb.Claim()),
    "claim deck false": pb.Move(claim=pb.Claim(deck=False)),
    "claim an Artifact": pb.Move(claim=pb.Claim(component="gnosis")),
    "claim an unknown Monument": pb.Move(claim=pb.Claim(component="stonehenge")),
    "gain a Place of Power as Monument": pb.Move(
        monument=pb.GainMonument(monument="dwarven-forge")
    ),
    "monument nothing": pb.Move(monument=pb.GainMonument()),
    "monument deck false": pb.Move(monument=pb.GainMonument(deck=False)),
    "a long name": pb.Move(turn=pb.Turn(component="x" * 100_000)),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_malformed_moves_are_refused(name: str):
    with pytest.raises(MalformedMove) as refused:
        codec.move_from_proto(MALFORMED[name])
    assert len(refused.value.message) < 200  # never echoes a long input back


def test_options():
    assert codec.options_from_proto(pb.Options()) == E.Options()
    chosen = pb.Options(
        setup=pb.SETUP_FIRST_GAME,
        places=pb.PLACES_RANDOM,
        victory_points=12,
        first_player=1,
        collect_in_turn_order=True,
        round_limit=0,
    )
    assert codec.options_from_proto(chosen) == E.Options(
        setup="first_game",
        places="random",
        victory_points=12,
        first_player=1,
        collect_in_turn_order=True,
        round_limit=0,
    )
    assert codec.options_from_proto(pb.Options(places=pb.PLACES_AMBER)).places == "amber"
    assert codec.options_from_proto(pb.Options(setup=pb.SETUP_DRAFT)).setup == "draft"
    assert codec.options_from_proto(pb.Options(first_player=0)).first_player == 0
    # The round limit is a house rule, opt-in: unset means none, as in the engine.
    assert codec.options_from_proto(pb.Options()).round_limit == 0 == E.Options().round_limit
    assert codec.options_from_proto(pb.Options(round_limit=20)).round_limit == 20
    for bad in (
        pb.Options(setup=9),
        pb.Options(places=-1),
        pb.Options(victory_points=-1),
        pb.Options(first_player=2),
        pb.Options(round_limit=-5),
    ):
        with pytest.raises(BadOptions):
            codec.options_from_proto(bad)


# --- views and what they show ---------------------------------------------------------------


def card_ids(cards) -> list[str]:
    return [c.id for c in cards]


def check_proto_view(state: E.State, message: pb.View, seat: int | None) -> None:
    """The proto view shows ``seat`` its own secrets and nothing else hidden."""
    text = proto_text(message)
    assert "rng" not in text.lower() and "seed" not in text.lower()
    leaked = named_in(text) - known_slugs(state, seat)
    assert not leaked, f"the proto view for {seat} names {sorted(leaked)}"
    assert message.HasField("viewer") == (seat is not None)
    for player, me in zip(message.players, state.seats, strict=True):
        assert player.hand_count == len(me.hand) and player.deck_count == len(me.deck)
        assert card_ids(player.discard) == [CONTENT[c].slug for c in me.discard]
        assert [c.card.id for c in player.components] == [CONTENT[c].slug for c in me.components()]
    if seat is None:
        for own in ("hand", "draft_offer", "draft_kept", "draft_given", "mage_options"):
            assert not getattr(message, own), f"a spectator sees a {own}"
        assert not message.HasField("mage_choice") and not message.looking
        return
    me = state.seats[seat]
    assert card_ids(message.hand) == [CONTENT[c].slug for c in sorted(me.hand)]
    assert sorted(card_ids(message.draft_offer)) == sorted(CONTENT[c].slug for c in me.draft_offer)
    assert card_ids(message.mage_options) == [CONTENT[c].slug for c in me.mage_options]
    if me.mage_choice >= 0 and me.mage < 0:
        assert message.mage_choice.id == CONTENT[me.mage_choice].slug
    else:
        assert not message.HasField("mage_choice")


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_every_view_converts_and_shows_each_seat_only_what_it_may_see(name: str):
    for state, _, _ in random_states(CONFIGURATIONS[name]):
        for seat in SEATS:
            seen = E.view(state, seat)
            leak_check(state, seen, seat)
            message = codec.view_to_proto(seen)
            assert pb.View.FromString(message.SerializeToString()) == message
            check_proto_view(state, message, seat)
            assert len(message.players) == 2


def test_the_leak_checks_read_the_text_format_writes():
    """proto_text, which the leak checks below search, has the lines text_format writes (a
    map's entries, an event's data, in another order; whole numbers without ".0"): every
    seat's view every tenth decision of a game, and a turn (its events as the service
    sends them) at every decision."""

    def lines(text: str) -> list[str]:  # a whole number is "1.0" in one, "1" in the other
        return sorted(re.sub(r"(\d)\.0$", r"\1", line) for line in text.splitlines())

    compared = 0
    for decision, (state, seat, moves) in enumerate(
        random_states(CONFIGURATIONS["draft"], games=1)
    ):
        if decision % 10 == 0 or seat is None:
            for viewer in SEATS:
                message = codec.view_to_proto(E.view(state, viewer))
                assert proto_text(message) == text_format.MessageToString(message)
        if seat is None:
            break
        events = E.apply(copy.deepcopy(state), seat, moves[0])
        compared += 1
        turn = game_pb2.TurnRecord(
            version=compared,
            seat=seat,
            move_text=str(moves[0]),
            events=[wire.event(event_dict(e)) for e in events],
        )
        assert lines(proto_text(turn)) == lines(text_format.MessageToString(turn))
    assert compared > 100


def test_the_view_carries_the_printed_facts_of_every_card_it_names():
    state = E.new_game(11, 2, E.Options(setup="first_game", places="amber"))
    message = codec.view_to_proto(E.view(state, 0))
    assert message.phase == pb.PHASE_MAGIC_ITEM and message.victory_points_to_win == 7
    assert message.monument_deck_count == 5 and len(message.monuments) == 2
    assert all(c.cost.essences.gold == 4 and c.kind == pb.CARD_KIND_MONUMENT
               for c in message.monuments)  # fmt: skip
    forge = next(c for c in message.places_of_power if c.id == "dwarven-forge")
    assert forge.name == "Dwarven Forge" and forge.kind == pb.CARD_KIND_PLACE_OF_POWER
    assert forge.victory_points == 1 and forge.victory_points_per_essence == 1
    assert (forge.cost.essences.gold, forge.cost.essences.elan, forge.cost.essences.death) == (
        3,
        2,
        2,
    )
    assert list(forge.powers) == [
        "turn + 1 gold + 1 elan -> place 1 gold here",
        "2 death -> gain 1 gold",
    ]
    items = {c.id: c for c in message.magic_items}
    assert items["calm-elan"].collect == "1 calm / 1 elan"
    assert items["artisans-robe"].discount == "1 artifact"
    assert not items["research"].HasField("cost")
    mage = message.players[0].components[0]
    assert mage.card.kind == pb.CARD_KIND_MAGE and not mage.turned
    assert [p.pool for p in message.players] == [pb.Essences(elan=1, life=1, calm=1, death=1,
                                                             gold=1)] * 2  # fmt: skip
    hand = {c.id: c for c in message.hand}
    assert len(hand) == 3
    for card in hand.values():
        assert card.kind == pb.CARD_KIND_ARTIFACT and card.HasField("cost")
    swan = codec.view_to_proto(E.view(state, None))
    assert not swan.hand  # a spectator
    dragon = codec._card_by_id(CONTENT.by_slug["fairy-dragon"])
    assert list(dragon.types) == [pb.CARD_TYPE_DRAGON, pb.CARD_TYPE_CREATURE]
    circle = codec._card_by_id(CONTENT.by_slug["squared-circle"])
    assert circle.collect == "1 any !gold"
    opus = codec._card_by_id(CONTENT.by_slug["magnum-opus"])
    assert opus.cost.any == 3 and list(opus.cost.any_excludes) == [pb.ESSENCE_GOLD]


# --- over a real service: views, WatchGame and GetHistory as every seat ---------------------

# Moves the driver prefers when listed, so that the Brass Bust's secret returns are played.
PREFERRED = ("place brass-bust", "power brass-bust 1")


async def _drive(client: GameClient, game, rng: random.Random) -> int:
    """Random legal moves for whichever seat is to act, preferring PREFERRED and taking
    each pile in turn when the Brass Bust asks; returns the final version."""
    piles = ["pile monuments", "pile artifacts"]
    while True:
        state = await client.get(game.game_id)
        if state.game.status == FINISHED:
            return state.game.version
        seat = rng.choice(list(state.game.to_act))
        listed = await client.moves(game.game_id, game.tokens[seat])
        texts = [render.move(m) for m in listed.moves]
        wanted = [t for t in (*PREFERRED, piles[0]) if t in texts]
        if wanted:
            text = wanted[0]
            if text == piles[0]:
                piles.reverse()
        else:
            text = rng.choice(texts)
        reply = await client.submit(
            game.game_id,
            game.tokens[seat],
            listed.moves[texts.index(text)],
            expected_version=listed.game.version,
            request_id=f"{seat}-{listed.game.version}",
        )
        assert reply.turn.move_text == text  # the mover sees its own move


@pytest.mark.parametrize(
    ("setup", "seed"),
    [("draft", 7_301_927_448_113), ("first_game", 5_550_123_987_001)],
)
async def test_no_output_path_of_the_service_shows_a_seat_what_it_may_not_see(setup, seed):
    options = E.Options(setup=setup)
    proto_options = pb.Options(setup=pb.SETUP_FIRST_GAME if setup == "first_game" else 0)
    async with service_in_process("resarcana") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("resarcana", channel)
            game = await client.create(2, seed=seed, options=proto_options)
            tokens = [*game.tokens, None]
            streams = [client.watch(game.game_id, token) for token in tokens]
            firsts = [await s.read() for s in streams]
            final = await _drive(client, game, random.Random(seed % 1000))
            watched = [
                [first, *await asyncio.wait_for(follow(s, final), 60)]
                for first, s in zip(firsts, streams, strict=True)
            ]
            for s in streams:
                s.cancel()
            histories = [await client.history(game.game_id, token) for token in tokens]
            finals = [await client.get(game.game_id, token) for token in tokens]
            # A watcher resuming after the draft's first keeps is told of them, not shown.
            resumed = client.watch(game.game_id, None, from_version=1)
            late = await asyncio.wait_for(follow(resumed, final), 60)
            resumed.cancel()

    # Replay the game in the engine: the truth each output is checked against. The
    # spectator's history has no text for secret moves; the mover's own history has.
    own = {s: {t.version: t for t in histories[s]} for s in (0, 1)}
    state = E.new_game(seed, 2, options)
    views = {0: _views(state)}
    turns = {}
    secret_seen: set[type] = set()
    for turn in histories[2]:
        text = own[turn.seat][turn.version].move_text
        move = E.parse_move(text)
        if type(move) in SECRET:
            secret_seen.add(type(move))
            assert turn.move_text == "", f"a spectator sees the secret move {text!r}"
        else:
            assert turn.move_text == text
        drafted = state.options.setup == "draft"
        before = {s: known_slugs(state, s, drafted) for s in SEATS}
        events = E.apply(state, turn.seat, move)
        after = {s: known_slugs(state, s, drafted) for s in SEATS}
        turns[turn.version] = (turn.seat, move, events, _allowed(before, after, events))
        views[turn.version] = _views(state)
    assert E.outcome(state) is not None and len(turns) == final
    expected_secrets = SECRET if setup == "draft" else {E.Return}
    assert secret_seen >= expected_secrets, f"the game played no {expected_secrets - secret_seen}"

    for index, seat in enumerate(SEATS):
        check_seat_outputs(
            seed=seed,
            final=final,
            final_reply=finals[index],
            history=histories[index],
            updates=watched[index],
            views={version: per_seat[index] for version, per_seat in views.items()},
            check_turn=lambda turn, seat=seat: check_turn(turn, turns[turn.version], seat),
        )
    # A spectator catching up from a version reads the same turns as its history.
    assert [u.turn for u in late] == list(histories[2][1:])
    assert late[-1].view == views[final][2][0]


def _views(state: E.State) -> list:
    return views_now(state, SEATS, E.view, leak_check, codec.view_to_proto, check_proto_view)


def _allowed(before: dict, after: dict, events: list) -> dict:
    """Per seat, what a turn may name: what the seat knew before or after it, plus the
    cards discarded face up and the cards it was shown (drawn, looked at) in between."""
    tucked = set().union(
        *(named_in(e.text + repr(dict(e.data))) for e in events if e.kind == "discard")
    )
    allowed = {s: before[s] | after[s] | tucked for s in SEATS}
    for e in events:
        if e.kind in ("draw", "look") and e.to is not None and len(e.to) == 1:
            (looker,) = e.to
            allowed[looker] = allowed[looker] | named_in(repr(dict(e.data)))
    return allowed


def check_turn(turn, logged, seat: int | None) -> None:
    mover, move, events, allowed = logged
    assert turn.seat == mover
    if seat == mover or type(move) not in SECRET:
        assert turn.move_text == str(move)
    else:
        assert turn.move_text == "", f"{str(move)!r} is shown to seat {seat}"
    visible = [e for e in events if e.visible_to(seat)]
    expected = [wire.event({k: v for k, v in event_dict(e).items() if k != "to"}) for e in visible]
    assert list(turn.events) == expected, "a turn shows events this seat may not see"
    leaked = named_in(proto_text(turn)) - allowed[seat]
    assert not leaked, f"turn {turn.version} shows seat {seat} {sorted(leaked)}"


async def test_refusals_do_not_depend_on_the_rivals_hidden_cards():
    """During the draft, keeping a card that is not in your offer is refused the same way
    whether or not it is in the rival's offer (or anywhere else hidden)."""
    async with service_in_process("resarcana") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("resarcana", channel)
            game = await client.create(2, seed=99)
            mine = {
                render.move(m) for m in (await client.moves(game.game_id, game.tokens[0])).moves
            }
            answers = set()
            for artifact in CONTENT.artifacts:
                text = f"keep {CONTENT[artifact].slug}"
                if text in mine:
                    continue
                with pytest.raises(grpc.aio.AioRpcError) as refused:
                    await client.submit(game.game_id, game.tokens[0], codec.move_to_proto(
                        E.parse_move(text)))  # fmt: skip
                answers.add((refused.value.code(), refused.value.details()))
            assert len(answers) == 1
            ((code, details),) = answers
            assert code == grpc.StatusCode.FAILED_PRECONDITION
            assert not named_in(details)


# --- the renderer ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_the_renderer_draws_every_view_of_a_random_game(name: str):
    for state, _, moves in random_states(CONFIGURATIONS[name], games=2):
        finished = E.outcome(state) is not None
        status = game_pb2.GAME_STATUS_FINISHED if finished else game_pb2.GAME_STATUS_IN_PROGRESS
        header = game_pb2.GameHeader(status=status)
        for seat in SEATS:
            text = render.board(codec.view_to_proto(E.view(state, seat)), header)
            assert "Player 1" in text and "Player 2" in text and "Monuments" in text
            assert ("(you)" in text) == (seat is not None)
            if seat is not None and state.seats[seat].hand:
                assert "Your hand" in text
            assert max(len(line) for line in text.splitlines()) <= 100
            assert not named_in(text) - known_slugs(state, seat)
        for move in moves:
            assert render.move(codec.move_to_proto(move)) == str(move)
    assert render.move(pb.Move()) == "?"
    assert render.move(pb.Move(claim=pb.Claim())) == "claim ?"
