"""The alert rules and the dashboard as files: promtool checks the rules and runs their
unit tests (each alert fires on a bad series, stays quiet on a good one), a mutated rule
makes those tests fail, and the generated files are what the generator writes now."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from deploy.observability import generate
from tests.observability.rules import alerts, split

RULES = generate.RULES
UNIT_TESTS = Path(__file__).with_name("rules_test.yaml")


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(args, capture_output=True, text=True, timeout=120)


def test_the_rules_pass_promtool_check(promtool):
    result = run(promtool, "check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr
    assert f"SUCCESS: {len(alerts())} rules found" in result.stdout


def test_every_alert_is_a_value_compared_with_a_threshold_and_has_its_unit_test():
    names = [rule["alert"] for rule in alerts()]
    wanted = {
        "TabletopErrorRatioHigh",
        "TabletopLatencyP99High",
        "TabletopBackendDown",
        "TabletopStoreUnavailable",
        "TabletopRateLimitSurge",
    }
    assert wanted <= set(names)
    for rule in alerts():
        split(rule["expr"])
        assert rule["labels"]["severity"] in ("critical", "warning"), rule["alert"]
        assert {"summary", "description"} <= set(rule["annotations"]), rule["alert"]
    tests = yaml.safe_load(UNIT_TESTS.read_text())["tests"]
    tested = {}
    for test in tests:
        for case in test["alert_rule_test"]:
            tested.setdefault(case["alertname"], []).append(bool(case["exp_alerts"]))
    # Each alert has a case where it fires and one where it stays quiet.
    assert {name: sorted(set(cases)) for name, cases in tested.items()} == {
        name: [False, True] for name in names
    }


def test_the_unit_tests_pass(promtool):
    result = run(promtool, "test", "rules", str(UNIT_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


@pytest.mark.parametrize("name", [rule["alert"] for rule in alerts()])
def test_a_rule_that_cannot_fire_fails_the_unit_tests(promtool, tmp_path, name):
    """The control: with one alert's threshold moved out of reach, promtool's tests fail,
    so they do check the firing and not only the syntax."""
    document = yaml.safe_load(RULES.read_text())
    for group in document["groups"]:
        for rule in group["rules"]:
            if rule.get("alert") == name:
                value, op, _ = split(rule["expr"])
                rule["expr"] = f"{value} {op} {1e12 if op.startswith('>') else -1e12}"
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(document))
    tests = yaml.safe_load(UNIT_TESTS.read_text())
    tests["rule_files"] = ["rules.yaml"]
    (tmp_path / "rules_test.yaml").write_text(yaml.safe_dump(tests))
    result = run(promtool, "test", "rules", str(tmp_path / "rules_test.yaml"))
    assert result.returncode != 0
    assert f"alertname: {name}" in result.stdout + result.stderr


def test_the_generated_files_are_what_the_generator_writes_now():
    for path, text in generate.files().items():
        on_disk = (generate.HERE / path).read_text()
        assert on_disk == text, (
            f"deploy/observability/{path} is stale: python -m deploy.observability.generate"
        )


def test_the_dashboard_is_ready_for_provisioning():
    board = json.loads((generate.HERE / generate.DASHBOARD).read_text())
    variables = {v["name"]: v for v in board["templating"]["list"]}
    assert variables["datasource"]["type"] == "datasource"
    assert variables["datasource"]["query"] == "prometheus"
    assert board["uid"] and "id" not in board  # provisioning assigns the id
    ids = [p["id"] for p in board["panels"]]
    assert len(ids) == len(set(ids))
    for panel in board["panels"]:
        if panel["type"] == "row":
            continue
        # No data source named: every query asks the variable.
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}
        assert all(t["datasource"] == panel["datasource"] for t in panel["targets"])
        assert panel["targets"], panel["title"]
    exprs = " ".join(expr for _, expr in generate.queries(board))
    for metric in (
        "grpc_server_handled_total",
        "grpc_server_handling_seconds_bucket",
        # Not grpc_client_handled_total: Envoy, the default data path, has no such figure.
        "grpc_client_handling_seconds_bucket",
        "tabletop_moves_applied_total",
        "tabletop_engine_move_seconds_bucket",
        "tabletop_games_live",
        "tabletop_games_created_total",
        "tabletop_games_finished_total",
        "tabletop_gateway_backend_up",
        "tabletop_gateway_limited_total",
        "tabletop_limits_hit_total",
        "tabletop_watchers",
    ):
        assert metric + "{" in exprs, metric
    # The provisioning example points Grafana at a folder holding this file.
    provider = yaml.safe_load(
        (generate.HERE / "grafana/provisioning/dashboards/tabletop.yaml").read_text()
    )["providers"][0]
    assert provider["type"] == "file" and provider["options"]["path"]
    source = yaml.safe_load(
        (generate.HERE / "grafana/provisioning/datasources/prometheus.yaml").read_text()
    )["datasources"][0]
    assert source["type"] == variables["datasource"]["query"]


def test_the_example_prometheus_configuration_is_valid(promtool, tmp_path):
    config = generate.HERE / generate.PROMETHEUS_EXAMPLE
    result = run(promtool, "check", "config", str(config))
    assert result.returncode == 0, result.stdout + result.stderr
