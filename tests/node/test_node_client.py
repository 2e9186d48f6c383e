"""A client in another language: Node.js (@grpc/grpc-js and @grpc/proto-loader, pinned in
tests/node/package-lock.json), built from protos/ alone, plays one game of every kind
through the gateway to the end and reads a refusal's ErrorInfo from its google.rpc.Status
(with the google/rpc protos in third_party/googleapis).

Without node (or without npm when tests/node/node_modules is absent) the test skips and
says why; with CI=true it fails instead, so CI cannot pass without it.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from pathlib import Path

import grpc
import pytest

from client.api import FINISHED, GameClient
from services import registry
from tests.readme.stack import running_stack

HERE = Path(__file__).resolve().parent
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
SHEN_ROUND_LIMIT = 30  # what play.js asks for, so that random play ends


def missing(what: str) -> None:
    message = f"{what}: the Node.js client test cannot run"
    if IN_CI:
        pytest.fail(f"CI=true and {message}", pytrace=False)
    pytest.skip(message)


def node_ready() -> str:
    node = shutil.which("node")
    if node is None:
        missing("no `node` on PATH (Debian: apt-get install nodejs npm)")
    if not (HERE / "node_modules" / "@grpc" / "grpc-js").is_dir():
        npm = shutil.which("npm")
        if npm is None:
            missing("no tests/node/node_modules and no `npm` to install it")
        subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund", "--prefix", str(HERE)],
            check=True,
            timeout=300,
        )
    return node


def test_the_node_client_plays_every_game_to_the_end_and_decodes_an_error_info(tmp_path):
    node = node_ready()
    with running_stack(tmp_path, documented=False) as stack:
        started = time.monotonic()
        run = subprocess.run(
            [node, str(HERE / "play.js"), stack.gateway_address, "20260101"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        seconds = time.monotonic() - started
        assert run.returncode == 0, f"node exited {run.returncode}:\n{run.stderr}\n{run.stdout}"
        lines = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        played = [line for line in lines if "refusal" not in line]
        refusals = [line for line in lines if "refusal" in line]

        # What the server holds, read back with the Python client.
        async def headers() -> dict[str, object]:
            found = {}
            async with grpc.aio.insecure_channel(stack.gateway_address) as channel:
                for line in [*played, *refusals]:
                    reply = await GameClient(line["game"], channel).get(line["gameId"])
                    found[line["gameId"]] = reply.game
            return found

        stored = asyncio.run(headers())

    assert sorted(line["game"] for line in played) == sorted(registry.names())
    for line in played:
        header = stored[line["gameId"]]
        assert header.status == FINISHED and line["status"] == "GAME_STATUS_FINISHED", line
        assert line["moves"] > 0 and header.version == line["moves"] == line["version"], line
        assert line["reason"] == header.outcome.reason and line["reason"], line
    shen = next(line for line in played if line["game"] == "shen")
    assert stored[shen["gameId"]].options["round_limit"] == SHEN_ROUND_LIMIT

    [refusal] = refusals
    current = stored[refusal["gameId"]].version
    assert refusal["refusal"] == "ABORTED"
    assert refusal["statusCode"] == grpc.StatusCode.ABORTED.value[0]
    assert refusal["reason"] == "STALE_VERSION" and refusal["domain"] == "tabletop"
    assert refusal["metadata"] == {"current_version": str(current)}
    print(f"node client: {len(played)} games, {sum(p['moves'] for p in played)} moves, "
          f"{seconds:.1f} s")  # fmt: skip
