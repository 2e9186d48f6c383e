"""Each version's header and view serialized once, and the answers of a move made of
those bytes.

A move's answers carry the same parts: SubmitMove's answer (game, turn, view), every
watching seat's update (the same fields, the same numbers) and ListMoves' header. Built
as messages, each answer converted and serialized its own copy; here a seat's header at
a version and a view object are serialized once, and an answer is its fields' bytes
joined in field-number order, as protobuf writes the whole message: they read as the
message built whole (tests/service/test_answer_bytes.py checks it for every game and
seat). Handlers whose
serializer passes bytes through (``wire.serialized``) send them as they are.

A header is reused only for a snapshot equal in everything the header is built from,
the viewing seat included (its key), so no seat is sent a header built for another; a
view only for the very object it was built from (the manager shares one per version and
seat). A rated table's header (its seats' ratings come from the store) and a finished
game's are built each time.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from services.kit import wire
from services.kit.games import Snapshot, Turn

# The field numbers, the same in every game's protos: SubmitMoveResponse's and
# WatchGameResponse's (whose moves, 4, come after), and ListMovesResponse's.
GAME, TURN, VIEW, MOVES = 1, 2, 3, 4
LISTED_MOVES, LISTED_LABELS = 2, 3
# Kept: the answers of one version reuse them, so a few versions of the games moving at
# once are enough; a view's bytes hold the view itself too (kilobytes), a header's little.
HEADERS, VIEWS, TURNS = 1024, 256, 256


def varint(n: int) -> bytes:
    if n < 0x80:
        return _ONE_BYTE[n]
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


_ONE_BYTE = [bytes((n,)) for n in range(0x80)]
_TAGS = {number: varint(number << 3 | 2) for number in range(1, 16)}


def field(number: int, data: bytes) -> bytes:
    """A length-delimited field (a message, bytes or a string) as protobuf writes it."""
    return _TAGS[number] + varint(len(data)) + data


def header_key(snap: Snapshot) -> tuple[Any, ...]:
    """Everything ``wire.header`` reads from a snapshot (the options by identity: a
    game's options never change once it is made)."""
    return (
        snap.game_id,
        snap.game_type,
        snap.version,
        snap.viewer,
        snap.seat_names,
        snap.to_act,
        snap.waiting,
        snap.seats,
        snap.created_at,
        snap.updated_at,
        id(snap.options),
        snap.clock,
        snap.rematch_offers,
        snap.rematch_game_id,
    )


class Encoder:
    """One service's serialized headers and views, and the answers made of them."""

    def __init__(
        self,
        view: Callable[[Snapshot], Any],
        key: Callable[[Snapshot], Any],
        view_bytes: Callable[[Any], bytes] | None = None,
        move_bytes: Callable[[Any], bytes] | None = None,
    ) -> None:
        self._view = view  # the seat's view message (converted once per view object)
        self._key = key
        # A codec's own serializer of an engine's view, when it has one (the same bytes
        # as its message's: it may share them between seats that are shown the same).
        self._view_bytes = view_bytes
        # A move's bytes (a codec may keep them by the move's value).
        self.move_bytes = move_bytes
        self._headers: OrderedDict[Any, tuple[Any, bytes]] = OrderedDict()
        self._views: OrderedDict[int, tuple[Any, bytes]] = OrderedDict()
        self._turns: OrderedDict[int, tuple[Turn, bytes]] = OrderedDict()

    def header(self, snap: Snapshot) -> bytes:
        """The GameHeader's bytes of a snapshot that is neither rated nor finished."""
        if snap.rated_shape or snap.outcome is not None:
            return wire.header(snap).SerializeToString()
        key = self._key(snap)
        found = self._headers.get(key)
        if found is not None and found[0] is snap.options:
            return found[1]
        data: bytes = wire.header(snap).SerializeToString()
        _keep(self._headers, key, (snap.options, data), HEADERS)
        return data

    def view(self, snap: Snapshot) -> bytes:
        """The bytes of the snapshot's view (it has one)."""
        key = id(snap.view)
        found = self._views.get(key)
        if found is not None and found[0] is snap.view:
            return found[1]
        if self._view_bytes is not None:
            data = self._view_bytes(snap.view)
        else:
            data = self._view(snap).SerializeToString()
        _keep(self._views, key, (snap.view, data), VIEWS)
        return data

    def turn(self, turn: Turn) -> bytes:
        """The TurnRecord's bytes of a turn, serialized once per Turn object (the manager
        gives every seat shown the same move and events the same one)."""
        key = id(turn)
        found = self._turns.get(key)
        if found is not None and found[0] is turn:
            return found[1]
        data: bytes = wire.turn(turn).SerializeToString()
        _keep(self._turns, key, (turn, data), TURNS)
        return data

    def with_moves(self, update: bytes, moves: list[Any]) -> bytes:
        """A watch update's bytes with the seat's legal moves appended (``moves`` is its
        last field, so the bytes equal the whole message serialized at once)."""
        assert self.move_bytes is not None
        move_bytes = self.move_bytes
        return update + b"".join([field(MOVES, move_bytes(m)) for m in moves])

    def answer(self, game: bytes, turn: bytes | None, snap: Snapshot | None) -> bytes:
        """A SubmitMoveResponse or WatchGameResponse: the header's bytes (``game``), the
        turn's, and the snapshot's view when it has one."""
        out = field(GAME, game)
        if turn is not None:
            out += field(TURN, turn)
        if snap is not None and snap.view is not None:
            out += field(VIEW, self.view(snap))
        return out


def listed(game: bytes, moves: list[bytes], labels: list[str]) -> bytes:
    """A ListMovesResponse: the header's bytes, each move's and each label."""
    parts = [field(GAME, game)]
    parts += [field(LISTED_MOVES, m) for m in moves]
    parts += [field(LISTED_LABELS, label.encode()) for label in labels]
    return b"".join(parts)


def _keep(cache: OrderedDict[Any, Any], key: Any, value: Any, most: int) -> None:
    if len(cache) >= most:
        # The oldest. (Not a plain dict's next(iter()): after many deletions at its front
        # that walks every freed slot, a profile's 1% of the service's time.)
        cache.popitem(last=False)
    cache[key] = value
