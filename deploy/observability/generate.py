"""Write the Grafana dashboard and the example Prometheus configuration.

    python -m deploy.observability.generate          # rewrite the generated files
    python -m deploy.observability.generate --check  # exit 1 if the committed files differ

``grafana/tabletop.json`` is ready for file provisioning (``grafana/provisioning``) or
for import: every query goes through the ``datasource`` variable, and ``namespace`` and
``job`` narrow it down. Jobs follow one convention: ``tabletop-gateway`` for the gateway,
``tabletop-<game>`` for each game service (the Kubernetes Service names, which the
Prometheus Operator uses as ``job``); ``instance`` is one process. The gateway serves the
games' gRPC services too, so a panel grouped by ``job`` shows what clients see
(``tabletop-gateway``) beside what each game answered.

``prometheus.example.yml`` scrapes every process of ``make run`` (ports from
:mod:`services.registry`) and loads ``rules.yaml``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import yaml

from services import registry

HERE = Path(__file__).resolve().parent
DASHBOARD = "grafana/tabletop.json"
PROMETHEUS_EXAMPLE = "prometheus.example.yml"
RULES = HERE / "rules.yaml"
UID = "tabletop-overview"

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
# Only our gRPC services: health checks and reflection are not the games' traffic.
OURS = 'grpc_service=~"tabletop\\\\..+"'
SCOPE = 'namespace=~"$namespace", job=~"$job"'
# The codes that are the server's fault (the same list as the error-ratio alert).
SERVER_FAULTS = "UNKNOWN|INTERNAL|UNAVAILABLE|DEADLINE_EXCEEDED|DATA_LOSS|UNIMPLEMENTED"
FAULTS = OURS + ', grpc_code=~"' + SERVER_FAULTS + '"'
RATE = "$__rate_interval"
# The game services' own series, not the gateway's (which counts the same calls again).
GAMES_ONLY = ', job!="' + registry.GATEWAY.host + '"'


def job_name(host: str) -> str:
    """The scrape job of a process: its Kubernetes Service name (tabletop-<game>)."""
    return host


def _rate(metric: str, matchers: str = "") -> str:
    inner = ", ".join(m for m in (SCOPE, matchers) if m)
    return f"rate({metric}{{{inner}}}[{RATE}])"


def _quantile(q: float, metric: str, by: str, matchers: str = "") -> str:
    return f"histogram_quantile({q}, sum by ({by}, le) ({_rate(metric + '_bucket', matchers)}))"


def _target(expr: str, legend: str, ref: str) -> dict[str, Any]:
    return {"refId": ref, "datasource": DATASOURCE, "expr": expr, "legendFormat": legend}


class Layout:
    """Panels two to a row of the 24-column grid, in the order they are added."""

    def __init__(self) -> None:
        self.panels: list[dict[str, Any]] = []
        self.y = 0
        self.x = 0

    def row(self, title: str) -> None:
        self._newline()
        self.panels.append(
            {
                "type": "row",
                "title": title,
                "collapsed": False,
                "id": len(self.panels) + 1,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": self.y},
                "panels": [],
            }
        )
        self.y += 1

    def _newline(self) -> None:
        if self.x:
            self.x = 0
            self.y += 8

    def panel(
        self,
        title: str,
        description: str,
        unit: str,
        targets: list[tuple[str, str]],
        kind: str = "timeseries",
    ) -> None:
        self.panels.append(
            {
                "type": kind,
                "title": title,
                "description": description,
                "id": len(self.panels) + 1,
                "datasource": DATASOURCE,
                "gridPos": {"h": 8, "w": 12, "x": self.x, "y": self.y},
                "fieldConfig": {"defaults": {"unit": unit}, "overrides": []},
                "options": {
                    "legend": {"displayMode": "list", "placement": "bottom", "showLegend": True},
                    "tooltip": {"mode": "multi", "sort": "desc"},
                },
                "targets": [
                    _target(expr, legend, chr(ord("A") + i))
                    for i, (expr, legend) in enumerate(targets)
                ],
            }
        )
        self.x += 12
        if self.x >= 24:
            self._newline()


def panels() -> list[dict[str, Any]]:
    layout = Layout()
    calls = "grpc_server_handled_total"
    layout.row("Calls (grpc_server_*: every process; job tabletop-gateway is what clients see)")
    layout.panel(
        "Calls by method and code",
        "Calls handled per second, by process, method and status code.",
        "reqps",
        [
            (
                f"sum by (job, grpc_method, grpc_code) ({_rate(calls, OURS)})",
                "{{job}} {{grpc_method}} {{grpc_code}}",
            )
        ],
    )
    layout.panel(
        "Error ratio (server-side codes)",
        f"Share of calls ending {SERVER_FAULTS.replace('|', ', ')}: the server's fault, "
        "not the caller's. Alert: TabletopErrorRatioHigh (over 5% for 5m).",
        "percentunit",
        [
            (
                f"(sum by (job, grpc_service) ({_rate(calls, FAULTS)})"
                f" or sum by (job, grpc_service) ({_rate(calls, OURS)}) * 0)"
                f" / sum by (job, grpc_service) ({_rate(calls, OURS)})",
                "{{job}} {{grpc_service}}",
            )
        ],
    )
    unary = OURS + ', grpc_type="unary"'
    layout.panel(
        "Latency p50 / p99 by method (unary calls)",
        "From grpc_server_handling_seconds; streams (WatchGame) are left out: they last as "
        "long as their watcher. Alert: TabletopLatencyP99High (p99 over 500 ms for 10m).",
        "s",
        [
            (
                _quantile(0.5, "grpc_server_handling_seconds", "job, grpc_method", unary),
                "p50 {{job}} {{grpc_method}}",
            ),
            (
                _quantile(0.99, "grpc_server_handling_seconds", "job, grpc_method", unary),
                "p99 {{job}} {{grpc_method}}",
            ),
        ],
    )
    layout.panel(
        "Gateway to games: calls by backend and code",
        "What each game service answered the gateway (the services' own "
        "grpc_server_handled_total), one line per game service and code, and the "
        "gateway's upstream p99 (grpc_client_handling_seconds, from Envoy's upstream time).",
        "reqps",
        [
            (
                "sum by (grpc_service, grpc_code) ("
                f"{_rate('grpc_server_handled_total', OURS + GAMES_ONLY)})",
                "{{grpc_service}} {{grpc_code}}",
            ),
            (
                _quantile(0.99, "grpc_client_handling_seconds", "grpc_service", unary),
                "p99 {{grpc_service}}",
            ),
        ],
    )
    layout.row("Games")
    layout.panel(
        "Moves per second by game",
        "Moves accepted and logged; refused moves by reason below them.",
        "ops",
        [
            (f"sum by (game) ({_rate('tabletop_moves_applied_total')})", "applied {{game}}"),
            (
                f"sum by (game, reason) ({_rate('tabletop_moves_rejected_total')})",
                "rejected {{game}} {{reason}}",
            ),
        ],
    )
    layout.panel(
        "Engine time per move by game",
        "Time the rules engine takes to validate and apply one move (p50, p99).",
        "s",
        [
            (_quantile(0.5, "tabletop_engine_move_seconds", "game"), "p50 {{game}}"),
            (_quantile(0.99, "tabletop_engine_move_seconds", "game"), "p99 {{game}}"),
        ],
    )
    layout.panel(
        "Games live",
        "Games held in memory by each game's replicas.",
        "short",
        [(f"sum by (game) (tabletop_games_live{{{SCOPE}}})", "{{game}}")],
    )
    layout.panel(
        "Games created and finished per minute",
        "New games, and games that reached an outcome.",
        "short",
        [
            (f"sum by (game) ({_rate('tabletop_games_created_total')}) * 60", "created {{game}}"),
            (
                f"sum by (game) ({_rate('tabletop_games_finished_total')}) * 60",
                "finished {{game}}",
            ),
        ],
    )
    layout.panel(
        "Watchers",
        "Open WatchGame streams, by game.",
        "short",
        [(f"sum by (game) (tabletop_watchers{{{SCOPE}}})", "{{game}}")],
    )
    layout.row("Health and limits")
    layout.panel(
        "Backends up (gateway)",
        "1 when the gateway finds a SERVING backend for the game service, 0 when none. "
        "Alert: TabletopBackendDown.",
        "short",
        [
            (
                f"min by (grpc_service) (tabletop_gateway_backend_up{{{SCOPE}}})",
                "{{grpc_service}}",
            )
        ],
    )
    layout.panel(
        "Scrape targets up",
        "1 per process Prometheus can scrape. Alert: TabletopTargetDown.",
        "short",
        [(f"up{{{SCOPE}}}", "{{job}} {{instance}}")],
    )
    layout.panel(
        "Limits hit",
        "Calls refused by a per-client limit (gateway, games) and by a game limit "
        "(RESOURCE_EXHAUSTED). Alert: TabletopRateLimitSurge.",
        "reqps",
        [
            (
                f"sum by (job, limit) ({_rate('tabletop_gateway_limited_total')})",
                "{{job}} {{limit}}",
            ),
            (f"sum by (job, limit) ({_rate('tabletop_limited_total')})", "{{job}} {{limit}}"),
            (
                f"sum by (game, limit) ({_rate('tabletop_limits_hit_total')})",
                "{{game}} {{limit}}",
            ),
        ],
    )
    layout.panel(
        "Auth failures and store errors",
        "Calls refused for a missing or bad seat token, by reason; store errors by game "
        "(alert: TabletopStoreUnavailable).",
        "reqps",
        [
            (
                f"sum by (game, reason) ({_rate('tabletop_auth_failures_total')})",
                "auth {{game}} {{reason}}",
            ),
            (f"sum by (game) ({_rate('tabletop_store_errors_total')})", "store {{game}}"),
        ],
    )
    return layout.panels


def _variable(name: str, label: str, query: str, all_value: str) -> dict[str, Any]:
    return {
        "name": name,
        "label": label,
        "type": "query",
        "datasource": DATASOURCE,
        "query": {"query": query, "refId": name},
        "definition": query,
        "refresh": 2,  # on time range change: new pods and namespaces appear
        "includeAll": True,
        "multi": True,
        "allValue": all_value,
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "sort": 1,
        "hide": 0,
    }


def dashboard() -> dict[str, Any]:
    return {
        "uid": UID,
        "title": "Tabletop: calls, games, health",
        "description": "The tabletop game services and their gateway (deploy/observability).",
        "tags": ["tabletop", "grpc"],
        "editable": True,
        "graphTooltip": 1,
        "refresh": "30s",
        "schemaVersion": 39,
        "version": 1,
        "time": {"from": "now-1h", "to": "now"},
        "timezone": "",
        "annotations": {"list": []},
        "links": [],
        "templating": {
            "list": [
                {
                    "name": "datasource",
                    "label": "Data source",
                    "type": "datasource",
                    "query": "prometheus",
                    "refresh": 1,
                    "regex": "",
                    "hide": 0,
                    "current": {},
                },
                # namespace: the Prometheus Operator's target label; a plain scrape has
                # none, and ".*" matches a missing label too.
                _variable(
                    "namespace",
                    "Namespace",
                    'label_values(up{job=~"tabletop-.+"}, namespace)',
                    ".*",
                ),
                _variable(
                    "job",
                    "Job",
                    'label_values(up{job=~"tabletop-.+", namespace=~"$namespace"}, job)',
                    "tabletop-.+",
                ),
            ]
        },
        "panels": panels(),
    }


def queries(board: dict[str, Any]) -> list[tuple[str, str]]:
    """(panel title, expr) of every query in the dashboard."""
    return [
        (panel["title"], target["expr"])
        for panel in board["panels"]
        for target in panel.get("targets", [])
    ]


def prometheus_config(
    targets: dict[str, str], rule_files: list[str], interval: str = "15s"
) -> dict[str, Any]:
    """A Prometheus configuration scraping ``targets`` (job -> host:port of /metrics)."""
    return {
        "global": {"scrape_interval": interval, "evaluation_interval": interval},
        "rule_files": rule_files,
        "scrape_configs": [
            {"job_name": job, "static_configs": [{"targets": [address]}]}
            for job, address in targets.items()
        ],
    }


def local_targets() -> dict[str, str]:
    """Every process of ``make run`` on this machine, by job."""
    gw = registry.GATEWAY
    found = {job_name(gw.host): f"127.0.0.1:{gw.metrics_port}"}
    for entry in registry.SERVICES:
        found[job_name(entry.host)] = f"127.0.0.1:{entry.metrics_port}"
    return found


def files() -> dict[str, str]:
    example = prometheus_config(local_targets(), ["rules.yaml"])
    header = (
        "# Generated by `python -m deploy.observability.generate` from services/registry.py.\n"
        "# Scrapes every process of `make run` and loads the alert rules:\n"
        "#   prometheus --config.file=deploy/observability/prometheus.example.yml\n"
    )
    return {
        DASHBOARD: json.dumps(dashboard(), indent=2) + "\n",
        PROMETHEUS_EXAMPLE: header + yaml.safe_dump(example, sort_keys=False, width=100),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deploy.observability.generate")
    parser.add_argument("--check", action="store_true", help="only compare; exit 1 on a difference")
    args = parser.parse_args(argv)
    changed = [
        path
        for path, text in files().items()
        if not (HERE / path).exists() or (HERE / path).read_text() != text
    ]
    if args.check:
        for path in changed:
            print(
                f"deploy/observability/{path}: differs from the generator's output", file=sys.stderr
            )
        return 1 if changed else 0
    for path in changed:
        (HERE / path).parent.mkdir(parents=True, exist_ok=True)
        (HERE / path).write_text(files()[path])
    print(f"deploy/observability: {len(files())} files, {len(changed)} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
