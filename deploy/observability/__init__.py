"""Dashboards and alerts for the running services: the Grafana dashboard and the example
Prometheus configuration (:mod:`deploy.observability.generate`) and the alert rules
(``rules.yaml``, written by hand; the Kubernetes PrometheusRule is generated from it)."""
