"""``make run``: every game service in the list, the gateway and the web app, in one terminal.

Each runs as its own process (as in production) on the embedded SQLite store under
``data/``; their log lines are prefixed with the process name, one line per call (the
service's: the gateway's Envoy access log is off here, it stays on in the manifests).
"ready" is printed once the gateway routes a call to every game, with the address to
open in a browser. Ctrl-C (or SIGTERM) drains and stops them all. Settings pass through
the environment (see each ``--help``); TABLETOP_LOG_FORMAT defaults to console here, and
TABLETOP_WEB_PORT (8080) is where the web app is served when it is built (``make web``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import time
from pathlib import Path

import grpc
from tabletop.gateway.v1 import catalog_pb2

from gateway.players import JWKS_PATH
from gateway.players import settings as guest_settings
from services import registry
from services.kit.limits import FRONT_DOOR

COLOURS = ["36", "33", "35", "32", "34", "31", "37"]
ROOT = Path(__file__).resolve().parent.parent
WEB = ROOT / "web"
WEB_PORT = 8080
NOT_BUILT = (
    "web app: not built, so not served (the games run without it). To play in a browser, "
    "install Node.js 20 or later with npm (Debian: apt-get install nodejs npm), then "
    "`make web` and `make run` again."
)


async def _pump(name: str, colour: str, stream: asyncio.StreamReader) -> None:
    prefix = f"\033[{colour}m{name:>11}\033[0m | " if sys.stdout.isatty() else f"{name:>11} | "
    while line := await stream.readline():
        sys.stdout.write(prefix + line.decode(errors="replace"))
        sys.stdout.flush()


async def _start(
    name: str, args: list[str], env: dict[str, str], colour: str
) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-u", *args,
        env=env, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert process.stdout is not None
    asyncio.get_running_loop().create_task(_pump(name, colour, process.stdout))
    return process


# The gateway's per-client limits, for what reaches the services without its Python
# side counting it (failed authentications on the calls Envoy routes, Play's sessions and
# moves): the services apply them, as in the manifests (services/kit/limits.py FRONT_DOOR).
PER_CLIENT = FRONT_DOOR


def behind_gateway(env: dict[str, str]) -> dict[str, str]:
    """A service's settings behind the gateway: on loopback unless TABLETOP_HOST says
    otherwise, and then trusting the gateway's x-forwarded-for (nobody else reaches a
    loopback port) and keying the per-client limits on it."""
    out = {key: env.get(key, value) for key, value in PER_CLIENT.items()}
    host = env.setdefault("TABLETOP_HOST", "127.0.0.1")
    if host in ("127.0.0.1", "localhost", "::1"):
        out["TABLETOP_TRUST_FORWARDED_FOR"] = env.get("TABLETOP_TRUST_FORWARDED_FOR", "true")
    return out


def trust_guests(env: dict[str, str], gateway_metrics_port: int) -> None:
    """A service trusts the players the gateway signs in as guests, as it would a
    provider's: the JWKS the gateway serves on its metrics port, its guests' issuer
    (docs/players.md). Settings already given win; a provider's own key file, guests
    turned off or no metrics port leave the JWKS alone."""
    guests_on = env.get("TABLETOP_GUEST_SIGNIN", "true").strip().lower() not in ("false", "0", "no")
    if not guests_on or gateway_metrics_port == 0 or env.get("TABLETOP_JWT_PUBLIC_KEY_FILE"):
        return
    issuer = next(s.default for s in guest_settings() if s.env == "TABLETOP_GUEST_ISSUER")
    env.setdefault("TABLETOP_JWT_JWKS_URL", f"http://127.0.0.1:{gateway_metrics_port}{JWKS_PATH}")
    env.setdefault("TABLETOP_JWT_ISSUER", env.get("TABLETOP_GUEST_ISSUER", str(issuer)))


def gateway_settings(base: dict[str, str], web_port: int) -> dict[str, str]:
    """The gateway under make run: every call's line is the service's, so Envoy writes
    none (TABLETOP_ACCESS_LOG=true brings it back); pages from the web app may call it."""
    return {
        "TABLETOP_ACCESS_LOG": base.get("TABLETOP_ACCESS_LOG", "false"),
        "TABLETOP_CORS_ORIGINS": base.get(
            "TABLETOP_CORS_ORIGINS", f"http://127.0.0.1:{web_port},http://localhost:{web_port}"
        ),
    }


def web_built(env: dict[str, str]) -> bool:
    """Whether the web app is built (TABLETOP_WEB_DIST, as web/serve.py reads it)."""
    return (Path(env.get("TABLETOP_WEB_DIST", str(WEB / "dist"))) / "index.html").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def routes_every_game(
    port: int, games: list[registry.ServiceEntry], timeout: float
) -> list[str]:
    """Wait until a call through the gateway reaches each game (its lobby answers);
    return the games that did not within ``timeout``."""
    waiting: list[registry.ServiceEntry | None] = [None, *games]  # None: the catalog
    deadline = time.monotonic() + timeout
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        while waiting and time.monotonic() < deadline:
            if None in waiting:
                catalog = channel.unary_unary(
                    "/tabletop.gateway.v1.CatalogService/ListGames",
                    request_serializer=catalog_pb2.ListGamesRequest.SerializeToString,
                    response_deserializer=catalog_pb2.ListGamesResponse.FromString,
                )
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await catalog(catalog_pb2.ListGamesRequest(), timeout=2)
                    waiting.remove(None)
            for entry in [e for e in waiting if e is not None]:
                pb2 = entry.pb2()
                call = channel.unary_unary(
                    f"/{entry.service_name}/ListGames",
                    request_serializer=pb2.ListGamesRequest.SerializeToString,
                    response_deserializer=pb2.ListGamesResponse.FromString,
                )
                with contextlib.suppress(grpc.aio.AioRpcError):
                    await call(pb2.ListGamesRequest(page_size=1), timeout=2)
                    waiting.remove(entry)
            if waiting:
                await asyncio.sleep(0.2)
    return [e.name if e else "its catalog" for e in waiting]


async def run(free_ports: bool = False) -> int:
    """Start everything; ``free_ports`` (tests): every process on a port of its own
    choosing rather than the registry's, no metrics ports but the gateway's (on a free
    one: its JWKS, which the services trust), the web app's port from TABLETOP_WEB_PORT
    (0: free)."""
    base = dict(os.environ)
    base.setdefault("TABLETOP_LOG_FORMAT", "console")
    os.makedirs(ROOT / "data", exist_ok=True)
    processes: list[tuple[str, asyncio.subprocess.Process]] = []
    ports = {e.name: _free_port() if free_ports else e.port for e in registry.SERVICES}
    gateway_port = _free_port() if free_ports else registry.GATEWAY.port
    gateway_metrics = _free_port() if free_ports else registry.GATEWAY.metrics_port
    metrics = {e.name: "0" if free_ports else str(e.metrics_port) for e in registry.SERVICES}
    web_port = int(base.get("TABLETOP_WEB_PORT", str(WEB_PORT)))
    if web_port == 0:
        web_port = _free_port()
    for i, entry in enumerate(registry.SERVICES):
        env = {
            **base,
            "TABLETOP_PORT": str(ports[entry.name]),
            "TABLETOP_METRICS_PORT": metrics[entry.name],
        }
        env.setdefault("TABLETOP_STORE_URL", f"sqlite:///data/{entry.name}.db")
        env.update(behind_gateway(env))
        trust_guests(env, gateway_metrics)
        colour = COLOURS[i % len(COLOURS)]
        processes.append((entry.name, await _start(entry.name, ["-m", entry.package], env, colour)))
    gateway_env = {
        **base,
        "TABLETOP_PORT": str(gateway_port),
        "TABLETOP_METRICS_PORT": str(gateway_metrics),
        **gateway_settings(base, web_port),
    }
    if free_ports:
        gateway_env.update(
            {f"TABLETOP_ROUTE_{n.upper()}": f"127.0.0.1:{p}" for n, p in ports.items()}
        )
    processes.append(("gateway", await _start("gateway", ["-m", "gateway"], gateway_env, "1;37")))
    web_url = ""
    if web_built(base):
        web_env = {
            **base,
            "TABLETOP_WEB_PORT": str(web_port),
            "TABLETOP_WEB_GATEWAY_PORT": str(gateway_port),
        }
        processes.append(("web", await _start("web", [str(WEB / "serve.py")], web_env, "1;36")))
        web_url = f"http://{base.get('TABLETOP_WEB_HOST', '127.0.0.1')}:{web_port}"
    else:
        print(NOT_BUILT, flush=True)

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    waits = {asyncio.ensure_future(p.wait()): name for name, p in processes}
    ready = asyncio.ensure_future(_announce(gateway_port, gateway_metrics, web_url))
    stopper = asyncio.ensure_future(stop.wait())
    done, _ = await asyncio.wait([stopper, *waits], return_when=asyncio.FIRST_COMPLETED)
    ready.cancel()
    status = 0
    for task in done:
        if task in waits:
            print(f"{waits[task]} exited with {task.result()}; stopping the rest", flush=True)
            status = 1
    for _, process in processes:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
    await asyncio.gather(*(p.wait() for _, p in processes))
    return status


async def _announce(gateway_port: int, metrics_port: int, web_url: str) -> None:
    """Say "ready" once the gateway routes, not before (the first calls would fail)."""
    games = list(registry.SERVICES)
    metrics = f" (metrics http://127.0.0.1:{metrics_port}/metrics)"
    while missing := await routes_every_game(gateway_port, games, 30):
        print(f"waiting for the gateway to route {', '.join(missing)}...", flush=True)
    print(f"ready: gateway on 127.0.0.1:{gateway_port}{metrics}; Ctrl-C stops all", flush=True)
    if web_url:
        print(f"ready: play in a browser, open {web_url}", flush=True)


if __name__ == "__main__":
    sys.exit(asyncio.run(run()))
