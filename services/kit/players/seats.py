"""Seats held by players: who a call acts for, and who takes a seat (docs/players.md).

A call's bearer token is a seat token (it acts for the one seat whose hash it matches)
or a player's token (a JWT, verified by the service's :class:`Verifier`): the player
then acts for the seat it holds in that game, on any call, from any device. A player
holding no seat of a game reads it as a spectator does and acts for nothing there.

The game manager calls in here with a few-line hook at each place a caller becomes a
seat; the rules live here.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Union

from services.kit import auth, config
from services.kit import table as tables
from services.kit.errors import LimitReached, PlayerHasSeat
from services.kit.players.settings import verifier_from
from services.kit.players.verifier import MAX_TOKEN_CHARS, Player, Verifier, looks_like_jwt
from services.kit.store import QuotaExceeded

if TYPE_CHECKING:
    from services.kit.store import PlayerQuotas

# Who a call comes from: a seat token, a verified player, or nobody.
Caller = Union[str, Player, None]  # noqa: UP007  (a runtime alias: isinstance-free)


class PlayerTokenRequired(auth.MissingToken):
    """UNAUTHENTICATED: the call is a player's (ListGames mine): send a player's token."""

    reason = "PLAYER_TOKEN_REQUIRED"


class NotSeated(auth.BadToken):
    """A player's token, verified, that holds no seat of this game: refused as a seat
    token that is not one of the game's is (UNAUTHENTICATED, BAD_TOKEN)."""

    reason = "BAD_TOKEN"


@dataclass(frozen=True)
class PlayerPolicy:
    """How a game service treats players: whose tokens it trusts, and how many tables a
    player may hold (0: no limit)."""

    verifier: Verifier
    games_per_player: int = 0  # unfinished tables a player holds a seat at
    waiting_per_player: int = 0  # of those, tables waiting for players

    @classmethod
    def off(cls) -> PlayerPolicy:
        """No player tokens trusted (each refused TOKEN_UNKNOWN_KEY), no player limits."""
        return cls(Verifier(None, issuer="", audience=""))

    def quotas(self) -> PlayerQuotas:
        from services.kit.store import PlayerQuotas

        return PlayerQuotas(self.games_per_player, self.waiting_per_player)

    async def caller(self, token: str | None) -> Caller:
        """The call's bearer token as who it is: a JWT goes to the verifier (a refusal is
        UNAUTHENTICATED with its reason), anything else stays a seat token."""
        if token is not None and looks_like_jwt(token):
            return await self.verifier.verify(token)
        return token


def settings() -> list[config.Setting]:
    """The game services' per-player limits (besides the tokens' settings)."""
    S = config.Setting
    return [
        S("games_per_player", "TABLETOP_GAMES_PER_PLAYER", "100", "int",
          "unfinished tables of this game one player (a player's token) may hold a seat at; "
          "CreateGame and JoinGame beyond it are refused (0: no limit)"),
        S("waiting_per_player", "TABLETOP_WAITING_PER_PLAYER", "20", "int",
          "tables waiting for players one player may have created and hold a seat at "
          "(0: no limit)"),
    ]  # fmt: skip


def policy_from(cfg: config.Config) -> PlayerPolicy:
    """The policy the settings describe; raises config.ConfigError naming the variable."""
    return PlayerPolicy(verifier_from(cfg), cfg.games_per_player, cfg.waiting_per_player)


def bearer_limit(token: str) -> int:
    """The longest bearer token accepted: a player's JWT may be long, a seat token not."""
    return MAX_TOKEN_CHARS if looks_like_jwt(token) else auth.SEAT_TOKEN_MAX


def seat_for(table: tables.Table, caller: Caller) -> int | None:
    """The seat ``caller`` acts for in this table: a seat token's (BadToken if it is none
    of them), a player's (the one to act when it holds several; None if it holds none),
    None for no token."""
    if isinstance(caller, Player):
        held = held_by(table, caller.id)
        return next((s for s in held if s in table.to_act), held[0] if held else None)
    return auth.seat_of(caller, table.token_hashes)


def held_by(table: tables.Table, player_id: str) -> list[int]:
    """The seats ``player_id`` holds at this table."""
    return [i for i, s in enumerate(table.seats) if player_id and s.player_id == player_id]


def no_seat(caller: Caller, needs: str) -> Exception:
    """The refusal of a call that acts for a seat, made by a caller holding none."""
    if isinstance(caller, Player):
        return NotSeated("this player holds no seat of this game")
    return auth.MissingToken(f"{needs}: authorization: Bearer <token>")


def claim(plan: tables.Plan, player: Player, several: bool) -> tables.Plan:
    """The plan with the creator's reserved seats given to ``player`` (named by it, where
    the request named them not). One reserved seat unless ``several``."""
    reserved = plan.returns_tokens
    if len(reserved) > 1 and not several:
        raise PlayerHasSeat(
            f"a player holds one seat of a table: reserve one (make the others open or "
            f"bots), or set several_seats_per_player; seats {list(reserved)} are reserved",
            seat=reserved[1],
        )
    seats = tuple(
        replace(s, player_id=player.id, name=s.name or player.name)
        if s.kind == tables.RESERVED
        else s
        for s in plan.seats
    )
    return replace(plan, seats=seats, several=several)


def may_join(table: tables.Table, player: Player) -> None:
    """Refuse a player's second seat of a table that lets a player hold one."""
    held = held_by(table, player.id)
    if held and not table.plan.several:
        raise PlayerHasSeat(f"this player already holds seat {held[0]} of this table", seat=held[0])


def seat_players(seats: Iterable[tables.SeatNow]) -> tuple[str, ...]:
    return tuple(s.player_id for s in seats)


def refusal(exc: QuotaExceeded) -> LimitReached | None:
    """The refusal of a write over a player's quota; None for another quota."""
    if exc.quota == "player_games":
        return LimitReached(
            f"at most {exc.limit} unfinished tables per player; finish or resign one first",
            limit="games_per_player",
        )
    if exc.quota == "player_waiting":
        return LimitReached(
            f"at most {exc.limit} tables waiting for players per player; fill or leave one first",
            limit="waiting_per_player",
        )
    return None
