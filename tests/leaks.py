"""Checks shared by the tests that play a game over a real service and read every output
path (GetGame, GetHistory, WatchGame) as every seat and as a spectator."""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Callable, Sequence
from typing import Any

from tabletop.common.v1 import game_pb2

from client.api import FINISHED, GameClient

# Per version: the proto view the engine makes for one seat, and a check of a received
# view against that version's leak rules.
SeatViews = dict[int, tuple[Any, Callable[[Any], None]]]


def assert_seed_free(seed: int, message) -> None:
    """The seed (which would reveal every hidden card) is in no form in ``message``.

    ``str()`` of a message is the text format as upb's C printer writes it: the lines
    ``text_format.MessageToString`` writes (a map's entries in another order), many times
    faster, where the leak tests spent most of their time."""
    assert str(seed) not in str(message)
    assert seed.to_bytes(8, "little") not in message.SerializeToString()
    varint = game_pb2.GameHeader(version=seed).SerializeToString()[1:]
    assert varint not in message.SerializeToString()


async def follow(stream, until: int) -> list:
    """Read a watch stream until it reaches version ``until``."""
    got: list = []
    while not got or got[-1].game.version < until:
        got.append(await stream.read())
    return got


async def watch_to_the_end(
    client: GameClient, game_id: str, token: str | None, started: asyncio.Event | None = None
) -> list:
    """Every update of a watch until the finished game's view; ``started`` is set once the
    first message (the snapshot) has come, so a test can play only after that."""
    messages = []
    async for update in client.watch(game_id, token):
        messages.append(update)
        if started is not None:
            started.set()
        if update.game.status == FINISHED and update.HasField("view"):
            return messages
    return messages


async def watchers_at_the_start(
    client: GameClient, game_id: str, tokens: Sequence[str | None]
) -> list[asyncio.Task[list]]:
    """One ``watch_to_the_end`` task per token, returned once every one holds its
    snapshot, so the stream of each sees every move played after this."""
    started = [asyncio.Event() for _ in tokens]
    tasks = [
        asyncio.create_task(watch_to_the_end(client, game_id, token, event))
        for token, event in zip(tokens, started, strict=True)
    ]
    await asyncio.wait_for(asyncio.gather(*(e.wait() for e in started)), 30)
    return tasks


def views_now(
    state,
    seats: Sequence[int | None],
    view: Callable[[Any, int | None], Any],
    check_view: Callable[[Any, Any, int | None], None],
    to_proto: Callable[[Any], Any],
    check_proto_view: Callable[[Any, Any, int | None], None],
) -> list[tuple[Any, Callable[[Any], None]]]:
    """Per seat: the proto view the engine makes now, and a check of a proto view against
    this state's leak rules (bound now to a frozen copy, used later)."""
    frozen = copy.deepcopy(state)
    out = []
    for seat in seats:
        seen = view(frozen, seat)
        check_view(frozen, seen, seat)
        out.append((to_proto(seen), lambda message, s=seat: check_proto_view(frozen, message, s)))
    return out


def check_seat_outputs(
    *,
    seed: int,
    final: int,
    final_reply,
    history: Sequence,
    updates: Sequence,
    views: SeatViews,
    check_turn: Callable[[Any], None],
) -> str:
    """One seat's outputs against the engine's replay; returns their text for more checks.

    GetHistory has every version once, each turn as ``check_turn`` allows; WatchGame's
    first message is the view at version 0, every later one carries its turn and the view
    at exactly its version; GetGame's view is the final one; the seed appears nowhere.
    """
    blobs = [str(final_reply)]
    assert [t.version for t in history] == list(range(1, final + 1))
    for turn in history:
        check_turn(turn)
        blobs.append(str(turn))
    assert not updates[0].HasField("turn") and updates[0].game.version == 0
    assert [u.turn.version for u in updates[1:]] == list(range(1, final + 1))
    for update in updates:
        expected_view, check = views[update.game.version]
        assert update.view == expected_view
        check(update.view)
        if update.HasField("turn"):
            check_turn(update.turn)
        blobs.append(str(update))
    assert final_reply.view == views[final][0]
    text = "\n".join(blobs)
    assert str(seed) not in text and "seed" not in text.lower()
    return text
