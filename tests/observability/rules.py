"""The alert rules as the tests read them: each alert's expr is `<value> <op> <number>`
(the convention deploy/observability/rules.yaml states)."""

from __future__ import annotations

import re

import yaml

from deploy.observability import generate

CONDITION = re.compile(
    r"^(?P<value>.*\S)\s*(?P<op>>|<|>=|<=|==|!=)\s*(?P<threshold>[0-9.]+)\s*$", re.S
)


def alerts() -> list[dict]:
    return [
        rule
        for group in yaml.safe_load(generate.RULES.read_text())["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]


def split(expr: str) -> tuple[str, str, float]:
    """(value, comparison, threshold) of an alert's expr."""
    found = CONDITION.match(expr.strip())
    assert found, f"not `<value> <op> <number>`: {expr}"
    return found["value"], found["op"], float(found["threshold"])
