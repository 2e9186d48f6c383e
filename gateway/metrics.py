"""The gateway's Prometheus metrics, in a registry of its own (docs/metrics.md).

``grpc_server_*`` for the calls clients make to the gateway, ``grpc_client_*`` for the
calls it makes to each game service, and ``tabletop_gateway_*`` for what only a gateway
has. The game families (``tabletop_games_*``, moves, engine time) belong to the services:
the gateway never sets them, so its registry does not hold them.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge

from services.kit.limits import CLIENT_LIMITS
from services.kit.metrics import RpcMetrics, process_registry

# The limits a gateway refuses calls by: the services' own (services.kit.limits).
LIMITS = CLIENT_LIMITS


class GatewayMetrics:
    """``calls=False`` (Envoy on the data path): Envoy counts the calls, and
    gateway.envoystats exposes its figures under these names; the Python side's own
    call and limit families then go to ``self.calls``, which is not scraped itself (the
    collector adds its limit refusals to Envoy's)."""

    def __init__(self, registry: CollectorRegistry | None = None, *, calls: bool = True) -> None:
        self.registry = registry if registry is not None else process_registry()
        counted = self.calls = self.registry if calls else CollectorRegistry()
        self.server = RpcMetrics("server", counted)
        self.client = RpcMetrics("client", counted)
        self.backend_up = Gauge(
            "tabletop_gateway_backend_up",
            "1 when a game service's backends answer SERVING, by its gRPC service name",
            ["grpc_service"],
            registry=self.registry,
        )
        self.limited = Counter(
            "tabletop_gateway_limited",
            "Calls refused by a gateway limit",
            ["limit"],
            registry=counted,
        )
        # Every limit the gateway applies has its series from the start, at 0: the family
        # is never empty, and rate() sees the first refusal.
        for limit in LIMITS:
            self.limited.labels(limit)
