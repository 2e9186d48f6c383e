"""The gateway's Prometheus metrics (prefix tabletop_gateway_)."""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

from services.kit.metrics import LATENCY_BUCKETS

REQUESTS = Counter(
    "tabletop_gateway_requests", "Calls through the gateway, by service, method and code",
    ["service", "method", "code"],
)  # fmt: skip
LATENCY = Histogram(
    "tabletop_gateway_latency_seconds", "Time from a call's arrival to its end",
    ["service", "method"], buckets=LATENCY_BUCKETS,
)  # fmt: skip
IN_FLIGHT = Gauge("tabletop_gateway_in_flight", "Calls in flight", ["service", "method"])
BACKEND_UP = Gauge(
    "tabletop_gateway_backend_up", "1 when a game's backends answer SERVING", ["service"]
)
LIMITED = Counter("tabletop_gateway_limited", "Calls refused by a gateway limit", ["limit"])
