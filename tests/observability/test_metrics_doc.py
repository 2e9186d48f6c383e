"""docs/metrics.md lists every metric a game service and the gateway expose, with its type
and labels, and nothing they do not expose."""

from __future__ import annotations

import random

import grpc
from prometheus_client import REGISTRY, CollectorRegistry, Counter

from client.api import GameClient
from gateway.players import Players
from services import registry
from tests.support import ROOT, gateway_in_process, service_in_process

DOC = ROOT / "docs" / "metrics.md"
OURS = ("grpc_server_", "grpc_client_", "tabletop_")
NAME = registry.SERVICES[0].name


def documented() -> dict[str, tuple[str, frozenset[str]]]:
    """Each table row's metric: (type, label names)."""
    rows = {}
    for line in DOC.read_text().splitlines():
        if not line.startswith("| `"):
            continue
        name, kind, labels = (cell.strip() for cell in line.strip("|").split("|")[:3])
        rows[name.strip("`")] = (
            kind.split()[0],
            frozenset(label.strip() for label in labels.split(",") if label.strip()),
        )
    return rows


def exposed(*registries: CollectorRegistry) -> dict[str, tuple[str, frozenset[str] | None]]:
    """Each family of ours as a scrape names it: (type, label names, or None without a
    series to read them from)."""
    found = {}
    for registry_ in registries:
        for family in registry_.collect():
            name = f"{family.name}_total" if family.type == "counter" else family.name
            if not name.startswith(OURS):
                continue
            labels = {k for s in family.samples for k in s.labels if k != "le"}
            found[name] = (family.type, frozenset(labels) if family.samples else None)
    return found


def differences(doc: dict, seen: dict) -> list[str]:
    problems = [f"{name}: exposed, not in docs/metrics.md" for name in seen.keys() - doc.keys()]
    problems += [f"{name}: in docs/metrics.md, not exposed" for name in doc.keys() - seen.keys()]
    for name in doc.keys() & seen.keys():
        (kind, labels), (seen_kind, seen_labels) = doc[name], seen[name]
        if kind != seen_kind:
            problems.append(f"{name}: documented as a {kind}, exposed as a {seen_kind}")
        if seen_labels is not None and labels != seen_labels:
            problems.append(f"{name}: documented labels {sorted(labels)}, {sorted(seen_labels)}")
    return problems


async def test_every_metric_of_a_service_and_the_gateway_is_documented_as_exposed():
    async with service_in_process(NAME) as svc:
        # As deployed, the gateway serves PlayersService (here with guests off).
        players = Players(None)
        async with gateway_in_process({NAME: [svc.address]}, players=players) as (port, gateway):
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
                client = GameClient(NAME, channel)
                game = await client.create(seed=3)
                await client.play_random(game, random.Random(3))
            seen = exposed(REGISTRY, gateway.registry)
    assert not differences(documented(), seen), differences(documented(), seen)
    # Read from series, not assumed: the call families carry their labels.
    assert seen["grpc_server_handled_total"][1] == {
        "grpc_type",
        "grpc_service",
        "grpc_method",
        "grpc_code",
    }


def test_control_an_undocumented_metric_and_a_wrong_label_are_reported():
    extra = CollectorRegistry()
    Counter("tabletop_control", "not in the docs", ["game"], registry=extra).labels("x").inc()
    Counter("grpc_server_handled", "a label short", ["grpc_code"], registry=extra).labels(
        "OK"
    ).inc()
    problems = differences(documented(), exposed(extra))
    assert "tabletop_control_total: exposed, not in docs/metrics.md" in problems
    assert any(p.startswith("grpc_server_handled_total: documented labels") for p in problems)
    assert "tabletop_watchers: in docs/metrics.md, not exposed" in problems
