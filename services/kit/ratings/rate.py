"""A finished game's rating update, and the rebuild that replays every rated game.

Both are pure and deterministic: the same standings and the same result give the same
new ratings, bit for bit, so the store's incremental path (one update in the transaction
that finishes each game) and :func:`rebuild` (every rated game again, in the order they
finished) come out the same.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from services.kit.engine import GameInfo, Outcome
from services.kit.ratings.ranks import Contestant, NotRated, contestants
from services.kit.ratings.scale import MODEL, Rating, Standing
from services.kit.ratings.shapes import Shape, parse_shape

NEW_STANDING = Standing()  # a player's standing before its first rated game in a shape


@dataclass(frozen=True)
class SeatPlayer:
    """Who plays a seat, and that player's standing in the game's shape before it."""

    player: str  # the player id: the ``sub`` of its verified token
    standing: Standing = NEW_STANDING


@dataclass(frozen=True)
class Update:
    """One seat's rating change."""

    seat: int
    player: str
    before: Standing
    after: Standing
    rank: int  # 1 first; equal ranks tied


@dataclass(frozen=True)
class Rated:
    shape: Shape
    updates: tuple[Update, ...]  # in seat order


def rate_game(
    shape: Shape,
    seats: Sequence[SeatPlayer | None],
    outcome: Outcome,
    given_up: Collection[int] = (),
) -> Rated:
    """The new standing of every seat's player after a game of ``shape`` (its sides are
    ``shape.seating``) ended with ``outcome``; ``given_up`` are the seats that resigned
    or forfeited. ``seats`` has one entry per seat: None for a seat no player holds (an
    anonymous seat token, a bot).

    Raises :class:`NotRated` for a game that is not rated: ended off the rules
    (``ABANDONED``, ``EXPIRED``), a seat without a player (``NOT_ALL_PLAYERS``), or a
    player holding two seats (``PLAYER_HOLDS_TWO_SEATS``: a result it could arrange).
    """
    ranked = check_game(shape, [None if s is None else s.player for s in seats], outcome, given_up)
    held = [seat for seat in seats if seat is not None]
    teams = [[held[seat].standing.rating.model_rating() for seat in c.seats] for c in ranked]
    new = MODEL.rate(teams, ranks=[float(c.rank) for c in ranked])
    updates: dict[int, Update] = {}
    for contestant, team in zip(ranked, new, strict=True):
        for seat, after in zip(contestant.seats, team, strict=True):
            before = held[seat].standing
            updates[seat] = Update(
                seat,
                held[seat].player,
                before,
                Standing(Rating(after.mu, after.sigma), before.games + 1),
                contestant.rank,
            )
    return Rated(shape, tuple(updates[seat] for seat in sorted(updates)))


def check_game(
    shape: Shape,
    players: Sequence[str | None],
    outcome: Outcome,
    given_up: Collection[int] = (),
) -> tuple[Contestant, ...]:
    """The ranked contestants of a game to rate; raises :class:`NotRated` as
    :func:`rate_game` does, without running the model (a verdict for the metrics)."""
    if len(players) != shape.players or len(outcome.scores) != shape.players:
        raise ValueError(f"a game of {shape} has {shape.players} seats")
    ranked = contestants(outcome, shape.seating, given_up)
    held = [p for p in players if p]
    if len(held) != len(players):
        raise NotRated("NOT_ALL_PLAYERS", "a seat is not held by a signed-in player")
    if len(set(held)) != len(held):
        raise NotRated("PLAYER_HOLDS_TWO_SEATS", "a player holds two seats")
    return ranked


@dataclass(frozen=True)
class RatedGame:
    """What the store keeps of a finished game played at a rated table: enough to rate
    it again, after its moves are long gone (docs/ratings.md)."""

    game_id: str
    shape: Shape
    players: tuple[str | None, ...]  # per seat; None where no player held it
    outcome: Outcome
    given_up: frozenset[int] = frozenset()

    def to_dict(self) -> dict[str, Any]:
        """The stored form (JSON): the shape by name, the outcome without its details."""
        return {
            "game_id": self.game_id,
            "shape": self.shape.name,
            "players": list(self.players),
            "scores": list(self.outcome.scores),
            "winners": list(self.outcome.winners),
            "reason": self.outcome.reason,
            "given_up": sorted(self.given_up),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], info: GameInfo) -> RatedGame:
        """A stored result of a game of ``info`` (its shape is found by name)."""
        return cls(
            str(data["game_id"]),
            parse_shape(info, str(data["shape"])),
            tuple(None if p is None else str(p) for p in data["players"]),
            Outcome(
                tuple(int(s) for s in data["scores"]),
                tuple(int(w) for w in data["winners"]),
                str(data["reason"]),
            ),
            frozenset(int(s) for s in data["given_up"]),
        )


class Book:
    """Standings by shape and player: what the store's ratings table holds, in memory."""

    def __init__(self) -> None:
        self._standings: dict[tuple[str, str], Standing] = {}

    def standing(self, shape: Shape, player: str) -> Standing:
        return self._standings.get((shape.key, player), Standing())

    def seats(self, game: RatedGame) -> list[SeatPlayer | None]:
        return [
            None if player is None else SeatPlayer(player, self.standing(game.shape, player))
            for player in game.players
        ]

    def apply(self, rated: Rated) -> None:
        for update in rated.updates:
            self._standings[rated.shape.key, update.player] = update.after

    def rate(self, game: RatedGame) -> Rated:
        """Rate one more game against these standings and keep the result (NotRated
        leaves them unchanged)."""
        rated = rate_game(game.shape, self.seats(game), game.outcome, game.given_up)
        self.apply(rated)
        return rated

    def items(self) -> Iterator[tuple[tuple[str, str], Standing]]:
        """((shape key, player), standing) in key order."""
        return iter(sorted(self._standings.items()))

    def __len__(self) -> int:
        return len(self._standings)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Book) and self._standings == other._standings

    __hash__ = None  # type: ignore[assignment]  # mutable: equal by its standings


def rebuild(games: Iterable[RatedGame]) -> Book:
    """Every standing from nothing, replaying ``games`` in the order they finished.

    A game that is not rated (NotRated) is skipped, as it was when it finished."""
    book = Book()
    for game in games:
        try:
            book.rate(game)
        except NotRated:
            continue
    return book
