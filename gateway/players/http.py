"""The gateway's HTTP port: Prometheus' /metrics, and the guests' JWKS beside it.

``/.well-known/jwks.json`` holds the public half of the key guests' tokens are signed
with (gateway.players.signing), which the game services fetch as they would an identity
provider's (TABLETOP_JWT_JWKS_URL). It is served on the metrics port, which every
deployment already opens inside the cluster, rather than on a port of its own: one
listener, and no new port for tests and manifests to allocate. Every other path is
Prometheus' (as prometheus_client serves it alone).
"""

from __future__ import annotations

import socket
from collections.abc import Iterable
from socketserver import ThreadingMixIn
from threading import Thread
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server
from wsgiref.types import StartResponse, WSGIApplication, WSGIEnvironment

from prometheus_client import CollectorRegistry, make_wsgi_app

JWKS_PATH = "/.well-known/jwks.json"


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True


class _Quiet(WSGIRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        """The access lines of a scrape every few seconds are noise."""


def app(registry: CollectorRegistry, jwks: bytes | None) -> WSGIApplication:
    metrics = make_wsgi_app(registry)

    def serve(environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        if environ.get("PATH_INFO") != JWKS_PATH:
            served: Iterable[bytes] = metrics(environ, start_response)
            return served
        if jwks is None:
            start_response("404 Not Found", [("Content-Type", "text/plain")])
            return [b"this gateway signs no guests in\n"]
        start_response(
            "200 OK",
            [
                ("Content-Type", "application/json"),
                ("Content-Length", str(len(jwks))),
                ("Cache-Control", "public, max-age=300"),
            ],
        )
        return [jwks]

    return serve


def serve_http(port: int, host: str, registry: CollectorRegistry, jwks: bytes | None) -> int:
    """Start the port in a thread of its own; returns the port bound (0: a free one)."""
    family, _, _, _, address = socket.getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )[0]

    class Server(_Server):
        address_family = family

    httpd = make_server(str(address[0]), port, app(registry, jwks), Server, handler_class=_Quiet)
    Thread(target=httpd.serve_forever, name="http", daemon=True).start()
    return int(httpd.server_port)
