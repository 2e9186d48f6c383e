"""Each game service's image alone: hardened as the deployment expects, healthy, and a
full game played directly against it (how a team load-tests one engine)."""

from __future__ import annotations

import random

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from client.api import FINISHED, GameClient
from deploy.images import images, version
from services import registry
from tests.containers.harness import players, started

pytestmark = pytest.mark.containers


@pytest.mark.parametrize("spec", images(), ids=lambda s: s.service)
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


@pytest.mark.parametrize("entry", registry.SERVICES, ids=lambda e: e.name)
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
