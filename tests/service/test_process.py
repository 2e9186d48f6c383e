"""A game service as its own process: restarts, drain, logs and metrics."""

from __future__ import annotations

import asyncio
import json
import random
import signal
import urllib.request

import grpc
import pytest

from client.api import FINISHED, GameClient
from services import registry
from tests.support import eventually, running, start_process

NAME = registry.SERVICES[0].name


def env(tmp_path, **extra) -> dict[str, str]:
    return {
        "TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/game.db",
        "TABLETOP_ALLOW_SEED": "true",
        **extra,
    }


async def play_some(client: GameClient, game, moves: int, rng: random.Random) -> int:
    for _ in range(moves):
        state = await client.get(game.game_id)
        if state.game.status == FINISHED:
            break
        seat = rng.choice(list(state.game.to_act))
        listed = await client.moves(game.game_id, game.tokens[seat])
        await client.submit(game.game_id, game.tokens[seat], rng.choice(list(listed.moves)))
    return (await client.get(game.game_id)).game.version


async def test_sigkill_mid_game_then_restart_continues_at_the_same_version(tmp_path):
    with running(f"services.{NAME}", env(tmp_path), tmp_path / "first.log") as first:
        async with grpc.aio.insecure_channel(first.address) as channel:
            client = GameClient(NAME, channel)
            game = await client.create(seed=77)
            version = await play_some(client, game, 9, random.Random(1))
            view = (await client.get(game.game_id, game.tokens[0])).view
        first.stop(signal.SIGKILL)
    assert version == 9
    with running(f"services.{NAME}", env(tmp_path), tmp_path / "second.log") as second:
        async with grpc.aio.insecure_channel(second.address) as channel:
            client = GameClient(NAME, channel)
            again = await client.get(game.game_id, game.tokens[0])
            assert again.game.version == version
            assert again.view == view
            assert again.game.viewer == 0  # the same token still names seat 0
            result = await client.play_random(game, random.Random(2))
            assert result.final.game.status == FINISHED


async def test_sigterm_drains_calls_in_flight_and_loses_no_acknowledged_move(tmp_path):
    process = start_process(f"services.{NAME}", env(tmp_path), tmp_path / "drain.log")
    acknowledged: dict[str, int] = {}
    codes: set[grpc.StatusCode] = set()
    try:
        async with grpc.aio.insecure_channel(process.address) as channel:
            client = GameClient(NAME, channel)
            games = [await client.create(seed=i) for i in range(12)]
            watch = client.watch(games[0].game_id)
            assert (await watch.read()).HasField("view")

            async def player(game, rng):
                while True:
                    try:
                        state = await client.get(game.game_id)
                        seat = rng.choice(list(state.game.to_act))
                        listed = await client.moves(game.game_id, game.tokens[seat])
                        reply = await client.submit(
                            game.game_id, game.tokens[seat], rng.choice(list(listed.moves))
                        )
                        acknowledged[game.game_id] = reply.game.version
                        if reply.game.status == FINISHED:
                            return
                    except grpc.aio.AioRpcError as error:
                        codes.add(error.code())
                        return

            tasks = [asyncio.create_task(player(g, random.Random(i))) for i, g in enumerate(games)]
            # Signal once play is under way (a dozen moves acknowledged), however slow.
            await eventually(lambda: sum(acknowledged.values()) >= 12, timeout=30)
            process.popen.send_signal(signal.SIGTERM)
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                while True:
                    await watch.read()
            assert ended.value.code() == grpc.StatusCode.UNAVAILABLE
            await asyncio.gather(*tasks)
        assert process.popen.wait(30) == 0
    finally:
        if process.popen.poll() is None:
            process.popen.kill()
    assert codes <= {grpc.StatusCode.UNAVAILABLE}, codes
    assert sum(acknowledged.values()) > 0
    lines = [json.loads(line) for line in process.lines() if line.startswith("{")]
    assert any(r.get("event") == "draining" for r in lines)
    assert any(r.get("event") == "stopped" for r in lines)

    with running(f"services.{NAME}", env(tmp_path), tmp_path / "after.log") as again:
        async with grpc.aio.insecure_channel(again.address) as channel:
            client = GameClient(NAME, channel)
            for game_id, version in acknowledged.items():
                stored = (await client.get(game_id)).game.version
                assert stored == version, "an acknowledged move was lost or a refused one kept"


async def test_logs_are_json_per_call_and_never_carry_tokens_or_seeds(tmp_path):
    seed = 1234567890123
    with running(f"services.{NAME}", env(tmp_path), tmp_path / "logs.log") as process:
        async with grpc.aio.insecure_channel(process.address) as channel:
            client = GameClient(NAME, channel)
            game = await client.create(seed=seed)
            await client.play_random(game, random.Random(3))
            with pytest.raises(grpc.aio.AioRpcError):
                await client.submit(game.game_id, "forged-token", client.pb2.Move())
        process.stop()
        text = process.log.read_text()
    records = [json.loads(line) for line in text.splitlines() if line.startswith("{")]
    calls = [r for r in records if r.get("event") == "rpc"]
    assert calls and all({"method", "code", "latency_ms"} <= set(r) for r in calls)
    submits = [r for r in calls if r["method"].endswith("/SubmitMove") and r["code"] == "OK"]
    assert submits and all(r.get("game_id") == game.game_id and "seat" in r for r in submits)
    assert any(r.get("reason") == "BAD_TOKEN" for r in calls)
    for secret in [str(seed), "forged-token", *game.tokens]:
        assert secret not in text


async def test_metrics_show_calls_by_method_and_latency_histograms(tmp_path):
    with running(f"services.{NAME}", env(tmp_path), tmp_path / "m.log") as process:
        async with grpc.aio.insecure_channel(process.address) as channel:
            client = GameClient(NAME, channel)
            game = await client.create(seed=5)
            result = await client.play_random(game, random.Random(5))
        url = f"http://127.0.0.1:{process.metrics_port}/metrics"
        body = urllib.request.urlopen(url, timeout=5).read().decode()
    service = registry.by_name(NAME).service_name
    call = f'grpc_method="SubmitMove",grpc_service="{service}",grpc_type="unary"'
    submit = f'grpc_server_handled_total{{grpc_code="OK",{call}}}'
    line = next(line for line in body.splitlines() if line.startswith(submit))
    assert float(line.split()[-1]) == result.moves
    started = next(
        line
        for line in body.splitlines()
        if line.startswith(f"grpc_server_started_total{{{call}}}")
    )
    assert float(started.split()[-1]) == result.moves
    assert f'grpc_server_handling_seconds_bucket{{{call},le="0.001"}}' in body
    assert f"grpc_server_msg_received_total{{{call}}}" in body
    assert f"grpc_server_msg_sent_total{{{call}}}" in body
    assert 'service="' not in body.replace("grpc_service=", ""), "no label named service"
    applied = next(
        line
        for line in body.splitlines()
        if line.startswith(f'tabletop_moves_applied_total{{game="{NAME}"}}')
    )
    assert float(applied.split()[-1]) == result.moves
    assert f'tabletop_engine_move_seconds_count{{game="{NAME}"}}' in body
    assert f'tabletop_games_finished_total{{game="{NAME}"}} 1.0' in body
