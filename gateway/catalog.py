"""CatalogService: which games this gateway routes, their player counts, and whether up."""

from __future__ import annotations

import grpc
from tabletop.gateway.v1 import catalog_pb2, catalog_pb2_grpc

from gateway.backends import Backends
from services import registry


class Catalog(catalog_pb2_grpc.CatalogServiceServicer):
    def __init__(self, backends: Backends, entries: tuple[registry.ServiceEntry, ...]) -> None:
        self.backends = backends
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
                backends=backend.addresses if backend else (),
            )
        return out
