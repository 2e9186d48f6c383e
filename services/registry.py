"""The one list of game services: name, gRPC port and metrics port.

``make run``, the gateway's default routes, the container images, the Kubernetes
manifests and the container tests all read this list; adding a game here (with its
``services/<name>`` package and ``protos/tabletop/<name>/v1/<name>.proto``) is the only
edit that makes the rest pick it up. Everything else about a service follows from its
name by convention (see :class:`ServiceEntry`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class ServiceEntry:
    name: str  # "channeling": the package services.channeling, the game_type in headers
    port: int  # its gRPC port
    metrics_port: int  # its Prometheus /metrics port

    @property
    def package(self) -> str:
        return f"services.{self.name}"

    @property
    def proto_package(self) -> str:
        return f"tabletop.{self.name}.v1"

    @property
    def proto_file(self) -> str:
        return f"tabletop/{self.name}/v1/{self.name}.proto"

    @property
    def service_name(self) -> str:
        """The gRPC service's full name: tabletop.channeling.v1.ChannelingService."""
        return f"{self.proto_package}.{self.name.capitalize()}Service"

    @property
    def host(self) -> str:
        """Its Kubernetes Service and container name: tabletop-channeling."""
        return f"tabletop-{self.name}"

    def pb2(self) -> ModuleType:
        return importlib.import_module(f"{self.proto_package}.{self.name}_pb2")

    def engine(self) -> ModuleType:
        return importlib.import_module(f"{self.package}.engine")


@dataclass(frozen=True)
class GatewayEntry:
    port: int = 50051
    metrics_port: int = 9400
    host: str = "tabletop-gateway"


SERVICES: tuple[ServiceEntry, ...] = (
    ServiceEntry("channeling", 50052, 9401),
    ServiceEntry("shrine", 50053, 9402),
    ServiceEntry("resarcana", 50054, 9403),
    ServiceEntry("glow", 50055, 9404),
    ServiceEntry("shen", 50056, 9405),
)

GATEWAY = GatewayEntry()


def by_name(name: str) -> ServiceEntry:
    for entry in SERVICES:
        if entry.name == name:
            return entry
    raise KeyError(f"no game service named {name!r}; known: {', '.join(names())}")


def names() -> list[str]:
    return [entry.name for entry in SERVICES]
