"""Matchmaking: players waiting in pools, matched by rating (docs/ratings.md).

Pure and transport-free, with the clock passed in: the service keeps the entries (its
store, with ``FOR UPDATE SKIP LOCKED`` across replicas) and runs these on them.

    from services.kit import matchmaking
    pools = matchmaking.Pools(window=matchmaking.Window(), rng=random.Random())
    replaced = pools.add(key, matchmaking.Entry(player, rating, now))   # the old stream ends
    for key, match in pools.match(now):
        match.seats   # one Entry (a player) or Bot per seat, in seat order
"""

from services.kit.matchmaking.pool import BOT_LEVELS, Bot, BotFill, Entry, Match, Pool
from services.kit.matchmaking.pools import PoolFull, PoolKey, Pools, canonical
from services.kit.matchmaking.seating import balanced, seat, splits
from services.kit.matchmaking.window import Window

__all__ = [
    "BOT_LEVELS",
    "Bot",
    "BotFill",
    "Entry",
    "Match",
    "Pool",
    "PoolFull",
    "PoolKey",
    "Pools",
    "Window",
    "balanced",
    "canonical",
    "seat",
    "splits",
]
