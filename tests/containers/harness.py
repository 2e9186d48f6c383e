"""Starting the project's images with testcontainers, on the host network.

Containers share the host's network namespace (``network_mode="host"``: the engine has
no bridge here) and listen on 127.0.0.1 only, each on ports picked free for it. The
Ryuk reaper is disabled (its image cannot be pulled); every container is removed by the
test that started it.
"""

from __future__ import annotations

import contextlib
import os
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass

os.environ.setdefault("TESTCONTAINERS_RYUK_DISABLED", "true")

import docker
import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client.parser import text_string_to_metric_families
from testcontainers.core.container import DockerContainer

from deploy.images import ImageSpec, images
from services import registry
from tests.support import free_port

IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def engine_problem() -> str | None:
    """Why no Docker engine can be used here, or None when one answers."""
    try:
        client = docker.from_env(timeout=5)
        client.ping()
    except Exception as exc:
        return f"no Docker engine answers ({type(exc).__name__}: {exc})"
    missing = []
    for spec in images():
        try:
            client.images.get(spec.tag())
        except docker.errors.ImageNotFound:
            missing.append(spec.tag())
    client.close()
    if missing:
        return f"images not built: {', '.join(missing)} (make images BASE_IMAGE=local)"
    return None


def players(entry: registry.ServiceEntry) -> int:
    """The fewest players the game takes (CreateGame needs a count for some games)."""
    return entry.engine().GAME.min_players


def spec_of(service: str) -> ImageSpec:
    return next(s for s in images() if s.service == service)


@dataclass
class Running:
    """A started container and the loopback ports it serves on."""

    spec: ImageSpec
    container: DockerContainer
    port: int
    metrics_port: int

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    @property
    def metrics_url(self) -> str:
        return f"http://127.0.0.1:{self.metrics_port}/metrics"

    @property
    def docker(self):
        return self.container.get_wrapped_container()

    def logs(self) -> str:
        out, err = self.container.get_logs()
        return (out or b"").decode(errors="replace") + (err or b"").decode(errors="replace")

    def exec(self, *command: str) -> tuple[int, str]:
        result = self.docker.exec_run(list(command))
        return result.exit_code, result.output.decode(errors="replace")

    def stop_gracefully(self, timeout: int = 30) -> int:
        """SIGTERM, wait for the process to end; its exit code."""
        self.docker.stop(timeout=timeout)
        return int(self.docker.wait(timeout=timeout + 5)["StatusCode"])


def start(
    service: str,
    env: dict[str, str] | None = None,
    volume: str | None = None,
    port: int | None = None,
    metrics_port: int | None = None,
    timeout: float = 30,
    files: str | None = None,
    as_deployed: bool = False,
    mounts: dict[str, str] | None = None,
) -> Running:
    """Start one image on free loopback ports and wait until its health says SERVING
    (on TABLETOP_HEALTH_PORT when ``env`` sets one: the gRPC port may speak TLS).
    ``files``: a host folder mounted read-only at /app/tls (certificates); ``mounts``:
    more host folders mounted read-only ({host: container path}); ``as_deployed``: as
    Kubernetes runs it, the root filesystem read-only and /tmp the only writable folder."""
    spec = spec_of(service)
    port = port or free_port()
    metrics_port = metrics_port or free_port()
    container = (
        DockerContainer(spec.tag())
        .with_kwargs(network_mode="host")
        .with_env("TABLETOP_HOST", "127.0.0.1")
        .with_env("TABLETOP_PORT", str(port))
        .with_env("TABLETOP_METRICS_PORT", str(metrics_port))
    )
    for key, value in (env or {}).items():
        container = container.with_env(key, value)
    if volume is not None:
        container = container.with_volume_mapping(volume, "/app/data", "rw")
    if files is not None:
        container = container.with_volume_mapping(files, "/app/tls", "ro")
    for host, inside in (mounts or {}).items():
        container = container.with_volume_mapping(host, inside, "ro")
    if as_deployed:
        container = read_only_root(container)
    container.start()
    running = Running(spec, container, port, metrics_port)
    health_port = int((env or {}).get("TABLETOP_HEALTH_PORT", 0))
    try:
        wait_serving(running, timeout, health_port or port)
    except BaseException:
        print(running.logs())
        container.stop()
        raise
    return running


def read_only_root(container: DockerContainer) -> DockerContainer:
    """As the manifests run every pod: a read-only root, /tmp an emptyDir (a tmpfs here)."""
    return container.with_kwargs(network_mode="host", read_only=True).with_tmpfs_mount(
        "/tmp", "size=16m"
    )


def wait_serving(running: Running, timeout: float = 30, port: int | None = None) -> None:
    deadline = time.monotonic() + timeout
    last = "no answer"
    with grpc.insecure_channel(f"127.0.0.1:{port or running.port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < deadline:
            running.docker.reload()
            if running.docker.status in ("exited", "dead"):
                raise RuntimeError(f"{running.spec.host} exited:\n{running.logs()}")
            try:
                reply = stub.Check(health_pb2.HealthCheckRequest(), timeout=1)
                if reply.status == health_pb2.HealthCheckResponse.SERVING:
                    return
                last = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
            except grpc.RpcError as error:
                last = error.code().name
            time.sleep(0.1)
    raise TimeoutError(f"{running.spec.host} not SERVING within {timeout}s ({last})")


@contextlib.contextmanager
def started(service: str, **options) -> Iterator[Running]:
    running = start(service, **options)
    try:
        yield running
    finally:
        running.container.stop()


@contextlib.contextmanager
def volume() -> Iterator[str]:
    """A fresh named Docker volume; it starts owned as the image's /app/data is."""
    client = docker.from_env()
    made = client.volumes.create()
    try:
        yield made.name
    finally:
        with contextlib.suppress(Exception):
            made.remove(force=True)
        client.close()


def scrape(url: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """A /metrics page as {(sample name, sorted labels): value}."""
    body = urllib.request.urlopen(url, timeout=5).read().decode()
    samples = {}
    for family in text_string_to_metric_families(body):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def sample(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)
