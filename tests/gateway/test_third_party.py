"""What a client outside this repository meets: only the protos, or only reflection."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from services import registry
from tests.support import ROOT, running, wait_serving

CHANNELING = registry.by_name("channeling")


def test_a_client_with_only_the_protos_plays_a_game_through_the_gateway(tmp_path):
    out = tmp_path / "generated"
    out.mkdir()
    protos = [str(p.relative_to(ROOT / "protos")) for p in (ROOT / "protos").rglob("*.proto")]
    subprocess.run(
        [sys.executable, "-m", "grpc_tools.protoc", "-I", str(ROOT / "protos"),
         f"--python_out={out}", f"--grpc_python_out={out}", *protos],
        check=True,
    )  # fmt: skip
    script = tmp_path / "client.py"
    shutil.copy(ROOT / "examples" / "play_channeling.py", script)
    env = {"TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/c.db"}
    with running(f"services.{CHANNELING.name}", env, tmp_path / "svc.log") as svc:
        gateway_env = {f"TABLETOP_ROUTE_{CHANNELING.name.upper()}": svc.address}
        with running("gateway", gateway_env, tmp_path / "gw.log") as gw:
            wait_serving(gw.address, CHANNELING.service_name)
            result = subprocess.run(
                [sys.executable, str(script), gw.address],
                cwd=tmp_path,
                env={"PATH": os.environ["PATH"], "PYTHONPATH": str(out)},
                capture_output=True,
                text=True,
                timeout=120,
            )
    assert result.returncode == 0, result.stderr
    last = result.stdout.strip().splitlines()[-1]
    assert last.split(":")[0] in {"MOST_SPLENDOR", "TIE_FEWEST_CARDS", "TIE_WENT_SECOND"}


def test_reflection_alone_is_enough_for_buf_curl(tmp_path):
    buf = shutil.which("buf", path=os.path.dirname(sys.executable))
    assert buf, "buf (buf-bin) is installed with the dev dependencies"
    env = {"TABLETOP_STORE_URL": "memory://"}
    with running(f"services.{CHANNELING.name}", env, tmp_path / "svc.log") as svc:
        gateway_env = {f"TABLETOP_ROUTE_{CHANNELING.name.upper()}": svc.address}
        with running("gateway", gateway_env, tmp_path / "gw.log") as gw:
            wait_serving(gw.address, CHANNELING.service_name)
            url = f"http://{gw.address}"
            common = [buf, "curl", "--protocol", "grpc", "--http2-prior-knowledge"]
            listed = subprocess.run(
                [*common, "--list-services", url], capture_output=True, text=True, check=True
            ).stdout.split()
            assert CHANNELING.service_name in listed
            created = subprocess.run(
                [*common, "-d", '{"players": 2}', f"{url}/{CHANNELING.service_name}/CreateGame"],
                capture_output=True,
                text=True,
                check=True,
            )
    reply = json.loads(created.stdout)
    assert reply["game"]["gameType"] == CHANNELING.name
    assert len(reply["seatTokens"]) == 2
