"""Move labels and the board as text: what a client with no renderer of its own shows.

ListMoves' ``labels[i]`` is the text form of ``moves[i]``, exactly as GetHistory shows the
move once it is played; GetGame's ``board_text`` (on request) is the command line's board
drawn from the caller's own view, without colour codes. Over real gRPC for every game in
the service list; and the renderers alone over the views of random games (every seat and
the spectator), so that drawing a board does not fail a call and shows nothing the caller
may not see.
"""

from __future__ import annotations

import asyncio
import copy
import importlib
import random
from collections.abc import Callable
from typing import Any

import grpc
import pytest

from client import render
from client.api import FINISHED, GameClient
from client.render import colour
from services import registry
from services.kit import wire
from services.kit.games import Snapshot
from services.kit.testing import random_game_count
from services.shrine.engine.content import CONTENT as SHRINE
from tests.glow.helpers import _twin as glow_twin
from tests.resarcana.helpers import known_slugs, named_in
from tests.shen.helpers import hidden_changed
from tests.shrine.test_codec import secret_code_ids
from tests.support import service_in_process

GAMES = registry.names()
ESC = "\x1b"
FIRST_CHOICES = 40  # of the first ListMoves, how many moves are each played in a game of their own
OPENING = 30  # versions from the start at which every view is drawn


def codec_of(name: str) -> Any:
    return importlib.import_module(f"services.{name}.codec")


def options(name: str, players: int) -> Any:
    engine = registry.by_name(name).engine()
    if name == "shen" and players >= 4:
        # Random play with 4 or more can reach a position nobody can change any more (see
        # the command line's BOT_OPTIONS): the house round limit ends those games.
        return engine.Options(round_limit=40)
    return engine.Options()


def draw(name: str, state: Any, players: int, viewer: int | None) -> str:
    """The board text the service sends ``viewer`` for ``state``."""
    engine = registry.by_name(name).engine()
    header = wire.header(
        Snapshot(
            game_id="g",
            game_type=name,
            version=0,
            players=players,
            seat_names=tuple(engine.GAME.seat_names(players)),
            to_act=tuple(engine.to_act(state)),
            outcome=engine.outcome(state),
            created_at=0.0,
            updated_at=0.0,
            viewer=viewer,
            view=None,
        )
    )
    view = codec_of(name).view_to_proto(engine.view(state, viewer))
    return render.plain_board(name, view, header)


# --- what each game hides, checked on the text ------------------------------------------
# hidden(state, rules, viewer, text, players): ``text``, drawn for ``viewer``, shows nothing
# hidden from ``rules``. The tests call it with rules == viewer; the control holds a seat's
# text to the spectator's rules, to show the check catches a seat's own secrets.


def _channeling_twin(state: Any, rules: int | None) -> Any:
    # The Channeling hides only the deck (services/channeling/engine/view.py).
    twin = copy.deepcopy(state)
    twin.deck.reverse()
    twin.rng.seed(12345)
    return twin


def _same_as_twin(make_twin: Callable[[Any, int | None], Any], name: str):
    def check(state: Any, rules: int | None, viewer: int | None, text: str, players: int):
        twin_text = draw(name, make_twin(state, rules), players, viewer)
        assert twin_text == text, f"the {name} text changes with what {rules} may not see"

    return check


def _shen(state: Any, rules: int | None, viewer: int | None, text: str, players: int) -> None:
    with hidden_changed(state, rules):  # other hands, every deck, the generator
        assert draw("shen", state, players, viewer) == text, "the text shows a hidden card"


def _resarcana(state: Any, rules: int | None, viewer: int | None, text: str, players: int):
    leaked = named_in(text) - known_slugs(state, rules)
    assert not leaked, f"the text names {sorted(leaked)}, hidden from {rules}"


def _shrine(state: Any, rules: int | None, viewer: int | None, text: str, players: int) -> None:
    for code_id in secret_code_ids(state, rules):  # the other's Code card, those in the box
        assert code_id not in text, f"the text shows the Code card {code_id}"
    # Shape cards named: the completed ones, the one being completed, and the seat's own.
    allowed = {c for p in state.players for c in p.completed}
    if state.shape >= 0:
        allowed.add(state.shape)
    if rules is not None:
        allowed |= set(state.players[rules].hand)
        if state.drawn and state.current == rules:
            allowed |= set(state.drawn)
    for shape in set(SHRINE.shapes) - allowed:
        assert f"#{shape} " not in text, f"the text shows the hidden Shape card {shape}"


HIDDEN = {
    "channeling": _same_as_twin(_channeling_twin, "channeling"),
    "shrine": _shrine,
    "resarcana": _resarcana,
    "glow": _same_as_twin(glow_twin, "glow"),
    "shen": _shen,
}


def test_every_game_in_the_list_has_its_hidden_facts_checked() -> None:
    assert set(HIDDEN) == set(GAMES)


def random_positions(name: str, players: int, seed: int):
    """(version, state) after every move of a random game to its end; the state is live."""
    engine = registry.by_name(name).engine()
    state = engine.new_game(seed, players, options(name, players))
    rng = random.Random(seed)
    version = 0
    yield version, state
    while engine.outcome(state) is None:
        seat = rng.choice(engine.to_act(state))
        engine.apply(state, seat, rng.choice(engine.legal_moves(state, seat)))
        version += 1
        yield version, state


# --- the renderers alone ----------------------------------------------------------------


def drawn_positions(name: str, players: int, seed: int):
    """(version, state) of a random game to its end, the state live: every position of the
    opening, then one in ``2 * players`` (each seat has had about two decisions), and the
    end."""
    engine = registry.by_name(name).engine()
    for version, state in random_positions(name, players, seed):
        if version < OPENING or version % (2 * players) == 0 or engine.outcome(state):
            yield version, state


@pytest.mark.parametrize("name", GAMES)
def test_every_view_of_random_games_draws_as_plain_text_showing_nothing_hidden(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As a service runs (no terminal); the gRPC test below runs one as if on a terminal.
    monkeypatch.setattr(colour, "ENABLED", False)
    info = registry.by_name(name).engine().GAME
    # The fewest players in a few games, the most in one (the longest games).
    configurations = [(info.min_players, random_game_count(2, 4))]
    if info.max_players != info.min_players:
        configurations.append((info.max_players, 1))
    drawn = 0
    for players, games in configurations:
        for seed in range(games):
            for _, state in drawn_positions(name, players, seed):
                for viewer in [*range(players), None]:
                    text = draw(name, state, players, viewer)
                    assert text.strip(), "an empty board"
                    assert ESC not in text, "a colour code in the plain text"
                    HIDDEN[name](state, viewer, viewer, text, players)
                    drawn += 1
    assert drawn > 100


@pytest.mark.parametrize("name", [n for n in GAMES if n != "channeling"])
def test_control_the_hidden_check_catches_a_seats_own_secret_shown_to_the_spectator(
    name: str,
) -> None:
    # The Channeling hides nothing from the spectator that a seat sees: no control there.
    # Glow's only such secret is a face-down spell, cast in about 4 random games in 10
    # with 3 players.
    players = 3 if name == "glow" else registry.by_name(name).engine().GAME.min_players
    for seed in range(20):
        for _, state in drawn_positions(name, players, seed):
            for seat in range(players):
                text = draw(name, state, players, seat)
                try:
                    HIDDEN[name](state, None, seat, text, players)
                except AssertionError:
                    return
    raise AssertionError(f"no seat's {name} text ever failed the spectator's check")


def test_control_the_plain_text_check_would_see_colour(monkeypatch: pytest.MonkeyPatch) -> None:
    name, players = "shen", 2
    state = next(iter(random_positions(name, players, 1)))[1]
    engine = registry.by_name(name).engine()
    view = codec_of(name).view_to_proto(engine.view(state, 0))
    header = wire.header(Snapshot("g", name, 0, players, ("a", "b"), (0,), None, 0.0, 0.0, 0, None))
    monkeypatch.setattr(colour, "ENABLED", True)
    assert ESC in render.board(name, view, header)
    assert ESC not in render.plain_board(name, view, header)
    with colour.plain():
        assert not colour.enabled()
    assert colour.enabled()  # the block ends, the terminal's setting is back


# --- over gRPC ----------------------------------------------------------------------------


@pytest.fixture(params=GAMES)
async def svc(request):
    async with service_in_process(request.param) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            yield running, GameClient(request.param, channel)


def min_players(name: str) -> int:
    return registry.by_name(name).engine().GAME.min_players


async def played_text(client: GameClient, game_id: str, token: str, before: int) -> str:
    """The text GetHistory shows ``token``'s seat for the move played at ``before``."""
    (turn,) = await client.history(game_id, token, after=before)
    return turn.move_text


async def test_labels_are_the_moves_text_forms_as_history_shows_them_in_the_same_order(svc):
    running, client = svc
    name = running.name
    codec = codec_of(name)
    players = min_players(name)
    seed = 31
    game = await client.create(players, seed=seed)
    spectator = await client.call("ListMoves", None, game_id=game.game_id)
    assert not spectator.moves and not spectator.labels

    # The first decision: each listed move played in a game of its own from the same seed.
    start = await client.get(game.game_id)
    seat = start.game.to_act[0]
    listed = await client.moves(game.game_id, game.tokens[seat])
    assert len(listed.labels) == len(listed.moves) > 0
    picks = random.Random(seed).sample(
        range(len(listed.moves)), min(FIRST_CHOICES, len(listed.moves))
    )
    for i in picks:
        twin = await client.create(players, seed=seed)
        await client.submit(twin.game_id, twin.tokens[seat], listed.moves[i], expected_version=0)
        assert await played_text(client, twin.game_id, twin.tokens[seat], 0) == listed.labels[i]

    # Then a whole random game: at every decision, labels and moves pair one to one, and
    # the move played reads in the history as its label read.
    rng = random.Random(seed)
    state = start
    played = ordered = 0
    while state.game.status != FINISHED:
        seat = rng.choice(list(state.game.to_act))
        token = game.tokens[seat]
        listed = await client.moves(game.game_id, token)
        assert len(listed.labels) == len(listed.moves)
        for move, label in zip(listed.moves, listed.labels, strict=True):
            assert str(codec.move_from_proto(move)) == label
        # Each choice reads differently (the text form is the move's identity in the log).
        assert len(set(listed.labels)) == len(listed.labels)
        ordered += len(listed.labels) > 1  # a decision where a wrong order would show
        for other in set(range(players)) - set(listed.game.to_act):
            idle = await client.moves(game.game_id, game.tokens[other])
            assert not idle.moves and not idle.labels
        i = rng.randrange(len(listed.moves))
        await client.submit(
            game.game_id, token, listed.moves[i], expected_version=listed.game.version
        )
        before = listed.game.version
        assert await played_text(client, game.game_id, token, before) == listed.labels[i]
        played += 1
        state = await client.get(game.game_id)
    assert played == state.game.version
    assert ordered > 0


async def test_board_text_is_the_callers_view_drawn_plainly_only_when_asked(svc, monkeypatch):
    running, client = svc
    name = running.name
    # As if the service ran on a terminal: plain text must not depend on where it runs.
    monkeypatch.setattr(colour, "ENABLED", True)
    players = min_players(name)
    game = await client.create(players, seed=47)
    rng = random.Random(47)
    tokens: list[str | None] = [*game.tokens, None]
    checked = 0
    while True:
        reply = await client.get(game.game_id)
        assert reply.board_text == "", "board_text only when asked"
        over = reply.game.status == FINISHED
        if over or reply.game.version % 5 == 0:
            async with running.manager.locked(game.game_id) as live:
                state = copy.deepcopy(live.state)
            for seat, token in enumerate(tokens):
                viewer = seat if token is not None else None
                asked = await client.call("GetGame", token, game_id=game.game_id, board_text=True)
                text = asked.board_text
                assert text.strip() and ESC not in text
                # Drawn from the view this same answer carries: nothing beyond it.
                assert text == render.plain_board(name, asked.view, asked.game)
                HIDDEN[name](state, viewer, viewer, text, players)
                checked += 1
        if over:
            break
        seat = rng.choice(list(reply.game.to_act))
        listed = await client.moves(game.game_id, game.tokens[seat])
        await client.submit(game.game_id, game.tokens[seat], rng.choice(list(listed.moves)))
    assert checked >= 2 * len(tokens)


async def test_the_command_line_lists_and_plays_moves_by_their_labels(capsys) -> None:
    from client import __main__ as cli

    async def run(*argv: str) -> str:
        await asyncio.to_thread(cli.main, ["--target", running.address, *argv])
        return capsys.readouterr().out

    async with service_in_process("channeling") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("channeling", channel)
            game = await client.create(2, seed=3)
            seat = (await client.get(game.game_id)).game.to_act[0]
            token = game.tokens[seat]
            listed = await client.moves(game.game_id, token)
            printed = await run("moves", "channeling", game.game_id, f"--token={token}")
            assert printed.splitlines() == [f"{i:4}  {t}" for i, t in enumerate(listed.labels)]
            label = listed.labels[len(listed.labels) // 2]
            await run("play", "channeling", game.game_id, f"--token={token}", label)
            assert await played_text(client, game.game_id, token, 0) == label
