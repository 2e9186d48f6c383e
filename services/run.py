"""``make run``: every game service in the list, and the gateway, in one terminal.

Each runs as its own process (as in production) on the embedded SQLite store under
``data/``; their log lines are prefixed with the process name. Ctrl-C (or SIGTERM)
drains and stops them all. Settings pass through the environment (see each
``--help``); TABLETOP_LOG_FORMAT defaults to console here.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from services import registry

COLOURS = ["36", "33", "35", "32", "34", "31", "37"]


async def _pump(name: str, colour: str, stream: asyncio.StreamReader) -> None:
    prefix = f"\033[{colour}m{name:>11}\033[0m | " if sys.stdout.isatty() else f"{name:>11} | "
    while line := await stream.readline():
        sys.stdout.write(prefix + line.decode(errors="replace"))
        sys.stdout.flush()


async def _start(
    name: str, module: str, env: dict[str, str], colour: str
) -> asyncio.subprocess.Process:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-u", "-m", module,
        env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert process.stdout is not None
    asyncio.get_running_loop().create_task(_pump(name, colour, process.stdout))
    return process


# The per-client limit the gateway applied to calls Envoy now routes (failed
# authentications per client): the services apply it, as in the manifests.
PER_CLIENT = {"TABLETOP_AUTH_FAILURES_PER_CLIENT": "30"}


def behind_gateway(env: dict[str, str]) -> dict[str, str]:
    """A service's settings behind the gateway: on loopback unless TABLETOP_HOST says
    otherwise, and then trusting the gateway's x-forwarded-for (nobody else reaches a
    loopback port) and keying the per-client limits on it."""
    out = {key: env.get(key, value) for key, value in PER_CLIENT.items()}
    host = env.setdefault("TABLETOP_HOST", "127.0.0.1")
    if host in ("127.0.0.1", "localhost", "::1"):
        out["TABLETOP_TRUST_FORWARDED_FOR"] = env.get("TABLETOP_TRUST_FORWARDED_FOR", "true")
    return out


async def run() -> int:
    base = dict(os.environ)
    base.setdefault("TABLETOP_LOG_FORMAT", "console")
    os.makedirs("data", exist_ok=True)
    processes: list[tuple[str, asyncio.subprocess.Process]] = []
    for i, entry in enumerate(registry.SERVICES):
        env = {
            **base,
            "TABLETOP_PORT": str(entry.port),
            "TABLETOP_METRICS_PORT": str(entry.metrics_port),
        }
        env.setdefault("TABLETOP_STORE_URL", f"sqlite:///data/{entry.name}.db")
        env.update(behind_gateway(env))
        processes.append(
            (entry.name, await _start(entry.name, entry.package, env, COLOURS[i % len(COLOURS)]))
        )
    gateway_env = {
        **base,
        "TABLETOP_PORT": str(registry.GATEWAY.port),
        "TABLETOP_METRICS_PORT": str(registry.GATEWAY.metrics_port),
    }
    processes.append(("gateway", await _start("gateway", "gateway", gateway_env, "1;37")))
    print(
        f"gateway on 127.0.0.1:{registry.GATEWAY.port} "
        f"(metrics http://127.0.0.1:{registry.GATEWAY.metrics_port}/metrics); Ctrl-C stops all",
        flush=True,
    )

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    waits = {asyncio.ensure_future(p.wait()): name for name, p in processes}
    stopper = asyncio.ensure_future(stop.wait())
    done, _ = await asyncio.wait([stopper, *waits], return_when=asyncio.FIRST_COMPLETED)
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


if __name__ == "__main__":
    sys.exit(asyncio.run(run()))
