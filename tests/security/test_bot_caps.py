"""Bots are a shared resource (issue 25, finding 1): per client caps on tables with a bot.

The outside attack: 100 keyless CreateGame calls with two hard bot seats, in half a
second, took every bot worker from everyone; the only cap was 1,000 games per client.
Now a client address (or application key) may hold TABLETOP_BOT_TABLES_PER_CLIENT (10)
unfinished tables with a bot seat, TABLETOP_ALL_BOT_TABLES_PER_CLIENT (2) of them bots
alone; beyond, CreateGame is refused RESOURCE_EXHAUSTED, LIMIT_REACHED, with the limit
named, counted with the create in the store. Against a service process (its bots search
for seconds a decision here, so no table ends during the test), clients told apart by
the x-forwarded-for of a trusted gateway. Controls: another address is not refused, and
a table without a bot never counts.
"""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest
from tabletop.common.v1 import table_pb2

from client.api import GameClient
from services.kit.status import error_info
from tests.support import running

BOT = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_BOT, bot_level=table_pb2.BOT_LEVEL_HARD)
ME = table_pb2.SeatRequest(kind=table_pb2.SEAT_KIND_RESERVED)


async def create(channel, address: str, *seats):
    client = GameClient("channeling", channel)
    request = client.pb2.CreateGameRequest(seats=list(seats))
    metadata = [("x-forwarded-for", address)]
    return await client._method("CreateGame")(request, metadata=metadata, timeout=30)


async def refused(call, limit: str) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await call
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED, caught.value.details()
    info = error_info(caught.value)
    assert info.reason == "LIMIT_REACHED" and info.metadata["limit"] == limit
    assert "at most" in caught.value.details()


def counted(service, limit: str) -> float:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{service.metrics_port}/metrics") as reply:
        text = reply.read().decode()
    wanted = f'tabletop_limits_hit_total{{game="channeling",limit="{limit}"}}'
    (line,) = [line for line in text.splitlines() if line.startswith(wanted)]
    return float(line.split()[-1])


async def test_a_client_holds_ten_tables_with_a_bot_two_of_them_bots_alone(tmp_path: Path):
    env = {
        "TABLETOP_STORE_URL": f"sqlite:///{tmp_path}/caps.db",
        "TABLETOP_TRUST_FORWARDED_FOR": "true",
        "TABLETOP_BOT_MS_PER_DECISION": "5000",  # no table ends during the test
    }
    with running("services.channeling", env, tmp_path / "service.log") as service:
        assert counted(service, "all_bot_tables_per_client") == 0  # listed from the start
        async with grpc.aio.insecure_channel(service.address) as channel:
            attacker, other = "203.0.113.7", "198.51.100.9"
            for _ in range(2):
                await create(channel, attacker, BOT, BOT)
            await refused(create(channel, attacker, BOT, BOT), "all_bot_tables_per_client")
            people = [await create(channel, attacker, ME, BOT) for _ in range(8)]
            await refused(create(channel, attacker, ME, BOT), "bot_tables_per_client")
            await refused(create(channel, attacker, BOT, BOT), "bot_tables_per_client")
            # Controls: a table of people only, and another client.
            await create(channel, attacker, ME, ME)
            await create(channel, other, BOT, BOT)
            await create(channel, other, ME, BOT)
            # A bot table that finishes frees its place.
            client = GameClient("channeling", channel)
            first = people[0]
            await client.resign(first.game.game_id, first.seat_tokens[0].token)
            await create(channel, attacker, ME, BOT)
            await refused(create(channel, attacker, ME, BOT), "bot_tables_per_client")
        assert counted(service, "all_bot_tables_per_client") == 1
        assert counted(service, "bot_tables_per_client") == 3
