"""CatalogService: which games this gateway routes, their player counts, and whether up.

The catalog answers anyone, so it names each game's backend addresses only where the
operator asked for it (TABLETOP_CATALOG_SHOW_BACKENDS): host:port pairs inside a cluster
are a map for an attacker and of no use to a player.
"""

from __future__ import annotations

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

    async def ListGames(
        self, request: catalog_pb2.ListGamesRequest, context: grpc.aio.ServicerContext
    ) -> catalog_pb2.ListGamesResponse:
        out = catalog_pb2.ListGamesResponse()
        for entry, info in self.games:
            backend = self.backends.get(entry.service_name)
            out.games.add(
                name=entry.name,
                title=info.title,
                service=entry.service_name,
                min_players=info.min_players,
                max_players=info.max_players,
                up=bool(backend and backend.up),
                backends=backend.addresses if backend and self.show_backends else (),
            )
        return out
