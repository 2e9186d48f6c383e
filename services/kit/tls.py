"""TLS for the gateway's listener, the services' listeners and gateway-to-service calls.

Files are PEM. A listener with a client CA requires client certificates (mutual TLS).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import grpc


@dataclass(frozen=True)
class ServerTls:
    cert: str  # path to the certificate chain
    key: str  # path to the private key
    client_ca: str = ""  # when set, clients must present a certificate signed by it

    def credentials(self) -> grpc.ServerCredentials:
        root = Path(self.client_ca).read_bytes() if self.client_ca else None
        return grpc.ssl_server_credentials(
            [(Path(self.key).read_bytes(), Path(self.cert).read_bytes())],
            root_certificates=root,
            require_client_auth=root is not None,
        )


@dataclass(frozen=True)
class ClientTls:
    ca: str = ""  # CA to verify the server with ('' : the system's roots)
    cert: str = ""  # client certificate, for servers that require one
    key: str = ""
    server_name: str = ""  # name to check the server's certificate against, if not the host

    def credentials(self) -> grpc.ChannelCredentials:
        def read(path: str) -> bytes | None:
            return Path(path).read_bytes() if path else None

        return grpc.ssl_channel_credentials(
            root_certificates=read(self.ca),
            private_key=read(self.key),
            certificate_chain=read(self.cert),
        )

    def options(self) -> list[tuple[str, str]]:
        return [("grpc.ssl_target_name_override", self.server_name)] if self.server_name else []


def server_tls(cert: str, key: str, client_ca: str) -> ServerTls | None:
    """A listener's TLS from settings; None when neither file is set."""
    if not cert and not key:
        return None
    if not (cert and key):
        raise ValueError("TLS needs both a certificate and a key")
    return ServerTls(cert, key, client_ca)


def bind(server: grpc.aio.Server, address: str, tls: ServerTls | None) -> int:
    port = (
        server.add_secure_port(address, tls.credentials())
        if tls is not None
        else server.add_insecure_port(address)
    )
    if port == 0:
        raise OSError(f"could not bind {address}")
    return port
