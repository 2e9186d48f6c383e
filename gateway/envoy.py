"""The gateway's data path on Envoy: its bootstrap, generated from services/registry.py.

``python -m gateway`` runs Envoy (gateway.proxy) on the public port and keeps in Python
only what only we do: the catalog, the aggregated reflection and health from the
backends, served on a loopback port Envoy routes to. docs/design.md gives the reasons
(a Python router spent 3-3.6 times Envoy's CPU per routed call).

What the Python router did, Envoy does here:

- a route per unary method of each game service, to a cluster of its backends (round
  robin, HTTP/2); the client's deadline is the upstream's, else the unary default; the
  watch streams go on to the Python router (see ``_routes``);
- a backend is health-checked with the gRPC health service; when none answers SERVING
  the call is answered UNAVAILABLE at once (no panic routing to hosts known down);
- calls per second per client address (a token bucket per address, as
  services.kit.limits does) and unary calls at once (a circuit breaker), refused with
  the same codes and an ErrorInfo naming the limit;
- every refusal Envoy makes itself carries a google.rpc.Status with an ErrorInfo, as a
  refusal of ours does, and names no backend address;
- ``x-forwarded-for`` is set to the client's address (a client's own is replaced), so
  the services' per-client limits key on the real client;
- one JSON access line per call (or one in N successful calls);
- header blocks far larger than any call may carry pass both ways, so the services and
  clients judge metadata as they do without us; a malformed header in an answer fails
  that call alone (see HEADERS_KB).
"""

from __future__ import annotations

import base64
import ipaddress
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from google.protobuf import any_pb2, descriptor_pool
from google.rpc import code_pb2, error_details_pb2, status_pb2

from gateway import tracing, web
from services import registry
from services.kit.limits import MAX_TRACKED
from services.kit.status import DOMAIN
from services.kit.tls import ClientTls, ServerTls

CONTROL = "control"  # the cluster of the Python process: catalog, health, reflection
RATE_PREFIX = "per_client"  # the local rate limiter's stat prefix (gateway.envoystats)
SYSTEM_ROOTS = "/etc/ssl/certs/ca-certificates.crt"
# A receive window as small as the Python router's read-ahead: a stalled watcher's
# updates wait in the backend (which ends the watcher), not in the gateway.
STREAM_WINDOW = 65_536
CONNECTION_WINDOW = 1_048_576
UNLIMITED = 2**31 - 1
MAX_CONNECTIONS = 50_000
STREAM_GRACE = 60.0  # seconds Envoy's bound on a stream comes after the router's
HEALTH_TIMEOUT = 1.0  # seconds a backend's health check may take
# Header blocks Envoy takes, both ways: far above what a call may carry (16 KiB, 100
# entries, checked by the services with a reason), so that Envoy passes on whatever a
# service or a client would judge directly and they answer as they would without us.
# Beyond a block's limits Envoy resets that stream alone. One header beyond the field
# limit is beyond what its HTTP/2 decoder takes at all: a connection error, which ends
# every call on that connection. Envoy's default field limit is 64 KiB; 256 KiB is the
# most it allows.
HEADERS_KB = 1024
HEADERS_COUNT = 1000
HEADER_FIELD_KB = 256
# Streams one HTTP/2 connection may carry at once. Envoy 1.36 lowered its default from
# unlimited to 1,024 on both sides: a client connection past it waits (its gRPC queues the
# calls), and every watch stream of every client goes to the Python side on one upstream
# connection, so the gateway stalled at about 1,024 streams in all (BENCHMARKS.md,
# "Scale"). A client connection: far above what one client may hold open (its watch
# streams, TABLETOP_STREAMS_PER_CLIENT, and its calls); the limit is the per-client caps,
# not the transport. The Python side's cluster: a connection carries this many, and
# Envoy opens another for more.
CLIENT_STREAMS: int | None = 16_384  # None: Envoy's default (a test's control)
CONTROL_STREAMS: int | None = 16_384

_T = "type.googleapis.com/envoy."


@dataclass(frozen=True)
class Plan:
    """What the bootstrap is made from: ports, routes and the gateway's settings."""

    host: str
    port: int
    admin_port: int
    control_port: int
    routes: Mapping[str, Sequence[str]]  # game name -> host:port or dns:///host:port
    rate_per_client: float = 0.0
    burst_per_client: float = 1000.0
    max_concurrent_calls: int = 10_000
    unary_timeout: float = 30.0
    stream_timeout: float = 3600.0
    max_connection_age: float = 0.0
    health_interval: float = 2.0
    health_misses: int = 2  # checks in a row unanswered before a backend is out
    # A proxy in front that is the only way in sends x-forwarded-for: believe its last hop.
    trust_forwarded_for: bool = False
    access_log: bool = True
    access_log_sample: int = 1
    # Origins whose pages may call with gRPC-Web (gateway.web, TABLETOP_CORS_ORIGINS).
    cors_origins: tuple[str, ...] = web.DEFAULT_ORIGINS
    tls: ServerTls | None = None
    upstream_tls: ClientTls | None = None


def status_header(code: int, message: str, reason: str, metadata: Mapping[str, str]) -> str:
    """``grpc-status-details-bin``: the google.rpc.Status a refusal of ours carries."""
    info = any_pb2.Any()
    info.Pack(error_details_pb2.ErrorInfo(reason=reason, domain=DOMAIN, metadata=metadata))
    status = status_pb2.Status(code=code, message=message, details=[info])
    return base64.b64encode(status.SerializeToString()).decode()


def _seconds(value: float) -> str:
    return f"{value:.3f}s"


def _address(host: str, port: int) -> dict[str, Any]:
    return {"socket_address": {"address": host, "port_value": port}}


def _typed(kind: str, **fields: Any) -> dict[str, Any]:
    return {"@type": _T + kind, **fields}


def _header(key: str, value: str) -> dict[str, Any]:
    return {"header": {"key": key, "value": value}, "append_action": "OVERWRITE_IF_EXISTS_OR_ADD"}


def _refusal(
    flags: list[str] | None, status: int | None, code: int, message: str, reason: str,
    metadata: Mapping[str, str],
) -> dict[str, Any]:  # fmt: skip
    """A local reply mapper: Envoy's own answer (matched by flag or HTTP status) gets our
    message, ErrorInfo and gRPC code (``grpc-status`` replaced, so that it is the code of
    the Status in the details, which a client checks)."""
    if flags is not None:
        matcher: dict[str, Any] = {"response_flag_filter": {"flags": flags}}
    else:
        matcher = {
            "status_code_filter": {
                "comparison": {
                    "op": "EQ",
                    "value": {"default_value": status, "runtime_key": f"refusal_{status}"},
                }
            }
        }
    return {
        "filter": matcher,
        "headers_to_add": [
            _header("grpc-status-details-bin", status_header(code, message, reason, metadata)),
            _header("grpc-status", str(code)),
        ],
        "body": {"inline_string": message},
    }


def refusals(plan: Plan) -> list[dict[str, Any]]:
    """Envoy's refusals, in the words and reasons of the Python gateway's."""
    unavailable = "the game service is unavailable; retry later"
    broken = (
        "the connection to the game service failed: an answer on it could not be read (a "
        f"header over {HEADER_FIELD_KB} KiB, or not HTTP/2); retry later"
    )
    return [
        # The local rate limiter sets its flag after its reply is mapped: match its 429.
        _refusal(None, 429, code_pb2.RESOURCE_EXHAUSTED, "too many calls; slow down",
                 "RATE_LIMITED", {"limit": "rate_per_client",
                                  "retry_after_ms": str(_retry_ms(plan.rate_per_client))}),
        _refusal(["UO"], None, code_pb2.UNAVAILABLE,
                 "the gateway is handling as many calls as it may; retry later",
                 "LIMIT_REACHED", {"limit": "max_concurrent_calls"}),
        _refusal(["UH"], None, code_pb2.UNAVAILABLE,
                 "the game service is down (no backend answers its health check); retry later",
                 "BACKEND_UNAVAILABLE", {"backends": "down"}),
        _refusal(["UF", "URX", "UC", "UR", "NC"], None, code_pb2.UNAVAILABLE, unavailable,
                 "BACKEND_UNAVAILABLE", {}),
        # An answer Envoy cannot decode ends the upstream connection it came on, and with
        # it the calls of everyone on that connection: not their fault, nor this one's.
        _refusal(["UPE"], None, code_pb2.UNAVAILABLE, broken, "BACKEND_UNAVAILABLE",
                 {"upstream": "protocol_error"}),
    ]  # fmt: skip


def _retry_ms(rate: float) -> int:
    """When a refused client may expect a token again: one refill, at most."""
    return max(1, math.ceil(1000 * _fill(rate)[1])) if rate > 0 else 1


def _fill(rate: float) -> tuple[int, float]:
    """(tokens, seconds) per refill for ``rate`` a second: Envoy refills whole tokens,
    at most every 50 ms; the smallest whole number of tokens that keeps the rate exact."""
    tokens = max(1, math.ceil(rate * 0.05))
    return tokens, tokens / rate


def rate_limit(plan: Plan) -> dict[str, Any]:
    """A token bucket per client address (Envoy's dynamic descriptors: an empty value
    makes one bucket per address seen, the least recently used forgotten)."""
    tokens, interval = _fill(plan.rate_per_client)
    bucket = {
        "max_tokens": max(1, math.ceil(plan.burst_per_client)),
        "tokens_per_fill": tokens,
        "fill_interval": f"{interval:.9f}s",
    }
    always = {"default_value": {"numerator": 100, "denominator": "HUNDRED"}}
    return {
        "name": "envoy.filters.http.local_ratelimit",
        "typed_config": _typed(
            "extensions.filters.http.local_ratelimit.v3.LocalRateLimit",
            stat_prefix=RATE_PREFIX,
            # The filter's own bucket is for calls no descriptor matches: none here.
            token_bucket={
                "max_tokens": UNLIMITED,
                "tokens_per_fill": UNLIMITED,
                "fill_interval": "1s",
            },
            filter_enabled=always,
            filter_enforced=always,
            rate_limited_as_resource_exhausted=True,
            descriptors=[
                {"entries": [{"key": "remote_address", "value": ""}], "token_bucket": bucket}
            ],
            max_dynamic_descriptors=MAX_TRACKED,
            rate_limits=[{"actions": [{"remote_address": {}}]}],
        ),
    }


def _routes(plan: Plan) -> list[dict[str, Any]]:
    """One route per method, so each gets its kind's default deadline; a method the
    protos do not know still reaches its service, which answers UNIMPLEMENTED.

    The streams (WatchGame) go to the Python side, which relays them as before: when a
    backend dies mid-stream Envoy can only reset the client's stream (gRPC clients read
    INTERNAL), where the Python router ends it UNAVAILABLE with a reason, a code clients
    retry; and it counts the open streams per client across every game.

    Play, a seat's session (requests and responses streamed), goes straight to its game
    like the unary calls: it exists so that a move costs no relay in Python. A backend's
    death resets it (INTERNAL); a Play client resumes as after any end of its stream
    (README.md, "The contract"). Its streams per client are the service's limit."""
    routes: list[dict[str, Any]] = []
    for name in plan.routes:
        entry = registry.by_name(name)
        entry.pb2()
        service = descriptor_pool.Default().FindServiceByName(entry.service_name)
        for method in service.methods:
            streams = method.server_streaming or method.client_streaming
            cluster, timeout = (
                (CONTROL, plan.stream_timeout) if streams else (name, plan.unary_timeout)
            )
            if method.server_streaming and method.client_streaming:
                cluster = name  # Play: see above
            routes.append(
                {
                    "match": {"path": f"/{entry.service_name}/{method.name}"},
                    "route": _action(cluster, timeout, streams),
                }
            )
        routes.append(
            {
                "match": {"prefix": f"/{entry.service_name}/"},
                "route": _action(name, plan.unary_timeout, False),
            }
        )
    # The catalog, health, reflection, and any service we do not route: the Python side.
    routes.append({"match": {"prefix": "/"}, "route": _action(CONTROL, plan.stream_timeout, True)})
    return routes


def _action(cluster: str, default_timeout: float, stream: bool) -> dict[str, Any]:
    # No overall timeout: a stream lasts as long as it is read. A unary call: the
    # client's grpc-timeout, else the default. A stream goes to the Python router, which
    # ends it at the client's deadline with DEADLINE_EXCEEDED; were Envoy to end it at
    # the same moment, it could only reset it (clients read INTERNAL), so Envoy's own
    # bound comes a minute after the router's default.
    duration: dict[str, Any] = (
        {"max_stream_duration": _seconds(default_timeout + STREAM_GRACE)}
        if stream
        else {"max_stream_duration": _seconds(default_timeout), "grpc_timeout_header_max": "0s"}
    )
    return {
        "cluster": cluster,
        "timeout": "0s",
        "max_stream_duration": duration,
        # Streams on the high priority, whose circuit breaker has no call limit: the
        # limit on calls at once is on unary calls, as in the services.
        "priority": "HIGH" if stream else "DEFAULT",
    }


def _endpoints(addresses: Sequence[str]) -> tuple[str, list[dict[str, Any]]]:
    """The cluster type and endpoints of a route's addresses: an IP is STATIC; a name,
    as ``dns:///name:port`` or ``name:port``, is STRICT_DNS (every address it resolves
    to is a host, as gRPC's round_robin did)."""
    kind = "STATIC"
    endpoints = []
    for address in addresses:
        target = address.strip().removeprefix("dns:///").removeprefix("dns:")
        host, _, port = target.rpartition(":")
        host = host.strip("[]")
        if not _is_ip(host):
            kind = "STRICT_DNS"
        endpoints.append({"endpoint": {"address": _address(host, int(port))}})
    return kind, endpoints


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _http2(window: int = STREAM_WINDOW, streams: int | None = None) -> dict[str, Any]:
    options: dict[str, Any] = {
        "initial_stream_window_size": window,
        "initial_connection_window_size": CONNECTION_WINDOW,
        "max_header_field_size_kb": HEADER_FIELD_KB,
    }
    if streams is not None:
        options["max_concurrent_streams"] = streams
    return options


def _upstream_http2() -> dict[str, Any]:
    """The game clusters' HTTP/2: a malformed header in an answer (a stream error in
    HTTP/2's own terms) fails that call, not the connection and every call on it."""
    return {**_http2(), "override_stream_error_on_invalid_http_message": True}


def _control_http2() -> dict[str, Any]:
    """The Python side's cluster: every client's watch streams share its connections."""
    return {} if CONTROL_STREAMS is None else {"max_concurrent_streams": CONTROL_STREAMS}


def _upstream_tls(tls: ClientTls, host: str) -> dict[str, Any]:
    name = tls.server_name or host
    san = "IP_ADDRESS" if _is_ip(name) else "DNS"
    context: dict[str, Any] = {
        "validation_context": {
            "trusted_ca": {"filename": tls.ca or SYSTEM_ROOTS},
            "match_typed_subject_alt_names": [{"san_type": san, "matcher": {"exact": name}}],
        },
        "alpn_protocols": ["h2"],
    }
    if tls.cert:
        context["tls_certificates"] = [
            {"certificate_chain": {"filename": tls.cert}, "private_key": {"filename": tls.key}}
        ]
    return {
        "name": "envoy.transport_sockets.tls",
        "typed_config": _typed(
            "extensions.transport_sockets.tls.v3.UpstreamTlsContext",
            sni=name,
            common_tls_context=context,
        ),
    }


def _downstream_tls(tls: ServerTls) -> dict[str, Any]:
    context: dict[str, Any] = {
        "tls_certificates": [
            {"certificate_chain": {"filename": tls.cert}, "private_key": {"filename": tls.key}}
        ],
        "alpn_protocols": ["h2", "http/1.1"],  # browsers' gRPC-Web may come over either
    }
    fields: dict[str, Any] = {"common_tls_context": context}
    if tls.client_ca:
        context["validation_context"] = {"trusted_ca": {"filename": tls.client_ca}}
        fields["require_client_certificate"] = True
    return {
        "name": "envoy.transport_sockets.tls",
        "typed_config": _typed("extensions.transport_sockets.tls.v3.DownstreamTlsContext",
                               **fields),
    }  # fmt: skip


def _cluster(plan: Plan, name: str, addresses: Sequence[str]) -> dict[str, Any]:
    entry = registry.by_name(name)
    kind, endpoints = _endpoints(addresses)
    interval = _seconds(plan.health_interval)
    calls = plan.max_concurrent_calls or UNLIMITED
    cluster: dict[str, Any] = {
        "name": name,
        "type": kind,
        "connect_timeout": "1s",
        "lb_policy": "ROUND_ROBIN",
        "typed_extension_protocol_options": {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": _typed(
                "extensions.upstreams.http.v3.HttpProtocolOptions",
                explicit_http_config={"http2_protocol_options": _upstream_http2()},
                common_http_protocol_options={
                    "max_response_headers_kb": HEADERS_KB,
                    "max_headers_count": HEADERS_COUNT,
                },
            )
        },
        # One upstream connection carries every client's calls. One per client connection
        # (connection_pool_per_downstream_connection) would confine a connection error to
        # the client whose call caused it, but cost the gateway and the service 1.3-1.5
        # times the CPU per call with 64 client connections (docs/design.md);
        # HEADER_FIELD_KB keeps such errors to answers no service of ours sends.
        "load_assignment": {"cluster_name": name, "endpoints": [{"lb_endpoints": endpoints}]},
        # A busy backend (its event loop a second behind on a loaded machine) is not a
        # down one: it is taken out after two checks in a row unanswered within a second
        # (a hung or lost backend: about twice the interval plus 2 s), while a backend
        # that answers NOT_SERVING (draining) is out at once whatever the threshold (an
        # active failure, in Envoy's terms). One miss took the only backend out and
        # refused every call until the next check (CI, under load).
        "health_checks": [
            {
                "timeout": _seconds(HEALTH_TIMEOUT),
                "interval": interval,
                "no_traffic_interval": interval,
                "unhealthy_threshold": plan.health_misses,
                "healthy_threshold": 1,
                "grpc_health_check": {"service_name": entry.service_name},
            }
        ],
        # A game whose every backend is down is refused at once (no panic routing).
        "common_lb_config": {"healthy_panic_threshold": {"value": 0}},
        "circuit_breakers": {
            "thresholds": [
                {
                    "priority": "DEFAULT",
                    "max_requests": calls,
                    "max_pending_requests": calls,
                    "max_connections": UNLIMITED,
                    "max_retries": 0,
                },
                {
                    "priority": "HIGH",
                    "max_requests": UNLIMITED,
                    "max_pending_requests": UNLIMITED,
                    "max_connections": UNLIMITED,
                    "max_retries": 0,
                },
            ]
        },
    }
    if plan.upstream_tls is not None:
        first = endpoints[0]["endpoint"]["address"]["socket_address"]["address"]
        cluster["transport_socket"] = _upstream_tls(plan.upstream_tls, first)
    return cluster


def _control(plan: Plan) -> dict[str, Any]:
    return {
        "name": CONTROL,
        "type": "STATIC",
        "connect_timeout": "1s",
        "typed_extension_protocol_options": {
            "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": _typed(
                "extensions.upstreams.http.v3.HttpProtocolOptions",
                explicit_http_config={"http2_protocol_options": _control_http2()},
            )
        },
        "circuit_breakers": {
            "thresholds": [
                {
                    "priority": p,
                    "max_requests": UNLIMITED,
                    "max_pending_requests": UNLIMITED,
                    "max_connections": UNLIMITED,
                }
                for p in ("DEFAULT", "HIGH")
            ]
        },
        "load_assignment": {
            "cluster_name": CONTROL,
            "endpoints": [
                {
                    "lb_endpoints": [
                        {"endpoint": {"address": _address("127.0.0.1", plan.control_port)}}
                    ]
                }
            ],
        },
    }


def access_log(plan: Plan) -> list[dict[str, Any]]:
    """One JSON line per call on stdout, in the fields of the services' access lines."""
    if not plan.access_log:
        return []
    entry: dict[str, Any] = {
        "name": "envoy.access_loggers.stdout",
        "typed_config": _typed(
            "extensions.access_loggers.stream.v3.StdoutAccessLog",
            log_format={
                "json_format": {
                    "timestamp": "%START_TIME(%Y-%m-%dT%H:%M:%S.%3fZ)%",
                    "level": "info",
                    "logger": "envoy",
                    "event": "call",
                    "method": "%REQ(:PATH)%",
                    "code": "%GRPC_STATUS%",
                    "ms": "%DURATION%",
                    "peer": "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%",
                    "flags": "%RESPONSE_FLAGS%",
                }
            },
        ),
    }
    if plan.access_log_sample > 1:
        # Every call that did not end OK, and one in N of those that did.
        entry["filter"] = {
            "or_filter": {
                "filters": [
                    {"grpc_status_filter": {"statuses": ["OK"], "exclude": True}},
                    {
                        "runtime_filter": {
                            "runtime_key": "access_log_sample",
                            "percent_sampled": {
                                "numerator": max(1, 1_000_000 // plan.access_log_sample),
                                "denominator": "MILLION",
                            },
                        }
                    },
                ]
            }
        }
    return [entry]


def bootstrap(plan: Plan) -> dict[str, Any]:
    """Envoy's whole configuration for ``plan``."""
    filters: list[dict[str, Any]] = [
        *web.filters(),  # CORS and gRPC-Web first: every reply goes back through them
        {
            "name": "envoy.filters.http.grpc_stats",
            "typed_config": _typed(
                "extensions.filters.http.grpc_stats.v3.FilterConfig",
                stats_for_all_methods=True,
                enable_upstream_stats=True,
            ),
        },
    ]
    if plan.rate_per_client > 0:
        filters.append(rate_limit(plan))
    filters.append(
        {
            "name": "envoy.filters.http.router",
            "typed_config": _typed("extensions.filters.http.router.v3.Router"),
        }
    )
    protocol: dict[str, Any] = {"idle_timeout": "3600s", "max_headers_count": HEADERS_COUNT}
    if plan.max_connection_age > 0:
        protocol["max_connection_duration"] = _seconds(plan.max_connection_age)
    manager = _typed(
        "extensions.filters.network.http_connection_manager.v3.HttpConnectionManager",
        stat_prefix="gateway",
        codec_type="AUTO",  # HTTP/2, and HTTP/1.1 for browsers' gRPC-Web
        use_remote_address=True,
        # The client's address (the rate limiter's key and the x-forwarded-for set
        # below) is the connection's, or with a trusted proxy in front, its last hop's.
        xff_num_trusted_hops=1 if plan.trust_forwarded_for else 0,
        skip_xff_append=True,
        # A watcher may wait long for the next update: no idle timeout on a stream.
        stream_idle_timeout="0s",
        max_request_headers_kb=HEADERS_KB,
        common_http_protocol_options=protocol,
        http2_protocol_options=_http2(streams=CLIENT_STREAMS),
        local_reply_config={"mappers": [*web.grpc_web_refusals(refusals(plan)), *refusals(plan)]},
        access_log=access_log(plan),
        route_config={
            "name": "games",
            "virtual_hosts": [
                {
                    "name": "gateway",
                    "domains": ["*"],
                    "routes": [*web.unroutable(), *_routes(plan)],
                    "typed_per_filter_config": web.cors_policy(plan.cors_origins),
                    "request_headers_to_add": [
                        _header("x-forwarded-for", "%DOWNSTREAM_REMOTE_ADDRESS_WITHOUT_PORT%")
                    ],
                }
            ],
        },
        http_filters=filters,
    )
    traced = tracing.envoy()  # OTEL_* (gateway.tracing): a span per call, or none
    if traced is not None:
        manager["tracing"] = traced.manager
    chain: dict[str, Any] = {
        "filters": [{"name": "envoy.filters.network.http_connection_manager",
                     "typed_config": manager}]
    }  # fmt: skip
    if plan.tls is not None:
        chain["transport_socket"] = _downstream_tls(plan.tls)
    clusters = [_cluster(plan, name, addrs) for name, addrs in plan.routes.items()]
    return {
        "admin": {"address": _address("127.0.0.1", plan.admin_port)},
        "layered_runtime": {
            "layers": [{"name": "static", "static_layer": traced.runtime if traced else {}}]
        },
        # Histograms are merged at each flush: every 5 s (Envoy's default), so a scrape's
        # latency figures are at most 5 s behind its counters. Every second, the flush
        # was half of Envoy's CPU at rest (BENCHMARKS.md, "At rest"). Not on admin reads
        # (stats_flush_on_admin): that merge ends after the read is answered, so each
        # scrape would show the histograms of the one before.
        "stats_flush_interval": "5s",
        # Connections at once, over every listener: beyond, new ones are closed at once.
        "overload_manager": {
            "resource_monitors": [
                {
                    "name": "envoy.resource_monitors.global_downstream_max_connections",
                    "typed_config": _typed(
                        "extensions.resource_monitors.downstream_connections.v3."
                        "DownstreamConnectionsConfig",
                        max_active_downstream_connections=MAX_CONNECTIONS,
                    ),
                }
            ]
        },
        "static_resources": {
            "listeners": [
                {
                    "name": "gateway",
                    "address": _address(plan.host, plan.port),
                    "filter_chains": [chain],
                }
            ],
            "clusters": [*clusters, _control(plan), *([traced.cluster] if traced else [])],
        },
    }
