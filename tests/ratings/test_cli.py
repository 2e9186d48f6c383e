"""The command-line client's ``ratings`` and ``leaderboard`` against a running service."""

from __future__ import annotations

import asyncio
import sys
import uuid

from services.kit import ratings
from services.shrine.engine import GAME as SHRINE_GAME
from tests.ratings.test_store import play
from tests.support import service_in_process

SHRINE = ratings.parse_shape(SHRINE_GAME, "2p")


async def client(*args: str) -> tuple[int, str]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "client", *args,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    return proc.returncode or 0, out.decode()


async def test_ratings_and_the_leaderboard_are_printed():
    async with service_in_process("shrine") as running:
        a, b = f"ann-{uuid.uuid4().hex[:6]}", f"bo-{uuid.uuid4().hex[:6]}"
        for n in range(12):
            await play(running.store, [a, b], winner=n % 3 != 0, shape=SHRINE)
        target = ["--target", running.address]
        code, out = await client(*target, "ratings", "shrine", "--player", b)
        assert code == 0, out
        mine = (await running.store.standings("shrine", "2p", [b]))[b]
        assert out.split() == ["shrine/2p", str(mine.shown), "12", "rated", "games"]
        code, out = await client(*target, "leaderboard", "shrine", "--page-size", "1")
        assert code == 0, out
        lines = out.splitlines()
        assert lines[0] == "shrine/2p" and lines[1].startswith("   1. ")
        assert b in lines[1] and "--page-token" in lines[2]
        code, out = await client(*target, "leaderboard", "shrine", "--shape", "3p")
        assert code == 1 and "INVALID_ARGUMENT UNKNOWN_SHAPE" in out
