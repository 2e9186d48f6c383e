"""CatalogService: which games this gateway routes, their player counts, and whether up.

Each entry also counts the tables waiting for players and the players waiting in each
matchmaking pool, asked of the game's own ListGames (one indexed count per game, at most
a second's wait; a game that does not answer shows 0 and no pools).

The catalog answers anyone, so it names each game's backend addresses only where the
operator asked for it (TABLETOP_CATALOG_SHOW_BACKENDS): host:port pairs inside a cluster
are a map for an attacker and of no use to a player.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import grpc
from tabletop.gateway.v1 import catalog_pb2, catalog_pb2_grpc

from gateway.backends import Backends
from services import registry


class Catalog(catalog_pb2_grpc.CatalogServiceServicer):
    def __init__(
        self,
        backends: Backends,
        entries: tuple[registry.ServiceEntry, ...],
        *,
        show_backends: bool = False,
    ) -> None:
        self.backends = backends
        self.show_backends = show_backends
        self.games = []
        for entry in entries:
            info = entry.engine().GAME
            self.games.append((entry, info))

    async def _waiting(self, entry: registry.ServiceEntry) -> tuple[int, list[Any]]:
        """The game's waiting tables and its pools' sizes."""
        backend = self.backends.get(entry.service_name)
        if backend is None or not backend.up:
            return 0, []
        pb2 = entry.pb2()
        _, channel = backend.next_channel()
        call: Any = channel.unary_unary(
            f"/{entry.service_name}/ListGames",
            request_serializer=pb2.ListGamesRequest.SerializeToString,
            response_deserializer=pb2.ListGamesResponse.FromString,
        )
        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.TimeoutError):
            reply = await call(pb2.ListGamesRequest(page_size=1), timeout=1.0)
            return int(reply.waiting_tables), list(reply.pools)
        return 0, []

    async def ListGames(
        self,
        request: catalog_pb2.ListGamesRequest,
        context: grpc.aio.ServicerContext[
            catalog_pb2.ListGamesRequest, catalog_pb2.ListGamesResponse
        ],
    ) -> catalog_pb2.ListGamesResponse:
        out = catalog_pb2.ListGamesResponse()
        waiting = await asyncio.gather(*(self._waiting(entry) for entry, _ in self.games))
        for (entry, info), (tables_waiting, pools) in zip(self.games, waiting, strict=True):
            backend = self.backends.get(entry.service_name)
            out.games.add(
                name=entry.name,
                title=info.title,
                service=entry.service_name,
                min_players=info.min_players,
                max_players=info.max_players,
                up=bool(backend and backend.up),
                backends=backend.addresses if backend and self.show_backends else (),
                tables_waiting=tables_waiting,
                pools=pools,
            )
        return out
