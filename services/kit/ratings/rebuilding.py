"""Rebuilding a game's standings from the store's rated games (docs/ratings.md).

The store keeps every finished game of a rated table (rated or not, in the order it was
rated). Replaying them through :func:`services.kit.ratings.rebuild` gives every
standing again; on the store's games it comes out bit for bit what the finishing
appends wrote (the update is pure and the doubles are stored unrounded).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from services.kit.engine import GameInfo
from services.kit.ratings.rate import Book, RatedGame, rebuild
from services.kit.ratings.scale import Standing


class Entry(Protocol):
    player_id: str
    player_name: str
    shape: str
    standing: Standing


@dataclass(frozen=True)
class Difference:
    shape: str
    player: str
    stored: Standing | None
    rebuilt: Standing | None


def replayed(info: GameInfo, results: Sequence[Any]) -> tuple[Book, dict[str, str]]:
    """The book of every stored result of ``info``'s game (``StoredResult``s in order),
    and each player's last name."""
    names: dict[str, str] = {}
    games = []
    for stored in results:
        result = stored.result
        games.append(RatedGame.from_dict(result, info))
        for player, name in zip(result["players"], result.get("names", ()), strict=False):
            if player:
                names[player] = name
    return rebuild(games), names


def differences(info: GameInfo, book: Book, stored: Sequence[Entry]) -> list[Difference]:
    """Where the store's standings and the rebuilt ones disagree."""
    have = {(f"{info.name}/{e.shape}", e.player_id): e.standing for e in stored}
    want = dict(book.items())
    return [
        Difference(key[0], key[1], have.get(key), want.get(key))
        for key in sorted(set(have) | set(want))
        if have.get(key) != want.get(key)
    ]


async def rebuild_store(store: Any, info: GameInfo, *, check: bool) -> list[Difference]:
    """Compare the store's standings of ``info``'s game with a rebuild; unless
    ``check``, replace them with it. Returns the differences found before."""
    from services.kit.store.ratings import Entry as StoreEntry

    book, names = replayed(info, await store.rated_games(info.name))
    found = differences(info, book, await store.all_ratings(info.name))
    if not check and found:
        entries = [
            StoreEntry(player, names.get(player, ""), key.partition("/")[2], standing)
            for (key, player), standing in book.items()
        ]
        await store.replace_ratings(info.name, entries, time.time())
    return found
