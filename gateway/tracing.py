"""Envoy's traces: its OpenTelemetry tracer, configured from the same ``OTEL_*`` variables
as the Python processes (services.kit.tracing), or nothing when they leave tracing off.

Envoy starts a span for every call it routes, the child of the client's W3C
``traceparent`` when there is one, and sends its own ``traceparent`` upstream, so the
service's server span is that span's child. It exports OTLP over gRPC to the collector
named by ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT``
(``http://`` plaintext, ``https://`` TLS checked against the system's roots, as the
Python exporter does), with ``OTEL_EXPORTER_OTLP_HEADERS``. The console exporter has no
Envoy counterpart: with only that, Envoy does not trace.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from services.kit import tracing

COLLECTOR = "opentelemetry_collector"  # Envoy's cluster of the collector
SYSTEM_ROOTS = "/etc/ssl/certs/ca-certificates.crt"
_T = "type.googleapis.com/envoy."


@dataclass(frozen=True)
class EnvoyTracing:
    """What bootstrap() adds: the connection manager's ``tracing`` and one cluster."""

    manager: dict[str, Any]
    cluster: dict[str, Any]
    runtime: dict[str, int]  # Envoy's runtime keys for its tracer's batches


def _headers(env: Mapping[str, str]) -> list[dict[str, str]]:
    raw = env.get("OTEL_EXPORTER_OTLP_TRACES_HEADERS") or env.get("OTEL_EXPORTER_OTLP_HEADERS", "")
    pairs = []
    for item in raw.split(","):
        key, sep, value = item.partition("=")
        if sep and key.strip():
            pairs.append(
                {
                    "key": urllib.parse.unquote(key.strip()).lower(),
                    "value": urllib.parse.unquote(value.strip()),
                }
            )
    return pairs


def _san_type(host: str) -> str:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return "DNS"
    return "IP_ADDRESS"


def sampling_percent(env: Mapping[str, str]) -> float:
    """The share of calls without a sampled parent that Envoy traces, from
    OTEL_TRACES_SAMPLER(_ARG); a ``traceparent``'s own decision is kept either way."""
    sampler = env.get("OTEL_TRACES_SAMPLER", "parentbased_always_on")
    if sampler.endswith("always_off"):
        return 0.0
    if sampler.endswith("traceidratio"):
        try:
            ratio = float(env.get("OTEL_TRACES_SAMPLER_ARG", "1"))
        except ValueError:
            ratio = 1.0
        return max(0.0, min(1.0, ratio)) * 100
    return 100.0


def batching(env: Mapping[str, str]) -> dict[str, int]:
    """Envoy's span batches as the SDK's ``OTEL_BSP_*`` say the Python processes' are:
    sent every ``OTEL_BSP_SCHEDULE_DELAY`` ms (Envoy's own default: 5 s), or once
    ``OTEL_BSP_MAX_EXPORT_BATCH_SIZE`` spans wait (Envoy's: 5)."""
    keys = {
        "OTEL_BSP_SCHEDULE_DELAY": "tracing.opentelemetry.flush_interval_ms",
        "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "tracing.opentelemetry.min_flush_spans",
    }
    runtime = {}
    for variable, key in keys.items():
        value = env.get(variable, "").strip()
        if value:
            with contextlib.suppress(ValueError):  # as the SDK does: its default then
                runtime[key] = max(1, int(value))
    return runtime


def service_name(env: Mapping[str, str]) -> str:
    """Envoy's spans' service: the gateway's own name with ``-envoy``."""
    return (env.get("OTEL_SERVICE_NAME") or "tabletop-gateway") + "-envoy"


def envoy(env: Mapping[str, str] = os.environ) -> EnvoyTracing | None:
    """Envoy's tracing, or None when OTEL_* leave it off (or ask for no OTLP)."""
    if "otlp" not in tracing.exporters(env):
        return None
    endpoint = tracing.endpoint(env)
    host = endpoint.hostname or ""  # _endpoint refused an endpoint without one
    port = endpoint.port or (443 if endpoint.scheme == "https" else 4317)
    grpc_service: dict[str, Any] = {
        "envoy_grpc": {"cluster_name": COLLECTOR},
        "timeout": "5s",
    }
    headers = _headers(env)
    if headers:
        grpc_service["initial_metadata"] = headers
    provider = {
        "name": "envoy.tracers.opentelemetry",
        "typed_config": {
            "@type": _T + "config.trace.v3.OpenTelemetryConfig",
            "grpc_service": grpc_service,
            "service_name": service_name(env),
        },
    }
    manager = {
        "provider": provider,
        "random_sampling": {"value": sampling_percent(env)},
        # A client span for the upstream call of its own, under the one per call.
        "spawn_upstream_span": True,
    }
    cluster: dict[str, Any] = {
        "name": COLLECTOR,
        "type": "STRICT_DNS",
        "connect_timeout": "2s",
        "typed_extension_protocol_options": {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
                "@type": _T + "extensions.upstreams.http.v3.HttpProtocolOptions",
                "explicit_http_config": {"http2_protocol_options": {}},
            }
        },
        "load_assignment": {
            "cluster_name": COLLECTOR,
            "endpoints": [
                {
                    "lb_endpoints": [
                        {
                            "endpoint": {
                                "address": {
                                    "socket_address": {
                                        "address": endpoint.hostname,
                                        "port_value": port,
                                    }
                                }
                            }
                        }
                    ]
                }
            ],
        },
    }
    if endpoint.scheme == "https":
        ca = env.get("OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE") or env.get(
            "OTEL_EXPORTER_OTLP_CERTIFICATE", SYSTEM_ROOTS
        )
        cluster["transport_socket"] = {
            "name": "envoy.transport_sockets.tls",
            "typed_config": {
                "@type": _T + "extensions.transport_sockets.tls.v3.UpstreamTlsContext",
                "sni": endpoint.hostname,
                "common_tls_context": {
                    "validation_context": {
                        "trusted_ca": {"filename": ca},
                        "match_typed_subject_alt_names": [
                            {
                                "san_type": _san_type(host),
                                "matcher": {"exact": endpoint.hostname},
                            }
                        ],
                    },
                    "alpn_protocols": ["h2"],
                },
            },
        }
    return EnvoyTracing(manager=manager, cluster=cluster, runtime=batching(env))
