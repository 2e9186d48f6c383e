"""Forged players' tokens on the game calls, through a real gateway process (Envoy in
front) to a service process whose identity provider is a JWKS served on loopback, as a
platform configures its own (TABLETOP_JWT_JWKS_URL): a token of another issuer or
audience, expired, not yet valid, ``alg: none``, HMAC-signed with the provider's public
key, or naming a key the provider does not publish, each trying to act for a seated
player. Every call is UNAUTHENTICATED with the token's reason, and the games are
unchanged (GetGame before and after). A valid player's token never acts for a seat it
does not hold. The control runs the same attempts against a service whose verifier
believes any token: the forgeries then act, so the checks would catch it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time

import grpc
import pytest
from tabletop.common.v1 import table_pb2

from client.api import GameClient
from services.kit.players import seats as holders
from services.kit.players.verifier import Player
from services.kit.status import error_info
from tests.players.stack import players_stack
from tests.players.support import AUDIENCE, ISSUER, JwksServer, Signer
from tests.support import service_in_process

OPEN = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_OPEN)
MINE = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)
PROVIDER = Signer.new("RS256", "provider-key-1")


def _segment(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _claims(sub: str, **extra) -> dict:
    now = int(time.time())
    body = {"iss": ISSUER, "aud": AUDIENCE, "sub": sub, "name": "Ben", "iat": now, "exp": now + 600}
    body.update(extra)
    return body


def forgeries(sub: str) -> list[tuple[str, str, str]]:
    """(what, token, the reason it is refused with), each claiming to be ``sub``."""
    now = int(time.time())
    head_none = _segment(json.dumps({"alg": "none", "kid": PROVIDER.kid}).encode())
    body = _segment(json.dumps(_claims(sub)).encode())
    hs_head = _segment(json.dumps({"alg": "HS256", "kid": PROVIDER.kid, "typ": "JWT"}).encode())
    signing_input = f"{hs_head}.{body}".encode()
    mac = hmac.new(PROVIDER.public_pem(), signing_input, hashlib.sha256).digest()
    return [
        (
            "another issuer",
            PROVIDER.token(sub=sub, iss="https://evil.example"),
            "TOKEN_WRONG_ISSUER",
        ),
        ("another audience", PROVIDER.token(sub=sub, aud="someone-else"), "TOKEN_WRONG_AUDIENCE"),
        (
            "expired",
            PROVIDER.token(sub=sub, iat=now - 7200, exp=now - 3600),
            "TOKEN_EXPIRED",
        ),
        ("not yet valid", PROVIDER.token(sub=sub, nbf=now + 3600), "TOKEN_NOT_YET_VALID"),
        ("alg none", f"{head_none}.{body}.", "TOKEN_INVALID"),
        ("HMAC with the public key", f"{hs_head}.{body}.{_segment(mac)}", "TOKEN_INVALID"),
        ("unknown kid", PROVIDER.token(sub=sub, kid="not-the-providers"), "TOKEN_UNKNOWN_KEY"),
    ]


async def snapshot(client: GameClient, game_id: str) -> bytes:
    """Everything a spectator sees of the game, to compare before and after."""
    reply = await client.get(game_id)
    return reply.SerializeToString(deterministic=True)


async def attempts(client: GameClient, forged: str, game_id: str, open_id: str) -> list:
    """Every game call made with ``forged``; the errors (or the answers, if one passed)."""
    state = await client.get(game_id)
    move = None
    seated = {}
    for call in (
        lambda: client.get(game_id, forged),
        lambda: client.moves(game_id, forged),
        lambda: client.history(game_id, forged),
        lambda: client.call("ListGames", forged, mine=True),
        lambda: client.join(open_id, "", token=forged),
        lambda: client.call("CreateGame", forged, players=2, seats=[MINE, OPEN]),
        lambda: client.call("OfferRematch", forged, game_id=game_id),
        lambda: client.resign(game_id, forged),
    ):
        try:
            seated[len(seated)] = await call()
        except grpc.aio.AioRpcError as error:
            seated[len(seated)] = error
    listed = seated[1]
    if not isinstance(listed, grpc.aio.AioRpcError) and listed.moves:
        move = listed.moves[0]
    try:
        if move is None:
            raise AssertionError("no move")  # refused above: submit a move of the real seat
        seated[len(seated)] = await client.submit(game_id, forged, move, state.game.version)
    except AssertionError:
        pass
    except grpc.aio.AioRpcError as error:
        seated[len(seated)] = error
    stream = client.watch(game_id, forged, timeout=20)
    try:
        async for message in stream:
            seated[len(seated)] = message
            break
    except grpc.aio.AioRpcError as error:
        seated[len(seated)] = error
    stream.cancel()
    return list(seated.values())


def token_for(sub: str) -> str:
    return PROVIDER.token(sub=sub, name=sub.split("-")[0].title())


async def two_players(client: GameClient, ada: str, ben: str) -> tuple[str, str]:
    """Ada and Ben's game in progress, and a table of Ada's with a seat open."""
    game = await client.call("CreateGame", ada, players=2, seats=[MINE, OPEN])
    await client.join(game.game.game_id, "", token=ben)
    table = await client.call(
        "CreateGame", ada, players=2, seats=[MINE, OPEN], several_seats_per_player=True
    )
    return game.game.game_id, table.game.game_id


async def test_forged_tokens_through_the_gateway_are_refused_and_change_nothing(tmp_path):
    run = secrets.token_hex(3)
    ada_id, ben_id, cyd_id = f"ada-{run}", f"ben-{run}", f"cyd-{run}"
    with JwksServer([PROVIDER.jwk()]) as provider:
        env = {"TABLETOP_AUTH_FAILURES_PER_CLIENT": "0"}
        with players_stack(
            tmp_path, jwks_url=provider.url, issuer=ISSUER, service_env=env
        ) as stack:
            async with grpc.aio.insecure_channel(stack.address) as channel:
                client = GameClient("channeling", channel)
                ada, ben, cyd = token_for(ada_id), token_for(ben_id), token_for(cyd_id)
                game_id, open_id = await two_players(client, ada, ben)
                before = [await snapshot(client, g) for g in (game_id, open_id)]
                for what, forged, reason in forgeries(ben_id):
                    for answer in await attempts(client, forged, game_id, open_id):
                        assert isinstance(answer, grpc.aio.AioRpcError), (what, answer)
                        assert answer.code() == grpc.StatusCode.UNAUTHENTICATED, (what, answer)
                        info = error_info(answer)
                        assert info is not None and info.reason == reason, (what, info)
                        # Nothing of the token comes back in the refusal.
                        assert forged.split(".")[1][:20] not in answer.details()
                    after = [await snapshot(client, g) for g in (game_id, open_id)]
                    assert after == before, what
                    assert not (await client.call("ListGames", ben, mine=True)).games[1:]

                # A valid player acts for its own seat only.
                state = (await client.get(game_id)).game
                to_act = state.to_act[0]
                mover, waiting = (ada, ben) if to_act == 0 else (ben, ada)
                move = (await client.moves(game_id, mover)).moves[0]
                for token, code, reason in (
                    (waiting, grpc.StatusCode.PERMISSION_DENIED, "NOT_YOUR_DECISION"),
                    (cyd, grpc.StatusCode.UNAUTHENTICATED, "BAD_TOKEN"),
                ):
                    with pytest.raises(grpc.aio.AioRpcError) as caught:
                        await client.submit(game_id, token, move)
                    assert caught.value.code() == code
                    assert error_info(caught.value).reason == reason
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await client.resign(game_id, cyd)
                assert error_info(caught.value).reason == "BAD_TOKEN"
                assert [await snapshot(client, g) for g in (game_id, open_id)] == before
                # The provider's keys work as a player's: the real seat moves.
                moved = await client.submit(game_id, mover, move)
                assert moved.game.version == state.version + 1 and moved.game.viewer == to_act
            assert provider.requests >= 1


async def test_control_a_verifier_that_believes_any_token_lets_the_forgeries_act(monkeypatch):
    """The guard switched off: claims read without checking the signature, issuer,
    audience or times. The same forgeries then read and act as Ben."""
    import jwt

    async def believe(self, token):
        if token is None or not holders.looks_like_jwt(token):
            return token
        claims = jwt.decode(token, options={"verify_signature": False})
        return Player(claims["sub"], claims.get("name", "?"), claims.get("iss", ""))

    monkeypatch.setattr(holders.PlayerPolicy, "caller", believe)
    ben_id = f"ben-{secrets.token_hex(3)}"
    async with service_in_process("channeling") as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            client = GameClient("channeling", channel)
            ada = token_for(f"ada-{secrets.token_hex(3)}")
            game_id, open_id = await two_players(client, ada, token_for(ben_id))
            for what, forged, _ in forgeries(ben_id):
                answers = await attempts(client, forged, game_id, open_id)
                assert not isinstance(answers[0], grpc.aio.AioRpcError), what
                assert answers[0].game.viewer == 1, what  # read as Ben's seat
