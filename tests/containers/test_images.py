"""Each game service's image alone: hardened as the deployment expects, healthy, and a
full game played directly against it (how a team load-tests one engine)."""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from client.api import FINISHED, GameClient
from deploy.images import images, version
from services import registry
from services.kit.tls import ClientTls
from tests.containers.harness import players, started
from tests.security.certs import Authority
from tests.support import free_port

pytestmark = pytest.mark.containers


# The Python images (the web app's, nginx: tests/containers/test_web.py).
@pytest.mark.parametrize(
    "spec", [s for s in images() if s.target != "web"], ids=lambda s: s.service
)
def test_image_runs_as_non_root_with_no_compiler_and_its_own_health_check(spec):
    env = {"TABLETOP_STORE_URL": "memory://"} if spec.service != "gateway" else {}
    with started(spec.service, env=env) as running:
        attrs = running.docker.image.attrs
        config = attrs["Config"]
        assert config["User"] == "10001:10001"
        assert "PYTHONUNBUFFERED=1" in config["Env"]
        assert config["Labels"]["org.opencontainers.image.version"] == version()
        assert running.docker.image.tags == [spec.tag()] or spec.tag() in running.docker.image.tags
        assert config["Healthcheck"]["Test"][:2] == ["CMD", "python"]
        code, out = running.exec("id", "-u")
        assert (code, out.strip()) == (0, "10001")
        code, out = running.exec("sh", "-c", "command -v gcc cc c++ clang make || true")
        assert out.strip() == "", f"a compiler in the final image: {out}"
        code, out = running.exec("python", "-c", "import grpc_tools")
        assert code != 0, "build tools (grpcio-tools) leaked into the final image"
        # The health check Docker runs, run by hand: SERVING once the server is up.
        code, out = running.exec("python", "/app/healthcheck.py")
        assert (code, out.strip()) == (0, "SERVING")


# Shén's games are the longest (about 1,400 moves each, two of them here): under make test
# its image alone plays a game to its end across a restart (test_lifecycle.py), and a
# full game through the gateway (test_stack.py); these two games alone are make soak's.
@pytest.mark.parametrize(
    "entry",
    [
        pytest.param(e, id=e.name, marks=(pytest.mark.soak,) if e.name == "shen" else ())
        for e in registry.SERVICES
    ],
)
async def test_a_service_container_alone_serves_a_full_random_game(entry):
    with started(entry.name, env={"TABLETOP_ALLOW_SEED": "true"}) as running:
        async with grpc.aio.insecure_channel(running.address) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            for name in ("", entry.service_name):
                reply = await health.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
                assert reply.status == health_pb2.HealthCheckResponse.SERVING
            client = GameClient(entry.name, channel)
            game = await client.create(players(entry), seed=2024)
            result = await client.play_random(game, random.Random(7))
            assert result.final.game.status == FINISHED
            assert result.final.game.version == result.moves > 0
            again = await client.create(players(entry))
            other = await client.play_random(again, random.Random(8))
            assert other.final.game.status == FINISHED


def _docker_health(running, timeout: float = 40) -> str:
    """Docker's own verdict from the image's HEALTHCHECK, once it has one."""
    deadline = time.monotonic() + timeout
    status = "none"
    while time.monotonic() < deadline:
        running.docker.reload()
        status = running.docker.attrs["State"].get("Health", {}).get("Status", "none")
        if status in ("healthy", "unhealthy"):
            return status
        time.sleep(0.5)
    return status


async def test_the_images_serve_mutual_tls_with_docker_health_on_the_plaintext_health_port():
    """A game image and the gateway image configured as the Kubernetes TLS component
    configures them: certificates in a read-only /app/tls, mutual TLS between gateway
    and game, and Docker's HEALTHCHECK (plaintext) answered on TABLETOP_HEALTH_PORT."""
    entry = registry.SERVICES[0]
    files = Path(tempfile.mkdtemp(prefix="tabletop-tls-"))
    try:
        authority = Authority(files)
        game_cert, game_key = authority.issue("game", server=True)
        gateway_cert, gateway_key = authority.issue("gateway", server=True)
        client_cert, client_key = authority.issue("gateway-upstream", server=False)
        files.chmod(0o755)  # the images' user reads them through the mount
        for path in files.iterdir():
            path.chmod(0o644)

        def inside(path: str) -> str:
            return f"/app/tls/{Path(path).name}"

        ca = inside(authority.path)
        game_env = {
            "TABLETOP_STORE_URL": "memory://",
            "TABLETOP_TLS_CERT": inside(game_cert),
            "TABLETOP_TLS_KEY": inside(game_key),
            "TABLETOP_TLS_CLIENT_CA": ca,
            "TABLETOP_HEALTH_PORT": str(free_port()),
        }
        with started(entry.name, env=game_env, files=str(files)) as game:
            gateway_env = {
                f"TABLETOP_ROUTE_{entry.name.upper()}": game.address,
                "TABLETOP_TLS_CERT": inside(gateway_cert),
                "TABLETOP_TLS_KEY": inside(gateway_key),
                "TABLETOP_UPSTREAM_TLS_CA": ca,
                "TABLETOP_UPSTREAM_TLS_CERT": inside(client_cert),
                "TABLETOP_UPSTREAM_TLS_KEY": inside(client_key),
                "TABLETOP_HEALTH_PORT": str(free_port()),
            }
            with started("gateway", env=gateway_env, files=str(files)) as gateway:
                credentials = ClientTls(authority.path).credentials()
                async with grpc.aio.secure_channel(gateway.address, credentials) as channel:
                    client = GameClient(entry.name, channel)
                    game_id = (await client.create(players(entry))).game_id
                    assert (await client.get(game_id)).game.version == 0
                # The game answers only the gateway's certificate; plaintext nobody.
                for channel in (
                    grpc.aio.secure_channel(game.address, credentials),
                    grpc.aio.insecure_channel(game.address),
                ):
                    async with channel:
                        with pytest.raises(grpc.aio.AioRpcError) as caught:
                            await GameClient(entry.name, channel, timeout=5).get(game_id)
                        assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
                assert _docker_health(game) == "healthy", game.logs()
                assert _docker_health(gateway) == "healthy", gateway.logs()
    finally:
        shutil.rmtree(files, ignore_errors=True)
