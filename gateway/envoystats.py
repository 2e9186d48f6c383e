"""Envoy's statistics in our metric names (docs/metrics.md), read at each scrape.

On Envoy's data path the calls are counted by Envoy: its grpc_stats filter per cluster
and gRPC method, its local rate limiter and circuit breakers per refusal. This collector
reads those from Envoy's admin endpoint and yields them as the ``grpc_server_*``,
``grpc_client_*`` and ``tabletop_gateway_limited_total`` families RpcMetrics and
GatewayMetrics name, summed over clusters. Register it in the gateway's registry::

    registry.register(EnvoyStats("127.0.0.1:9901"))

Envoy's stat names are read in their JSON form: its Prometheus output splits a dotted
service name (``tabletop.channeling.v1.ChannelingService``) into wrong tags.

Every method the gateway routes has its series from the start, at 0, as go-grpc-prometheus
creates them: started, handled for every code, messages, and both histograms (in
Envoy's default buckets). Envoy creates a method's stats at its first call only, so the
methods are read from its own route table (the exact paths of its configuration, read
once) plus the services the gateway's Python side answers (catalog, health, reflection):
a game that is not routed has none.
"""

from __future__ import annotations

import functools
import importlib
import json
import re
import urllib.parse
import urllib.request
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import grpc
import structlog
from google.protobuf import descriptor_pool
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector, CollectorRegistry

from gateway.envoy import RATE_PREFIX
from services import registry
from services.kit.metrics import BIDI_STREAM, CLIENT_STREAM, SERVER_STREAM, UNARY

_log = structlog.get_logger("envoystats")

# The local rate limiter's refusals (``rate_limited`` also counts calls over the limit
# that were let through while enforcement is below 100%), and the circuit breakers'
# (``active``: max_requests; ``pending``: max_pending_requests).
RATE_LIMITED = f"{RATE_PREFIX}.http_local_rate_limit.enforced"
_OVERFLOW = re.compile(r"cluster\.[^.]+\.upstream_rq_(?:active|pending)_overflow")
# cluster.<cluster>.grpc.<service>.<method>.<stat>: the service has dots, the rest none.
_GRPC = re.compile(r"cluster\.[^.]+\.grpc\.(.+)\.([^.]+)\.([^.]+)")
_TIMES = r"^cluster\.[^.]+\.grpc\..+\.upstream_rq_time$"
# Only what is mapped, so each read stays small (Envoy matches with RE2).
_FILTER = (
    r"^cluster\.[^.]+\.(grpc\..+\.(total|\d+|request_message_count|response_message_count"
    r"|upstream_rq_time)|upstream_rq_(active|pending)_overflow)$|^" + re.escape(RATE_LIMITED) + "$"
)
_CODES = {code.value[0]: code.name for code in grpc.StatusCode}
# Envoy's histogram buckets when its configuration sets none (ms; ours sets none): the
# bounds of a method's histogram before Envoy has recorded one for it.
ENVOY_BUCKETS_MS = (
    0.5, 1, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 30000, 60000, 300000,
    600000, 1800000, 3600000,
)  # fmt: skip
# What the gateway's Python side answers itself, behind Envoy's catch-all route.
GATEWAY_SERVICES = (
    "tabletop.gateway.v1.CatalogService",
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
)
_PATH = re.compile(r"/([A-Za-z_][\w.]*)/([A-Za-z_]\w*)")
# Both reflection versions have the same methods; the v1 protos are not compiled in.
_ALIASES = {"grpc.reflection.v1.ServerReflection": "grpc.reflection.v1alpha.ServerReflection"}
_CALL = ["grpc_type", "grpc_service", "grpc_method"]


@dataclass
class _Method:
    """One method's figures, summed over the clusters that carry its service."""

    total: int = 0
    codes: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    received: int = 0
    sent: int = 0
    buckets: dict[float, int] = field(default_factory=lambda: defaultdict(int))  # ms: cumulative
    count: int = 0
    sum_ms: float = 0.0


class EnvoyStats(Collector):
    """A prometheus_client collector of Envoy's call and refusal counts.

    ``admin`` is Envoy's admin address (``127.0.0.1:9901``); ``fetch(url)`` returns a
    response body (urllib by default). When Envoy does not answer, only
    ``tabletop_gateway_envoy_up 0`` is yielded: collect() never raises.
    """

    def __init__(
        self,
        admin: str,
        *,
        timeout: float = 2.0,
        fetch: Callable[[str], str] | None = None,
        python: CollectorRegistry | None = None,
        routed: Iterable[tuple[str, str]] | None = None,
    ) -> None:
        # python: the gateway's Python side's own families; its limit refusals (the
        # streams it routes) are added to Envoy's. routed: the (service, method) pairs
        # with series from the start; None reads them from Envoy's routes.
        self._python = python
        self._admin = admin
        self._timeout = timeout
        self._fetch = fetch or self._get
        self._routed = None if routed is None else frozenset(routed)
        # grpc_type is read from the methods' descriptors: load those of every service.
        for entry in registry.SERVICES:
            entry.pb2()
        importlib.import_module("grpc_health.v1.health_pb2")
        importlib.import_module("grpc_reflection.v1alpha.reflection_pb2")
        importlib.import_module("tabletop.gateway.v1.catalog_pb2")

    def describe(self) -> list[Metric]:
        return []  # so registering does not read Envoy

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily(
            "tabletop_gateway_envoy_up", "1 when Envoy's admin endpoint answered this scrape"
        )
        try:
            methods, limited = self._read()
        except Exception as error:  # a scrape must not fail: say Envoy is down instead
            _log.warning("envoy_stats_unreadable", admin=self._admin, error=repr(error))
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        for key in self.routed():
            methods.setdefault(key, _Method())
        yield from _families(methods)
        family = CounterMetricFamily(
            "tabletop_gateway_limited",
            "Calls refused by a gateway limit (Envoy's local rate limiter per client "
            "address and its circuit breakers for max_concurrent_calls, and the Python "
            "side's limits on the watch streams it routes)",
            labels=["limit"],
        )
        for limit, value in sorted(self._python_limited(limited).items()):
            family.add_metric([limit], value)
        yield family

    def _python_limited(self, limited: Mapping[str, float]) -> dict[str, float]:
        out = dict(limited)
        for metric in self._python.collect() if self._python else ():
            if metric.name == "tabletop_gateway_limited":
                for sample in metric.samples:
                    if sample.name.endswith("_total"):
                        limit = sample.labels["limit"]
                        out[limit] = out.get(limit, 0) + sample.value
        return out

    def routed(self) -> frozenset[tuple[str, str]]:
        """Every (service, method) the gateway routes: the exact paths of Envoy's routes,
        and every method of the services its Python side answers. Read from Envoy once;
        while it cannot be read, only the latter (tried again at the next scrape)."""
        if self._routed is not None:
            return self._routed
        own = frozenset(
            (service, method) for service in GATEWAY_SERVICES for method in _methods_of(service)
        )
        try:
            config = json.loads(self._fetch(self._config_url()))
        except Exception as error:  # the counters do not wait for the route table
            _log.warning("envoy_routes_unreadable", admin=self._admin, error=repr(error))
            return own
        self._routed = own | frozenset(_paths(config))
        return self._routed

    def _config_url(self) -> str:
        return f"http://{self._admin}/config_dump?resource=static_listeners"

    def _url(self, **query: str) -> str:
        return f"http://{self._admin}/stats?" + urllib.parse.urlencode({"format": "json", **query})

    def _get(self, url: str) -> str:
        with urllib.request.urlopen(url, timeout=self._timeout) as response:
            return str(response.read().decode())

    def _read(self) -> tuple[dict[tuple[str, str], _Method], dict[str, int]]:
        # Envoy's JSON gives a histogram's buckets (cumulative mode) or its recorded
        # values (detailed mode: the count and sum), never both: two reads.
        stats = _stats(self._fetch(self._url(histogram_buckets="cumulative", filter=_FILTER)))
        details = _stats(
            self._fetch(self._url(histogram_buckets="detailed", type="Histograms", filter=_TIMES))
        )
        methods: dict[tuple[str, str], _Method] = defaultdict(_Method)
        limited = {"rate_per_client": 0, "max_concurrent_calls": 0}
        for entry in stats:
            if "histograms" in entry:
                for histogram in entry["histograms"]:  # [{name, buckets}], bounds in ms
                    method = _method(methods, histogram["name"])
                    for bucket in histogram["buckets"]:
                        method.buckets[float(bucket["upper_bound"])] += int(bucket["cumulative"])
                continue
            name, value = entry["name"], int(entry["value"])
            if name == RATE_LIMITED:
                limited["rate_per_client"] += value
            elif _OVERFLOW.fullmatch(name):
                limited["max_concurrent_calls"] += value
            else:
                _count(_method(methods, name), name.rpartition(".")[2], value)
        for entry in details:
            for histogram in entry.get("histograms", {}).get("details", []):
                method = _method(methods, histogram["name"])
                for bin_ in histogram["totals"]:  # {lower_bound, width, count}, in ms
                    method.count += int(bin_["count"])
                    middle = float(bin_["lower_bound"]) + float(bin_["width"]) / 2
                    method.sum_ms += int(bin_["count"]) * middle
        return methods, limited


def _paths(config: Any) -> Iterator[tuple[str, str]]:
    """The (service, method) of every route matching one exact gRPC path, anywhere in an
    Envoy configuration dump."""
    if isinstance(config, dict):
        match = config.get("match")
        if isinstance(match, dict) and isinstance(match.get("path"), str):
            found = _PATH.fullmatch(match["path"])
            if found:
                yield found[1], found[2]
        for value in config.values():
            yield from _paths(value)
    elif isinstance(config, list):
        for value in config:
            yield from _paths(value)


def _methods_of(service: str) -> list[str]:
    try:
        found = descriptor_pool.Default().FindServiceByName(_ALIASES.get(service, service))
    except KeyError:
        return []
    return [method.name for method in found.methods]


def _stats(body: str) -> list[dict[str, Any]]:
    stats: list[dict[str, Any]] = json.loads(body)["stats"]
    return stats


def _method(methods: dict[tuple[str, str], _Method], name: str) -> _Method:
    found = _GRPC.fullmatch(name)
    if found is None:
        raise ValueError(f"not a per-method gRPC stat: {name}")
    return methods[found[1], found[2]]


def _count(method: _Method, stat: str, value: int) -> None:
    if stat == "total":
        method.total += value
    elif stat == "request_message_count":
        method.received += value
    elif stat == "response_message_count":
        method.sent += value
    else:  # the numeric status; one outside 0-16 is UNKNOWN to a gRPC client
        method.codes[_CODES.get(int(stat), "UNKNOWN")] += value


@functools.cache
def grpc_type(service: str, method: str) -> str:
    """The call shape of ``service/method`` from its descriptor; ``unary`` if unknown."""
    try:
        pool = descriptor_pool.Default()
        found = pool.FindServiceByName(_ALIASES.get(service, service)).methods_by_name[method]
    except KeyError:
        return UNARY
    if found.client_streaming:
        return BIDI_STREAM if found.server_streaming else CLIENT_STREAM
    return SERVER_STREAM if found.server_streaming else UNARY


def _families(methods: dict[tuple[str, str], _Method]) -> Iterator[Metric]:
    started = CounterMetricFamily(
        "grpc_server_started",
        "RPCs started on the gateway, from Envoy's grpc_stats: counted when they end with "
        "a status (a stream the client cancels is never counted)",
        labels=_CALL,
    )
    handled = CounterMetricFamily(
        "grpc_server_handled",
        "RPCs completed on the gateway, by status code (refusals by its limits included)",
        labels=[*_CALL, "grpc_code"],
    )
    received = CounterMetricFamily(
        "grpc_server_msg_received",
        "Messages received by the gateway (those of calls refused by a limit are not counted)",
        labels=_CALL,
    )
    sent = CounterMetricFamily("grpc_server_msg_sent", "Messages sent by the gateway", labels=_CALL)
    server_seconds = HistogramMetricFamily(
        "grpc_server_handling_seconds",
        "Time of the calls the gateway forwarded, from Envoy's per-method upstream_rq_time "
        "(whole milliseconds from the upstream request to its response's end: Envoy's own "
        "time and refused calls are not in it)",
        labels=_CALL,
    )
    client_seconds = HistogramMetricFamily(
        "grpc_client_handling_seconds",
        "Time of the gateway's upstream calls, from Envoy's per-method upstream_rq_time "
        "(whole milliseconds, start to the response's end)",
        labels=_CALL,
    )
    client_started = CounterMetricFamily(
        "grpc_client_started",
        "Upstream calls the gateway made, as Envoy's per-method upstream_rq_time counts "
        "them: when they end (the count of grpc_client_handling_seconds)",
        labels=_CALL,
    )
    for (service, name), method in sorted(methods.items()):
        labels = [grpc_type(service, name), service, name]
        started.add_metric(labels, method.total)
        # Every code, as go-grpc-prometheus: a code's first call is an increase, not a
        # series born at 1 (an unknown number Envoy counted comes on top, as UNKNOWN).
        codes = {**dict.fromkeys(_CODES.values(), 0), **method.codes}
        for code, value in sorted(codes.items()):
            handled.add_metric([*labels, code], value)
        received.add_metric(labels, method.received)
        sent.add_metric(labels, method.sent)
        # Before Envoy has recorded a time for the method: its buckets, empty.
        cumulative = sorted(method.buckets.items()) or [(ms, 0) for ms in ENVOY_BUCKETS_MS]
        # Envoy may merge its histograms between the two reads: +Inf stays the largest.
        count = max(method.count, cumulative[-1][1])
        buckets = [(str(ms / 1000), value) for ms, value in cumulative]
        buckets.append(("+Inf", count))
        for family in (server_seconds, client_seconds):
            family.add_metric(labels, buckets, method.sum_ms / 1000)
        client_started.add_metric(labels, count)
    yield from (started, handled, received, sent, server_seconds, client_seconds, client_started)
