"""Envoy's tracing as the bootstrap holds it, from the same OTEL_* variables as the
Python processes: present only when they turn tracing on."""

from __future__ import annotations

import os

import pytest

from gateway import envoy, tracing
from services.kit.tracing import TracingConfigError

PLAN = envoy.Plan(
    host="127.0.0.1", port=1, admin_port=2, control_port=3, routes={"channeling": ["127.0.0.1:4"]}
)


def _clear(monkeypatch) -> None:
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)


def test_off_the_bootstrap_has_no_tracer_and_no_collector(monkeypatch):
    _clear(monkeypatch)
    config = envoy.bootstrap(PLAN)
    manager = config["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]
    assert "tracing" not in manager["typed_config"]
    names = [c["name"] for c in config["static_resources"]["clusters"]]
    assert tracing.COLLECTOR not in names
    # The control: the same plan with an endpoint set has both.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4317")
    config = envoy.bootstrap(PLAN)
    manager = config["static_resources"]["listeners"][0]["filter_chains"][0]["filters"][0]
    assert manager["typed_config"]["tracing"]["provider"]["name"] == "envoy.tracers.opentelemetry"
    assert tracing.COLLECTOR in [c["name"] for c in config["static_resources"]["clusters"]]


@pytest.mark.parametrize(
    "env",
    [
        {},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_SDK_DISABLED": "true"},
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317", "OTEL_TRACES_EXPORTER": "none"},
        {"OTEL_TRACES_EXPORTER": "console"},  # no Envoy counterpart
    ],
)
def test_envoy_does_not_trace_unless_otlp_is_asked_for(env):
    assert tracing.envoy(env) is None


def test_the_collector_its_tls_headers_name_and_sampling():
    traced = tracing.envoy(
        {
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://otel.example:4317",
            "OTEL_EXPORTER_OTLP_HEADERS": "api-key=s%3Dcret,X-Team=games",
            "OTEL_SERVICE_NAME": "tt",
            "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
            "OTEL_TRACES_SAMPLER_ARG": "0.25",
        }
    )
    assert traced is not None
    provider = traced.manager["provider"]["typed_config"]
    assert provider["service_name"] == "tt-envoy"
    assert provider["grpc_service"]["initial_metadata"] == [
        {"key": "api-key", "value": "s=cret"},
        {"key": "x-team", "value": "games"},
    ]
    assert traced.manager["random_sampling"] == {"value": 25.0}
    address = traced.cluster["load_assignment"]["endpoints"][0]["lb_endpoints"][0]["endpoint"]
    assert address["address"]["socket_address"] == {"address": "otel.example", "port_value": 4317}
    tls = traced.cluster["transport_socket"]["typed_config"]
    assert tls["sni"] == "otel.example"
    validation = tls["common_tls_context"]["validation_context"]
    assert validation["trusted_ca"] == {"filename": tracing.SYSTEM_ROOTS}
    plain = tracing.envoy({"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4317"})
    assert plain is not None and "transport_socket" not in plain.cluster
    assert plain.manager["random_sampling"] == {"value": 100.0}


@pytest.mark.parametrize(
    ("sampler", "arg", "percent"),
    [
        ("always_off", None, 0.0),
        ("parentbased_always_off", None, 0.0),
        ("traceidratio", "0.01", 1.0),
        ("traceidratio", "7", 100.0),
        ("always_on", None, 100.0),
    ],
)
def test_sampling_from_the_standard_sampler(sampler, arg, percent):
    env = {"OTEL_TRACES_SAMPLER": sampler}
    if arg is not None:
        env["OTEL_TRACES_SAMPLER_ARG"] = arg
    assert tracing.sampling_percent(env) == pytest.approx(percent)


def test_an_endpoint_without_a_host_is_refused_by_name():
    with pytest.raises(TracingConfigError, match="OTEL_EXPORTER_OTLP_ENDPOINT"):
        tracing.envoy({"OTEL_EXPORTER_OTLP_ENDPOINT": "ftp://"})


def test_envoys_batches_follow_the_sdks_variables():
    base = {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://c:4317"}
    traced = tracing.envoy(base)
    assert traced is not None and traced.runtime == {}  # Envoy's defaults: 5 s, 5 spans
    traced = tracing.envoy(
        base | {"OTEL_BSP_SCHEDULE_DELAY": "200", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": "64"}
    )
    assert traced is not None
    assert traced.runtime == {
        "tracing.opentelemetry.flush_interval_ms": 200,
        "tracing.opentelemetry.min_flush_spans": 64,
    }
    traced = tracing.envoy(base | {"OTEL_BSP_SCHEDULE_DELAY": "soon"})  # the SDK ignores it
    assert traced is not None and traced.runtime == {}
