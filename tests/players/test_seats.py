"""Seats belong to players, over real gRPC: a player's token takes a seat with CreateGame
or JoinGame and acts for it on every call, from any connection; it never acts for a
seat it does not hold; one seat per player per table unless the table allows several;
ListGames mine; the per-player limits; the seats kept in the store across a restart.
Seat tokens keep working beside them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import secrets
import sqlite3
import time

import grpc
import jwt
import pytest
from tabletop.common.v1 import table_pb2

from client.api import FINISHED, IN_PROGRESS, WAITING, GameClient
from services import registry
from services.kit.metrics import LIMITS_HIT
from services.kit.players import StaticKey, Verifier
from services.kit.players import seats as holders
from services.kit.players.seats import PlayerPolicy
from services.kit.status import error_info
from tests.players.support import AUDIENCE, ISSUER, Signer
from tests.support import service_in_process

OPEN = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_OPEN)
MINE = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)
BOT = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_BOT, bot_level=table_pb2.BOT_LEVEL_EASY)

SIGNER = Signer.new("EdDSA", "seats-key")


def policy(**limits: int) -> PlayerPolicy:
    key = StaticKey(jwt.PyJWK(SIGNER.jwk()), kid=SIGNER.kid)
    return PlayerPolicy(Verifier(key, issuer=ISSUER, audience=AUDIENCE), **limits)


def token(sub: str, name: str) -> str:
    # Made at import, used through a long run of the suite: valid for a day.
    return SIGNER.token(sub=sub, name=name, exp=int(time.time()) + 86400)


# Ids of this run: a PostgreSQL store outlives it, and a player's listing must hold only
# this run's games.
RUN = secrets.token_hex(4)
ADA_ID, BEN_ID, CYD_ID = f"ada-{RUN}", f"ben-{RUN}", f"cyd-{RUN}"
ADA, BEN, CYD = token(ADA_ID, "Ada"), token(BEN_ID, "Ben"), token(CYD_ID, "Cyd")
POSTGRES = os.environ.get("TABLETOP_TEST_POSTGRES_URL", "")
STORES = [
    "memory",
    "sqlite",
    pytest.param(
        "postgres", marks=pytest.mark.skipif(not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL")
    ),
]


def store_url(store: str, tmp_path) -> str:
    return {
        "memory": "memory://",
        "sqlite": f"sqlite:///{tmp_path}/players.db",
        "postgres": POSTGRES,
    }[store]


@contextlib.asynccontextmanager
async def served(name: str = "channeling", store_url: str = "memory://", **options):
    options.setdefault("players", policy())
    async with service_in_process(name, store_url, **options) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            yield running, GameClient(name, channel)


async def refused(coro, code: grpc.StatusCode, reason: str):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await coro
    assert caught.value.code() == code, caught.value.details()
    info = error_info(caught.value)
    assert info is not None and info.reason == reason, (info, caught.value.details())
    return info


async def table_of_two(client: GameClient) -> str:
    """Ada creates a table with an open seat; Ben joins with his token alone."""
    created = await client.call("CreateGame", ADA, players=2, seats=[MINE, OPEN])
    game_id = created.game.game_id
    await client.join(game_id, "", token=BEN)
    return game_id


async def play_a_move(client: GameClient, game_id: str, rng: random.Random) -> int:
    """The seat to act moves with its player's token; returns its seat."""
    state = await client.get(game_id)
    seat = state.game.to_act[0]
    who = {0: ADA, 1: BEN}[seat]
    listed = await client.moves(game_id, who)
    await client.submit(game_id, who, rng.choice(list(listed.moves)), listed.game.version)
    return seat


@pytest.mark.parametrize("name", registry.names())
async def test_a_players_seats_show_its_id_and_name_to_everyone(name):
    async with served(name) as (_, client):
        players = registry.by_name(name).engine().GAME.min_players
        seats = [MINE] + [OPEN] * (players - 1)
        created = await client.call("CreateGame", ADA, players=players, seats=seats)
        game_id = created.game.game_id
        # The creator's seat is the player's, named by its token; a seat token too.
        assert created.game.seats[0].player_id == ADA_ID
        assert created.game.seats[0].player_name == "Ada"
        assert [t.seat for t in created.seat_tokens] == [0]
        joined = await client.join(game_id, "", token=BEN)
        assert joined.game.viewer == 1 and joined.game.seats[1].player_id == BEN_ID
        assert joined.game.seats[1].player_name == "Ben"
        # A spectator, the lobby and the player itself see the same ids.
        spectator = await client.get(game_id)
        assert not spectator.game.HasField("viewer")
        assert [s.player_id for s in spectator.game.seats][:2] == [ADA_ID, BEN_ID]
        lobby = await client.lobby()
        card = next(g for g in lobby.games if g.game_id == game_id)
        assert [s.player_id for s in card.seats][:2] == [ADA_ID, BEN_ID]
        mine = await client.get(game_id, ADA)
        assert mine.game.viewer == 0


async def test_a_player_plays_its_seat_from_any_connection_with_its_token_alone():
    rng = random.Random(7)
    async with served() as (running, client):
        game_id = await table_of_two(client)
        # A second device: another connection, the same player tokens, no seat token.
        async with grpc.aio.insecure_channel(running.address) as second:
            other = GameClient("channeling", second)
            for _ in range(6):
                state = await other.get(game_id)
                if state.game.status == FINISHED:
                    break
                seat = state.game.to_act[0]
                who = {0: ADA, 1: BEN}[seat]
                listed = await other.moves(game_id, who)
                assert listed.game.viewer == seat and listed.moves
                reply = await other.submit(game_id, who, rng.choice(list(listed.moves)))
                assert reply.game.viewer == seat
        history = await client.history(game_id, BEN)
        assert history and (await client.get(game_id, BEN)).game.viewer == 1


async def test_the_seat_token_of_a_players_seat_still_works():
    async with served() as (_, client):
        created = await client.call("CreateGame", ADA, players=2, seats=[MINE, OPEN])
        game_id = created.game.game_id
        seat_token = created.seat_tokens[0].token
        joined = await client.join(game_id, "Bo")  # anonymous, as before
        assert joined.game.seats[1].player_id == ""
        assert (await client.get(game_id, seat_token)).game.viewer == 0
        assert (await client.get(game_id, joined.seat_token.token)).game.viewer == 1


async def test_a_player_never_acts_for_a_seat_it_does_not_hold():
    rng = random.Random(3)
    async with served() as (_, client):
        game_id = await table_of_two(client)
        before = await client.get(game_id)
        to_act = before.game.to_act[0]
        stranger_moves = await client.moves(game_id, CYD)
        # A player with no seat here reads as a spectator does, and is offered nothing.
        assert not stranger_moves.game.HasField("viewer") and not stranger_moves.moves
        seated_moves = await client.moves(game_id, {0: ADA, 1: BEN}[to_act])
        move = seated_moves.moves[0]
        await refused(
            client.submit(game_id, CYD, move), grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN"
        )
        await refused(client.resign(game_id, CYD), grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN")
        # The seated player who is not to act cannot move for the one who is.
        waiting = {0: ADA, 1: BEN}[1 - to_act]
        await refused(
            client.submit(game_id, waiting, move),
            grpc.StatusCode.PERMISSION_DENIED,
            "NOT_YOUR_DECISION",
        )
        after = await client.get(game_id)
        assert after.game.version == before.game.version
        assert await play_a_move(client, game_id, rng) == to_act


async def test_control_a_player_acting_for_every_seat_is_caught(monkeypatch):
    """The guard switched off (a player holds every seat): the stranger's move passes,
    so the test above would fail."""
    async with served() as (_, client):
        game_id = await table_of_two(client)
        monkeypatch.setattr(
            holders, "held_by", lambda table, player_id: list(range(len(table.seats)))
        )
        before = (await client.get(game_id)).game
        move = (await client.moves(game_id, {0: ADA, 1: BEN}[before.to_act[0]])).moves[0]
        reply = await client.submit(game_id, CYD, move)
        assert reply.game.version == before.version + 1


async def test_one_seat_per_player_unless_the_table_allows_several():
    async with served() as (_, client):
        created = await client.call("CreateGame", ADA, players=2, seats=[MINE, OPEN])
        game_id = created.game.game_id
        before = await client.get(game_id)
        info = await refused(
            client.join(game_id, "", token=ADA),
            grpc.StatusCode.FAILED_PRECONDITION,
            "PLAYER_HAS_SEAT",
        )
        assert info.metadata["seat"] == "0"
        after = await client.get(game_id)
        assert after.game.version == before.game.version and after.game.status == WAITING
        # Two reserved seats for one player: refused, unless the table says so.
        await refused(
            client.call("CreateGame", ADA, players=2, seats=[MINE, MINE]),
            grpc.StatusCode.FAILED_PRECONDITION,
            "PLAYER_HAS_SEAT",
        )
        kitchen = await client.call(
            "CreateGame", ADA, players=2, seats=[MINE, OPEN], several_seats_per_player=True
        )
        joined = await client.join(kitchen.game.game_id, "", token=ADA)
        assert joined.game.status == IN_PROGRESS
        assert [s.player_id for s in joined.game.seats] == [ADA_ID, ADA_ID]
        # Ada holds both: her token acts for whichever is to act.
        to_act = joined.game.to_act[0]
        listed = await client.moves(kitchen.game.game_id, ADA)
        assert listed.game.viewer == to_act and listed.moves
        both = await client.call(
            "CreateGame", ADA, players=2, seats=[MINE, MINE], several_seats_per_player=True
        )
        assert [s.player_id for s in both.game.seats] == [ADA_ID, ADA_ID]


async def test_control_a_second_seat_passes_without_the_guard(monkeypatch):
    monkeypatch.setattr(holders, "may_join", lambda table, player: None)
    async with served() as (_, client):
        created = await client.call("CreateGame", ADA, players=2, seats=[MINE, OPEN])
        joined = await client.join(created.game.game_id, "", token=ADA)
        assert [s.player_id for s in joined.game.seats] == [ADA_ID, ADA_ID]


@pytest.mark.parametrize("store", STORES)
async def test_list_games_mine_lists_the_callers_games_as_its_seat_sees_them(store, tmp_path):
    async with served(store_url=store_url(store, tmp_path)) as (_, client):
        await refused(
            client.lobby(mine=True), grpc.StatusCode.UNAUTHENTICATED, "PLAYER_TOKEN_REQUIRED"
        )
        seat_token = (await client.create(2)).tokens[0]
        await refused(
            client.call("ListGames", seat_token, mine=True),
            grpc.StatusCode.UNAUTHENTICATED,
            "PLAYER_TOKEN_REQUIRED",
        )
        ours = await table_of_two(client)
        alone = (await client.call("CreateGame", ADA, players=2, seats=[MINE, OPEN])).game
        await client.call("CreateGame", CYD, players=2, seats=[MINE, OPEN])
        for _ in range(3):
            await client.create(2)
        ada = await client.call("ListGames", ADA, mine=True)
        assert [g.game_id for g in ada.games] == [alone.game_id, ours]
        assert all(g.viewer == 0 for g in ada.games)
        playing = ada.games[1]
        assert playing.status == IN_PROGRESS and playing.to_act
        ben = await client.call("ListGames", BEN, mine=True)
        assert [g.game_id for g in ben.games] == [ours] and ben.games[0].viewer == 1
        assert list(ben.games[0].to_act) == list(playing.to_act)
        # Pages: a token continues the same player's listing only.
        first = await client.call("ListGames", ADA, mine=True, page_size=1)
        assert [g.game_id for g in first.games] == [alone.game_id] and first.next_page_token
        second = await client.call(
            "ListGames", ADA, mine=True, page_size=1, page_token=first.next_page_token
        )
        assert [g.game_id for g in second.games] == [ours]
        await refused(
            client.call("ListGames", BEN, mine=True, page_size=1, page_token=first.next_page_token),
            grpc.StatusCode.INVALID_ARGUMENT,
            "BAD_PAGE_TOKEN",
        )
        # Leaving gives the seat back: the game is no longer Cyd's.
        cyd = (await client.call("ListGames", CYD, mine=True)).games[0]
        await client.leave(cyd.game_id, CYD)
        assert not (await client.call("ListGames", CYD, mine=True)).games


def limit_hits(limit: str) -> float:
    return LIMITS_HIT.labels("channeling", limit)._value.get()


@pytest.mark.parametrize("store", STORES)
async def test_per_player_limits_refuse_and_are_counted(store, tmp_path):
    # Players of this test alone: a PostgreSQL store keeps the other tests' tables.
    ada, ben, cyd = (token(f"{n}-{secrets.token_hex(4)}", n) for n in ("ada", "ben", "cyd"))
    limits = policy(games_per_player=2, waiting_per_player=1)
    async with served(store_url=store_url(store, tmp_path), players=limits) as (_, client):
        await client.call("CreateGame", ada, players=2, seats=[MINE, OPEN])
        hits = limit_hits("waiting_per_player")
        info = await refused(
            client.call("CreateGame", ada, players=2, seats=[MINE, OPEN]),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "LIMIT_REACHED",
        )
        assert info.metadata["limit"] == "waiting_per_player"
        assert limit_hits("waiting_per_player") == hits + 1
        await client.call("CreateGame", ada, players=2, seats=[MINE, BOT])
        hits = limit_hits("games_per_player")
        info = await refused(
            client.call("CreateGame", ada, players=2, seats=[MINE, BOT]),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "LIMIT_REACHED",
        )
        assert info.metadata["limit"] == "games_per_player"
        # Joining counts too: Ada holds two unfinished tables already.
        open_table = (await client.call("CreateGame", ben, players=2, seats=[MINE, OPEN])).game
        info = await refused(
            client.join(open_table.game_id, "", token=ada),
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            "LIMIT_REACHED",
        )
        assert info.metadata["limit"] == "games_per_player"
        assert limit_hits("games_per_player") == hits + 2
        still = await client.get(open_table.game_id)
        assert still.game.status == WAITING and still.game.version == 0
        # Another player, and the anonymous, are not held by Ada's limit.
        await client.join(open_table.game_id, "", token=cyd)
        await client.create(2)


async def test_control_without_player_limits_the_same_calls_pass():
    async with served(players=policy()) as (_, client):
        for _ in range(3):
            await client.call("CreateGame", ADA, players=2, seats=[MINE, OPEN])
        assert len((await client.call("ListGames", ADA, mine=True)).games) == 3


async def test_a_service_trusting_no_players_refuses_their_tokens():
    async with served(players=PlayerPolicy.off()) as (_, client):
        created = await client.create(2)
        for call in (
            client.get(created.game_id, ADA),
            client.call("ListGames", ADA, mine=True),
            client.call("CreateGame", ADA, players=2),
        ):
            await refused(call, grpc.StatusCode.UNAUTHENTICATED, "TOKEN_UNKNOWN_KEY")
        # A seat token is untouched by it.
        assert (await client.get(created.game_id, created.tokens[0])).game.viewer == 0


async def test_players_seats_outlive_a_restart_and_old_files_get_the_index(tmp_path):
    path = tmp_path / "old.db"
    # A file from before players: no game_players table.
    async with served(store_url=f"sqlite:///{path}") as (_, client):
        anonymous = await client.create(2)
    with sqlite3.connect(path) as conn:
        conn.execute("DROP TABLE game_players")
    async with served(store_url=f"sqlite:///{path}") as (_, client):
        assert (await client.get(anonymous.game_id, anonymous.tokens[0])).game.viewer == 0
        game_id = await table_of_two(client)
    async with served(store_url=f"sqlite:///{path}") as (_, client):
        state = await client.get(game_id, BEN)
        assert state.game.viewer == 1 and state.game.seats[0].player_id == ADA_ID
        assert [g.game_id for g in (await client.call("ListGames", ADA, mine=True)).games] == [
            game_id
        ]
        await refused(
            client.join(game_id, "", token=ADA),
            grpc.StatusCode.FAILED_PRECONDITION,
            "PLAYER_HAS_SEAT",
        )


def test_a_long_bearer_token_is_a_players_jwt_or_refused():
    from services.kit import auth

    def header(token: str) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {token}"),)

    assert auth.bearer(header(ADA)) == ADA and len(ADA) > auth.SEAT_TOKEN_MAX
    jwt_shaped = "a" * 4000 + "." + "b" * 4000 + "." + "c" * 100
    assert auth.bearer(header(jwt_shaped)) == jwt_shaped
    for refused_token in ("x" * (auth.SEAT_TOKEN_MAX + 1), jwt_shaped + "d" * 200):
        with pytest.raises(auth.BadToken):
            auth.bearer(header(refused_token))


@pytest.mark.skipif(not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL is not set")
async def test_a_postgres_database_from_before_players_gets_the_index():
    import psycopg

    from services.kit.store import open_store

    store = open_store(POSTGRES)
    await store.count_active("channeling")  # opens it: the schema is complete
    await store.close()
    with psycopg.connect(POSTGRES, autocommit=True) as conn:
        conn.execute("DROP TABLE tabletop_game_players")  # as a database made before
    async with served(store_url=POSTGRES) as (_, client):
        game_id = await table_of_two(client)
        mine = await client.call("ListGames", BEN, mine=True)
        assert game_id in [g.game_id for g in mine.games]


async def test_join_and_create_ignore_an_authorization_that_is_no_players_token():
    """As before players: CreateGame and JoinGame read no seat token, so a client that
    sends its (or any) authorization with them is not refused for it."""
    async with served() as (_, client):
        junk = (("authorization", "Basic dXNlcjpwYXNz"),)
        request = client.pb2.CreateGameRequest(players=2, seats=[MINE, OPEN])
        created = await client._method("CreateGame")(request, metadata=junk, timeout=30)
        join = client.pb2.JoinGameRequest(game_id=created.game.game_id, player_name="Bo")
        joined = await client._method("JoinGame")(join, metadata=junk, timeout=30)
        assert joined.game.seats[1].player_name == "Bo" and not joined.game.seats[1].player_id


@pytest.mark.skipif(not POSTGRES, reason="TABLETOP_TEST_POSTGRES_URL is not set")
async def test_two_replicas_cannot_pass_a_players_limit_together():
    """One player creating tables on two replicas of one PostgreSQL store at once, with a
    limit of two: exactly two are made, whatever the interleaving."""
    limits = policy(games_per_player=2)
    ann = token(f"ann-{secrets.token_hex(4)}", "Ann")
    async with served(store_url=POSTGRES, players=limits) as (_, first):
        async with served(store_url=POSTGRES, players=limits) as (_, second):
            calls = [
                client.call("CreateGame", ann, players=2, seats=[MINE, BOT])
                for client in (first, second) * 4
            ]
            answers = await asyncio.gather(*calls, return_exceptions=True)
    made = [a for a in answers if not isinstance(a, BaseException)]
    refused_ = [a for a in answers if isinstance(a, grpc.aio.AioRpcError)]
    assert len(made) == 2 and len(refused_) == 6, answers
    assert all(error_info(e).metadata["limit"] == "games_per_player" for e in refused_)
