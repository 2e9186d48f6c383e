"""A service container's life: stopped and started again mid-game with its store on a
volume, and SIGTERM while calls are in flight."""

from __future__ import annotations

import asyncio
import json
import random

import grpc
import pytest

from client.api import FINISHED, GameClient
from services import registry
from services.kit.status import error_info
from tests.containers.harness import players, started, volume, wait_serving
from tests.support import eventually

pytestmark = pytest.mark.containers

NAME = registry.SERVICES[0].name


async def play_some(client: GameClient, game, moves: int, rng: random.Random) -> int:
    for _ in range(moves):
        state = await client.get(game.game_id)
        if state.game.status == FINISHED:
            break
        seat = rng.choice(list(state.game.to_act))
        listed = await client.moves(game.game_id, game.tokens[seat])
        await client.submit(
            game.game_id, game.tokens[seat], rng.choice(list(listed.moves)),
            expected_version=listed.game.version,
        )  # fmt: skip
    return (await client.get(game.game_id)).game.version


@pytest.mark.parametrize("entry", registry.SERVICES, ids=lambda e: e.name)
async def test_stopped_and_started_again_mid_game_the_game_goes_on_at_the_same_version(entry):
    env = {"TABLETOP_ALLOW_SEED": "true"}  # the image's default store: SQLite in /app/data
    with volume() as data:
        with started(entry.name, env=env, volume=data) as first:
            async with grpc.aio.insecure_channel(first.address) as channel:
                client = GameClient(entry.name, channel)
                game = await client.create(players(entry), seed=31)
                version = await play_some(client, game, 9, random.Random(1))
                view = (await client.get(game.game_id, game.tokens[0])).view
            assert version == 9
            assert first.stop_gracefully() == 0
            assert '"event": "stopped"' in first.logs()
        # A new container on the same volume, as a rescheduled pod on its volume.
        with started(entry.name, env=env, volume=data) as second:
            async with grpc.aio.insecure_channel(second.address) as channel:
                client = GameClient(entry.name, channel)
                again = await client.get(game.game_id, game.tokens[0])
                assert again.game.version == version
                assert again.view == view
                result = await client.play_random(game, random.Random(2))
                assert result.final.game.status == FINISHED
            # And the same container started again after a stop.
            second.docker.stop(timeout=30)
            second.docker.start()
            wait_serving(second)
            async with grpc.aio.insecure_channel(second.address) as channel:
                final = await GameClient(entry.name, channel).get(game.game_id)
                assert final.game.version == result.final.game.version
                assert final.game.status == FINISHED


async def test_sigterm_lets_calls_in_flight_finish_and_refuses_new_ones_cleanly():
    env = {"TABLETOP_ALLOW_SEED": "true", "TABLETOP_DRAIN_SECONDS": "15"}
    acknowledged: dict[str, int] = {}
    codes: list[grpc.StatusCode] = []
    draining: list[bool] = []
    after_term: list[str] = []
    with volume() as data:
        with started(NAME, env=env, volume=data) as running:
            async with grpc.aio.insecure_channel(running.address) as channel:
                client = GameClient(NAME, channel)
                games = [
                    await client.create(players(registry.by_name(NAME)), seed=i) for i in range(12)
                ]
                watch = client.watch(games[0].game_id)
                assert (await watch.read()).HasField("view")
                term_sent = asyncio.Event()

                async def player(game, rng):
                    while True:
                        try:
                            state = await client.get(game.game_id)
                            if state.game.status == FINISHED:
                                return
                            seat = rng.choice(list(state.game.to_act))
                            listed = await client.moves(game.game_id, game.tokens[seat])
                            reply = await client.submit(
                                game.game_id, game.tokens[seat], rng.choice(list(listed.moves))
                            )
                            acknowledged[game.game_id] = reply.game.version
                            if term_sent.is_set():
                                after_term.append(game.game_id)
                        except grpc.aio.AioRpcError as error:
                            codes.append(error.code())
                            info = error_info(error)
                            draining.append(
                                info is not None and info.metadata["draining"] == "true"
                            )
                            return

                tasks = [
                    asyncio.create_task(player(g, random.Random(i))) for i, g in enumerate(games)
                ]
                # Signal once play is under way (a dozen moves acknowledged), however slow.
                await eventually(lambda: sum(acknowledged.values()) >= 12, timeout=30)
                running.docker.kill(signal="SIGTERM")
                term_sent.set()
                with pytest.raises(grpc.aio.AioRpcError) as ended:
                    while True:
                        await watch.read()
                # Watchers are told to resume elsewhere; every refused call is UNAVAILABLE.
                assert ended.value.code() == grpc.StatusCode.UNAVAILABLE
                await asyncio.wait_for(asyncio.gather(*tasks), 30)
            exit_code = int(running.docker.wait(timeout=40)["StatusCode"])
            logs = running.logs()
        assert exit_code == 0, logs
        # No call was cut short (CANCELLED) or failed otherwise: each player's next call
        # after SIGTERM was refused by the drain, with its reason.
        assert codes and set(codes) == {grpc.StatusCode.UNAVAILABLE}, codes
        assert any(draining), "no refusal carried ErrorInfo draining=true"
        assert sum(acknowledged.values()) > 0
        events = [json.loads(line) for line in logs.splitlines() if line.startswith("{")]
        drained = [e for e in events if e.get("event") == "drained"]
        assert drained and drained[0]["all_finished"] is True, drained
        assert any(e.get("event") == "stopped" for e in events)

        # Nothing acknowledged was lost, nothing refused was kept.
        with started(NAME, env=env, volume=data) as again:
            async with grpc.aio.insecure_channel(again.address) as channel:
                client = GameClient(NAME, channel)
                for game_id, version in acknowledged.items():
                    assert (await client.get(game_id)).game.version == version
